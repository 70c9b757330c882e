// A CVE rollout ends with the published default on the fix: the catalog
// change a rollout prints also moves the Talos release new pools take to
// the target, where what they take now is older on the same schematic.
// New pools take it when they are created and record it, so moving it
// rolls no running pool.

package rollout

import (
	"fmt"
	"regexp"

	"github.com/cozystack/golden-worker-images/internal/report"

	"github.com/cozystack/golden-worker-images/internal/golden"
)

// osImageField is the published osImage field a default came from, as the
// chart names it (kubernetes-nodes.behindFacts' schematicIDFrom, versionFrom).
var osImageField = regexp.MustCompile(`osImage\.(builtin|factory)\.(schematicID|version)\b`)

// newPoolsDefault is what a rollout's catalog change moves for new pools:
// each default (moves), and the flavor new pools take once it is applied.
type newPoolsDefault struct {
	moves                []report.DefaultMove
	schematicID, version string
	// note says why nothing moves where the target is newer but the
	// default stays.
	note string
}

// newPoolsMove is the defaults a rollout to target moves, judged with what
// new pools take now (behindFacts' defaults, the same for every pool of the
// cluster: the first of pools the chart resolved); none for a target that
// is not a Talos release, or when new pools take it or newer already, or
// another schematic than --to-schematic.
func newPoolsMove(target RolloutTarget, pools []*report.ResolvedPool) newPoolsDefault {
	if target.TalosVersion == "" || target.Defaults {
		return newPoolsDefault{}
	}
	v, err := report.TalosVersion(target.TalosVersion)
	if err != nil {
		return newPoolsDefault{}
	}
	for _, rp := range pools {
		if rp.Facts == nil {
			continue
		}
		d := rp.Facts.Behind.Defaults
		cur, err := report.TalosVersion(string(d.Version))
		if err != nil || !cur.LessThan(v) {
			return newPoolsDefault{}
		}
		if target.SchematicID != "" && target.SchematicID != string(d.SchematicID) {
			return newPoolsDefault{note: fmt.Sprintf("new pools keep Talos %s: they take schematic %s, not --to-schematic %s; to move them too, set tenantWorkers.talos.schematicID and tenantWorkers.talos.version in this change yourself", d.Version, d.SchematicID, target.SchematicID)}
		}
		move := func(field string, now report.Scalar, from report.Scalar, to string) report.DefaultMove {
			key := "tenantWorkers.talos." + field
			if m := osImageField.FindStringSubmatch(string(from)); m != nil {
				key = "tenantWorkers.osImage." + m[1] + "." + field
			}
			source := string(from)
			if source == "" {
				source = "the pool chart's built-in default"
			}
			return report.DefaultMove{Key: key, From: report.Sourced{Value: string(now), Source: source}, To: to}
		}
		nd := newPoolsDefault{schematicID: string(d.SchematicID), version: target.TalosVersion}
		if target.SchematicID != "" {
			nd.moves = append(nd.moves, move("schematicID", d.SchematicID, d.SchematicIDFrom, target.SchematicID))
		}
		nd.moves = append(nd.moves, move("version", d.Version, d.VersionFrom, target.TalosVersion))
		return nd
	}
	return newPoolsDefault{}
}

// withNewPoolsMove adds nd's moves to the catalog change c, written where
// home holds the catalog's values: where new pools take their default from
// _cluster and the home is the operator's Package, which cannot move it,
// it says so instead. Where new pools clone the published flavor (a
// published osImage.builtin), the catalog refuses a flavor no entry
// imports: its entry is added (url: where a new entry imports from).
func withNewPoolsMove(c *report.AdoptCatalog, home report.CatalogHome, nd newPoolsDefault, url report.Sourced) error {
	c.NewPoolsNote = nd.note
	if len(nd.moves) == 0 {
		return nil
	}
	for _, m := range nd.moves {
		if home.Shape != report.ShapePlatform && clusterChannel.MatchString(m.From.Source) {
			c.NewPoolsNote = fmt.Sprintf("new pools keep Talos %s: they take %s from %s, which the platform writes, not this Package; move it there", nd.moves[len(nd.moves)-1].From.Value, m.Key, m.From.Source)
			return nil
		}
	}
	c.NewPools = nd.moves
	if os := publishedOSImage(home); os != nil {
		if _, clones := os["builtin"]; clones {
			addDefaultEntry(c, nd.schematicID, nd.version, url)
		}
	}
	if !c.Changed {
		c.Changed = true
		c.At(home)
	}
	return nil
}

// clusterChannel matches a default the chart took from _cluster.
var clusterChannel = regexp.MustCompile(`\b_cluster\.`)

// publishedOSImage is the osImage new pools are given where home holds it:
// the platform's tenantWorkers (it writes _cluster.osImage from it), or the
// catalog's, which it publishes.
func publishedOSImage(home report.CatalogHome) map[string]any {
	vals := home.CatalogValues()
	if home.Shape == report.ShapePlatform {
		vals = home.Platform
	}
	tw, _ := vals["tenantWorkers"].(map[string]any)
	os, _ := tw["osImage"].(map[string]any)
	return os
}

// addDefaultEntry adds the entry of the flavor new pools clone once the
// default moves, unless the list has it.
func addDefaultEntry(c *report.AdoptCatalog, schematicID, version string, url report.Sourced) {
	plain := golden.Name(schematicID, version)
	for _, e := range c.Images {
		if e.Plain == plain {
			return
		}
	}
	c.Images = append(c.Images, report.CatalogEntry{Plain: plain, Change: report.ChangeNew, ImportsFrom: url.Value, Entry: report.CatalogImage{SchematicID: schematicID, Version: version},
		Notes: []string{"new pools clone it once the default moves (tenantWorkers.osImage is builtin): without its golden a new pool is refused"}})
}
