package rollout_test

import (
	"encoding/json"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A pool chart from before maxSurge (its schema has no such value, and its
// templates refuse the key) cannot bound a pool's roll: the pool above the
// bound is listed apart saying so and how to go on; the rest moves, unless
// --strict.
func TestRolloutListsApartAPoolNoSurgeKeepsWithin(t *testing.T) {
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(chrt.Schema, &schema))
	delete(schema["properties"].(map[string]any), "maxSurge")
	chrt.Schema, err = json.Marshal(schema)
	require.NoError(t, err)

	state := render.NewState(settledFleet(t, nil)...)
	served, err := state.APIVersions()
	require.NoError(t, err)
	target := report.Target{Provider: state, Desc: "state", APIVersions: served}
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136, Exclude: []string{"kubernetes-gamma-big"}}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, WaveSize: 5, MaxClones: 1}
	plan := func(o rollout.RolloutOptions) *rollout.RolloutPlan {
		f, err := report.ReadPinsToPlan(chrt, target, fleet.Options{Chart: chrt.Metadata.Name})
		require.NoError(t, err)
		p, err := rollout.Rollout(chrt, target, f, o)
		require.NoError(t, err)
		return p
	}
	p := plan(o)
	require.Len(t, p.CannotMove, 1)
	big := p.CannotMove[0]
	assert.Equal(t, "tenant-acme/kubernetes-nodes-acme-golden", big.HelmRelease)
	assert.Equal(t, rollout.StateAboveBound, big.State)
	assert.Equal(t, "it clones 2 disks at once (its rolling update: maxSurge 10 and maxUnavailable 1 for 2 workers), more than --max-clones 1 on its own, and this pool chart has no maxSurge value to bound its roll (a chart before it refuses the key): upgrade the platform to a pool chart that has it, give --max-clones 2, or leave the pool out (--exclude tenant-acme/kubernetes-nodes-acme-golden)", big.Reason)
	assert.True(t, p.CanStart)
	assert.NotEmpty(t, p.Pools())
	for _, pool := range p.Pools() {
		assert.NotContains(t, pool.ValuesChange, "maxSurge", pool.HelmRelease)
	}
	o.Strict = true
	assert.False(t, plan(o).CanStart, "--strict: a pool that cannot move stops the start")
}

// A pool an earlier run moved, still rolling, is waited for and written
// nothing: above a bound on its own, it has a wave of its own, which says
// why; every other wave keeps the bound.
func TestRolloutWaitsForARollingPoolAboveTheBoundAlone(t *testing.T) {
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-acme"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, WaveSize: 5}
	golden := byPool(mustRollout(t, settledFleet(t, nil), o))["tenant-acme/kubernetes-nodes-acme-golden"]
	require.Equal(t, int64(2), golden.Workers, "the fixture's size the bound below relies on")
	rolling := withRecord(t, settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-acme/kubernetes-nodes-acme-golden": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, "v1.13.7", "spec", "values", "talos", "version"))
		},
		"MachineDeployment/tenant-acme/kubernetes-acme-golden": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, golden.MachineTemplate.Target, "spec", "template", "spec", "infrastructureRef", "name"))
			require.NoError(t, unstructured.SetNestedField(o.Object, int64(0), "status", "updatedReplicas"))
		},
	}), o.Target, "tenant-acme/kubernetes-nodes-acme-golden")
	o.MaxClones = 1
	plan := mustRollout(t, rolling, o)
	first := plan.Waves[0]
	require.Len(t, first.Pools, 1)
	assert.Equal(t, rollout.StateRolling, first.Pools[0].State)
	assert.Nil(t, first.Pools[0].ValuesChange, "waited for, not patched")
	assert.Equal(t, int64(2), first.ClonesInFlight, "by the rolling update its MachineDeployment holds")
	assert.Equal(t, "tenant-acme/kubernetes-nodes-acme-golden clones 2 disks of "+v137+" at once, more than --max-clones 1 on its own, rolling already (an earlier run moved it, and this one writes nothing to it): a wave of its own", first.Alone)
	for _, w := range plan.Waves[1:] {
		assert.Empty(t, w.Alone)
		for _, n := range w.ClonesPerGolden {
			assert.LessOrEqual(t, n, int64(1))
		}
	}
}

// A pool the chart refuses as it is (here: its flavor's golden is absent and
// none of its workers is ready yet) has no rolling update to read before the
// target's render: the bound is judged on that render, and the change that
// takes maxSurge is rendered again, with the same template.
func TestRolloutBoundsAPoolRefusedAsItIs(t *testing.T) {
	refusedNow := settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-acme/kubernetes-nodes-acme-golden": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, "v1.13.3", "spec", "values", "talos", "version"))
		},
		"MachineDeployment/tenant-acme/kubernetes-acme-golden": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, int64(0), "status", "readyReplicas"))
		},
	})
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"tenant-acme/kubernetes-nodes-acme-golden"}}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, WaveSize: 5}
	unbounded := mustRollout(t, refusedNow, o)
	require.Len(t, unbounded.Pools(), 1, "refused as it is, it renders at the target")
	golden := unbounded.Pools()[0]
	require.Empty(t, golden.MachineTemplate.Current, "the chart refuses it as it is")
	require.Equal(t, int64(2), golden.ClonesInFlight)

	o.MaxClones = 1
	plan := mustRollout(t, refusedNow, o)
	require.Len(t, plan.Pools(), 1)
	bounded := plan.Pools()[0]
	assert.Equal(t, map[string]any{"maxSurge": int64(0), "talos": map[string]any{"version": "v1.13.7"}}, bounded.ValuesChange)
	assert.Equal(t, int64(1), bounded.ClonesInFlight)
	assert.Equal(t, golden.MachineTemplate.Target, bounded.MachineTemplate.Target)
}

// A run that bounded a pool's roll with a maxSurge and stopped before its
// last wave leaves the pool's own in the rollout's record: the next run's
// plan puts it back, for a pool on the target now (Restore, beside its
// line on the target) and for one still rolling (its wave's, waited on),
// each with what the record kept. A write without a surge, or one the pool
// has changed since (its generation), gives nothing to put back.
func TestRolloutPutsBackTheSurgeAStoppedRunWrote(t *testing.T) {
	const web = "tenant-beta/kubernetes-nodes-beta-web"
	to137 := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	moved := func(rolledOut bool) map[string]func(*unstructured.Unstructured) {
		return map[string]func(*unstructured.Unstructured){
			"HelmRelease/" + web: func(o *unstructured.Unstructured) {
				require.NoError(t, unstructured.SetNestedField(o.Object, "v1.13.7", "spec", "values", "talos", "version"))
				require.NoError(t, unstructured.SetNestedField(o.Object, int64(0), "spec", "values", "maxSurge"))
			},
			"MachineDeployment/tenant-beta/kubernetes-beta-web": func(o *unstructured.Unstructured) {
				require.NoError(t, unstructured.SetNestedField(o.Object, "kubernetes-beta-web-086b68", "spec", "template", "spec", "infrastructureRef", "name"))
				if !rolledOut {
					require.NoError(t, unstructured.SetNestedField(o.Object, int64(1), "status", "updatedReplicas"))
				}
			},
		}
	}
	kept := &report.SurgeRestore{Wrote: 0, Had: true, Own: float64(3)}
	withSurge := func(edit map[string]func(*unstructured.Unstructured), surge *report.SurgeRestore) []*unstructured.Unstructured {
		return withRecordSurges(t, settledFleet(t, edit), to137, map[string]*report.SurgeRestore{web: surge}, web)
	}
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: to137, WaveSize: 2}

	plan := mustRollout(t, withSurge(moved(true), kept), o)
	require.Len(t, plan.Restore, 1)
	assert.Equal(t, web, plan.Restore[0].HelmRelease)
	assert.Equal(t, rollout.StateOnTarget, plan.Restore[0].State)
	assert.Equal(t, kept, plan.Restore[0].SurgeRestore)
	assert.NotEmpty(t, plan.Restore[0].UID, "the restore is guarded by the UID the record holds")
	assert.Equal(t, web, byPool(plan)[web].HelmRelease, "listed on the target too")
	assert.Equal(t, "set to 0 by an earlier run to hold its bound, restored after the last wave (its own maxSurge 3 put back)", plan.Restore[0].SurgeRestore.ResumedText())

	plan = mustRollout(t, withSurge(moved(false), kept), o)
	assert.Empty(t, plan.Restore)
	rolling := plan.Waves[0].Pools[0]
	assert.Equal(t, web, rolling.HelmRelease)
	assert.Equal(t, rollout.StateRolling, rolling.State)
	assert.Nil(t, rolling.ValuesChange, "waited for, not patched")
	assert.Equal(t, kept, rolling.SurgeRestore)

	// Selected by the flavor it left, the pool on the target is no longer
	// this rollout's to move, but its surge is still put back.
	byFlavor := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta", Flavor: flavor136}, Target: to137, WaveSize: 2}
	plan = mustRollout(t, withSurge(moved(true), kept), byFlavor)
	assert.Empty(t, plan.OnTarget)
	require.Len(t, plan.Restore, 1)
	assert.Equal(t, web, plan.Restore[0].HelmRelease)

	// Recorded at its generation; the HelmRelease written since.
	changed := withSurge(moved(true), kept)
	for _, obj := range changed {
		if obj.GetKind() == "HelmRelease" && obj.GetNamespace()+"/"+obj.GetName() == web {
			obj.SetGeneration(report.Generation(obj.Object) + 1)
		}
	}
	for what, objs := range map[string][]*unstructured.Unstructured{
		"a write without a surge":   withSurge(moved(true), nil),
		"no write of the pool":      settledFleet(t, moved(true)),
		"the pool written since it": changed,
	} {
		plan := mustRollout(t, objs, o)
		assert.Empty(t, plan.Restore, what)
		for _, p := range append(plan.Pools(), plan.OnTarget...) {
			assert.Nil(t, p.SurgeRestore, "%s: %s", what, p.HelmRelease)
		}
	}
}
