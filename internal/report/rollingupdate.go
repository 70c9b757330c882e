// A MachineDeployment's rolling update as the plan reads it from the
// cluster, with the pool's objects; internal/rollout resolves it as Cluster
// API does and bounds a pool's surge with it.

package report

import (
	"github.com/cozystack/golden-worker-images/internal/fleet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RollingStrategy is a MachineDeployment's spec.strategy.rollingUpdate as
// written: each an integer or a percentage; nil where it is not written.
type RollingStrategy struct {
	MaxSurge, MaxUnavailable *intstr.IntOrString
}

// ReadRollingUpdate reads a MachineDeployment's rolling update; nothing of
// no MachineDeployment.
func ReadRollingUpdate(md map[string]any) RollingStrategy {
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
		return RollingStrategy{}
	}
	return RollingStrategy{MaxSurge: field("maxSurge"), MaxUnavailable: field("maxUnavailable")}
}
