// How many workers a pool's roll replaces at once, and the pool value that
// bounds it. Cluster API rolls a MachineDeployment by its rollingUpdate
// (machinedeployment_rolling.go, mdutil.ResolveFenceposts): the new
// MachineSet grows while all machines stay within replicas + maxSurge, the
// old ones shrink while the available ones stay at least replicas -
// maxUnavailable; so at most maxSurge + maxUnavailable new machines wait to
// become available at once, and on the clone path each is a disk CDI clones
// at once. The pool chart writes maxSurge as the pool's maxSurge value, else
// its maxReplicas (upstream's bytes), and maxUnavailable 1: a pool alone can
// clone its whole surge at once. Where that is above --max-clones (or
// --max-workers), rollout writes the maxSurge that keeps it within the bound
// in the same change as the move: the strategy is not part of the machine
// template, so it rolls nothing the move does not.

package rollout

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cozystack/golden-worker-images/internal/report"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// resolve is maxSurge and maxUnavailable for a pool of workers, as Cluster
// API resolves them: a percentage of the workers, maxSurge rounded up and
// maxUnavailable down; unset, Cluster API's defaults (1 and 0); both 0,
// maxUnavailable 1; maxUnavailable at most the workers.
func resolve(r report.RollingStrategy, workers int64) (surge, unavailable int64) {
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
	surge, unavailable = scaled(r.MaxSurge, 1, true), scaled(r.MaxUnavailable, 0, false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, min(unavailable, workers)
}

// atOnce is how many of its toReplace workers a pool of workers replaces
// at once: the new machines that wait to become available at once, at
// least one while any is left, never more than are left.
func atOnce(r report.RollingStrategy, workers, toReplace int64) int64 {
	if toReplace <= 0 || workers <= 0 {
		return 0
	}
	surge, unavailable := resolve(r, workers)
	return max(1, min(surge+unavailable, toReplace))
}

// RollingUpdate is what a pool's roll replaces at once by: its
// MachineDeployment's maxSurge and maxUnavailable, resolved for its workers.
type RollingUpdate struct {
	MaxSurge       int64 `json:"maxSurge"`
	MaxUnavailable int64 `json:"maxUnavailable"`
}

// bounds are --max-workers and --max-clones (0: no bound).
type bounds struct {
	maxWorkers, maxClones int64
}

// of is the bound on what one pool replaces at once on path: --max-workers,
// and on the clone path --max-clones (each disk a clone); 0 for none, and
// the flags that make it.
func (b bounds) of(path string) (int64, string) {
	bound, flags := b.maxWorkers, "--max-workers"
	if path == "clone" && b.maxClones > 0 && (bound == 0 || b.maxClones < bound) {
		bound, flags = b.maxClones, "--max-clones"
	}
	return bound, flags
}

// flagValue names a bound as given: "--max-clones 4".
func flagValue(flag string, n int64) string { return flag + " " + strconv.FormatInt(n, 10) }

// boundSurge is the maxSurge that keeps a pool replacing toReplace of its
// workers within bound at once, given its rolling update r: the largest
// that does, so it replaces as many at once as the bound allows. ok is
// false when none does: its maxUnavailable alone is above the bound.
func boundSurge(r report.RollingStrategy, workers, bound int64) (surge int64, ok bool) {
	_, unavailable := resolve(r, workers)
	if unavailable > bound {
		return 0, false
	}
	return bound - unavailable, true
}

// surgeSource says where the chart takes a pool's maxSurge from.
func surgeSource(values map[string]any) string {
	if _, ok := values["maxSurge"]; ok {
		return "maxSurge"
	}
	return "maxReplicas: maxSurge unset, a roll surges up to maxReplicas"
}

// takesMaxSurge: the pool chart has the value maxSurge (its schema says
// so), which a chart before it refuses as an unknown key.
func takesMaxSurge(chrt *chart.Chart) bool {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(chrt.Schema, &schema) != nil {
		return false
	}
	_, ok := schema.Properties["maxSurge"]
	return ok
}

// surgeText is a maxSurge as the plan prints it.
func surgeText(v *intstr.IntOrString) string {
	if v == nil {
		return "unset"
	}
	return v.String()
}

// atOnceText says what a pool replaces at once, for a note.
func atOnceText(n int64, path string) string {
	if path == "clone" {
		return fmt.Sprintf("clones %s at once", report.Count(int(n), "disk"))
	}
	return fmt.Sprintf("replaces %s at once", report.Count(int(n), "worker"))
}
