package report

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/stretchr/testify/assert"
)

const behindSchematic = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"

// defaultsAt are the chart's defaults with Talos at version and
// Kubernetes v1.35 at the given patch release.
func defaultsAt(version, k8s135 string) Defaults {
	return Defaults{SchematicID: behindSchematic, Version: version, ImageFactoryURL: "https://factory.talos.dev",
		KubernetesReleases: map[string]string{"v1.34": "v1.34.9", "v1.35": k8s135}}
}

func httpPool(version string, d Defaults) Running {
	return Running{SchematicID: behindSchematic, Version: version, ImageFactoryURL: "https://factory.talos.dev",
		Class: "replicated", Kubernetes: "v1.35.6", Defaults: d}
}

func kinds(reasons []BehindReason) []string {
	out := []string{}
	for _, r := range reasons {
		out = append(out, r.Kind)
	}
	return out
}

// A pool on what a new pool gets, with nothing newer in the catalog, is
// behind in no way.
func TestBehindNothingNewer(t *testing.T) {
	catalog := map[string]fleet.Golden{
		golden.Name(behindSchematic, "v1.13.6"): {FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"},
		golden.Name(behindSchematic, "v1.13.5"): {FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"},
	}
	assert.Empty(t, Behind(httpPool("v1.13.6", defaultsAt("v1.13.6", "v1.35.6")), catalog))
	assert.Empty(t, Behind(httpPool("v1.13.7", defaultsAt("v1.13.6", "v1.35.6")), catalog), "a pool ahead of everything is behind nothing")
}

// Each kind, alone, with what it moves from and to.
func TestBehindEachKind(t *testing.T) {
	newer := golden.Name(behindSchematic, "v1.13.7")
	catalog := map[string]fleet.Golden{newer: {FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"}}
	assert.Equal(t, []BehindReason{{Kind: BehindCatalogPatch, From: "v1.13.6", To: "v1.13.7", Detail: "golden cozy-public/" + newer + " (Succeeded)"}},
		Behind(httpPool("v1.13.6", defaultsAt("v1.13.6", "v1.35.6")), catalog))

	assert.Equal(t, []BehindReason{{Kind: BehindChartDefault, From: "v1.13.6", To: "v1.13.7", Detail: "the chart's Talos release for new pools (schematic " + behindSchematic + ")"}},
		Behind(httpPool("v1.13.6", defaultsAt("v1.13.7", "v1.35.6")), nil))

	assert.Equal(t, []BehindReason{{Kind: BehindKubernetesPatch, From: "v1.35.6", To: "v1.35.7", Detail: "the chart's Kubernetes release for v1.35"}},
		Behind(httpPool("v1.13.6", defaultsAt("v1.13.6", "v1.35.7")), nil))

	mirror := defaultsAt("v1.13.6", "v1.35.6")
	mirror.ImageFactoryURL = "https://factory.mirror.internal"
	assert.Equal(t, []BehindReason{{Kind: BehindFactory, From: "https://factory.talos.dev", To: "https://factory.mirror.internal", Detail: "the platform's factory URL for new pools"}},
		Behind(httpPool("v1.13.6", mirror), nil))

	all := Behind(httpPool("v1.13.6", Defaults{SchematicID: behindSchematic, Version: "v1.13.8", ImageFactoryURL: "https://factory.mirror.internal/",
		KubernetesReleases: map[string]string{"v1.35": "v1.35.9"}}), catalog)
	assert.Equal(t, []string{BehindCatalogPatch, BehindChartDefault, BehindKubernetesPatch, BehindFactory}, kinds(all), "in a fixed order")
}

// Only a golden a pool on this class could clone now counts: of its
// schematic and minor, newer, Succeeded (or kept as its PVC), not retiring,
// on its class (a per-class golden by the class in its name).
func TestBehindCatalogGoldensThatCount(t *testing.T) {
	d := defaultsAt("v1.13.6", "v1.35.6")
	pool := httpPool("v1.13.6", d)
	cases := map[string]struct {
		name   string
		golden fleet.Golden
		counts bool
	}{
		"succeeded on the class":     {golden.Name(behindSchematic, "v1.13.7"), fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"}, true},
		"kept as its PVC":            {golden.Name(behindSchematic, "v1.13.7"), fleet.Golden{FoundAs: "PersistentVolumeClaim", Class: "replicated"}, true},
		"importing":                  {golden.Name(behindSchematic, "v1.13.7"), fleet.Golden{FoundAs: "DataVolume", Phase: "ImportInProgress", Class: "replicated"}, false},
		"failed":                     {golden.Name(behindSchematic, "v1.13.7"), fleet.Golden{FoundAs: "DataVolume", Phase: "Failed", Class: "replicated"}, false},
		"retiring":                   {golden.Name(behindSchematic, "v1.13.7"), fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated", Retiring: true}, false},
		"another class":              {golden.Name(behindSchematic, "v1.13.7"), fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded", Class: "ceph-rbd"}, false},
		"per-class golden on it":     {golden.PerClassName(behindSchematic, "v1.13.7", "replicated"), fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"}, true},
		"per-class golden elsewhere": {golden.PerClassName(behindSchematic, "v1.13.7", "ceph-rbd"), fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded", Class: "ceph-rbd"}, false},
		"golden of no class known":   {golden.Name(behindSchematic, "v1.13.7"), fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded"}, true},
		"another schematic":          {golden.Name("abc", "v1.13.7"), fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"}, false},
		"another minor":              {golden.Name(behindSchematic, "v1.14.0"), fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"}, false},
		"older":                      {golden.Name(behindSchematic, "v1.13.5"), fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"}, false},
		"a pre-release of it":        {golden.Name(behindSchematic, "v1.13.6-rc.1"), fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"}, false},
		"not a golden's name":        {golden.Prefix + "something", fleet.Golden{FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"}, false},
	}
	for what, c := range cases {
		got := Behind(pool, map[string]fleet.Golden{c.name: c.golden})
		if c.counts {
			assert.Equal(t, []string{BehindCatalogPatch}, kinds(got), what)
		} else {
			assert.Empty(t, got, what)
		}
	}

	noClass := pool
	noClass.Class = ""
	assert.Equal(t, []string{BehindCatalogPatch}, kinds(Behind(noClass, map[string]fleet.Golden{cases["another class"].name: cases["another class"].golden})),
		"a pool whose class is the cluster default, not known here, may take any class's golden")

	newest := Behind(pool, map[string]fleet.Golden{
		golden.Name(behindSchematic, "v1.13.7"):  {FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"},
		golden.Name(behindSchematic, "v1.13.10"): {FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"},
		golden.Name(behindSchematic, "v1.13.9"):  {FoundAs: "DataVolume", Phase: "Succeeded", Class: "replicated"},
	})
	assert.Equal(t, "v1.13.10", newest[0].To, "the newest patch, as versions order (10 after 9)")
}

// The chart's default counts on the pool's own schematic only, across
// minors; Kubernetes compares patches of the pool's own minor; the factory
// only for an HTTP pool, a trailing slash aside.
func TestBehindNeighbours(t *testing.T) {
	d := defaultsAt("v1.14.0", "v1.35.6")
	own := httpPool("v1.13.6", d)
	own.SchematicID = "nvidia"
	assert.Empty(t, Behind(own, nil), "a pool of its own schematic is not on the chart's default flavor")
	assert.Equal(t, []string{BehindChartDefault}, kinds(Behind(httpPool("v1.13.6", d), nil)), "a newer minor for new pools counts")
	assert.Empty(t, Behind(httpPool("v1.14.0", defaultsAt("v1.14.0-beta.1", "v1.35.6")), nil), "a pre-release is older than its release")
	assert.Equal(t, []string{BehindChartDefault}, kinds(Behind(httpPool("v1.14.0-alpha.1", defaultsAt("v1.14.0-beta.1", "v1.35.6")), nil)))

	k := httpPool("v1.13.6", defaultsAt("v1.13.6", "v1.35.7"))
	k.Kubernetes = "v1.34.9"
	assert.Empty(t, Behind(k, nil), "v1.34's release is the chart's")
	k.Kubernetes = "v1.36.0"
	assert.Empty(t, Behind(k, nil), "a minor the chart does not list")
	k.Kubernetes = ""
	assert.Empty(t, Behind(k, nil), "no release resolved")
	k.Kubernetes = "v1.35.8"
	assert.Empty(t, Behind(k, nil), "newer than the chart's")

	mirror := defaultsAt("v1.13.6", "v1.35.6")
	mirror.ImageFactoryURL = "https://factory.mirror.internal"
	clone := httpPool("v1.13.6", mirror)
	clone.Clone, clone.ImageFactoryURL, clone.Golden = true, "", golden.Name(behindSchematic, "v1.13.6")
	assert.Empty(t, Behind(clone, nil), "a clone pool imports from no factory")
	slash := httpPool("v1.13.6", defaultsAt("v1.13.6", "v1.35.6"))
	slash.ImageFactoryURL = "https://factory.talos.dev/"
	assert.Empty(t, Behind(slash, nil), "the same factory with a trailing slash")

	bad := httpPool("1.13.6", defaultsAt("v1.13.7", "v1.35.6"))
	assert.Empty(t, Behind(bad, map[string]fleet.Golden{golden.Name(behindSchematic, "v1.13.7"): {FoundAs: "DataVolume", Phase: "Succeeded"}}), "a version that is no release compares with nothing")
}
