package render

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
)

// exception is a kept pool value set the previous release rendered and this
// one refuses: why that refuses no pool that worked, and the refusal this
// chart gives it (asserted, so the list cannot hide a pool this release
// refuses for another reason).
type exception struct {
	why, refusal string
	// newPoolOnly: the value set booted under the previous release, and
	// only a new pool is refused now; the pool the previous release created
	// from it (its render applied to the state) renders under this chart.
	newPoolOnly bool
}

// exceptions are the kept pool value sets the previous release rendered
// that this one refuses. Each either could not have booted under the
// previous release (no running pool holds it), or is refused only as a new
// pool (newPoolOnly, its running pool held to render).
var exceptions = func() map[string]exception {
	out := map[string]exception{}
	for value, seen := range map[string]string{"empty": `""`, "false": "false (a boolean)", "zero": "0 (a number)", "list": "a list"} {
		out["tests/render/testdata/pools/registry-tls-"+value+".yaml"] = exception{
			why:     "a registry config entry whose tls is " + seen + ": Talos refuses the whole machine config, so no worker of the pool booted",
			refusal: "_cluster.talos.registryConfig[m.internal].tls is " + seen + ", not a map",
		}
	}
	for _, skip := range []bool{false, true} {
		out[fmt.Sprintf("hostile pool http diskSize = number (schema off: %v)", skip)] = exception{
			why:     "a 42-byte disk, which holds no Talos image: CDI cannot import into it, so no worker booted",
			refusal: `diskSize "42" (42 bytes) is smaller than the Talos disk image the pool imports over HTTP`,
		}
		// The pool names its own osImage.builtin, so the platform's version
		// never reached its image: it booted. The previous release recorded
		// the malformed default in the pool's creation record; this one
		// creates no pool with a record it would refuse to read back
		// (docs/design.md), and reads a running pool's record as before.
		for _, payload := range []string{"newline and key", "document separator", "quotes", "template", "flow map", "very long"} {
			out[fmt.Sprintf("hostile pool _cluster.osImage.builtin.version = %s (schema off: %v)", payload, skip)] = exception{
				why:         "a platform default _cluster.osImage.builtin.version no pool can boot; a new pool is not created with it in its creation record",
				refusal:     "the platform default _cluster.osImage.builtin.version",
				newPoolOnly: true,
			}
		}
	}
	return out
}()

// issueFindings are the value sets behind issue 60's findings of pools
// 0.1.0 rendered and this release refused: each must be accepted by the
// previous release and render now, against every state it is kept with.
var issueFindings = []string{
	"tests/render/testdata/pools/ports-leading-zero.yaml",
	"tests/render/testdata/pools/ports-leading-zero-cluster.yaml",
	"tests/render/testdata/pools/http-talos-v1-8-disk-1246mi.yaml",
	"tests/render/testdata/pools/http-talos-v1-8-disk-2gi.yaml",
	"tests/render/testdata/pools/http-talos-v1-8-disk-4246mi.yaml",
	"tests/render/testdata/pools/http-talos-v1-9-disk-1246mi.yaml",
	"tests/render/testdata/pools/http-talos-v1-9-disk-2gi.yaml",
	"tests/render/testdata/pools/http-talos-v1-9-disk-4246mi.yaml",
	"tests/render/testdata/pools/registry-tls-null.yaml",
}

// No release refuses a pool that worked (issue 60, item 6): every kept pool
// value set, against each state it is kept with, that the previous
// release's pool chart renders (its kept archive, loaded with Helm's loader
// as helm-controller loads a chart, its libraries inside) renders under
// this checkout's chart too, both with Helm's own pipeline; the only
// exceptions are couldNotBoot's, each refused now with its message.
func TestPreviousReleasesPoolsRenderNow(t *testing.T) {
	if testing.Short() {
		t.Skip("renders the kept corpus under two releases")
	}
	c := keptPools(t)
	old, archive, err := support.PreviousPoolChart()
	require.NoError(t, err)
	start := time.Now()
	before := helmVerdicts(t, c, old)
	oldTook := time.Since(start)
	now, nowTook := currentHelmVerdicts(t)
	require.Len(t, now, len(before))

	accepted, acceptedNow, excepted := 0, 0, 0
	met := map[string]bool{}
	for i, b := range before {
		if b.err != nil {
			continue
		}
		accepted++
		n := now[i]
		require.Equal(t, b.what(), n.what())
		if ex, ok := exceptions[b.pool.name]; ok {
			met[b.pool.name] = true
			excepted++
			if assert.Error(t, n.err, "%s: listed as an exception (%s), but it renders now: take it off the list", b.what(), ex.why) {
				assert.Contains(t, support.HelmRefusal(n.err), ex.refusal, "%s: refused now, but not for the reason listed", b.what())
			}
			if ex.newPoolOnly {
				runningPoolRenders(t, b, old)
			}
			continue
		}
		if assert.NoError(t, n.err, "%s: %s renders it, this chart refuses it", b.what(), archive) {
			acceptedNow++
		}
	}
	var unmet []string
	for name := range exceptions {
		if !met[name] {
			unmet = append(unmet, name)
		}
	}
	sort.Strings(unmet)
	assert.Empty(t, unmet, "listed as exceptions, but no kept value set of that name rendered under %s", archive)

	// The issue's findings are in the corpus, accepted then and now.
	for _, name := range issueFindings {
		states := 0
		for i, b := range before {
			if b.pool.name != name {
				continue
			}
			states++
			assert.NoError(t, b.err, "%s: issue 60 says %s rendered it", b.what(), archive)
			assert.NoError(t, now[i].err, "%s: a pool that worked under %s", now[i].what(), archive)
		}
		assert.Positive(t, states, "%s is not in the kept corpus", name)
	}
	t.Logf("kept corpus: %s; accepted by %s: %d, of them rendered now: %d, exceptions (listed): %d; %s took %s, this chart %s",
		c.summary(), rel(archive), accepted, acceptedNow, excepted, rel(archive), oldTook.Round(time.Millisecond), nowTook.Round(time.Millisecond))
	require.Positive(t, accepted)
}

// runningPoolRenders: the pool the previous release created from b's values
// (its render, by Helm's pipeline, applied to a fresh copy of the healthy
// cluster) renders under this chart at its next upgrade.
func runningPoolRenders(t *testing.T, b helmVerdict, old *chart.Chart) {
	t.Helper()
	require.Equal(t, "healthy", b.state.name, "%s: a new-pool-only exception is checked on the healthy cluster", b.what())
	cluster := healthyCluster(t)
	files, err := support.HelmRender(old, b.pool.rel, b.pool.values, cluster, nil)
	require.NoError(t, err, b.what())
	m, err := render.NewManifest(files)
	require.NoError(t, err)
	require.NoError(t, cluster.Apply(m, b.pool.rel.Namespace))
	rel := b.pool.rel
	rel.Upgrade = true
	_, err = support.HelmRender(poolChart(t), rel, b.pool.values, cluster, nil)
	assert.NoError(t, err, "%s: the pool the previous release created from these values is refused at its upgrade", b.what())
}
