package main

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/pins/per-class.yaml: flavors v1.13.5 and v1.13.6 each have a plain
// golden on "replicated" and a per-class golden on "fast"; pools of v1.13.6
// on replicated, fast and (two) local, where no golden of it is.

// perClassOf is the per-class golden of a flavor (docs/design.md: <plain>--<class>).
func perClassOf(version, class string) string { return goldenName(version) + "--" + class }

func TestPinsGroupsPerClassGoldensUnderTheirFlavor(t *testing.T) {
	r := pinsOf(t, "per-class")
	require.Len(t, r.Flavors, 2)
	old, cur := r.Flavors[0], r.Flavors[1]
	assert.Equal(t, report.FlavorPins{Flavor: goldenName("v1.13.5"), SchematicID: defaultSchematic, Version: "v1.13.5",
		Goldens: []string{goldenName("v1.13.5"), perClassOf("v1.13.5", "fast")}, ClassesWithoutGolden: []report.ClassGap{}}, old,
		"an unused flavor's per-class golden is grouped with its plain one too")
	assert.Equal(t, goldenName("v1.13.6"), cur.Flavor)
	assert.Equal(t, []string{goldenName("v1.13.6"), perClassOf("v1.13.6", "fast")}, cur.Goldens)

	fast := goldenIn(t, r, perClassOf("v1.13.6", "fast"))
	assert.Equal(t, goldenName("v1.13.6"), fast.Flavor)
	assert.Equal(t, "fast", fast.Class)
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-fast"}, helmReleases(fast.Pools), "the pool on fast clones the per-class golden")
	assert.Equal(t, "per-class", fast.Pools[0].GoldenChoice)
	assert.Equal(t, 1, fast.Pools[0].Disks)
	plain := goldenIn(t, r, goldenName("v1.13.6"))
	assert.Empty(t, plain.Class)
	assert.Equal(t, goldenName("v1.13.6"), plain.Flavor)

	text := cli(t, "pins", "-cluster", td("pins", "per-class.yaml")).stdout
	header := "flavor schematicID " + defaultSchematic + ", version v1.13.6\n"
	require.Contains(t, text, header)
	block := text[strings.Index(text, header):]
	assert.Less(t, strings.Index(block, "\n"+goldenName("v1.13.6")+"  (DataVolume, phase Succeeded)  in use: 3 pools, 0 disks\n"),
		strings.Index(block, "\n"+perClassOf("v1.13.6", "fast")+"  (DataVolume, phase Succeeded, per-class golden for class fast)  in use: 1 pool, 1 disk\n"),
		"the plain golden, then its per-class one, under the flavor")
	assert.Contains(t, text, "\n\n"+header, "flavors are set apart by a blank line (v1.13.6 comes second)")
}

func TestPinsReportsAClassWithPoolsButNoGolden(t *testing.T) {
	r := pinsOf(t, "per-class")
	cur := r.Flavors[1]
	assert.Equal(t, []report.ClassGap{{Class: "local", Golden: perClassOf("v1.13.6", "local"), Pools: []string{"tenant-acme/kubernetes-nodes-acme-local", "tenant-beta/kubernetes-nodes-beta-local"}}}, cur.ClassesWithoutGolden)
	for _, p := range goldenIn(t, r, goldenName("v1.13.6")).Pools {
		if p.Class == "local" {
			assert.Equal(t, "none", p.GoldenChoice)
			assert.Contains(t, p.Refusal, `its disks would be on StorageClass "local"`, "the chart refuses it")
		}
	}
	text := cli(t, "pins", "-cluster", td("pins", "per-class.yaml")).stdout
	assert.Contains(t, text, "\nclass local has no golden of this flavor: its pools' renders are refused until the catalog entry lists \"local\" in additionalStorageClasses (golden "+perClassOf("v1.13.6", "local")+"):\n  pool  tenant-acme/kubernetes-nodes-acme-local\n  pool  tenant-beta/kubernetes-nodes-beta-local\n")

	// A flavor with no golden at all: the fix is a catalog entry, not a class.
	r = pinsOf(t, "cluster")
	var gamma report.FlavorPins
	for _, f := range r.Flavors {
		if f.Version == "v1.13.3" {
			gamma = f
		}
	}
	assert.Equal(t, []report.ClassGap{{Class: "replicated", Golden: perClassOf("v1.13.3", "replicated"), Pools: []string{"tenant-gamma/kubernetes-nodes-gamma-edge"}}}, gamma.ClassesWithoutGolden)
	text = cli(t, "pins", "-cluster", td("pins", "cluster.yaml")).stdout
	assert.Contains(t, text, "\nclass replicated has no golden of this flavor, which has no plain golden either: its pools' renders are refused until the catalog holds an entry for the flavor on replicated:\n")

	for _, f := range pinsOf(t, "pool-only").Flavors {
		assert.Empty(t, f.ClassesWithoutGolden, "a pool whose golden is on its class leaves no gap")
	}
}
