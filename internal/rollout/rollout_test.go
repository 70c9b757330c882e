package rollout_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

const (
	schematic = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
	v137      = "talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.7"
	flavor136 = schematic + "/v1.13.6"
)

// settledFleet is the example cluster as the pool chart deploys it, every
// HelmRelease released and every MachineDeployment rolled out, with the
// golden of v1.13.7 imported (the CLI's rollout fixture), without the
// mirror its catalog publishes (publicFactoryOnly; mirroredFleet has it);
// edit changes objects by "<kind>/<namespace>/<name>", and more objects
// are added.
func settledFleet(t testing.TB, edit map[string]func(*unstructured.Unstructured), more ...string) []*unstructured.Unstructured {
	t.Helper()
	return publicFactoryOnly(mirroredFleet(t, edit, more...))
}

// mirroredFleet is the fleet as its state file holds it: the catalog
// publishes the mirror https://factory.mirror.internal for new pools, and
// the HTTP pools created before it import from the public factory.
func mirroredFleet(t testing.TB, edit map[string]func(*unstructured.Unstructured), more ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render.LoadObjects(filepath.Join("..", "..", "cmd", "workerimage", "testdata", "rollout", "cluster.yaml"))
	require.NoError(t, err)
	for _, o := range objs {
		if f := edit[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()]; f != nil {
			f(o)
		}
	}
	for _, text := range more {
		extra, err := render.ParseObjects([]byte(text))
		require.NoError(t, err)
		objs = append(objs, extra...)
	}
	return objs
}

// publicFactoryOnly is the fleet without the catalog's published defaults:
// no mirror is published, so an HTTP pool on the public factory is on the
// factory new pools get, and no pool is blocked for its factory (what
// TestRolloutBlocksAPoolOffThePublishedFactory holds). For the tests whose
// subject is elsewhere.
func publicFactoryOnly(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	return without(objs, "ConfigMap/cozy-public/"+report.TenantDefaultsConfigMap)
}

// without drops the objects of those "<kind>/<namespace>/<name>" keys.
func without(objs []*unstructured.Unstructured, keys ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		drop := false
		for _, k := range keys {
			drop = drop || o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName() == k
		}
		if !drop {
			out = append(out, o)
		}
	}
	return out
}

func planRollout(t *testing.T, objs []*unstructured.Unstructured, o rollout.RolloutOptions) (*rollout.RolloutPlan, error) {
	t.Helper()
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	state := render.NewState(objs...)
	served, err := state.APIVersions()
	require.NoError(t, err)
	target := report.Target{Provider: state, Desc: "state", APIVersions: served}
	if o.WaveSize == 0 {
		o.WaveSize = 5
	}
	// The CLI reads the pools with the render their plan reuses
	// (ReadPinsToPlan); the plan must be the one every pool rendered again
	// would give (ReadPins: helpers only, then Plan).
	f, err := report.ReadPinsToPlan(chrt, target, fleet.Options{Chart: chrt.Metadata.Name})
	require.NoError(t, err)
	plan, err := rollout.Rollout(chrt, target, f, o)
	again, err2 := report.ReadPins(chrt, target, fleet.Options{Chart: chrt.Metadata.Name})
	require.NoError(t, err2)
	planAgain, err2 := rollout.Rollout(chrt, target, again, o)
	require.Equal(t, fmt.Sprint(err2), fmt.Sprint(err), "the error, pools read to plan and read alone")
	require.Equal(t, planAgain, plan, "the plan, pools read to plan and read alone")
	return plan, err
}

func mustRollout(t *testing.T, objs []*unstructured.Unstructured, o rollout.RolloutOptions) *rollout.RolloutPlan {
	t.Helper()
	plan, err := planRollout(t, objs, o)
	require.NoError(t, err)
	return plan
}

// byPool indexes every pool of a plan, moving, on target, blocked or
// listed apart.
func byPool(p *rollout.RolloutPlan) map[string]rollout.RolloutPool {
	out := map[string]rollout.RolloutPool{}
	for _, list := range [][]rollout.RolloutPool{p.Pools(), p.OnTarget, p.Blocked, p.CannotMove} {
		for _, pool := range list {
			out[pool.HelmRelease] = pool
		}
	}
	return out
}

func helmReleaseValues(values string) func(*unstructured.Unstructured) {
	return func(o *unstructured.Unstructured) {
		var v map[string]any
		if err := yaml.Unmarshal([]byte(values), &v); err != nil {
			panic(err)
		}
		o.Object["spec"].(map[string]any)["values"] = v
	}
}

// keptFrom is where the chart says an unset talos field of p comes from: the
// template its MachineDeployment runs (the example fleet's pools leave
// talos.* unset, so each runs the flavor it was created with).
func keptFrom(field string, p rollout.RolloutPool) string {
	return field + " unset: kept from what the pool runs, KubevirtMachineTemplate " + p.Namespace + "/" + p.MachineTemplate.Running
}

// The example fleet moves from v1.13.6 to v1.13.7: every pool booting
// v1.13.6 changes talos.version, the field its version came from; each
// template the plan names is the one the chart renders for the changed
// values; the waves add up workers, clones and their storage; a pool the
// chart refuses at the target is listed apart and the rest moves, unless
// --strict.
func TestRolloutMovesTheFleetToTheNextPatch(t *testing.T) {
	objs := settledFleet(t, nil)
	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, WaveSize: 2})
	assert.Equal(t, 6, plan.Selected, "gamma-edge boots v1.13.4")
	require.Len(t, plan.Waves, 3)
	var order []string
	for _, w := range plan.Waves {
		for _, p := range w.Pools {
			order = append(order, p.HelmRelease)
		}
	}
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-golden", "tenant-acme/kubernetes-nodes-acme-workers", "tenant-beta/kubernetes-nodes-beta-batch", "tenant-beta/kubernetes-nodes-beta-spot", "tenant-beta/kubernetes-nodes-beta-web"}, order)
	assert.Empty(t, plan.Blocked)
	require.Len(t, plan.CannotMove, 1)
	assert.Equal(t, "tenant-gamma/kubernetes-nodes-gamma-big", plan.CannotMove[0].HelmRelease)
	assert.Equal(t, rollout.StateNotDeployed, plan.CannotMove[0].State)
	assert.Contains(t, plan.CannotMove[0].Reason, "no MachineDeployment tenant-gamma/kubernetes-gamma-big: the pool never deployed (the chart refuses it as it is: ")
	assert.Contains(t, plan.CannotMove[0].Reason, `instanceType "u1.4xlarge"`)
	assert.True(t, plan.CanStart, "gamma-big cannot move; it does not hold the others")
	strict := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, WaveSize: 2, Strict: true})
	assert.False(t, strict.CanStart, "--strict: all or nothing")
	assert.Len(t, strict.CannotMove, 1)
	assert.Len(t, strict.Pools(), 5, "the plan is the same")

	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	state := render.NewState(objs...)
	for _, p := range plan.Pools() {
		// A pool created through upstream's dashboard form names its
		// version in its own values; the others keep what they run.
		source := keptFrom("talos.version", p)
		for _, o := range objs {
			if o.GetKind() == "HelmRelease" && o.GetNamespace()+"/"+o.GetName() == p.HelmRelease {
				if v, _, _ := unstructured.NestedString(o.Object, "spec", "values", "talos", "version"); v != "" {
					source = "talos.version"
				}
			}
		}
		assert.Equal(t, rollout.StateMoves, p.State, p.HelmRelease)
		assert.Equal(t, []rollout.ValueChange{{Field: "talos.version", From: "v1.13.6", Source: source, To: "v1.13.7"}}, p.Changes, p.HelmRelease)
		assert.Equal(t, map[string]any{"talos": map[string]any{"version": "v1.13.7"}}, p.ValuesChange, p.HelmRelease)
		assert.Equal(t, "v1.13.7", render.Get(p.SpecValues, "talos.version"), p.HelmRelease)
		assert.Equal(t, int64(1), p.Generation)
		assert.Equal(t, p.MachineTemplate.Running, p.MachineTemplate.Current, "settled: the MachineDeployment runs what the chart renders today")
		assert.NotEqual(t, p.MachineTemplate.Current, p.MachineTemplate.Target)
		assert.Equal(t, "v1.13.7", p.To.Version.Value)

		// The chart itself, on the pool's values as Flux computes them with
		// talos.version set, names the same template.
		var hr *unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == "HelmRelease" && o.GetNamespace()+"/"+o.GetName() == p.HelmRelease {
				hr = o.DeepCopy()
			}
		}
		require.NotNil(t, hr)
		require.NoError(t, unstructured.SetNestedField(hr.Object, "v1.13.7", "spec", "values", "talos", "version"))
		vals, unresolved, err := fleet.Values(t.Context(), state, hr)
		require.NoError(t, err)
		require.Empty(t, unresolved)
		served, err := state.APIVersions()
		require.NoError(t, err)
		m, err := render.Render(chrt, render.Options{Release: render.Release{Name: p.Release, Namespace: p.Namespace, Upgrade: true}, Values: vals, Cluster: state, APIVersions: served})
		require.NoError(t, err)
		kmt, err := m.One("KubevirtMachineTemplate")
		require.NoError(t, err)
		assert.Equal(t, kmt.Name(), p.MachineTemplate.Target, p.HelmRelease)
	}
	pools := byPool(plan)
	golden := pools["tenant-acme/kubernetes-nodes-acme-golden"]
	assert.Equal(t, v137, golden.Golden)
	assert.Equal(t, int64(2), golden.Workers)
	assert.Equal(t, int64(2), golden.ClonesInFlight, "the chart's maxSurge 10 and maxUnavailable 1, at most its 2 workers")
	assert.Equal(t, "20Gi", golden.DiskSize)
	assert.Equal(t, "snapshot", golden.CloneStrategy)
	assert.Equal(t, int64(0), pools["tenant-beta/kubernetes-nodes-beta-batch"].ClonesInFlight, "at zero workers nothing clones")
	assert.Equal(t, int64(0), pools["tenant-acme/kubernetes-nodes-acme-workers"].ClonesInFlight, "the HTTP path clones nothing")

	w := plan.Waves[0]
	assert.Equal(t, int64(5), w.WorkersToReplace)
	assert.Equal(t, int64(2), w.ClonesInFlight)
	assert.Equal(t, "40Gi", w.TransientStorage)
	assert.Equal(t, int64(3), w.HTTPImports)
	assert.Equal(t, int64(0), plan.Waves[1].ClonesInFlight)
	assert.Equal(t, "0", plan.Waves[1].TransientStorage)

	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136, Namespace: "tenant-beta"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}})
	assert.True(t, plan.CanStart)
	assert.Len(t, plan.Waves, 1)
	assert.Len(t, plan.Waves[0].Pools, 3)
}

// Each way to name a pool selects it alone; a name that selects nothing is
// bad input, with the names it may have meant.
func TestRolloutSelectsPoolsByName(t *testing.T) {
	objs := settledFleet(t, nil)
	target := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	for _, name := range []string{"kubernetes-nodes-acme-golden", "kubernetes-acme-golden", "tenant-acme/kubernetes-nodes-acme-golden", "tenant-acme/kubernetes-acme-golden"} {
		plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{name}}, Target: target})
		assert.Equal(t, 1, plan.Selected, name)
		assert.Equal(t, "tenant-acme/kubernetes-nodes-acme-golden", plan.Pools()[0].HelmRelease, name)
	}
	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"kubernetes-acme-golden", "kubernetes-nodes-beta-web"}}, Target: target})
	assert.Equal(t, 2, plan.Selected)

	_, err := planRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"acme-golden"}}, Target: target})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--pool acme-golden names no pool")
	assert.Contains(t, err.Error(), "did you mean kubernetes-nodes-acme-golden, kubernetes-acme-golden?")
	_, err = planRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"kubernetes-acme-golden"}, Namespace: "tenant-beta"}, Target: target})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "names no pool in namespace tenant-beta")

	// --flavor keeps the pools booting it: gamma-edge alone boots v1.13.4.
	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: schematic + "/v1.13.4"}, Target: target})
	assert.Equal(t, 1, plan.Selected)
	assert.Equal(t, "tenant-gamma/kubernetes-nodes-gamma-edge", plan.Pools()[0].HelmRelease)
}

// A pool whose values cannot be computed, selected by where it is, cannot
// move: listed apart (--strict stops on it); --flavor cannot tell what it
// boots: it is listed as not known. Either way the rollout can start
// without it.
func TestRolloutListsAPoolNotResolvedApart(t *testing.T) {
	objs := without(settledFleet(t, nil), "Secret/tenant-gamma/cozystack-values")
	target := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-gamma"}, Target: target})
	require.Len(t, plan.CannotMove, 2)
	for _, p := range plan.CannotMove {
		assert.Equal(t, rollout.StateUnresolved, p.State, p.HelmRelease)
		assert.Contains(t, p.Reason, "could not resolve Secret chart values reference 'tenant-gamma/cozystack-values'")
	}
	assert.Empty(t, plan.Blocked)
	assert.True(t, plan.CanStart)
	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-gamma"}, Target: target, Strict: true})
	assert.False(t, plan.CanStart)

	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136}, Target: target})
	assert.Empty(t, plan.Blocked)
	assert.True(t, plan.CanStart)
	require.Len(t, plan.Unknown, 2)
	assert.Equal(t, "tenant-gamma/kubernetes-nodes-gamma-big", plan.Unknown[0].HelmRelease)
	assert.Contains(t, plan.Unknown[0].Reason, "whether it is selected is not known, and rollout cannot move it: its values cannot be computed")
	assert.Len(t, plan.Pools(), 5)
	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136, Namespace: "tenant-acme"}, Target: target})
	assert.Empty(t, plan.Unknown, "another namespace's pools are not selected at all")
}

// Targets and selections that say nothing or contradict themselves are
// refused before anything is read; a target the chart refuses is refused in
// its words.
func TestRolloutRefusesBadTargets(t *testing.T) {
	for _, c := range []struct {
		o    rollout.RolloutOptions
		want string
	}{
		{rollout.RolloutOptions{WaveSize: 1}, "give a target"},
		{rollout.RolloutOptions{WaveSize: 1, Target: rollout.RolloutTarget{Defaults: true, TalosVersion: "v1.13.7"}}, "leave out --to-talos"},
		{rollout.RolloutOptions{WaveSize: 1, Target: rollout.RolloutTarget{SchematicID: "abc"}}, "give its Talos version too"},
		{rollout.RolloutOptions{WaveSize: 1, Target: rollout.RolloutTarget{Builtin: true, FactoryURL: "https://x.example"}}, "give one of them"},
		{rollout.RolloutOptions{WaveSize: 0, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}}, "--wave 0"},
		{rollout.RolloutOptions{WaveSize: 1, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, Selection: rollout.RolloutSelection{Flavor: "v1.13.6"}}, "want SCHEMATIC/VERSION"},
		{rollout.RolloutOptions{WaveSize: 1, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, Selection: rollout.RolloutSelection{Flavor: schematic + "/1.13"}}, "vMAJOR.MINOR for every patch of that minor"},
		{rollout.RolloutOptions{WaveSize: 1, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, Selection: rollout.RolloutSelection{Flavor: schematic + "/v1.13.6/x"}}, "want SCHEMATIC/VERSION"},
		{rollout.RolloutOptions{WaveSize: 1, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7", FactoryCA: "pem", FactoryCAFrom: "ca.pem"}}, "--factory-ca ca.pem is the CA of the factory a pool moves to: give --to-factory URL with it"},
		{rollout.RolloutOptions{WaveSize: 1, MaxWorkers: -1, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}}, "--max-workers -1"},
		{rollout.RolloutOptions{WaveSize: 1, MaxClones: -1, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}}, "--max-clones -1"},
		{rollout.RolloutOptions{WaveSize: 1, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, Selection: rollout.RolloutSelection{Exclude: []string{""}}}, `--exclude "": give a pool`},
	} {
		err := c.o.Check()
		require.Error(t, err, "%+v", c.o)
		assert.Contains(t, err.Error(), c.want)
	}
	for _, ok := range []rollout.RolloutOptions{
		{WaveSize: 1, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7", SchematicID: "abc"}, Selection: rollout.RolloutSelection{Flavor: flavor136}},
		{WaveSize: 1, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, Selection: rollout.RolloutSelection{Flavor: schematic + "/v1.13", Exclude: []string{"x"}}},
		{WaveSize: 1, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, Selection: rollout.RolloutSelection{Flavor: schematic + "/v1.14.0-beta.1"}},
		{WaveSize: 1, MaxWorkers: 0, MaxClones: 0, Target: rollout.RolloutTarget{FactoryURL: "https://f.example", FactoryCA: "pem", FactoryCAFrom: "ca.pem"}},
	} {
		require.NoError(t, ok.Check(), "the neighbour of each refusal: %+v", ok)
	}

	objs := settledFleet(t, nil)
	_, err := planRollout(t, objs, rollout.RolloutOptions{Target: rollout.RolloutTarget{TalosVersion: "1.13.7"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the target is refused by the chart")
	assert.Contains(t, err.Error(), `version "1.13.7" (from talos.version) is malformed`)
	_, err = planRollout(t, objs, rollout.RolloutOptions{Target: rollout.RolloutTarget{FactoryURL: "ftp://mirror"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "malformed")
}

// --to-defaults is what the chart gives a new pool: the pools on it are on
// target (settled), the pool on v1.13.4 moves to it.
func TestRolloutToTheChartsDefaults(t *testing.T) {
	plan := mustRollout(t, settledFleet(t, nil), rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-gamma"}, Target: rollout.RolloutTarget{Defaults: true}})
	assert.Equal(t, "v1.13.6", plan.Target.TalosVersion)
	assert.Equal(t, schematic, plan.Target.SchematicID)
	assert.Contains(t, plan.TargetFrom, "the chart's defaults for a new pool (kubernetes-nodes ")
	pools := byPool(plan)
	edge := pools["tenant-gamma/kubernetes-nodes-gamma-edge"]
	assert.Equal(t, rollout.StateMoves, edge.State)
	assert.Equal(t, []rollout.ValueChange{{Field: "talos.version", From: "v1.13.4", Source: "talos.version", To: "v1.13.6"}}, edge.Changes)

	plan = mustRollout(t, settledFleet(t, nil), rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: rollout.RolloutTarget{Defaults: true}})
	assert.Empty(t, plan.Waves)
	assert.Len(t, plan.OnTarget, 3, "every beta pool runs the defaults, rolled out")
	for _, p := range plan.OnTarget {
		assert.Contains(t, p.Reason, "MachineDeployment", p.HelmRelease)
	}
}

// A field is moved where the chart took it from: the pool's own osImage,
// the osImage recorded at its creation (which becomes its own), talos.*
// otherwise; a new schematic moves with its version, and clone pools then
// wait for its catalog entry.
func TestRolloutChangesTheFieldTheFlavorCameFrom(t *testing.T) {
	objs := settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-acme/kubernetes-nodes-acme-golden": helmReleaseValues("{cluster: acme, osImage: {builtin: {version: v1.13.6}}}"),
		// beta-spot as a pool created while _cluster defaulted osImage (its
		// own values name none).
		"HelmRelease/tenant-beta/kubernetes-nodes-beta-spot": helmReleaseValues("{cluster: beta, minReplicas: 0, storageClass: ceph-rbd}"),
		"MachineDeployment/tenant-beta/kubernetes-beta-spot": func(o *unstructured.Unstructured) {
			o.SetAnnotations(map[string]string{"kubernetes-worker-image.cozystack.io/created-with": `{"imageFactoryURL":"https://factory.mirror.internal","osImage":{"builtin":{"version":"v1.13.6"}}}`})
		},
		"HelmRelease/tenant-acme/kubernetes-nodes-acme-workers": helmReleaseValues("{cluster: acme, osImage: {factory: {version: v1.13.6, imageFactoryURL: 'https://factory.talos.dev'}}}"),
	})
	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136, Namespace: "tenant-acme"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}})
	pools := byPool(plan)
	golden := pools["tenant-acme/kubernetes-nodes-acme-golden"]
	assert.Equal(t, []rollout.ValueChange{{Field: "osImage.builtin.version", From: "v1.13.6", Source: "osImage.builtin.version", To: "v1.13.7"}}, golden.Changes)
	assert.Equal(t, map[string]any{"osImage": map[string]any{"builtin": map[string]any{"version": "v1.13.7"}}}, golden.ValuesChange)
	assert.Equal(t, "osImage.builtin.version", golden.To.Version.Source)
	workers := pools["tenant-acme/kubernetes-nodes-acme-workers"]
	assert.Equal(t, "osImage.factory.version", workers.Changes[0].Field)
	assert.Equal(t, "v1.13.7", render.Get(workers.SpecValues, "osImage.factory.version"))
	assert.Equal(t, "https://factory.talos.dev", render.Get(workers.SpecValues, "osImage.factory.imageFactoryURL"), "the rest of the pool's own osImage stays")

	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"kubernetes-beta-spot"}}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}})
	spot := plan.Pools()[0]
	assert.Equal(t, "osImage.builtin.version", spot.Changes[0].Field)
	assert.True(t, strings.HasPrefix(spot.Changes[0].Source, "the platform default _cluster.osImage.builtin.version recorded when the pool was created"), spot.Changes[0].Source)
	assert.Equal(t, map[string]any{"osImage": map[string]any{"builtin": map[string]any{"version": "v1.13.7"}}}, spot.ValuesChange, "the recorded osImage, as the pool's own")
	assert.Equal(t, "osImage.builtin.version", spot.To.Version.Source)
	assert.Equal(t, rollout.StateMoves, spot.State)

	// A new schematic: both fields move; its golden is in no catalog entry.
	other := strings.Repeat("a", 64)
	plan = mustRollout(t, settledFleet(t, nil), rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-acme"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7", SchematicID: other}})
	pools = byPool(plan)
	acmeWorkers := pools["tenant-acme/kubernetes-nodes-acme-workers"]
	assert.Equal(t, []rollout.ValueChange{
		{Field: "talos.schematicID", From: schematic, Source: keptFrom("talos.schematicID", acmeWorkers), To: other},
		{Field: "talos.version", From: "v1.13.6", Source: keptFrom("talos.version", acmeWorkers), To: "v1.13.7"},
	}, acmeWorkers.Changes)
	assert.Equal(t, rollout.StateMoves, pools["tenant-acme/kubernetes-nodes-acme-workers"].State, "an HTTP pool needs no golden")
	assert.Equal(t, rollout.StateNeedsEntry, pools["tenant-acme/kubernetes-nodes-acme-golden"].State)
	require.NotNil(t, plan.Catalog)
	last := plan.Catalog.Images[len(plan.Catalog.Images)-1]
	assert.Equal(t, report.ChangeNew, last.Change)
	assert.Equal(t, other, last.Entry.SchematicID)
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-golden"}, last.Pools)
	assert.Empty(t, last.OtherURLPools, "a pool that clones boots from no factory of its own")
}

// --to-builtin switches an HTTP pool as adopt proposes, dropping its own
// osImage.factory; combined with a version, it switches and moves at once.
func TestRolloutToBuiltin(t *testing.T) {
	objs := settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-acme/kubernetes-nodes-acme-workers": helmReleaseValues("{cluster: acme, osImage: {factory: {version: v1.13.6}}}"),
	})
	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-acme"}, Target: rollout.RolloutTarget{Builtin: true}})
	pools := byPool(plan)
	assert.Equal(t, rollout.StateOnTarget, pools["tenant-acme/kubernetes-nodes-acme-golden"].State, "clones already")
	w := pools["tenant-acme/kubernetes-nodes-acme-workers"]
	assert.Equal(t, rollout.StateMoves, w.State)
	assert.Equal(t, map[string]any{"osImage": map[string]any{"builtin": map[string]any{"version": "v1.13.6"}, "factory": nil}}, w.ValuesChange)
	assert.Equal(t, map[string]any{"builtin": map[string]any{"version": "v1.13.6"}}, w.SpecValues["osImage"])
	assert.Contains(t, w.Changes, rollout.ValueChange{Field: "osImage.factory", Removed: true, Source: "the pool's own osImage: a pool clones or imports, not both"})
	assert.Equal(t, "clone", w.To.Path)
	assert.Equal(t, int64(3), w.ClonesInFlight)

	plan = mustRollout(t, settledFleet(t, nil), rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"kubernetes-acme-workers"}}, Target: rollout.RolloutTarget{Builtin: true, TalosVersion: "v1.13.7"}})
	w = plan.Pools()[0]
	assert.Equal(t, map[string]any{"osImage": map[string]any{"builtin": map[string]any{}}, "talos": map[string]any{"version": "v1.13.7"}}, w.ValuesChange)
	assert.Equal(t, v137, w.Golden)
}

// --to-factory moves an HTTP pool's URL where it came from, and says that a
// URL of its own takes no CA of the platform's; pools that clone, or import
// from that URL already, are on target.
func TestRolloutToFactory(t *testing.T) {
	const mirror = "https://factory.mirror.internal"
	objs := settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-acme/kubernetes-nodes-acme-workers": helmReleaseValues("{cluster: acme, osImage: {factory: {imageFactoryURL: 'https://factory.talos.dev'}}}"),
	})
	plan := mustRollout(t, objs, rollout.RolloutOptions{Target: rollout.RolloutTarget{FactoryURL: mirror}, Selection: rollout.RolloutSelection{Flavor: flavor136, Namespace: "tenant-acme"}})
	pools := byPool(plan)
	assert.Equal(t, "osImage.factory.imageFactoryURL", pools["tenant-acme/kubernetes-nodes-acme-workers"].Changes[0].Field)
	assert.Equal(t, rollout.StateOnTarget, pools["tenant-acme/kubernetes-nodes-acme-golden"].State)
	assert.Contains(t, pools["tenant-acme/kubernetes-nodes-acme-golden"].Reason, "clones a golden")

	// beta-web names the public factory in its own values (upstream's form
	// wrote it): talos.imageFactoryURL; the platform has a CA for its own
	// URL, which the pool's own URL does not take.
	withCA := settledFleet(t, map[string]func(*unstructured.Unstructured){
		"Secret/tenant-beta/cozystack-values": func(o *unstructured.Unstructured) {
			o.Object["stringData"] = map[string]any{"values.yaml": "_cluster:\n  osImage: {builtin: {}}\n  talos:\n    imageFactoryURL: https://factory.mirror.internal\n    imageFactoryCA: |\n" + indent(support.Certificate(t, "mirror CA", true, time.Now().Add(-time.Hour), time.Now().Add(time.Hour)), "      ") + "_namespace: {host: beta.example.org}\n"}
			delete(o.Object, "data")
		},
	})
	plan = mustRollout(t, withCA, rollout.RolloutOptions{Target: rollout.RolloutTarget{FactoryURL: mirror}, Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}})
	web := byPool(plan)["tenant-beta/kubernetes-nodes-beta-web"]
	assert.Equal(t, []rollout.ValueChange{{Field: "talos.imageFactoryURL", From: "https://factory.talos.dev", Source: "talos.imageFactoryURL", To: mirror}}, web.Changes)
	assert.Contains(t, web.Note, "takes no CA of the platform's")
	// gamma-edge imports from the mirror already (recorded at creation).
	plan = mustRollout(t, settledFleet(t, nil), rollout.RolloutOptions{Target: rollout.RolloutTarget{FactoryURL: mirror}, Selection: rollout.RolloutSelection{Pools: []string{"kubernetes-gamma-edge"}}})
	assert.Equal(t, rollout.StateOnTarget, plan.OnTarget[0].State)
	assert.Empty(t, plan.OnTarget[0].Note)
}

// Every way a pool keeps the rollout from starting, each beside its
// neighbour that moves.
func TestRolloutBlocksWithTheFix(t *testing.T) {
	target := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	selection := rollout.RolloutSelection{Flavor: flavor136, Namespace: "tenant-beta"}

	// The target golden absent: the catalog entry to add.
	example := support.ExampleObjects(t)
	plan := mustRollout(t, example, rollout.RolloutOptions{Selection: selection, Target: target})
	pools := byPool(plan)
	assert.Equal(t, rollout.StateNeedsEntry, pools["tenant-beta/kubernetes-nodes-beta-batch"].State)
	assert.Equal(t, rollout.StateOtherFactory, pools["tenant-beta/kubernetes-nodes-beta-web"].State, "an HTTP pool needs no golden; it is blocked for the public factory, where the catalog publishes a mirror")
	require.NotNil(t, plan.Catalog)
	assert.True(t, plan.Catalog.Changed)
	added := plan.Catalog.Images[len(plan.Catalog.Images)-1]
	assert.Equal(t, schematic, added.Entry.SchematicID)
	assert.Equal(t, "v1.13.7", added.Entry.Version)
	require.NotNil(t, added.Entry.StorageClass)
	assert.ElementsMatch(t, []string{"replicated", "ceph-rbd"}, append([]string{*added.Entry.StorageClass}, added.Entry.AdditionalStorageClasses...),
		"one entry, a golden on each class its pools clone on: beta-batch's replicated, beta-spot's ceph-rbd")
	assert.Equal(t, []string{"tenant-beta/kubernetes-nodes-beta-batch", "tenant-beta/kubernetes-nodes-beta-spot"}, added.Pools)

	// On another class than the golden: a class to add to the entry (the
	// fleet without v1.13.7's golden on ceph-rbd).
	var onCeph []*unstructured.Unstructured
	for _, o := range settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-beta/kubernetes-nodes-beta-web": helmReleaseValues("{cluster: beta, storageClass: ceph-rbd, minReplicas: 2, maxReplicas: 4}"),
	}) {
		if o.GetName() != v137+"--ceph-rbd" {
			onCeph = append(onCeph, o)
		}
	}
	plan = mustRollout(t, onCeph, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"kubernetes-beta-web"}}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7", Builtin: true}})
	require.Len(t, plan.Blocked, 1)
	assert.Equal(t, rollout.StateNeedsPerClass, plan.Blocked[0].State)
	require.NotNil(t, plan.Catalog)
	var entry report.CatalogEntry
	for _, e := range plan.Catalog.Images {
		if e.Entry.Version == "v1.13.7" {
			entry = e
		}
	}
	assert.Equal(t, report.ChangeClassesAdded, entry.Change)
	assert.Equal(t, []string{"ceph-rbd"}, entry.AddedClasses)

	// The target golden importing, or failed: not Succeeded, which blocks.
	for _, phase := range []string{"ImportInProgress", "Failed"} {
		state := rollout.StateGoldenNotReady
		objs := settledFleet(t, map[string]func(*unstructured.Unstructured){
			"DataVolume/cozy-public/" + v137: func(o *unstructured.Unstructured) {
				require.NoError(t, unstructured.SetNestedField(o.Object, phase, "status", "phase"))
			},
		})
		plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: selection, Target: target})
		pools = byPool(plan)
		assert.Equal(t, state, pools["tenant-beta/kubernetes-nodes-beta-batch"].State, phase)
		assert.Contains(t, pools["tenant-beta/kubernetes-nodes-beta-batch"].Reason, v137, phase)
		assert.Equal(t, rollout.StateMoves, pools["tenant-beta/kubernetes-nodes-beta-web"].State, phase)
		assert.False(t, plan.CanStart, phase)
	}

	// Each of the pool's own reasons: listed apart, the rest moves.
	apart := func(plan *rollout.RolloutPlan, pool, state string) {
		t.Helper()
		require.Len(t, plan.CannotMove, 1, state)
		assert.Equal(t, pool, plan.CannotMove[0].HelmRelease, state)
		assert.Equal(t, state, plan.CannotMove[0].State)
		assert.Empty(t, plan.Blocked, state)
		assert.True(t, plan.CanStart, state)
	}

	// A suspended HelmRelease: Flux would not apply the change.
	objs := settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-beta/kubernetes-nodes-beta-batch": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, true, "spec", "suspend"))
		},
	})
	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: selection, Target: target})
	apart(plan, "tenant-beta/kubernetes-nodes-beta-batch", rollout.StateSuspended)
	pools = byPool(plan)
	assert.Contains(t, pools["tenant-beta/kubernetes-nodes-beta-batch"].Reason, "flux resume helmrelease kubernetes-nodes-beta-batch -n tenant-beta")
	assert.Equal(t, rollout.StateMoves, pools["tenant-beta/kubernetes-nodes-beta-web"].State)

	// A HelmRelease a Flux Kustomization applies: it would undo the patch.
	objs = settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-beta/kubernetes-nodes-beta-batch": func(o *unstructured.Unstructured) {
			o.SetLabels(map[string]string{"kustomize.toolkit.fluxcd.io/name": "tenants", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"})
		},
	})
	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: selection, Target: target})
	apart(plan, "tenant-beta/kubernetes-nodes-beta-batch", rollout.StateKustomized)
	pools = byPool(plan)
	assert.Contains(t, pools["tenant-beta/kubernetes-nodes-beta-batch"].Reason, "applied by the Flux Kustomization flux-system/tenants")
	assert.Equal(t, rollout.StateMoves, pools["tenant-beta/kubernetes-nodes-beta-web"].State)

	// A valuesFrom targetPath sets talos.version over spec.values: the
	// change would not reach the render.
	objs = settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-beta/kubernetes-nodes-beta-batch": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedSlice(o.Object, []any{
				map[string]any{"kind": "Secret", "name": "cozystack-values"},
				map[string]any{"kind": "ConfigMap", "name": "pinned", "valuesKey": "version", "targetPath": "talos.version"},
			}, "spec", "valuesFrom"))
		},
	}, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: pinned, namespace: tenant-beta}\ndata: {version: v1.13.6}\n")
	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: selection, Target: target})
	apart(plan, "tenant-beta/kubernetes-nodes-beta-batch", rollout.StateRefused)
	pools = byPool(plan)
	assert.Contains(t, pools["tenant-beta/kubernetes-nodes-beta-batch"].Reason, "its values change does not reach its render: the chart resolves version v1.13.6 from talos.version")
	assert.Equal(t, rollout.StateMoves, pools["tenant-beta/kubernetes-nodes-beta-web"].State)
}

// A pool installed with helm install, without a HelmRelease, is refused
// with what to do; the HelmRelease pools beside it move.
func TestRolloutRefusesAPoolWithoutHelmRelease(t *testing.T) {
	rec, err := fleet.EncodeRecord("kubernetes-nodes-beta-plain", "tenant-beta", "kubernetes-nodes", 1, "deployed", map[string]any{"cluster": "beta"})
	require.NoError(t, err)
	objs := append(settledFleet(t, nil), &unstructured.Unstructured{Object: rec})
	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}})
	pools := byPool(plan)
	plain := pools["tenant-beta/kubernetes-nodes-beta-plain"]
	assert.Equal(t, rollout.StateNoHelmRelease, plain.State)
	assert.Contains(t, plain.Reason, "helm upgrade --reuse-values")
	assert.Equal(t, map[string]any{"talos": map[string]any{"version": "v1.13.7"}}, plain.ValuesChange, "what to set is still said")
	assert.Equal(t, rollout.StateMoves, pools["tenant-beta/kubernetes-nodes-beta-web"].State)
	assert.Equal(t, []rollout.RolloutPool{plain}, plan.CannotMove)
	assert.True(t, plan.CanStart, "listed apart; the rest moves")
}

// withRecord adds to objs the rollout's record of target holding a write of
// each HelmRelease named (namespace/name) as objs hold it now: its UID (one
// is given it where it has none) and its generation, as a run of rollout
// --apply leaves them once it patched it.
func withRecord(t testing.TB, objs []*unstructured.Unstructured, target rollout.RolloutTarget, helmReleases ...string) []*unstructured.Unstructured {
	t.Helper()
	return withRecordSurges(t, objs, target, nil, helmReleases...)
}

// withRecordSurges is withRecord with, for each HelmRelease surges names,
// the maxSurge the write bounded its roll with and the pool's own before.
func withRecordSurges(t testing.TB, objs []*unstructured.Unstructured, target rollout.RolloutTarget, surges map[string]*report.SurgeRestore, helmReleases ...string) []*unstructured.Unstructured {
	t.Helper()
	rec := rollout.NewRolloutRecord(target)
	for _, id := range helmReleases {
		found := false
		for _, o := range objs {
			if o.GetKind() == "HelmRelease" && o.GetNamespace()+"/"+o.GetName() == id {
				if o.GetUID() == "" {
					o.SetUID(types.UID("uid-" + o.GetName()))
				}
				rec.Add(report.WaveKey(time.Date(2026, 8, 22, 0, 0, 0, 0, time.UTC), 1), report.RecordedWrite{Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID()), Generation: report.Generation(o.Object), Surge: surges[id]})
				found = true
			}
		}
		require.True(t, found, "no HelmRelease %s", id)
	}
	cm, err := rec.ConfigMap()
	require.NoError(t, err)
	return append(objs, cm)
}

// managedBy records, as the API server does in managedFields, that manager
// last changed these spec.values fields (dotted paths) at the given time:
// what any client can make it say.
func managedBy(o *unstructured.Unstructured, manager, at string, fields ...string) {
	root := map[string]any{}
	for _, f := range fields {
		node := root
		for _, k := range append([]string{"spec", "values"}, strings.Split(f, ".")...) {
			next, ok := node["f:"+k].(map[string]any)
			if !ok {
				next = map[string]any{}
				node["f:"+k] = next
			}
			node = next
		}
	}
	entries, _, _ := unstructured.NestedSlice(o.Object, "metadata", "managedFields")
	entries = append(entries, map[string]any{"manager": manager, "operation": "Update", "apiVersion": "helm.toolkit.fluxcd.io/v2", "time": at, "fieldsType": "FieldsV1", "fieldsV1": root})
	if err := unstructured.SetNestedSlice(o.Object, entries, "metadata", "managedFields"); err != nil {
		panic(err)
	}
}

// Run again after a partial rollout: pools on the target are skipped, a pool
// an earlier run moved (the rollout's record holds its write) whose workers
// did not roll yet is waited for first.
func TestRolloutResumesFromTheCluster(t *testing.T) {
	to137 := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	fleet := func(edit map[string]func(*unstructured.Unstructured)) []*unstructured.Unstructured {
		return withRecord(t, settledFleet(t, edit), to137, "tenant-beta/kubernetes-nodes-beta-web")
	}
	moved := func(rolledOut bool) map[string]func(*unstructured.Unstructured) {
		return map[string]func(*unstructured.Unstructured){
			"HelmRelease/tenant-beta/kubernetes-nodes-beta-web": func(o *unstructured.Unstructured) {
				require.NoError(t, unstructured.SetNestedField(o.Object, "v1.13.7", "spec", "values", "talos", "version"))
			},
			"MachineDeployment/tenant-beta/kubernetes-beta-web": func(o *unstructured.Unstructured) {
				require.NoError(t, unstructured.SetNestedField(o.Object, "kubernetes-beta-web-086b68", "spec", "template", "spec", "infrastructureRef", "name"))
				if !rolledOut {
					require.NoError(t, unstructured.SetNestedField(o.Object, int64(1), "status", "updatedReplicas"))
				}
			},
		}
	}
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: to137, WaveSize: 2}
	plan := mustRollout(t, fleet(moved(true)), o)
	pools := byPool(plan)
	web := pools["tenant-beta/kubernetes-nodes-beta-web"]
	assert.Equal(t, rollout.StateOnTarget, web.State)
	assert.Empty(t, web.Changes)
	assert.Contains(t, web.Reason, "MachineDeployment on kubernetes-beta-web-086b68: 2 of 2 updated, 2 ready")
	assert.Len(t, plan.Pools(), 2)

	plan = mustRollout(t, fleet(moved(false)), o)
	require.Len(t, plan.Waves, 2)
	first := plan.Waves[0].Pools[0]
	assert.Equal(t, "tenant-beta/kubernetes-nodes-beta-web", first.HelmRelease, "the pool left rolling comes first")
	assert.Equal(t, rollout.StateRolling, first.State)
	assert.Nil(t, first.ValuesChange, "it is waited for, not patched")
	assert.Equal(t, "kubernetes-beta-web-086b68", first.MachineTemplate.Target)
	assert.Contains(t, first.Reason, "MachineDeployment rolling onto kubernetes-beta-web-086b68: 1 of 2 updated")
	assert.Equal(t, int64(1), first.ToReplace, "1 of its 2 workers is on the new template already")
	assert.Equal(t, int64(1), plan.Waves[0].HTTPImports, "the other downloads as it is replaced")

	// Selected by the flavor it left, the pool on its way is still found
	// (it resolves to the target, not rolled out): waited for; once rolled
	// out, it is no longer this rollout's.
	byFlavor := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta", Flavor: flavor136}, Target: to137, WaveSize: 2}
	plan = mustRollout(t, fleet(moved(false)), byFlavor)
	assert.Equal(t, 3, plan.Selected)
	assert.Equal(t, "tenant-beta/kubernetes-nodes-beta-web", plan.Waves[0].Pools[0].HelmRelease)
	assert.Equal(t, rollout.StateRolling, plan.Waves[0].Pools[0].State)
	plan = mustRollout(t, fleet(moved(true)), byFlavor)
	assert.Equal(t, 2, plan.Selected)
	assert.Empty(t, plan.OnTarget)
	assert.Len(t, plan.Pools(), 2)

	// Its release failed at that generation: waiting would only see the
	// failure again, so it blocks, saying how to release it again.
	failed := moved(false)
	failed["HelmRelease/tenant-beta/kubernetes-nodes-beta-web"] = func(o *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(o.Object, "v1.13.7", "spec", "values", "talos", "version"))
		o.SetGeneration(2)
		require.NoError(t, unstructured.SetNestedField(o.Object, map[string]any{"observedGeneration": int64(2), "conditions": []any{
			map[string]any{"type": "Ready", "status": "False", "reason": "UpgradeFailed", "message": "Helm upgrade failed", "observedGeneration": int64(2)},
		}}, "status"))
	}
	plan = mustRollout(t, fleet(failed), o)
	require.Len(t, plan.CannotMove, 1)
	assert.Equal(t, rollout.StateReleaseFailed, plan.CannotMove[0].State)
	// Cozystack's RetryOnFailure (its spec.upgrade.strategy, every 30s): helm-controller retries on its own.
	assert.Contains(t, plan.CannotMove[0].Reason, "HelmRelease not Ready at generation 2: UpgradeFailed: Helm upgrade failed (helm-controller keeps retrying it on its own every 30s: fix its values so it releases, or stop the retries with flux suspend helmrelease kubernetes-nodes-beta-web -n tenant-beta; once fixed, flux reconcile helmrelease kubernetes-nodes-beta-web -n tenant-beta --force releases it at once); fix the cause, have helm-controller release it again (flux reconcile helmrelease kubernetes-nodes-beta-web -n tenant-beta --force), then run again")
	assert.True(t, plan.CanStart, "listed apart: the other pools move")
	assert.Len(t, plan.Pools(), 2)
}

// --behind keeps the pools Behind says are behind what a new pool gets now,
// each with how: a newer patch of its flavor in the catalog, another factory
// than the platform's; a pool moved to that patch is no longer behind, nor
// selected.
func TestRolloutSelectsPoolsBehind(t *testing.T) {
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Behind: true, Namespace: "tenant-beta"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}}
	plan := mustRollout(t, mirroredFleet(t, nil), o)
	assert.Equal(t, 3, plan.Selected)
	pools := byPool(plan)
	assert.Equal(t, []report.BehindReason{{Kind: report.BehindCatalogPatch, From: "v1.13.6", To: "v1.13.7", Detail: "golden cozy-public/" + v137 + " (Succeeded)"}}, pools["tenant-beta/kubernetes-nodes-beta-batch"].Behind)
	kinds := func(bs []report.BehindReason) (out []string) {
		for _, b := range bs {
			out = append(out, b.Kind)
		}
		return out
	}
	assert.Contains(t, kinds(pools["tenant-beta/kubernetes-nodes-beta-web"].Behind), report.BehindFactory, "HTTP from the built-in factory while the platform's is the mirror")

	// acme-golden moved to v1.13.7 and rolled out: not behind any more.
	acme := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Behind: true, Namespace: "tenant-acme"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}}
	before := mustRollout(t, mirroredFleet(t, nil), acme)
	assert.Equal(t, 2, before.Selected)
	next := byPool(before)["tenant-acme/kubernetes-nodes-acme-golden"].MachineTemplate.Target
	require.NotEmpty(t, next)
	moved := mirroredFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-acme/kubernetes-nodes-acme-golden": helmReleaseValues("{cluster: acme, osImage: {builtin: {}}, talos: {version: v1.13.7}}"),
		"MachineDeployment/tenant-acme/kubernetes-acme-golden": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, next, "spec", "template", "spec", "infrastructureRef", "name"))
		},
	})
	after := mustRollout(t, moved, acme)
	assert.Equal(t, 1, after.Selected)
	require.Len(t, after.Blocked, 1, "on the public factory while the catalog publishes a mirror")
	assert.Equal(t, "tenant-acme/kubernetes-nodes-acme-workers", after.Blocked[0].HelmRelease)
	assert.Equal(t, rollout.StateOtherFactory, after.Blocked[0].State)
}

// Wave splitting: WaveSize pools a wave, the last holding the rest.
func TestRolloutSplitsWaves(t *testing.T) {
	for size, want := range map[int][]int{1: {1, 1, 1, 1, 1}, 2: {2, 2, 1}, 5: {5}, 50: {5}} {
		plan := mustRollout(t, settledFleet(t, nil), rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136, Namespace: ""}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, WaveSize: size})
		var got []int
		for i, w := range plan.Waves {
			assert.Equal(t, i+1, w.Wave)
			got = append(got, len(w.Pools))
		}
		assert.Equal(t, want, got, "--wave %d", size)
		assert.Equal(t, size, plan.WaveSize)
	}
}

func ptr(s string) *string { return &s }

func indent(text, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// --to-defaults also moves a pool that keeps an older Kubernetes patch of its
// minor (read from its MachineDeployment) to the chart's patch, writing the
// release into `version`; the template keeps its name (the disk is the same),
// so the MachineDeployment's new generation is what the wave waits for.
func TestRolloutToTheChartsDefaultsMovesAKeptKubernetesPatch(t *testing.T) {
	olderPatch := func(o *unstructured.Unstructured) {
		require.NoError(t, unstructured.SetNestedField(o.Object, "v1.35.4", "spec", "template", "spec", "version"))
	}
	objs := settledFleet(t, map[string]func(*unstructured.Unstructured){"MachineDeployment/tenant-beta/kubernetes-beta-web": olderPatch})
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	chartPatch := kubernetesRelease(t, chrt, "v1.35")
	require.NotEqual(t, "v1.35.4", chartPatch, "the chart's patch is newer than the one kept")

	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"tenant-beta/kubernetes-beta-web"}}, Target: rollout.RolloutTarget{Defaults: true}})
	web := byPool(plan)["tenant-beta/kubernetes-nodes-beta-web"]
	assert.Equal(t, rollout.StateMoves, web.State, web.Reason)
	require.Len(t, web.Changes, 1)
	assert.Equal(t, "version", web.Changes[0].Field)
	assert.Equal(t, "v1.35.4", web.Changes[0].From)
	assert.Equal(t, chartPatch, web.Changes[0].To)
	assert.Contains(t, web.Changes[0].Source, "MachineDeployment", "the kept release names where it was read")
	assert.Equal(t, map[string]any{"version": chartPatch}, web.ValuesChange)
	assert.Equal(t, web.MachineTemplate.Current, web.MachineTemplate.Target, "a Kubernetes patch does not touch the disk")
	var kinds []string
	for _, b := range web.Behind {
		kinds = append(kinds, b.Kind+" "+b.From+" -> "+b.To)
	}
	assert.Contains(t, kinds, report.BehindKubernetesPatch+" v1.35.4 -> "+chartPatch, "the plan says why it moves")

	// Once its MachineDeployment runs the chart's patch, it is on target.
	settled := settledFleet(t, nil)
	plan = mustRollout(t, settled, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"tenant-beta/kubernetes-beta-web"}}, Target: rollout.RolloutTarget{Defaults: true}})
	assert.Empty(t, plan.Waves)
	assert.Len(t, plan.OnTarget, 1)
}

// kubernetesRelease is the release the chart gives a new pool of minor: the
// MachineDeployment's version when rendered with nothing running.
func kubernetesRelease(t *testing.T, chrt *chart.Chart, minor string) string {
	t.Helper()
	m, err := render.Render(chrt, render.Options{Release: render.Release{Name: "kubernetes-nodes-x-y", Namespace: "tenant-x"}, Values: map[string]any{"cluster": "x", "version": minor}})
	require.NoError(t, err)
	md, err := m.One("MachineDeployment")
	require.NoError(t, err)
	v, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "version")
	require.NotEmpty(t, v)
	return v
}

// tenantMoved is beta-web as its tenant leaves it after setting
// talos.version v1.13.7 in its own values: released (or failed), its
// workers not rolled yet, managedFields naming the tenant's edit (and what
// managers add).
func tenantMoved(t *testing.T, failed bool, managers ...func(*unstructured.Unstructured)) map[string]func(*unstructured.Unstructured) {
	return map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-beta/kubernetes-nodes-beta-web": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, "v1.13.7", "spec", "values", "talos", "version"))
			managedBy(o, "kubectl-edit", "2026-08-22T00:00:00Z", "talos.version")
			for _, m := range managers {
				m(o)
			}
			if failed {
				o.SetGeneration(2)
				require.NoError(t, unstructured.SetNestedField(o.Object, map[string]any{"observedGeneration": int64(2), "conditions": []any{
					map[string]any{"type": "Ready", "status": "False", "reason": "UpgradeFailed", "message": "Helm upgrade failed", "observedGeneration": int64(2)},
				}}, "status"))
			}
		},
		"MachineDeployment/tenant-beta/kubernetes-beta-web": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, "kubernetes-beta-web-086b68", "spec", "template", "spec", "infrastructureRef", "name"))
			require.NoError(t, unstructured.SetNestedField(o.Object, int64(1), "status", "updatedReplicas"))
		},
	}
}

// Only what was chosen moves: a pool on the target by values its tenant
// wrote is neither selected by --flavor nor waited on, its release failed
// or not; one the rollout's record says this tool wrote, as it is now (same
// UID, same generation), is (an earlier run's).
func TestRolloutMovesOnlyWhatWasChosen(t *testing.T) {
	to137 := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	byFlavor := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta", Flavor: flavor136}, Target: to137}
	const web = "tenant-beta/kubernetes-nodes-beta-web"
	for _, failed := range []bool{false, true} {
		plan := mustRollout(t, settledFleet(t, tenantMoved(t, failed)), byFlavor)
		assert.NotContains(t, byPool(plan), web, "failed %v: not chosen, not waited on", failed)
		assert.Equal(t, 2, plan.Selected)
		assert.Empty(t, plan.CannotMove)
		assert.True(t, plan.CanStart)
	}

	plan := mustRollout(t, withRecord(t, settledFleet(t, tenantMoved(t, false)), to137, web), byFlavor)
	assert.Equal(t, rollout.StateRolling, plan.Waves[0].Pools[0].State, "the record holds this tool's write of it: on its way, waited on")
	assert.Equal(t, web, plan.Waves[0].Pools[0].HelmRelease)
	plan = mustRollout(t, withRecord(t, settledFleet(t, tenantMoved(t, true)), to137, web), byFlavor)
	assert.Equal(t, rollout.StateReleaseFailed, byPool(plan)[web].State)
	assert.True(t, plan.CanStart, "listed apart, it holds nobody")

	// A record of another target says nothing of this one.
	plan = mustRollout(t, withRecord(t, settledFleet(t, tenantMoved(t, false)), rollout.RolloutTarget{TalosVersion: "v1.13.8"}, web), byFlavor)
	assert.NotContains(t, byPool(plan), web, "the record of a rollout to v1.13.8")

	// Selected by where it is, the tenant's pool is on the target and not
	// waited on: no wave holds it.
	byNamespace := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: to137}
	plan = mustRollout(t, settledFleet(t, tenantMoved(t, false)), byNamespace)
	assert.Equal(t, rollout.StateOnTarget, byPool(plan)[web].State)
	assert.Regexp(t, `^on the target by its own values \(the rollout's record, ConfigMap cozy-system/workerimage-rollout-[0-9a-f]{10}, holds no write of it\), so not waited on: HelmRelease Ready at generation 1; MachineDeployment rolling onto kubernetes-beta-web-086b68: 1 of 2 updated`, byPool(plan)[web].Reason)
	// Its release failed: the reason says why, as helm-controller does.
	plan = mustRollout(t, settledFleet(t, tenantMoved(t, true)), byNamespace)
	assert.Equal(t, rollout.StateOnTarget, byPool(plan)[web].State)
	assert.Regexp(t, `holds no write of it\), so not waited on: HelmRelease not Ready at generation 2: UpgradeFailed: Helm upgrade failed \(helm-controller keeps retrying it on its own .*\); MachineDeployment rolling onto kubernetes-beta-web-086b68`, byPool(plan)[web].Reason)
	assert.Len(t, plan.Pools(), 2)
	assert.Equal(t, "cozy-system/"+rollout.NewRolloutRecord(to137).Name, plan.Record)
}

// --flavor takes a schematic by the chart's rule (the library's
// worker-image-lib.isImageField, as talos.schematicID takes one): a pool
// booting my-schematic/v1.13.4 is selected by my-schematic/v1.13; what the
// chart refuses as a schematic or a version, --flavor refuses, in the flag's
// words, before anything is planned.
func TestRolloutFlavorTakesWhatTheChartTakes(t *testing.T) {
	const edge = "tenant-gamma/kubernetes-nodes-gamma-edge"
	objs := settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/" + edge: func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, "my-schematic", "spec", "values", "talos", "schematicID"))
		},
	})
	to137 := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	for _, f := range []string{"my-schematic/v1.13", "my-schematic/v1.13.4"} {
		plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: f}, Target: to137})
		assert.Equal(t, 1, plan.Selected, f)
		assert.Contains(t, byPool(plan), edge, f)
	}
	for _, f := range []string{"My_Schematic/v1.13", strings.Repeat("a", 65) + "/v1.13", schematic + "/v1", schematic + "/v1.13.4-RC1", "-x/v1.13"} {
		_, err := planRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: f}, Target: to137})
		require.Error(t, err, f)
		assert.Contains(t, err.Error(), "--flavor \""+f+"\": want SCHEMATIC/VERSION: SCHEMATIC a schematic ID as the chart takes one in talos.schematicID", f)
	}
}

// A ConfigMap under the record's name whose target is another's (a v9.9.9
// record, say) or that names none is not read as this target's: a pool it
// holds a write of is not rolling in this plan, and the plan says the
// record was ignored and why.
func TestRolloutIgnoresARecordForAnotherTarget(t *testing.T) {
	to137 := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	byNamespace := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: to137}
	const web = "tenant-beta/kubernetes-nodes-beta-web"
	name := rollout.NewRolloutRecord(to137).Name

	ours := mustRollout(t, withRecord(t, settledFleet(t, tenantMoved(t, false)), to137, web), byNamespace)
	require.Equal(t, rollout.StateRolling, byPool(ours)[web].State, "this target's record: waited on")
	assert.Empty(t, ours.RecordIgnored)

	for target, seen := range map[string]string{`{"talosVersion":"v9.9.9"}`: `is for target {"talosVersion":"v9.9.9"}`, "": "names no target"} {
		objs := withRecord(t, settledFleet(t, tenantMoved(t, false)), to137, web)
		cm := objs[len(objs)-1]
		if target == "" {
			unstructured.RemoveNestedField(cm.Object, "data", "target")
		} else {
			require.NoError(t, unstructured.SetNestedField(cm.Object, target, "data", "target"))
		}
		plan := mustRollout(t, objs, byNamespace)
		assert.Equal(t, rollout.StateOnTarget, byPool(plan)[web].State, seen)
		assert.Contains(t, byPool(plan)[web].Reason, "on the target by its own values (the rollout's record, ConfigMap cozy-system/"+name+", holds no write of it), so not waited on", seen)
		assert.Equal(t, "the ConfigMap cozy-system/"+name+" "+seen+`, not this rollout's {"talosVersion":"v1.13.7"}: not read as its record (no pool is waited on for it), and --apply writes this target's record over it`, plan.RecordIgnored)
	}
}

// A record written as releases before wrote it (a list of writes per wave)
// is read as it was: a pool it holds is on its way.
func TestRolloutReadsARecordOfTheReleaseBefore(t *testing.T) {
	to137 := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	byNamespace := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: to137}
	const web = "tenant-beta/kubernetes-nodes-beta-web"
	objs := withRecord(t, settledFleet(t, tenantMoved(t, false)), to137, web)
	cm := objs[len(objs)-1]
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	var w report.WaveWrite
	for k, v := range data {
		if k != "target" {
			require.NoError(t, json.Unmarshal([]byte(v), &w))
			delete(data, k)
		}
	}
	list, err := json.Marshal([]report.RecordedWrite{w.RecordedWrite})
	require.NoError(t, err)
	data[w.Wave] = string(list)
	require.NoError(t, unstructured.SetNestedStringMap(cm.Object, data, "data"))
	plan := mustRollout(t, objs, byNamespace)
	assert.Equal(t, rollout.StateRolling, byPool(plan)[web].State)
}

// The field manager's name proves nothing: a tenant's client that writes
// the target under workerimage-rollout (cozystack-api passes a create's
// field manager through) leaves its pool on the target, not waited on and
// not selected as on its way, by every selection, its release failed or
// not; and --strict does not stop for it.
func TestRolloutIgnoresAForgedFieldManager(t *testing.T) {
	to137 := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	const web = "tenant-beta/kubernetes-nodes-beta-web"
	forged := func(o *unstructured.Unstructured) {
		managedBy(o, rollout.FieldManager, "2026-08-23T00:00:00Z", "talos.version")
	}
	for _, c := range []struct {
		failed bool
		sel    rollout.RolloutSelection
	}{
		{false, rollout.RolloutSelection{Namespace: "tenant-beta", Flavor: flavor136}},
		{false, rollout.RolloutSelection{Namespace: "tenant-beta", Behind: true}},
		{false, rollout.RolloutSelection{Namespace: "tenant-beta"}},
		{true, rollout.RolloutSelection{Namespace: "tenant-beta", Flavor: flavor136}},
		{true, rollout.RolloutSelection{Namespace: "tenant-beta"}},
	} {
		plan := mustRollout(t, settledFleet(t, tenantMoved(t, c.failed, forged)), rollout.RolloutOptions{Selection: c.sel, Target: to137, Strict: true})
		for _, p := range plan.Pools() {
			assert.NotEqual(t, web, p.HelmRelease, "%+v: a forged field manager puts it in no wave", c)
		}
		for _, p := range append(plan.CannotMove, plan.Blocked...) {
			assert.NotEqual(t, web, p.HelmRelease, "%+v: listed apart, it would stop --strict", c)
		}
		assert.True(t, plan.CanStart, "%+v", c)
		if p, ok := byPool(plan)[web]; ok {
			assert.Equal(t, rollout.StateOnTarget, p.State)
			assert.Contains(t, p.Reason, "holds no write of it), so not waited on")
		}
	}
}

// A pool the rollout wrote and someone wrote since is not the rollout's:
// edited (a new generation) or deleted and created again (another UID, at
// generation 1 again), it is on the target, not waited on, and the plan
// says what changed.
func TestRolloutDoesNotWaitForAPoolChangedSinceItsWrite(t *testing.T) {
	to137 := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	const web = "tenant-beta/kubernetes-nodes-beta-web"
	byNamespace := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: to137}
	byFlavor := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta", Flavor: flavor136}, Target: to137}
	hr := func(objs []*unstructured.Unstructured) *unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == "HelmRelease" && o.GetNamespace()+"/"+o.GetName() == web {
				return o
			}
		}
		t.Fatal("no " + web)
		return nil
	}

	edited := withRecord(t, settledFleet(t, tenantMoved(t, false)), to137, web)
	hr(edited).SetGeneration(2)
	plan := mustRollout(t, edited, byNamespace)
	assert.Equal(t, rollout.StateOnTarget, byPool(plan)[web].State)
	assert.Contains(t, byPool(plan)[web].Reason, "on the target, changed since this tool wrote it (the rollout's record, ConfigMap cozy-system/"+rollout.NewRolloutRecord(to137).Name+", holds generation 1 of it; it is at generation 2 now), so not waited on")
	assert.NotContains(t, byPool(mustRollout(t, edited, byFlavor)), web, "not on its way")

	again := withRecord(t, settledFleet(t, tenantMoved(t, false)), to137, web)
	written := string(hr(again).GetUID())
	require.NotEmpty(t, written, "the fixture's HelmRelease has the UID the API server gave it")
	hr(again).SetUID("uid-created-again")
	plan = mustRollout(t, again, byNamespace)
	assert.Equal(t, rollout.StateOnTarget, byPool(plan)[web].State)
	assert.Contains(t, byPool(plan)[web].Reason, "on the target, deleted and created again since this tool wrote it (the rollout's record, ConfigMap cozy-system/"+rollout.NewRolloutRecord(to137).Name+", holds uid "+written+"; it is uid-created-again now), so not waited on")
	assert.NotContains(t, byPool(mustRollout(t, again, byFlavor)), web, "not on its way")
}

// A record that is not what rollout --apply writes is refused, naming the
// key and the fix; an absent record is an empty one.
func TestRolloutRefusesARecordItDidNotWrite(t *testing.T) {
	to137 := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: to137}
	name := rollout.NewRolloutRecord(to137).Name
	hr := report.PoolKey("tenant-beta", "kubernetes-nodes-beta-web")
	for data, want := range map[string]string{
		`{"notes": "x"}`:                      `key "notes" is not a wave (<run>.wave-<n>) nor a HelmRelease's write (hr-...)`,
		`{"20260822T000000Z.wave-1": "[{"}`:   `key "20260822T000000Z.wave-1" is not a list of HelmReleases written (`,
		`{"20260822T000000Z.wave-1": "[{}]"}`: `key "20260822T000000Z.wave-1" holds a write without namespace, name, uid or generation`,
		`{"hr-0": "{"}`:                       `key "hr-0" is not a HelmRelease written (`,
		`{"` + hr + `": "{\"namespace\":\"tenant-beta\",\"name\":\"kubernetes-nodes-beta-web\",\"uid\":\"u\",\"generation\":2}"}`:                                `key "` + hr + `" holds a write without its wave (<run>.wave-<n>)`,
		`{"` + hr + `": "{\"wave\":\"20260822T000000Z.wave-1\",\"name\":\"kubernetes-nodes-beta-web\",\"uid\":\"u\",\"generation\":2}"}`:                         `key "` + hr + `" holds a write without namespace, name, uid or generation`,
		`{"hr-0": "{\"wave\":\"20260822T000000Z.wave-1\",\"namespace\":\"tenant-beta\",\"name\":\"kubernetes-nodes-beta-web\",\"uid\":\"u\",\"generation\":2}"}`: `key "hr-0" holds the write of tenant-beta/kubernetes-nodes-beta-web, whose key is ` + hr,
	} {
		var d map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &d))
		d["target"] = `{"talosVersion":"v1.13.7"}`
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": "cozy-system"}, "data": d}}
		_, err := planRollout(t, append(settledFleet(t, nil), cm), o)
		require.Error(t, err, data)
		assert.Contains(t, err.Error(), "the rollout's record ConfigMap cozy-system/"+name+": "+want, data)
		assert.Contains(t, err.Error(), "delete it (kubectl delete configmap -n cozy-system "+name+")", data)
	}
}

// --exclude leaves pools out, by any name --pool takes; one that names no
// pool is bad input, with the names it may have meant.
func TestRolloutExcludes(t *testing.T) {
	objs := settledFleet(t, nil)
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136, Exclude: []string{"tenant-gamma/kubernetes-nodes-gamma-big", "kubernetes-acme-workers"}}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}}
	plan := mustRollout(t, objs, o)
	pools := byPool(plan)
	assert.NotContains(t, pools, "tenant-gamma/kubernetes-nodes-gamma-big")
	assert.NotContains(t, pools, "tenant-acme/kubernetes-nodes-acme-workers")
	assert.Len(t, plan.Pools(), 4)
	assert.Empty(t, plan.CannotMove)
	assert.Equal(t, 4, plan.Selected)

	// Every pool of the namespace excluded: nothing is selected, an error,
	// not "every selected pool is on the target".
	every := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-gamma", Exclude: nil}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}}
	for _, o := range objs {
		if o.GetKind() == "HelmRelease" && o.GetNamespace() == "tenant-gamma" {
			every.Selection.Exclude = append(every.Selection.Exclude, o.GetNamespace()+"/"+o.GetName())
		}
	}
	require.NotEmpty(t, every.Selection.Exclude)
	_, err := planRollout(t, objs, every)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "leaves out every pool the rest of the selection keeps")
	assert.Contains(t, err.Error(), " in namespace tenant-gamma): nothing is selected")

	o.Selection.Exclude = []string{"gamma-bgi"}
	_, err = planRollout(t, objs, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--exclude gamma-bgi names no pool: give a HelmRelease's name")
	o.Selection.Exclude = []string{"gamma-big"}
	_, err = planRollout(t, objs, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did you mean kubernetes-nodes-gamma-big, kubernetes-gamma-big?")
}

// A selection that matches nothing is bad input naming what it may have
// meant: a namespace without pools, a flavor no pool boots.
func TestRolloutRefusesASelectionOfNothing(t *testing.T) {
	objs := settledFleet(t, nil)
	target := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	for _, c := range []struct {
		s    rollout.RolloutSelection
		want string
	}{
		{rollout.RolloutSelection{Namespace: "tenant-zzz"}, "-n tenant-zzz: no pool is in namespace tenant-zzz; the pools are in tenant-acme, tenant-beta, tenant-gamma"},
		{rollout.RolloutSelection{Namespace: "tenant-bata"}, "-n tenant-bata: no pool is in namespace tenant-bata; did you mean tenant-beta?"},
		{rollout.RolloutSelection{Flavor: schematic + "/v1.13.5"}, "--flavor " + schematic + "/v1.13.5: no pool boots it; did you mean " + schematic + "/v1.13.4?"},
		{rollout.RolloutSelection{Flavor: schematic + "/v1.12", Namespace: "tenant-beta"}, "no pool in namespace tenant-beta boots it; did you mean " + schematic + "/v1.13?"},
		{rollout.RolloutSelection{Flavor: strings.Repeat("a", 64) + "/v1.13.6"}, "no pool boots it; the pools boot " + schematic + "/v1.13.4, " + flavor136 + " (SCHEMATIC/vMAJOR.MINOR takes every patch of a minor)"},
	} {
		_, err := planRollout(t, objs, rollout.RolloutOptions{Selection: c.s, Target: target})
		require.Error(t, err, "%+v", c.s)
		assert.Contains(t, err.Error(), c.want)
	}
	// The neighbours: a namespace with pools, a flavor one pool boots.
	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: target})
	assert.Equal(t, 3, plan.Selected)
	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: schematic + "/v1.13.4"}, Target: target})
	assert.Equal(t, 1, plan.Selected)
	// --behind with nothing behind is no mistake: nothing to do.
	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-acme", Behind: true}, Target: rollout.RolloutTarget{Defaults: true}})
	assert.True(t, plan.CanStart)
}

// --flavor SCHEMATIC/vMAJOR.MINOR takes every patch of the minor: the fix
// reaches gamma-edge on v1.13.4 as well as the pools on v1.13.6; gamma-big,
// refused at the target, is listed apart and every other pool moves.
func TestRolloutFlavorMinorTakesEveryPatch(t *testing.T) {
	plan := mustRollout(t, settledFleet(t, nil), rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: schematic + "/v1.13"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}})
	var moving []string
	for _, p := range plan.Pools() {
		moving = append(moving, p.HelmRelease)
		assert.Equal(t, rollout.StateMoves, p.State)
	}
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-golden", "tenant-acme/kubernetes-nodes-acme-workers", "tenant-beta/kubernetes-nodes-beta-batch", "tenant-beta/kubernetes-nodes-beta-spot", "tenant-beta/kubernetes-nodes-beta-web", "tenant-gamma/kubernetes-nodes-gamma-edge"}, moving)
	require.Len(t, plan.CannotMove, 1)
	assert.Equal(t, "tenant-gamma/kubernetes-nodes-gamma-big", plan.CannotMove[0].HelmRelease)
	assert.True(t, plan.CanStart)
	edge := byPool(plan)["tenant-gamma/kubernetes-nodes-gamma-edge"]
	assert.Equal(t, "v1.13.4", edge.From.Version.Value)
	// An exact patch stays exact.
	plan = mustRollout(t, settledFleet(t, nil), rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: flavor136}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}})
	assert.NotContains(t, byPool(plan), "tenant-gamma/kubernetes-nodes-gamma-edge")
}

// A pool that cannot move for its own objects is listed apart with the
// fix: never deployed (no MachineDeployment), its release failed before the
// rollout, a HelmRelease with postRenderers; the rest moves.
func TestRolloutListsApartWhatCannotMove(t *testing.T) {
	selection := rollout.RolloutSelection{Namespace: "tenant-beta"}
	target := rollout.RolloutTarget{TalosVersion: "v1.13.7"}
	for _, c := range []struct {
		name  string
		objs  []*unstructured.Unstructured
		state string
		why   string
	}{
		{"never deployed", without(settledFleet(t, nil), "MachineDeployment/tenant-beta/kubernetes-beta-web"), rollout.StateNotDeployed,
			"no MachineDeployment tenant-beta/kubernetes-beta-web: the pool never deployed"},
		{"release failed", settledFleet(t, map[string]func(*unstructured.Unstructured){
			"HelmRelease/tenant-beta/kubernetes-nodes-beta-web": func(o *unstructured.Unstructured) {
				require.NoError(t, unstructured.SetNestedField(o.Object, map[string]any{"observedGeneration": int64(1), "conditions": []any{
					map[string]any{"type": "Ready", "status": "False", "reason": "InstallFailed", "message": "context deadline exceeded", "observedGeneration": int64(1)},
				}}, "status"))
			},
		}), rollout.StateReleaseFailed, "its last release failed before this rollout (HelmRelease not Ready at generation 1: InstallFailed: context deadline exceeded (helm-controller keeps retrying it on its own every 30s: fix its values so it releases"},
		{"post-rendered", settledFleet(t, map[string]func(*unstructured.Unstructured){
			"HelmRelease/tenant-beta/kubernetes-nodes-beta-web": func(o *unstructured.Unstructured) {
				require.NoError(t, unstructured.SetNestedSlice(o.Object, []any{map[string]any{"kustomize": map[string]any{"patches": []any{}}}}, "spec", "postRenderers"))
			},
		}), rollout.StatePostRendered, "has spec.postRenderers: what helm-controller applies is not what the chart renders"},
	} {
		plan := mustRollout(t, c.objs, rollout.RolloutOptions{Selection: selection, Target: target})
		require.Len(t, plan.CannotMove, 1, "%s: %+v", c.name, byPool(plan)["tenant-beta/kubernetes-nodes-beta-web"])
		p := plan.CannotMove[0]
		assert.Equal(t, "tenant-beta/kubernetes-nodes-beta-web", p.HelmRelease, c.name)
		assert.Equal(t, c.state, p.State, c.name)
		assert.Contains(t, p.Reason, c.why, c.name)
		assert.Len(t, plan.Pools(), 2, c.name)
		assert.True(t, plan.CanStart, c.name)
		strict := mustRollout(t, c.objs, rollout.RolloutOptions{Selection: selection, Target: target, Strict: true})
		assert.False(t, strict.CanStart, c.name)
	}
	// The neighbour: the same namespace settled, every pool moves.
	plan := mustRollout(t, settledFleet(t, nil), rollout.RolloutOptions{Selection: selection, Target: target, Strict: true})
	assert.Empty(t, plan.CannotMove)
	assert.Len(t, plan.Pools(), 3)
	assert.True(t, plan.CanStart)
}

// --to-factory with --factory-ca writes the URL and the CA in one change:
// the pool rolls once, onto the template the two-step path (CA first, then
// the URL) reaches only after a second roll.
func TestRolloutToFactoryWithItsCA(t *testing.T) {
	const mirror = "https://factory.mirror.internal"
	ca := support.Certificate(t, "mirror CA", true, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	one := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{"kubernetes-beta-web"}}, Target: rollout.RolloutTarget{FactoryURL: mirror, FactoryCA: ca, FactoryCAFrom: "mirror-ca.pem"}}
	plan := mustRollout(t, settledFleet(t, nil), one)
	web := plan.Pools()[0]
	assert.Equal(t, []rollout.ValueChange{
		{Field: "talos.imageFactoryURL", From: "https://factory.talos.dev", Source: "talos.imageFactoryURL", To: mirror},
		{Field: "talos.imageFactoryCA", Source: "none: the import trusts CDI's system store alone", To: "the PEM of mirror-ca.pem"},
	}, web.Changes)
	assert.Equal(t, map[string]any{"talos": map[string]any{"imageFactoryURL": mirror, "imageFactoryCA": ca}}, web.ValuesChange)
	assert.Empty(t, web.Note, "the CA comes with the URL")

	// Two steps: the CA alone rolls the pool, then the URL rolls it again,
	// to the template the one change names.
	caFirst := settledFleet(t, map[string]func(*unstructured.Unstructured){
		"HelmRelease/tenant-beta/kubernetes-nodes-beta-web": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, ca, "spec", "values", "talos", "imageFactoryCA"))
		},
	})
	two := mustRollout(t, caFirst, rollout.RolloutOptions{Selection: one.Selection, Target: rollout.RolloutTarget{FactoryURL: mirror}})
	second := two.Pools()[0]
	assert.NotEqual(t, web.MachineTemplate.Current, second.MachineTemplate.Current, "the CA alone re-imaged the pool once")
	assert.Equal(t, web.MachineTemplate.Target, second.MachineTemplate.Target, "and the URL a second time, to the same template")
	assert.NotEqual(t, web.MachineTemplate.Current, web.MachineTemplate.Target)

	// A CA the chart refuses is refused as the target.
	bad := one
	bad.Target.FactoryCA = "not a certificate"
	_, err := planRollout(t, settledFleet(t, nil), bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the target is refused by the chart")
}

// Waves bounded by what storage takes: --max-workers bounds the workers a
// wave replaces at once and --max-clones the clones of one golden in
// flight; a pool above a bound on its own takes, in the same values change
// as the move, the maxSurge that keeps it within (and no other template);
// each wave counts its clones per golden.
func TestRolloutBoundsWavesByWorkersAndClones(t *testing.T) {
	objs := settledFleet(t, nil)
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: schematic + "/v1.13", Exclude: []string{"kubernetes-gamma-big"}}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, WaveSize: 10}
	plan := mustRollout(t, objs, o)
	require.Len(t, plan.Waves, 1)
	assert.Equal(t, map[string]int64{v137: plan.Waves[0].ClonesInFlight}, plan.Waves[0].ClonesPerGolden)
	shape := func(p *rollout.RolloutPlan) (out [][]string) {
		for _, w := range p.Waves {
			var names []string
			for _, pool := range w.Pools {
				names = append(names, strings.TrimPrefix(pool.HelmRelease[strings.Index(pool.HelmRelease, "/")+1:], "kubernetes-nodes-"))
			}
			out = append(out, names)
		}
		return out
	}
	workers := map[string]int64{}
	for _, p := range plan.Pools() {
		workers[p.HelmRelease] = p.ToReplace
	}
	require.Equal(t, int64(3), workers["tenant-acme/kubernetes-nodes-acme-workers"], "the fixture's sizes the bounds below rely on")
	require.Equal(t, int64(2), workers["tenant-acme/kubernetes-nodes-acme-golden"])

	unbounded := byPool(plan)

	// --max-workers bounds the workers a wave replaces at once: acme-workers
	// alone would replace its 3 at once (its maxReplicas, 10, is its surge),
	// so its values change takes maxSurge 1 (1 + maxUnavailable 1 = 2); the
	// others are within it and their values change is the move alone.
	o.MaxWorkers = 2
	plan = mustRollout(t, objs, o)
	for _, w := range plan.Waves {
		assert.Empty(t, w.Alone, "wave %d", w.Wave)
		assert.LessOrEqual(t, w.WorkersAtOnce, int64(2), "wave %d", w.Wave)
	}
	pools := byPool(plan)
	acme := pools["tenant-acme/kubernetes-nodes-acme-workers"]
	assert.Equal(t, map[string]any{"maxSurge": int64(1), "talos": map[string]any{"version": "v1.13.7"}}, acme.ValuesChange)
	assert.Contains(t, acme.Changes, rollout.ValueChange{Field: "maxSurge", From: "10", Source: "maxReplicas: maxSurge unset, a roll surges up to maxReplicas", To: "1"})
	assert.Equal(t, &rollout.RollingUpdate{MaxSurge: 1, MaxUnavailable: 1}, acme.RollingUpdate)
	assert.Equal(t, int64(2), acme.WorkersAtOnce)
	assert.Equal(t, unbounded["tenant-acme/kubernetes-nodes-acme-workers"].MachineTemplate.Target, acme.MachineTemplate.Target, "maxSurge rolls nothing the move does not")
	assert.Contains(t, acme.Note, "maxSurge 1 keeps its roll within --max-workers 2: replaces 2 workers at once, not 3")
	for hr, p := range pools {
		if hr != acme.HelmRelease {
			assert.Equal(t, unbounded[hr].ValuesChange, p.ValuesChange, "%s: within the bound, its values change is the move alone", hr)
		}
	}
	assert.Equal(t, [][]string{{"acme-golden"}, {"acme-workers", "beta-batch", "beta-spot"}, {"beta-web"}, {"gamma-edge"}}, shape(plan), "pools at zero workers replace none at once")

	// --max-clones bounds the clones of one golden in flight: acme-golden
	// alone would clone its 2 disks at once, so it takes maxSurge 0 and
	// clones one at a time.
	o.MaxWorkers = 0
	o.MaxClones = 1
	plan = mustRollout(t, objs, o)
	assert.Equal(t, [][]string{{"acme-golden", "acme-workers", "beta-batch", "beta-spot", "beta-web", "gamma-edge"}}, shape(plan))
	golden := byPool(plan)["tenant-acme/kubernetes-nodes-acme-golden"]
	assert.Equal(t, map[string]any{"maxSurge": int64(0), "talos": map[string]any{"version": "v1.13.7"}}, golden.ValuesChange)
	assert.Equal(t, int64(1), golden.ClonesInFlight)
	assert.Equal(t, unbounded[golden.HelmRelease].MachineTemplate.Target, golden.MachineTemplate.Target)
	for _, w := range plan.Waves {
		assert.Empty(t, w.Alone)
		for g, n := range w.ClonesPerGolden {
			assert.LessOrEqual(t, n, int64(1), "wave %d, %s", w.Wave, g)
		}
	}
}

// A pool that imports from the target's factory already, trusting the same
// CA (the platform's, published with the URL and recorded at its creation),
// is on the target: --to-factory URL --factory-ca FILE writes nothing to it,
// selected by --behind or by name, and a move of its flavor in the same
// change takes no CA of its own. With another CA in effect it takes FILE's,
// the change naming the ConfigMap it trusted before once.
func TestRolloutToFactoryLeavesAPoolTrustingItsCAAlready(t *testing.T) {
	const mirror = "https://factory.mirror.internal"
	const edge = "tenant-gamma/kubernetes-nodes-gamma-edge"
	ca := support.Certificate(t, "mirror CA", true, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	published, err := json.Marshal(map[string]any{"talos": map[string]any{"imageFactoryURL": mirror, "imageFactoryCA": ca}})
	require.NoError(t, err)
	objs := mirroredFleet(t, map[string]func(*unstructured.Unstructured){
		"ConfigMap/cozy-public/kubernetes-worker-image-tenant-defaults": func(o *unstructured.Unstructured) {
			require.NoError(t, unstructured.SetNestedField(o.Object, string(published), "data", "values.json"))
		},
		"MachineDeployment/tenant-gamma/kubernetes-gamma-edge": func(o *unstructured.Unstructured) {
			a := o.GetAnnotations()
			a["kubernetes-worker-image.cozystack.io/created-with"] = `{"fromCatalog":["imageFactoryURL","imageFactoryCA"],"imageFactoryCA":true,"imageFactoryURL":"` + mirror + `"}`
			o.SetAnnotations(a)
		},
	})
	// It runs the template its values render now, as one created so would.
	now := byPool(mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{edge}}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.4"}}))[edge]
	for _, o := range objs {
		if o.GetKind() == "MachineDeployment" && o.GetName() == "kubernetes-gamma-edge" {
			require.NoError(t, unstructured.SetNestedField(o.Object, now.MachineTemplate.Current, "spec", "template", "spec", "infrastructureRef", "name"))
		}
	}

	target := rollout.RolloutTarget{FactoryURL: mirror, FactoryCA: ca, FactoryCAFrom: "mirror-ca.pem"}
	for _, sel := range []rollout.RolloutSelection{{Behind: true, Namespace: "tenant-gamma"}, {Pools: []string{edge}}} {
		plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: sel, Target: target})
		p, ok := byPool(plan)[edge]
		require.True(t, ok, "%+v selects it", sel)
		assert.Equal(t, rollout.StateOnTarget, p.State, "%+v: %s", sel, p.Reason)
		assert.Empty(t, p.Changes, "%+v", sel)
		assert.Nil(t, p.ValuesChange, "%+v", sel)
		assert.Empty(t, plan.Pools(), "%+v: nothing to move", sel)
	}

	// Moving its flavor too: the version changes, no CA of its own.
	flavor := target
	flavor.TalosVersion = "v1.13.7"
	p := byPool(mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{edge}}, Target: flavor}))[edge]
	assert.Equal(t, rollout.StateMoves, p.State, p.Reason)
	assert.Equal(t, map[string]any{"talos": map[string]any{"version": "v1.13.7"}}, p.ValuesChange)

	// Another CA in effect: it takes FILE's.
	other := target
	other.FactoryCA = support.Certificate(t, "next mirror CA", true, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	p = byPool(mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Pools: []string{edge}}, Target: other}))[edge]
	assert.Equal(t, rollout.StateMoves, p.State, p.Reason)
	require.Len(t, p.Changes, 1)
	assert.Equal(t, rollout.ValueChange{Field: "talos.imageFactoryCA", From: "ConfigMap kubernetes-gamma-edge-image-factory-ca", Source: p.Changes[0].Source, To: "the PEM of mirror-ca.pem"}, p.Changes[0])
	assert.Contains(t, p.Changes[0].Source, "imageFactoryCA")
	assert.Equal(t, p.MachineTemplate.Current, p.MachineTemplate.Target, "the CA's ConfigMap keeps its name: rotating it rolls nothing")
}
