package rollout_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// copiedFleet is the settled example fleet with each tenant's objects
// copied into copies more namespaces (tenant-acme-1, ...): 7 pools a copy.
func copiedFleet(t testing.TB, copies int) []*unstructured.Unstructured {
	t.Helper()
	objs := settledFleet(t, nil)
	out := append([]*unstructured.Unstructured(nil), objs...)
	for i := 1; i <= copies; i++ {
		for _, o := range objs {
			if !strings.HasPrefix(o.GetNamespace(), "tenant-") {
				continue
			}
			c := o.DeepCopy()
			ns := fmt.Sprintf("%s-%d", o.GetNamespace(), i)
			c.SetNamespace(ns)
			if c.GetKind() == "HelmRelease" {
				// helm-controller records where it released: in the copy's own
				// namespace, else the copy would speak for the original's.
				require.NoError(t, unstructured.SetNestedField(c.Object, ns, "status", "storageNamespace"))
				history, _, _ := unstructured.NestedSlice(c.Object, "status", "history")
				for _, h := range history {
					h.(map[string]any)["namespace"] = ns
				}
				require.NoError(t, unstructured.SetNestedSlice(c.Object, history, "status", "history"))
			}
			out = append(out, c)
		}
	}
	return out
}

// Planning the example fleet copied 15 times (112 pools) to v1.13.7, every
// patch of v1.13: each copy's six pools move and its gamma-big is listed
// apart; the log says how long Rollout took after ReadPins (run with -v,
// GOMAXPROCS=1 for one pool at a time).
func TestRolloutPlansACopiedFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("plans 112 pools")
	}
	objs := copiedFleet(t, 15)
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	state := render.NewState(objs...)
	served, err := state.APIVersions()
	require.NoError(t, err)
	target := report.Target{Provider: state, Desc: "state", APIVersions: served}
	f, err := report.ReadPins(chrt, target, fleet.Options{Chart: chrt.Metadata.Name})
	require.NoError(t, err)
	start := time.Now()
	plan, err := rollout.Rollout(chrt, target, f, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Flavor: schematic + "/v1.13"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, WaveSize: 5})
	require.NoError(t, err)
	t.Logf("%d pools selected, %d moving, planned in %s", plan.Selected, len(plan.Pools()), time.Since(start))
	require.Len(t, plan.Pools(), 16*6)
	require.Len(t, plan.CannotMove, 16)
	for _, p := range plan.CannotMove {
		require.True(t, strings.HasSuffix(p.HelmRelease, "/kubernetes-nodes-gamma-big"), p.HelmRelease)
	}
	// The order is the pools' own, whatever order they were planned in.
	var order []string
	for _, p := range plan.Pools() {
		order = append(order, p.HelmRelease)
	}
	require.IsIncreasing(t, order)
}
