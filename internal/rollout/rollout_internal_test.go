package rollout

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"

	"github.com/stretchr/testify/assert"
)

// --to-defaults moves a pool to the chart's Kubernetes release of its minor
// when that is newer than the release it runs (as Behind says), and leaves
// one on it, or on another minor the chart does not ship, alone.
func TestKubernetesPatch(t *testing.T) {
	defaults := report.Defaults{KubernetesReleases: map[string]string{"v1.35": "v1.35.6", "v1.34": "v1.34.9"}}
	for _, c := range []struct {
		running, from, to string
		ok                bool
	}{
		{"v1.35.5", "v1.35.5", "v1.35.6", true},
		{"v1.35.6", "", "", false},
		{"v1.34.2", "v1.34.2", "v1.34.9", true},
		{"v1.30.1", "", "", false},
		{"", "", "", false},
	} {
		from, to, ok := kubernetesPatch(report.Running{Kubernetes: c.running, Defaults: defaults})
		assert.Equal(t, c.ok, ok, c.running)
		assert.Equal(t, c.from, from, c.running)
		assert.Equal(t, c.to, to, c.running)
	}
}

// A field of the osImage recorded at creation is recognised whichever
// channel it came from, so a rollout writes it into the pool's own osImage.
func TestRecordedOSImageFromEitherChannel(t *testing.T) {
	for _, source := range []string{
		"the platform default _cluster.osImage.builtin.version recorded when the pool was created (annotation ...)",
		"the default osImage.builtin.version of " + report.CatalogChannel + ", recorded when the pool was created (annotation ...)",
	} {
		path, recorded, ok := osImagePathOf(source, "version")
		assert.Equal(t, []any{"builtin", true, true}, []any{path, recorded, ok}, source)
	}
	_, _, ok := osImagePathOf("the default talos.imageFactoryURL of "+report.CatalogChannel+", recorded when the pool was created (x)", "version")
	assert.False(t, ok, "a published talos default is no osImage field")
}

// What a roll replaces at once, as Cluster API rolls a MachineDeployment:
// maxSurge (rounded up) + maxUnavailable (rounded down), both 0 resolving
// to maxUnavailable 1, unset their defaults 1 and 0, never more than is left
// to replace, at least one while any is.
func TestRollingUpdateAtOnce(t *testing.T) {
	md := func(surge, unavailable any) map[string]any {
		ru := map[string]any{}
		if surge != nil {
			ru["maxSurge"] = surge
		}
		if unavailable != nil {
			ru["maxUnavailable"] = unavailable
		}
		return map[string]any{"spec": map[string]any{"strategy": map[string]any{"rollingUpdate": ru}}}
	}
	for _, c := range []struct {
		name                string
		md                  map[string]any
		workers, left, want int64
		wantSurge, wantUnav int64
	}{
		{"the chart's default: maxReplicas 10, 3 workers", md(int64(10), int64(1)), 3, 3, 3, 10, 1},
		{"maxReplicas 20, 12 workers", md(int64(20), int64(1)), 12, 12, 12, 20, 1},
		{"maxSurge 9 keeps 12 workers to 10", md(int64(9), int64(1)), 12, 12, 10, 9, 1},
		{"maxSurge 0: one at a time", md(int64(0), int64(1)), 12, 12, 1, 0, 1},
		{"a digits string, as the chart takes it", md("2", int64(1)), 12, 12, 3, 2, 1},
		{"percentages: surge up, unavailable down", md("25%", "10%"), 12, 12, 4, 3, 1},
		{"both 0: maxUnavailable 1", md(int64(0), int64(0)), 5, 5, 1, 0, 1},
		{"unset: Cluster API's 1 and 0", md(nil, nil), 5, 5, 1, 1, 0},
		{"rolling: only what is left", md(int64(10), int64(1)), 12, 2, 2, 10, 1},
		{"nothing left", md(int64(10), int64(1)), 12, 0, 0, 10, 1},
		{"no workers", md(int64(10), int64(1)), 0, 0, 0, 10, 0},
	} {
		r := report.ReadRollingUpdate(c.md)
		assert.Equal(t, c.want, atOnce(r, c.workers, c.left), c.name)
		surge, unavailable := resolve(r, c.workers)
		assert.Equal(t, [2]int64{c.wantSurge, c.wantUnav}, [2]int64{surge, unavailable}, c.name)
	}
}

// A pool above its path's bound on its own takes the largest maxSurge that
// keeps it within, in the values change; where none does (the chart takes
// no maxSurge, or maxUnavailable alone is above the bound), it is listed
// apart saying why and what to do. Within the bound, nothing is written.
func TestBoundRoll(t *testing.T) {
	ru := func(surge, unavailable int64) report.RollingStrategy {
		return report.ReadRollingUpdate(map[string]any{"spec": map[string]any{"strategy": map[string]any{"rollingUpdate": map[string]any{"maxSurge": surge, "maxUnavailable": unavailable}}}})
	}
	pool := func() (*RolloutPool, targetEdit) {
		return &RolloutPool{HelmRelease: "tenant-a/kubernetes-nodes-a-big", Workers: 12, ToReplace: 12}, targetEdit{valuesEdit: newValuesEdit(nil), path: "clone"}
	}
	pc := planContext{bounds: bounds{maxClones: 10}, takesMaxSurge: true}
	rp := report.ResolvedPool{Values: map[string]any{"maxReplicas": int64(20)}}

	p, e := pool()
	assert.False(t, p.boundRoll(e, ru(20, 1), rp, pc))
	assert.Equal(t, map[string]any{"maxSurge": int64(9)}, e.patch)
	assert.Equal(t, []ValueChange{{Field: "maxSurge", From: "20", Source: "maxReplicas: maxSurge unset, a roll surges up to maxReplicas", To: "9"}}, p.Changes)
	assert.Contains(t, e.surgeNote, "maxSurge 9 keeps its roll within --max-clones 10: clones 10 disks at once, not 12")

	p, e = pool()
	e.path = "http"
	assert.False(t, p.boundRoll(e, ru(20, 1), rp, pc), "--max-clones bounds clones only")
	assert.Empty(t, e.patch)
	pc.bounds.maxWorkers = 4
	assert.False(t, p.boundRoll(e, ru(20, 1), rp, pc))
	assert.Equal(t, map[string]any{"maxSurge": int64(3)}, e.patch, "--max-workers bounds every path")

	p, e = pool()
	assert.False(t, p.boundRoll(e, ru(2, 1), rp, pc), "within both")
	assert.Empty(t, e.patch)
	assert.Nil(t, e.surge)

	p, e = pool()
	pc.takesMaxSurge = false
	assert.True(t, p.boundRoll(e, ru(20, 1), rp, pc))
	assert.Equal(t, StateAboveBound, p.State)
	assert.Equal(t, "it clones 12 disks at once (its rolling update: maxSurge 20 and maxUnavailable 1 for 12 workers), more than --max-workers 4 on its own, and this pool chart has no maxSurge value to bound its roll (a chart before it refuses the key): upgrade the platform to a pool chart that has it, give --max-workers 12, or leave the pool out (--exclude tenant-a/kubernetes-nodes-a-big)", p.Reason)
	assert.Empty(t, e.patch)

	p, e = pool()
	pc.takesMaxSurge = true
	assert.True(t, p.boundRoll(e, ru(0, 6), rp, pc))
	assert.Equal(t, StateAboveBound, p.State)
	assert.Contains(t, p.Reason, "and maxUnavailable alone is above it: no maxSurge keeps it within; give --max-workers 6 or more")
}
