package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Without a cluster, what the values publish is listed and compared with
// nothing.
func TestPublishedDefaultsWithoutACluster(t *testing.T) {
	p, err := publishedDefaults(Target{}, `{"talos":{"imageFactoryURL":"https://factory.mirror.internal","extra":1},"kubernetesWorkerImage":{"metrics":true}}`)
	require.NoError(t, err)
	assert.Equal(t, "no cluster read", p.NowFrom)
	assert.Nil(t, p.Now)
	var fields []string
	for _, f := range p.Fields {
		fields = append(fields, f.Field)
		assert.False(t, f.Changes, f.Field)
	}
	assert.Equal(t, []string{"talos.imageFactoryURL", "talos.imageFactoryCA", "talos.installerRepository", "talos.registryMirrors", "osImage", "kubernetesWorkerImage.metrics", "talos.extra"}, fields, "the closed network's first, then every other the ConfigMap holds")
	_, err = publishedDefaults(Target{}, "{")
	assert.Error(t, err)
}

// A golden's factory note follows the Image Factory the chart resolved for
// its entry and the key it took it from, whatever rule the chart applies:
// goldens to create and to keep that import from another factory than the
// one new pools are given are named, with the key of the values' shape;
// those importing from it, the other outcomes, and a report with no such
// factory are not.
func TestFactoryNotesFollowWhatTheChartResolved(t *testing.T) {
	rep := func() *CatalogReport {
		return &CatalogReport{
			Values:        map[string]any{"imageFactoryURL": "https://factory.talos.dev"},
			TenantFactory: &Sourced{Value: "https://factory.mirror.internal/", Source: "published"},
			Goldens: []CatalogGolden{
				{Name: "a", Outcome: GoldenCreates, factory: "https://factory.talos.dev", factoryFrom: "imageFactoryURL"},
				{Name: "b", Outcome: GoldenCreates, factory: "https://factory.other.internal", factoryFrom: "images[1].imageFactoryURL"},
				{Name: "c", Outcome: GoldenCreates, factory: "https://factory.mirror.internal", factoryFrom: "tenantWorkers.talos.imageFactoryURL"},
				{Name: "d", Outcome: GoldenKeeps, factory: "https://factory.talos.dev", factoryFrom: "images[3].imageFactoryURL"},
				{Name: "e", Outcome: GoldenDropped},
				{Name: "f", Outcome: GoldenRetires, factory: "https://factory.talos.dev", factoryFrom: "imageFactoryURL"},
				{Name: "g", Outcome: GoldenCreates, factory: "https://factory.talos.dev", factoryFrom: "somewhere.else"},
				{Name: "h", Outcome: GoldenCreates, factory: "https://factory.talos.dev", factoryFrom: "the built-in default (neither imageFactoryURL nor tenantWorkers.talos.imageFactoryURL is set)"},
				{Name: "k", Outcome: GoldenKeeps, factory: "https://factory.talos.dev", factoryFrom: "tenantWorkers.talos.imageFactoryURL", createsFrom: "https://factory.mirror.internal"},
				{Name: "m", Outcome: GoldenKeeps, factory: "https://factory.talos.dev", factoryFrom: "imageFactoryURL"},
			},
		}
	}
	notes := func(r *CatalogReport) map[string]string {
		out := map[string]string{}
		for _, g := range r.Goldens {
			if g.FactoryNote != "" {
				out[g.Name] = g.FactoryNote
			}
		}
		return out
	}
	r := rep()
	r.noteFactories(ValuesPackage)
	assert.Equal(t, map[string]string{
		"a": "imports from https://factory.talos.dev (the catalog's imageFactoryURL), not from https://factory.mirror.internal/, the Image Factory new pools are given; for it to import from there, set spec.components.kubernetes-worker-image.values.imageFactoryURL of the Package to https://factory.mirror.internal/, or remove it so the goldens import from the factory the catalog publishes",
		"b": "imports from https://factory.other.internal (its entry's own spec.components.kubernetes-worker-image.values.images[1].imageFactoryURL), not from https://factory.mirror.internal/, the Image Factory new pools are given; for it to import from there, set spec.components.kubernetes-worker-image.values.images[1].imageFactoryURL to https://factory.mirror.internal/, or remove it so spec.components.kubernetes-worker-image.values.imageFactoryURL of the Package applies",
		"d": "imported from https://factory.talos.dev, not from https://factory.mirror.internal/, the Image Factory new pools are given; a golden's source never changes (its DataVolume cannot be edited) and pools clone it as it is (its entry names it in spec.components.kubernetes-worker-image.values.images[3].imageFactoryURL)",
		"g": "imports from https://factory.talos.dev (spec.components.kubernetes-worker-image.values.somewhere.else), not from https://factory.mirror.internal/, the Image Factory new pools are given; for it to import from there, set spec.components.kubernetes-worker-image.values.imageFactoryURL of the Package to https://factory.mirror.internal/",
		"h": "imports from https://factory.talos.dev (the catalog chart's built-in factory: the values set neither imageFactoryURL nor tenantWorkers.talos.imageFactoryURL), not from https://factory.mirror.internal/, the Image Factory new pools are given; for it to import from there, set spec.components.kubernetes-worker-image.values.imageFactoryURL of the Package to https://factory.mirror.internal/",
		"k": "imported from https://factory.talos.dev, not from https://factory.mirror.internal/, the Image Factory new pools are given; a golden's source never changes (its DataVolume cannot be edited) and pools clone it as it is, while the goldens the catalog creates import from https://factory.mirror.internal, the factory it publishes for new pools",
		"m": "imported from https://factory.talos.dev, not from https://factory.mirror.internal/, the Image Factory new pools are given; a golden's source never changes (its DataVolume cannot be edited) and pools clone it as it is, while the goldens the catalog creates import from spec.components.kubernetes-worker-image.values.imageFactoryURL of the Package",
	}, notes(r), "c imports from the tenant factory (a trailing slash is the same URL); e and f neither create nor keep")

	r = rep()
	r.noteFactories(ValuesPlatform)
	assert.Contains(t, notes(r)["a"], "set kubernetesWorkerImage.imageFactoryURL in the platform values to")
	assert.Contains(t, notes(r)["b"], "set kubernetesWorkerImage.images[1].imageFactoryURL to")
	r = rep()
	r.noteFactories(ValuesCatalog)
	assert.Contains(t, notes(r)["a"], "set the catalog's imageFactoryURL (spec.components.kubernetes-worker-image.values.imageFactoryURL of Package cozystack.kubernetes-worker-image) to")
	assert.Contains(t, notes(r)["b"], "set images[1].imageFactoryURL to")

	r = rep()
	r.TenantFactory = nil
	r.noteFactories(ValuesPackage)
	assert.Empty(t, notes(r), "no factory given to new pools: nothing to compare with")
}
