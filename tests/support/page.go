package support

import (
	"os"
	"regexp"
	"strings"
)

// The sections of docs/cozystack.md whose objects (yaml blocks) the tier
// applies for real and whose commands (sh blocks) it runs as written against
// its API server, in the page's order (tests/integration, CozystackInstall):
// the install on a stock Cozystack, the takeover of the ApplicationDefinition
// and the way back. tests/docs requires every other command of the page to
// need the reader's own registry.
const (
	CozystackPage           = "docs/cozystack.md"
	CozystackCatalogSection = "As a Package, through Cozystack's own machinery"
	CozystackPoolSection    = "The objects to add"
	CozystackTakeover       = "Taking the ApplicationDefinition over"
	CozystackGoingBack      = "Going back"
	// The catalog without the Cozystack operator: the tier dry-runs its
	// objects (CozystackPageObjects); it is not the install.
	CozystackPlainSection = "As a plain HelmRelease"
	// Its commands run in the tier after the dashboard's dry-run
	// (GrafanaDashboardDryRun); it has no yaml block.
	CozystackMonitoringSection = "Its monitoring on a stock Cozystack"
)

// The closed-network page's numbered path on a stock Cozystack; the tier runs
// the commands of each step (tests/integration).
const (
	ClosedNetworkPage       = "docs/closed-networks.md"
	ClosedNetworkCharts     = "1. Charts into your registry, and Flux trusting its CA"
	ClosedNetworkCatalog    = "2. The catalog as your Package: goldens and new pools' defaults from the mirror"
	ClosedNetworkRollcheck  = "3. Ask before the switch: `rollcheck`"
	ClosedNetworkTakeover   = "4. Take the ApplicationDefinition over"
	ClosedNetworkPlan       = "5. A new pool: `plan` shows what it takes"
	ClosedNetworkMirrorsNow = "6. Published mirrors and installer on running pools, now"
	ClosedNetworkMoveBefore = "7. The pools created before, onto the mirror"
	ClosedNetworkFix        = "8. The fix into the catalog: its golden, from the mirror"
	ClosedNetworkNewDefault = "9. New pools take the fix"
	ClosedNetworkFleetFix   = "10. The fleet onto the fix, in waves"
	ClosedNetworkRetire     = "11. The old goldens retired"
)

// ClosedNetworkSteps are the page's steps in order: the tier runs each one's
// commands (the takeover's are the install page's sections it names).
var ClosedNetworkSteps = []string{ClosedNetworkCharts, ClosedNetworkCatalog, ClosedNetworkRollcheck, ClosedNetworkTakeover, ClosedNetworkPlan, ClosedNetworkMirrorsNow, ClosedNetworkMoveBefore, ClosedNetworkFix, ClosedNetworkNewDefault, ClosedNetworkFleetFix, ClosedNetworkRetire}

// CozystackInstallSections are the sections holding the install's objects.
var CozystackInstallSections = []string{CozystackCatalogSection, CozystackPoolSection, CozystackTakeover}

// Block is one fenced yaml or sh block of a page, the indentation of a block
// inside a list item taken off.
type Block struct{ Lang, Text string }

var fencedBlock = regexp.MustCompile("(?ms)^([ \t]*)```(yaml|sh)\n(.*?)^[ \t]*```")

// PageSections splits a page (a path from the repository root) into its
// sections by heading, any level: each heading's text runs to the next
// heading. Lines inside fenced blocks are never headings.
func PageSections(page string) (map[string]string, error) {
	raw, err := os.ReadFile(Path(page))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	heading, inFence := "", false
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(line, "#") {
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
			continue
		}
		out[heading] += line
	}
	return out, nil
}

// Blocks are a section's yaml and sh blocks, in order.
func Blocks(section string) []Block {
	var out []Block
	for _, m := range fencedBlock.FindAllStringSubmatch(section, -1) {
		var text strings.Builder
		for _, line := range strings.SplitAfter(m[3], "\n") {
			text.WriteString(strings.TrimPrefix(line, m[1]))
		}
		out = append(out, Block{m[2], text.String()})
	}
	return out
}

// Commands are an sh block's commands, comments and blank lines left out: a
// line that ends in a backslash, a pipe or && goes on in the next, as the
// shell reads it, so a page can break a long pipeline where a reader would.
func (b Block) Commands() []string {
	var out []string
	pending := ""
	for _, line := range strings.Split(b.Text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if pending != "" {
			line = pending + " " + line
			pending = ""
		}
		switch {
		case strings.HasSuffix(line, "\\"):
			pending = strings.TrimSpace(strings.TrimSuffix(line, "\\"))
		case strings.HasSuffix(line, "|"), strings.HasSuffix(line, "&&"):
			pending = line
		default:
			out = append(out, line)
		}
	}
	if pending != "" {
		out = append(out, pending)
	}
	return out
}
