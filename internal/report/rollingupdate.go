// A MachineDeployment's rolling update as the plan reads it from the
// cluster, and as Cluster API resolves it: the rollout bounds its surge with
// it (internal/rollout), the plan reads it with the pool's objects.

package report

import (
	"github.com/cozystack/golden-worker-images/internal/fleet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// rollingUpdate is a MachineDeployment's spec.strategy.rollingUpdate as
// written: each an integer or a percentage; nil where it is not written.
type rollingUpdate struct {
	maxSurge, maxUnavailable *intstr.IntOrString
}

// readRollingUpdate reads a MachineDeployment's rolling update; nothing of
// no MachineDeployment.
func readRollingUpdate(md map[string]any) rollingUpdate {
	field := func(name string) *intstr.IntOrString {
		path := []string{"spec", "strategy", "rollingUpdate", name}
		switch raw, _, _ := unstructured.NestedFieldNoCopy(md, path...); raw := raw.(type) {
		case string:
			v := intstr.Parse(raw)
			return &v
		case int64, float64, int:
			n, _ := fleet.Int64(md, path...)
			v := intstr.FromInt32(int32(min(max(n, 0), 1<<31-1)))
			return &v
		}
		return nil
	}
	if md == nil {
		return rollingUpdate{}
	}
	return rollingUpdate{maxSurge: field("maxSurge"), maxUnavailable: field("maxUnavailable")}
}

// resolve is maxSurge and maxUnavailable for a pool of workers, as Cluster
// API resolves them: a percentage of the workers, maxSurge rounded up and
// maxUnavailable down; unset, Cluster API's defaults (1 and 0); both 0,
// maxUnavailable 1; maxUnavailable at most the workers.
func (r rollingUpdate) resolve(workers int64) (surge, unavailable int64) {
	scaled := func(v *intstr.IntOrString, def int32, roundUp bool) int64 {
		if v == nil {
			d := intstr.FromInt32(def)
			v = &d
		}
		n, err := intstr.GetScaledValueFromIntOrPercent(v, int(workers), roundUp)
		if err != nil || n < 0 {
			return 0
		}
		return int64(n)
	}
	surge, unavailable = scaled(r.maxSurge, 1, true), scaled(r.maxUnavailable, 0, false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, min(unavailable, workers)
}

// atOnce is how many of its toReplace workers a pool of workers replaces
// at once: the new machines that wait to become available at once, at
// least one while any is left, never more than are left.
func (r rollingUpdate) atOnce(workers, toReplace int64) int64 {
	if toReplace <= 0 || workers <= 0 {
		return 0
	}
	surge, unavailable := r.resolve(workers)
	return max(1, min(surge+unavailable, toReplace))
}
