package monitoring

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

// anchors are the section anchors a Markdown renderer gives docs/runbooks.md's
// headings (lower case, spaces to hyphens, punctuation but hyphens dropped).
func anchors(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(support.Path("docs", "runbooks.md"))
	require.NoError(t, err)
	drop := regexp.MustCompile(`[^a-z0-9 -]`)
	out := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		if title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(title), ""), " ", "-")] = true
		}
	}
	return out
}

// Every alert's runbook_url names a section docs/runbooks.md has, and every
// alert has its own.
func TestEveryAlertLinksARunbookSection(t *testing.T) {
	sections := anchors(t)
	m, err := support.RenderCatalog(map[string]any{"monitoring": map[string]any{"enabled": true}})
	require.NoError(t, err)
	d, err := support.RuleObject(m)
	require.NoError(t, err)
	linked := map[string]string{}
	for _, g := range render.Get(d.Object, "spec.groups").([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			rule := r.(map[string]any)
			url, _ := render.Get(rule, "annotations.runbook_url").(string)
			_, section, ok := strings.Cut(url, "#")
			require.True(t, ok, "alert %s links a section: %q", rule["alert"], url)
			require.True(t, sections[section], "alert %s links #%s, which docs/runbooks.md lacks (it has %v)", rule["alert"], section, sections)
			require.Empty(t, linked[section], "alerts %s and %s share a section", linked[section], rule["alert"])
			linked[section] = rule["alert"].(string)
		}
	}
	require.Len(t, linked, len(alerts))
	require.True(t, sections["recovering-a-failed-golden"], "the recovery procedure has its section")
}
