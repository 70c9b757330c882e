package rollout_test

import (
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const mirror = "https://factory.mirror.internal"

// stockFleet is a stock Cozystack after the takeover
// (cmd/workerimage/testdata/rollout/stock.yaml): no _cluster.talos, the
// catalog's Package publishing the mirror and its CA, alpha-web created
// from the dashboard before the takeover on the public factory, alpha-apps
// on the mirror by the published defaults, beta-golden cloning.
func stockFleet(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render.LoadObjects(filepath.Join("..", "..", "cmd", "workerimage", "testdata", "rollout", "stock.yaml"))
	require.NoError(t, err)
	return objs
}

// The CVE plan on a stock Cozystack: the pool created before the takeover
// keeps the public factory, while the catalog publishes the mirror new pools
// import from: in that closed network its new workers would never boot, so
// it is blocked, not "can start", --strict or not, with the command that
// moves both in one re-image: with the mirror's CA, published beside the URL
// (a pool's own URL takes no CA of the platform's), and narrowed to that
// pool, since --factory-ca would write the CA into alpha-apps' values too.
// Before, it moved with a note and the plan could start (issue 59).
func TestRolloutBlocksAPoolOffThePublishedFactory(t *testing.T) {
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: schematic + "/v1.13"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, MaxClones: 10}
	plan := mustRollout(t, stockFleet(t), o)
	pools := byPool(plan)
	web := pools["tenant-alpha/kubernetes-nodes-alpha-web"]
	require.Equal(t, rollout.StateOtherFactory, web.State)
	assert.Equal(t, "https://factory.talos.dev", web.To.ImageFactoryURL.Value, "the move keeps the pool's own factory")
	command := "workerimage rollout --to-talos v1.13.7 --to-factory " + mirror + " --factory-ca mirror-ca.pem --pool tenant-alpha/kubernetes-nodes-alpha-web --flavor " + schematic + "/v1.13 --wave 5 --max-clones 10"
	want := &rollout.OtherFactory{ImageFactoryURL: "https://factory.talos.dev", Published: mirror, PublishedFrom: report.CatalogChannel, PublishedCA: true, Blocks: true, Command: command}
	assert.Equal(t, want, web.OtherFactory)
	assert.Contains(t, web.Reason, "it would import from https://factory.talos.dev once moved, not from "+mirror+", which "+report.CatalogChannel+" publishes for new pools")
	assert.Contains(t, web.Reason, "(--to-factory "+mirror+" --factory-ca mirror-ca.pem), or leave it out (--exclude tenant-alpha/kubernetes-nodes-alpha-web); the factory line below plans it")
	assert.Equal(t, []rollout.RolloutPool{web}, plan.Blocked)
	assert.Nil(t, pools["tenant-alpha/kubernetes-nodes-alpha-apps"].OtherFactory, "it imports from the published mirror")
	assert.Equal(t, rollout.StateMoves, pools["tenant-alpha/kubernetes-nodes-alpha-apps"].State)
	assert.Nil(t, pools["tenant-beta/kubernetes-nodes-beta-golden"].OtherFactory, "it clones")
	assert.Equal(t, 1, plan.OtherFactoryPools)
	assert.Equal(t, 1, plan.OtherFactoryBlocked)
	assert.Equal(t, command, plan.FactoryCommand)
	assert.False(t, plan.CanStart, "not can start: the pool's workers would never boot")

	o.Strict = true
	strict := mustRollout(t, stockFleet(t), o)
	assert.False(t, strict.CanStart, "--strict stops for it too")
	assert.Contains(t, strict.FactoryCommand, " --strict")

	// The command as printed plans no pool off the mirror, and can start.
	o.Strict = false
	o.Selection.Pools = []string{"tenant-alpha/kubernetes-nodes-alpha-web"}
	o.Target.FactoryURL, o.Target.FactoryCA, o.Target.FactoryCAFrom = mirror, publishedCA(t), "mirror-ca.pem"
	fixed := mustRollout(t, stockFleet(t), o)
	assert.Empty(t, fixed.Blocked)
	assert.True(t, fixed.CanStart)
	require.Len(t, fixed.Pools(), 1)
	assert.Equal(t, mirror, fixed.Pools()[0].To.ImageFactoryURL.Value)
}

// The command the plan prints moves the pool's flavor and factory, with the
// published CA, in one change of its values, to one new template; planned
// again with it, no pool imports from another factory.
func TestRolloutFactoryCommandMovesBothInOneReimage(t *testing.T) {
	ca := publishedCA(t)
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"tenant-alpha/kubernetes-nodes-alpha-web"}, Flavor: schematic + "/v1.13"},
		Target: rollout.RolloutTarget{TalosVersion: "v1.13.7", FactoryURL: mirror, FactoryCA: ca, FactoryCAFrom: "mirror-ca.pem"}, MaxClones: 10}
	plan := mustRollout(t, stockFleet(t), o)
	require.Len(t, plan.Pools(), 1)
	web := plan.Pools()[0]
	assert.Equal(t, map[string]any{"talos": map[string]any{"version": "v1.13.7", "imageFactoryURL": mirror, "imageFactoryCA": ca}}, web.ValuesChange, "one patch")
	assert.Equal(t, mirror, web.To.ImageFactoryURL.Value)
	assert.Nil(t, web.OtherFactory)
	assert.Zero(t, plan.OtherFactoryPools)
	assert.Empty(t, plan.FactoryCommand)
	assert.NotEqual(t, web.MachineTemplate.Current, web.MachineTemplate.Target)
}

// publishedCA is the CA the stock fleet's catalog publishes.
func publishedCA(t *testing.T) string {
	t.Helper()
	for _, o := range stockFleet(t) {
		if o.GetKind() == "ConfigMap" && o.GetName() == "kubernetes-worker-image-ca" {
			pem, _, _ := unstructured.NestedString(o.Object, "data", "ca.pem")
			require.NotEmpty(t, pem)
			return pem
		}
	}
	t.Fatal("no ConfigMap kubernetes-worker-image-ca in the stock fleet")
	return ""
}

// withClusterFactory sets _cluster.talos.imageFactoryURL in a cozystack-values
// Secret: a platform that carries _cluster (this repository's platform chart).
func withClusterFactory(url string) func(*unstructured.Unstructured) {
	return func(o *unstructured.Unstructured) {
		text, _, _ := unstructured.NestedString(o.Object, "stringData", "values.yaml")
		var values map[string]any
		if err := yaml.Unmarshal([]byte(text), &values); err != nil {
			panic(err)
		}
		cluster, _ := values["_cluster"].(map[string]any)
		cluster["talos"] = map[string]any{"imageFactoryURL": url}
		raw, err := yaml.Marshal(values)
		if err != nil {
			panic(err)
		}
		o.Object["stringData"] = map[string]any{"values.yaml": string(raw)}
	}
}

// The example fleet's two HTTP pools keep the public factory while the
// catalog publishes the mirror: each says so, and one command, the
// selection as it was, moves both. Where a tenant's _cluster names another
// factory, its pool gets that one, and each pool its own command narrowed to
// it. Where another HTTP pool of the waves is on a factory of its own that
// its defaults give, the command is narrowed to the pools it is for, so as
// not to move that one.
func TestRolloutFactoryCommandNarrowsOnlyWhereItMust(t *testing.T) {
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, WaveSize: 3, MaxClones: 10}
	plan := mustRollout(t, mirroredFleet(t, nil), o)
	pools := byPool(plan)
	command := "workerimage rollout --to-talos v1.13.7 --to-factory " + mirror + " --flavor " + flavor136 + " --wave 3 --max-clones 10"
	for _, hr := range []string{"tenant-acme/kubernetes-nodes-acme-workers", "tenant-beta/kubernetes-nodes-beta-web"} {
		assert.Equal(t, &rollout.OtherFactory{ImageFactoryURL: "https://factory.talos.dev", Published: mirror, PublishedFrom: report.CatalogChannel, Blocks: true, Command: command}, pools[hr].OtherFactory, hr)
		assert.Equal(t, rollout.StateOtherFactory, pools[hr].State, hr)
	}
	assert.Equal(t, 2, plan.OtherFactoryPools)
	assert.Equal(t, 2, plan.OtherFactoryBlocked)
	assert.Equal(t, command, plan.FactoryCommand, "every HTTP pool of the waves gets the mirror: the selection as it was")

	const other = "https://factory.other.internal"
	two := mirroredFleet(t, map[string]func(*unstructured.Unstructured){"Secret/tenant-beta/cozystack-values": withClusterFactory(other)})
	plan = mustRollout(t, two, o)
	pools = byPool(plan)
	assert.Equal(t, 2, plan.OtherFactoryPools)
	assert.Empty(t, plan.FactoryCommand, "two factories: no one command")
	web := pools["tenant-beta/kubernetes-nodes-beta-web"].OtherFactory
	assert.Equal(t, other, web.Published)
	assert.Equal(t, "_cluster.talos.imageFactoryURL", web.PublishedFrom)
	assert.False(t, web.Blocks, "a factory _cluster gives is a note: only the catalog's published one marks the network's")
	assert.Equal(t, rollout.StateMoves, pools["tenant-beta/kubernetes-nodes-beta-web"].State)
	assert.Equal(t, rollout.StateOtherFactory, pools["tenant-acme/kubernetes-nodes-acme-workers"].State)
	assert.Equal(t, 1, plan.OtherFactoryBlocked)
	assert.Equal(t, "workerimage rollout --to-talos v1.13.7 --to-factory "+other+" --pool tenant-beta/kubernetes-nodes-beta-web --flavor "+flavor136+" --wave 3 --max-clones 10", web.Command)
	assert.Contains(t, pools["tenant-acme/kubernetes-nodes-acme-workers"].OtherFactory.Command, "--to-factory "+mirror+" --pool tenant-acme/kubernetes-nodes-acme-workers ")

	ownFactory := mirroredFleet(t, map[string]func(*unstructured.Unstructured){
		"Secret/tenant-beta/cozystack-values": withClusterFactory(other),
		"HelmRelease/tenant-beta/kubernetes-nodes-beta-web": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, other, "spec", "values", "talos", "imageFactoryURL"))
		},
	})
	plan = mustRollout(t, ownFactory, o)
	pools = byPool(plan)
	assert.Nil(t, pools["tenant-beta/kubernetes-nodes-beta-web"].OtherFactory, "it imports from the factory its defaults give")
	assert.Equal(t, 1, plan.OtherFactoryPools)
	assert.Equal(t, "workerimage rollout --to-talos v1.13.7 --to-factory "+mirror+" --pool tenant-acme/kubernetes-nodes-acme-workers --flavor "+flavor136+" --wave 3 --max-clones 10", plan.FactoryCommand,
		"narrowed: the selection as it was would move beta-web off its factory")
}

// With --to-factory the target names the factory: the plan says nothing of
// the factory new pools get, not even of acme-workers, whose own defaults
// (it reads no _cluster) name the public one it leaves.
func TestRolloutToFactorySaysNothingOfAnotherFactory(t *testing.T) {
	plan := mustRollout(t, mirroredFleet(t, nil), rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7", FactoryURL: mirror}})
	pools := byPool(plan)
	for _, hr := range []string{"tenant-acme/kubernetes-nodes-acme-workers", "tenant-beta/kubernetes-nodes-beta-web"} {
		require.Equal(t, rollout.StateMoves, pools[hr].State, hr)
		assert.Equal(t, mirror, pools[hr].To.ImageFactoryURL.Value, hr)
		assert.Nil(t, pools[hr].OtherFactory, hr)
	}
	assert.Zero(t, plan.OtherFactoryPools)
	assert.Empty(t, plan.FactoryCommand)
}
