package rollout_test

import (
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// renderLog records the renders a plan makes (render.Observe), the pool
// chart's by the pool (namespace/release) they render, and of those the
// renders of its helpers alone (render.HelpersOnly: fewer templates).
type renderLog struct {
	chart   *chart.Chart
	mu      sync.Mutex
	pools   map[string][]render.Options
	helpers map[string]int
	other   int
}

func watchRenders(chrt *chart.Chart) (*renderLog, func()) {
	l := &renderLog{chart: chrt, pools: map[string][]render.Options{}, helpers: map[string]int{}}
	render.Observe(func(c *chart.Chart, o render.Options) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if c.Metadata.Name != l.chart.Metadata.Name {
			l.other++
			return
		}
		id := o.Release.Namespace + "/" + o.Release.Name
		l.pools[id] = append(l.pools[id], o)
		if len(c.Templates) < len(l.chart.Templates) {
			l.helpers[id]++
		}
	})
	return l, func() { render.Observe(nil) }
}

// floor is the Helm renders the plan needs, as helm-controller would make
// them: each pool as it is, and at the target for a pool that moves (the
// values the plan rendered it with; a pool the plan rendered more than once
// with the same values needs that render once).
func (l *renderLog) floor() []render.Options {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id := range l.pools {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []render.Options
	for _, id := range ids {
		var distinct []render.Options
	next:
		for _, o := range l.pools[id] {
			for _, d := range distinct {
				if reflect.DeepEqual(d.Values, o.Values) {
					continue next
				}
			}
			o.Release.SkipSchemaValidation = false
			distinct = append(distinct, o)
		}
		out = append(out, distinct...)
	}
	return out
}

// helmRenders renders each through Helm alone (its values, schema check and
// engine, no manifest read), spread over every core as the plan spreads its
// pools, under the collector settings the plan renders under; a refusal is
// a render made as well.
func helmRenders(chrt *chart.Chart, renders []render.Options) {
	defer report.WithPlanGC()()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	for range min(runtime.GOMAXPROCS(0), len(renders)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(renders) {
					return
				}
				o := renders[i]
				vals, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, o.Values, chartutil.ReleaseOptions{
					Name: o.Release.Name, Namespace: o.Release.Namespace, Revision: o.Release.Revision(),
					IsInstall: !o.Release.Upgrade, IsUpgrade: o.Release.Upgrade,
				}, o.Capabilities(), false)
				if err != nil {
					continue
				}
				if p := o.Provider(); p != nil {
					_, _ = engine.RenderWithClientProvider(chrt, vals, p)
				} else {
					_, _ = engine.Render(chrt, vals)
				}
				report.Retune()
			}
		}()
	}
	wg.Wait()
}

// parsedBytes is what Helm parses at each render of chrt: every template
// file of the chart and of its dependencies.
func parsedBytes(chrt *chart.Chart) int {
	n := 0
	for _, t := range chrt.Templates {
		n += len(t.Data)
	}
	for _, d := range chrt.Dependencies() {
		n += parsedBytes(d)
	}
	return n
}

// planFleet plans as `workerimage rollout` does (ReadPinsToPlan, then
// Rollout): the example's default flavor to v1.13.7, the fleet st read
// through provider (st itself, or a wrapper counting its requests).
func planFleet(tb testing.TB, chrt *chart.Chart, st *render.State, provider engine.ClientProvider) *rollout.RolloutPlan {
	tb.Helper()
	served, _ := st.APIVersions()
	t := report.Target{Provider: provider, Desc: "benchmark", APIVersions: served}
	facts, err := report.ReadPinsToPlan(chrt, t, fleet.Options{Chart: chrt.Metadata.Name})
	if err != nil {
		tb.Fatal(err)
	}
	plan, err := rollout.Rollout(chrt, t, facts, rollout.RolloutOptions{WaveSize: 5,
		Selection: rollout.RolloutSelection{Flavor: schematic + "/v1.13.6"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}})
	if err != nil {
		tb.Fatal(err)
	}
	return plan
}

// BenchmarkPlanFloor plans BenchmarkRolloutPlan's fleets (105, 1,001 and
// 5,005 pools) and, in the same run, makes the Helm renders that plan needs
// alone (floor-ns/op): the renders the plan made of each pool, with the
// values it made them with, each once, of the pool chart as helm-controller
// renders it, against the same cluster. ns/op is the plan's; ratio is
// plan/floor; parsed-bytes is what Helm parses of the pool chart and its
// libraries at each render.
func BenchmarkPlanFloor(b *testing.B) {
	chrt, err := report.LoadPoolChart("")
	if err != nil {
		b.Fatal(err)
	}
	for _, copies := range []int{14, 142, 714} {
		b.Run(fmt.Sprintf("pools=%d", 7*(copies+1)), func(b *testing.B) {
			st, pools := benchFleet(b, copies)
			b.ResetTimer()
			peak := heapPeak()
			defer peak.stop(b)
			var planned, floor, planCPU, floorCPU time.Duration
			renders, made := 0, 0
			for i := 0; i < b.N; i++ {
				log, stop := watchRenders(chrt)
				start, cpu := time.Now(), support.CPUTime()
				plan := planFleet(b, chrt, st, st)
				planned += time.Since(start)
				planCPU += support.CPUTime() - cpu
				stop()
				if plan.Selected < pools/2 {
					b.Fatalf("%d pools selected of %d", plan.Selected, pools)
				}
				b.StopTimer()
				need := log.floor()
				renders += len(need)
				made += log.other
				for _, r := range log.pools {
					made += len(r)
				}
				runtime.GC()
				start, cpu = time.Now(), support.CPUTime()
				helmRenders(chrt, need)
				floor += time.Since(start)
				floorCPU += support.CPUTime() - cpu
				b.StartTimer()
			}
			b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N), "floor-ns/op")
			b.ReportMetric(float64(planned)/float64(floor), "ratio")
			// On a machine shared with other work, wall time says how busy
			// it was as much as what each cost: CPU time is the steadier.
			b.ReportMetric(planCPU.Seconds()/float64(b.N), "plan-cpu-s/op")
			b.ReportMetric(floorCPU.Seconds()/float64(b.N), "floor-cpu-s/op")
			b.ReportMetric(float64(planCPU)/float64(floorCPU), "cpu-ratio")
			b.ReportMetric(float64(renders)/float64(b.N), "floor-renders/op")
			b.ReportMetric(float64(made)/float64(b.N), "plan-renders/op")
			b.ReportMetric(float64(parsedBytes(chrt)), "parsed-bytes")
			b.ReportMetric(float64(pools), "pools")
		})
	}
}

// The plan renders each pool no more than its floor: the whole chart once
// as it is and once at the target when it moves, once when it does not;
// its other renders (the catalog's, the chart's probes) do not grow with
// the fleet. A pool the whole chart refuses takes one render more, of the
// chart's helpers alone: Helm's engine returns nothing of a refused render,
// and the pool's flavor and golden (what selects it, what it pins) are the
// helpers' answer.
func TestPlanRendersAtMostItsFloor(t *testing.T) {
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	others := map[int]int{}
	for _, copies := range []int{0, 2} {
		objs := copiedFleet(t, copies)
		for _, o := range objs {
			if o.GetNamespace() == "cozy-public" && strings.HasSuffix(o.GetName(), "-v1.13.6") {
				next := o.DeepCopy()
				next.SetName(strings.TrimSuffix(o.GetName(), "v1.13.6") + "v1.13.7")
				objs = append(objs, next)
			}
		}
		fleetPools := map[string]bool{}
		for _, o := range objs {
			if o.GetKind() == "HelmRelease" && strings.HasPrefix(o.GetNamespace(), "tenant-") {
				fleetPools[o.GetNamespace()+"/"+o.GetName()] = true
			}
		}
		log, stop := watchRenders(chrt)
		st := render.NewState(objs...)
		plan := planFleet(t, chrt, st, st)
		stop()
		moving := map[string]bool{}
		for _, p := range plan.Pools() {
			moving[p.HelmRelease] = true
		}
		require.Len(t, moving, 5*(copies+1))
		require.Len(t, plan.CannotMove, copies+1, "a refused pool is planned too")
		refused := map[string]bool{}
		for _, p := range plan.CannotMove {
			refused[p.HelmRelease] = true
		}
		pools := 0
		floor := map[string]int{}
		for _, o := range log.floor() {
			floor[o.Release.Namespace+"/"+o.Release.Name]++
		}
		state := map[string]string{}
		for _, list := range [][]rollout.RolloutPool{plan.Pools(), plan.OnTarget, plan.Blocked, plan.CannotMove, plan.Unknown} {
			for _, p := range list {
				state[p.HelmRelease] = p.State
			}
		}
		for id, renders := range log.pools {
			if !fleetPools[id] {
				others[copies] += len(renders) // the chart's probes
				continue
			}
			// Every pool, selected (state) or not.
			pools++
			want := 1
			if moving[id] {
				want = 2
			}
			whole := len(renders) - log.helpers[id]
			require.Equal(t, want, floor[id], "%s (%s): renders needed", id, state[id])
			require.LessOrEqual(t, whole, want, "%s (%s) rendered whole %d times", id, state[id], whole)
			helpers := 0
			if refused[id] {
				helpers = 1
			}
			require.LessOrEqual(t, log.helpers[id], helpers, "%s (%s): renders of the helpers alone", id, state[id])
		}
		require.Equal(t, 7*(copies+1), pools)
		others[copies] += log.other
	}
	require.Equal(t, others[0], others[2], "renders besides the pools' grow with the fleet")
}
