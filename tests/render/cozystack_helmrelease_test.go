package render

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// fixtureDirs hold the cluster states the CLI's tests, the docs, `make
// render` and the render tiers read: every HelmRelease in them is a pool as
// Cozystack writes it, or listed in notCozystackShaped.
var fixtureDirs = []string{"examples", "cmd/workerimage/testdata", "tests/render/testdata"}

// notCozystackShaped are the fixture HelmReleases that are deliberately not
// the HelmRelease cozystack-api writes, by file and namespace/name, with why.
// Anything else that drifts from support.CozystackHelmRelease fails.
var notCozystackShaped = func() map[string]string {
	const (
		older    = "an older release that names its chart in spec.chart (a HelmRepository) and reads no cozystack-values: the pools Cozystack created before its ApplicationDefinitions, which pins, adopt and rollout still read"
		other    = "another chart's release, not a pool: the fleet tools must pass it over"
		operator = "the Cozystack operator's release of a Package, not a pool: the fleet tools pass it over, and TestStockExampleIsWhatCozystackAndTheChartsWrite holds it, in the example these files are made from, to what the operator writes"
	)
	out := map[string]string{
		"cmd/workerimage/testdata/pins/cluster.yaml tenant-beta/beta-batch": "an older release installed under spec.releaseName, without the rd's prefix: the fleet tools read the release it names",
	}
	for file, names := range map[string][]string{
		"examples/cluster-state.yaml":                      {"tenant-acme/kubernetes-nodes-acme-workers"},
		"examples/platform/cluster-state.yaml":             {"tenant-acme/kubernetes-nodes-acme-workers"},
		"cmd/workerimage/testdata/rollcheck/deployed.yaml": {"tenant-acme/kubernetes-nodes-acme-workers"},
		"cmd/workerimage/testdata/rollout/cluster.yaml":    {"tenant-acme/kubernetes-nodes-acme-workers"},
		// The fleet adopt is tested on, written in the older shape
		// throughout.
		"cmd/workerimage/testdata/adopt/fleet.yaml": {
			"tenant-acme/kubernetes-nodes-acme-fast", "tenant-acme/kubernetes-nodes-acme-golden", "tenant-acme/kubernetes-nodes-acme-workers",
			"tenant-beta/kubernetes-nodes-beta-big", "tenant-beta/kubernetes-nodes-beta-broken", "tenant-beta/kubernetes-nodes-beta-fixed", "tenant-beta/kubernetes-nodes-beta-slow",
			"tenant-delta/kubernetes-nodes-delta-new", "tenant-delta/kubernetes-nodes-delta-old", "tenant-delta/kubernetes-nodes-delta-oldfast",
			"tenant-gamma/kubernetes-nodes-gamma-idle", "tenant-gamma/kubernetes-nodes-gamma-mirror",
		},
		// pins' own fixtures, read without a cozystack-values Secret.
		"cmd/workerimage/testdata/pins/cluster.yaml": {
			"tenant-acme/kubernetes-nodes-acme-broken", "tenant-acme/kubernetes-nodes-acme-golden", "tenant-acme/kubernetes-nodes-acme-workers",
			"tenant-delta/kubernetes-nodes-delta-big", "tenant-gamma/kubernetes-nodes-gamma-edge",
		},
		"cmd/workerimage/testdata/pins/per-class.yaml": {
			"tenant-acme/kubernetes-nodes-acme-fast", "tenant-acme/kubernetes-nodes-acme-local", "tenant-acme/kubernetes-nodes-acme-workers",
			"tenant-beta/kubernetes-nodes-beta-local",
		},
		"cmd/workerimage/testdata/pins/pool-only.yaml": {"tenant-acme/kubernetes-nodes-acme-idle"},
	} {
		for _, n := range names {
			out[file+" "+n] = older
		}
	}
	for _, file := range []string{"cmd/workerimage/testdata/adopt/fleet.yaml", "cmd/workerimage/testdata/pins/cluster.yaml"} {
		out[file+" tenant-acme/postgres-main"] = other
	}
	// The example cluster, and the fixtures made from it as it runs.
	for _, file := range []string{"examples/cluster-state.yaml", "cmd/workerimage/testdata/rollcheck/deployed.yaml", "cmd/workerimage/testdata/rollout/cluster.yaml"} {
		for _, release := range []string{"cozy-public/kubernetes-worker-image", "cozy-system/kubernetes-nodes-golden-rd"} {
			out[file+" "+release] = operator
		}
	}
	return out
}()

// cozystackHelmReleaseFor is support.CozystackHelmRelease for the pool a
// HelmRelease named name in namespace would be, parsed.
func cozystackHelmReleaseFor(t testing.TB, namespace, name string) map[string]any {
	t.Helper()
	return cozystackHelmReleaseOf(t, support.CozystackArtifact, namespace, name)
}

// cozystackHelmReleaseOf is cozystackHelmReleaseFor where the
// ApplicationDefinition names artifact (after the takeover, this pool
// chart's): the ApplicationDefinition controller moves every pool to it.
func cozystackHelmReleaseOf(t testing.TB, artifact, namespace, name string) map[string]any {
	t.Helper()
	want := map[string]any{}
	require.NoError(t, yaml.Unmarshal([]byte(support.CozystackHelmReleaseOf(artifact, namespace, strings.TrimPrefix(name, support.CozystackReleasePrefix), "{}")), &want))
	return want
}

// cozystackDrift lists where hr differs from the HelmRelease cozystack-api
// writes for the pool of its name, in everything but spec.values and the
// status (what the tenant and helm-controller write) and the metadata the
// API server and helm-controller add (generation, creationTimestamp,
// resourceVersion, uid, helm-controller's finalizer), for a cluster whose
// ApplicationDefinition names upstream's artifact.
func cozystackDrift(t testing.TB, hr map[string]any) []string {
	t.Helper()
	return cozystackDriftOf(t, support.CozystackArtifact, hr)
}

// cozystackDriftOf is cozystackDrift where the ApplicationDefinition names
// artifact.
func cozystackDriftOf(t testing.TB, artifact string, hr map[string]any) []string {
	t.Helper()
	name, _ := render.Get(hr, "metadata.name").(string)
	namespace, _ := render.Get(hr, "metadata.namespace").(string)
	if !strings.HasPrefix(name, support.CozystackReleasePrefix) {
		return []string{fmt.Sprintf("metadata.name %q lacks the ApplicationDefinition's prefix %q", name, support.CozystackReleasePrefix)}
	}
	got := map[string]any{}
	for k, v := range hr {
		got[k] = v
	}
	delete(got, "status")
	if spec, ok := got["spec"].(map[string]any); ok {
		got["spec"] = without(spec, "values")
	}
	if meta, ok := got["metadata"].(map[string]any); ok {
		meta = without(meta, "generation", "creationTimestamp", "resourceVersion", "uid")
		if f, ok := meta["finalizers"].([]any); ok && reflect.DeepEqual(f, []any{"finalizers.fluxcd.io"}) {
			delete(meta, "finalizers")
		}
		got["metadata"] = meta
	}
	want := cozystackHelmReleaseOf(t, artifact, namespace, name)
	want["spec"] = without(want["spec"].(map[string]any), "values")
	return diffPaths("", normalized(t, got), normalized(t, want))
}

// without is m less keys, m untouched.
func without(m map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// normalized is v through JSON, so numbers and strings compare alike
// whichever decoder read them.
func normalized(t testing.TB, v any) any {
	t.Helper()
	raw, err := yaml.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, yaml.Unmarshal(raw, &out))
	return out
}

// diffPaths names each path where got and want differ, with both values.
func diffPaths(path string, got, want any) []string {
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if !gok || !wok {
		if reflect.DeepEqual(got, want) {
			return nil
		}
		return []string{fmt.Sprintf("%s is %s, want %s", strings.TrimPrefix(path, "."), brief(got), brief(want))}
	}
	keys := map[string]bool{}
	for k := range gm {
		keys[k] = true
	}
	for k := range wm {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		out = append(out, diffPaths(path+"."+k, gm[k], wm[k])...)
	}
	return out
}

func brief(v any) string {
	if v == nil {
		return "unset"
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// fixtureHelmReleases reads every HelmRelease of the fixture dirs, keyed by
// "<file> <namespace>/<name>", and the artifact the ApplicationDefinition
// kubernetes-nodes of each file that holds one names. A YAML file that does
// not parse is skipped only when it names no HelmRelease (the CLI's
// deliberately broken inputs).
func fixtureHelmReleases(t *testing.T) (releases map[string]map[string]any, artifacts map[string]string) {
	t.Helper()
	out := map[string]map[string]any{}
	artifacts = map[string]string{}
	for _, dir := range fixtureDirs {
		err := filepath.WalkDir(support.Path(dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
				return err
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(support.RepoRoot(), path)
			objs, err := render.ParseObjects(raw)
			if err != nil {
				if strings.Contains(string(raw), "HelmRelease") {
					return fmt.Errorf("%s names a HelmRelease but does not parse: %w", rel, err)
				}
				return nil
			}
			for _, o := range objs {
				switch {
				case o.GetKind() == "HelmRelease":
					out[rel+" "+o.GetNamespace()+"/"+o.GetName()] = o.Object
				case o.GetKind() == "ApplicationDefinition" && o.GetName() == "kubernetes-nodes":
					artifacts[rel], _ = render.Get(o.Object, "spec.release.chartRef.name").(string)
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	return out, artifacts
}

// fixtureProblems holds releases to the shape (chartRef to the artifact of
// the file's ApplicationDefinition, upstream's where it has none): each one
// not listed must be it, each listed one must exist and differ from it.
func fixtureProblems(t testing.TB, releases map[string]map[string]any, artifacts map[string]string, listed map[string]string) (problems []string, checked int) {
	t.Helper()
	keys := make([]string, 0, len(releases))
	for k := range releases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		artifact := support.CozystackArtifact
		if a := artifacts[k[:strings.Index(k, " ")]]; a != "" {
			artifact = a
		}
		drift := cozystackDriftOf(t, artifact, releases[k])
		if why, ok := listed[k]; ok {
			if len(drift) == 0 {
				problems = append(problems, fmt.Sprintf("%s is listed as not Cozystack's shape (%s) but is: take it off notCozystackShaped", k, why))
			}
			continue
		}
		checked++
		if len(drift) > 0 {
			problems = append(problems, fmt.Sprintf("%s is not the HelmRelease cozystack-api writes for its pool (tests/support.CozystackHelmRelease):\n  %s\nwrite it as cozystack-api does, or list it in notCozystackShaped with why", k, strings.Join(drift, "\n  ")))
		}
	}
	var gone []string
	for k, why := range listed {
		if _, ok := releases[k]; !ok {
			gone = append(gone, fmt.Sprintf("notCozystackShaped lists %s (%s), which no fixture holds: take it off", k, why))
		}
	}
	sort.Strings(gone)
	return append(problems, gone...), checked
}

// Every Cozystack pool of the examples and the CLI's fixtures is the
// HelmRelease cozystack-api writes (support.CozystackHelmRelease, the one
// the tier creates and Flux's helm-controller reconciles there) in all but
// its values and status, so what the CLI is tested on is what a cluster
// holds. The few deliberately of another shape are listed with why; a
// listed one that no longer exists or no longer differs fails too, so the
// list stays true.
func TestFixtureHelmReleasesAreAsCozystackWritesThem(t *testing.T) {
	releases, artifacts := fixtureHelmReleases(t)
	require.NotEmpty(t, releases)
	problems, checked := fixtureProblems(t, releases, artifacts, notCozystackShaped)
	for _, p := range problems {
		t.Error(p)
	}
	require.NotZero(t, checked)
	t.Logf("%d HelmReleases as cozystack-api writes them, %d listed as deliberately otherwise", checked, len(notCozystackShaped))
}

// The fixture check fails a drifting release that is not listed, a listed
// one that is Cozystack's shape after all, and a listed one no fixture
// holds; it passes the shape and a listed release that differs.
func TestFixtureProblemsKeepTheListTrue(t *testing.T) {
	shaped := cozystackHelmReleaseFor(t, "tenant-acme", "kubernetes-nodes-acme-golden")
	older := cozystackHelmReleaseFor(t, "tenant-acme", "kubernetes-nodes-acme-workers")
	older["spec"] = map[string]any{"chart": map[string]any{"spec": map[string]any{"chart": "kubernetes-nodes"}}, "interval": "10m"}

	problems, checked := fixtureProblems(t, map[string]map[string]any{"a.yaml tenant-acme/kubernetes-nodes-acme-golden": shaped, "a.yaml tenant-acme/kubernetes-nodes-acme-workers": older}, nil,
		map[string]string{"a.yaml tenant-acme/kubernetes-nodes-acme-workers": "older"})
	assert.Empty(t, problems)
	assert.Equal(t, 1, checked)

	problems, _ = fixtureProblems(t, map[string]map[string]any{"a.yaml tenant-acme/kubernetes-nodes-acme-golden": shaped, "a.yaml tenant-acme/kubernetes-nodes-acme-workers": older}, nil,
		map[string]string{"a.yaml tenant-acme/kubernetes-nodes-acme-golden": "older", "b.yaml tenant-beta/kubernetes-nodes-beta-web": "older"})
	require.Len(t, problems, 3)
	assert.Contains(t, problems[0], "a.yaml tenant-acme/kubernetes-nodes-acme-golden is listed as not Cozystack's shape (older) but is")
	assert.Contains(t, problems[1], "a.yaml tenant-acme/kubernetes-nodes-acme-workers is not the HelmRelease cozystack-api writes")
	assert.Contains(t, problems[1], "spec.chartRef is unset, want")
	assert.Contains(t, problems[2], "notCozystackShaped lists b.yaml tenant-beta/kubernetes-nodes-beta-web (older), which no fixture holds")
}

// In a file whose ApplicationDefinition names another artifact (this pool
// chart's, after the takeover), a pool is the shape with that chartRef, and
// one still naming upstream's has not been moved: drift.
func TestFixtureProblemsFollowTheFilesApplicationDefinition(t *testing.T) {
	const ours = "kubernetes-nodes-golden-kubevirt-kubernetes-nodes"
	moved := cozystackHelmReleaseOf(t, ours, "tenant-acme", "kubernetes-nodes-acme-golden")
	left := cozystackHelmReleaseFor(t, "tenant-acme", "kubernetes-nodes-acme-workers")
	problems, checked := fixtureProblems(t, map[string]map[string]any{"b.yaml tenant-acme/kubernetes-nodes-acme-golden": moved, "b.yaml tenant-acme/kubernetes-nodes-acme-workers": left},
		map[string]string{"b.yaml": ours}, nil)
	assert.Equal(t, 2, checked)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], "b.yaml tenant-acme/kubernetes-nodes-acme-workers is not the HelmRelease cozystack-api writes")
	assert.Contains(t, problems[0], `spec.chartRef.name is "`+support.CozystackArtifact+`", want "`+ours+`"`)

	problems, _ = fixtureProblems(t, map[string]map[string]any{"c.yaml tenant-acme/kubernetes-nodes-acme-golden": moved}, map[string]string{"b.yaml": ours}, nil)
	require.Len(t, problems, 1, "a file without the ApplicationDefinition expects upstream's artifact")
}

// The check sees each way a fixture can drift, and passes the HelmRelease
// cozystack-api writes whatever its values, status and server-side metadata.
func TestCozystackDriftNamesTheField(t *testing.T) {
	pool := func(edit func(hr map[string]any)) map[string]any {
		hr := cozystackHelmReleaseFor(t, "tenant-acme", "kubernetes-nodes-acme-workers")
		hr["spec"].(map[string]any)["values"] = map[string]any{"cluster": "acme", "minReplicas": 2}
		if edit != nil {
			edit(hr)
		}
		return hr
	}
	spec := func(hr map[string]any) map[string]any { return hr["spec"].(map[string]any) }
	meta := func(hr map[string]any) map[string]any { return hr["metadata"].(map[string]any) }

	assert.Empty(t, cozystackDrift(t, pool(nil)))
	assert.Empty(t, cozystackDrift(t, pool(func(hr map[string]any) {
		meta(hr)["generation"] = 3
		meta(hr)["finalizers"] = []any{"finalizers.fluxcd.io"}
		hr["status"] = map[string]any{"observedGeneration": 3}
	})), "values, status and what the API server and helm-controller add are not the shape")

	for _, c := range []struct {
		name string
		edit func(hr map[string]any)
		want string
	}{
		{"Flux's default interval", func(hr map[string]any) { spec(hr)["interval"] = "10m" }, `spec.interval is "10m", want "5m"`},
		{"no history limit", func(hr map[string]any) { delete(spec(hr), "maxHistory") }, "spec.maxHistory is unset, want 5"},
		{"no upgrade strategy", func(hr map[string]any) { delete(spec(hr)["upgrade"].(map[string]any), "strategy") }, `spec.upgrade.strategy is unset, want {"name":"RetryOnFailure","retryInterval":"30s"}`},
		{"waits", func(hr map[string]any) { spec(hr)["install"].(map[string]any)["disableWait"] = false }, "spec.install.disableWait is false, want true"},
		{"no shard label", func(hr map[string]any) { delete(meta(hr)["labels"].(map[string]any), support.CozystackShardLabel) }, "metadata.labels." + support.CozystackShardLabel + ` is unset, want "tenants"`},
		{"another application's name", func(hr map[string]any) {
			meta(hr)["labels"].(map[string]any)["apps.cozystack.io/application.name"] = "beta-web"
		}, `metadata.labels.apps.cozystack.io/application.name is "beta-web", want "acme-workers"`},
		{"no cozystack-values", func(hr map[string]any) { delete(spec(hr), "valuesFrom") }, "spec.valuesFrom is unset"},
		{"the chart named in spec.chart", func(hr map[string]any) {
			delete(spec(hr), "chartRef")
			spec(hr)["chart"] = map[string]any{"spec": map[string]any{"chart": "kubernetes-nodes"}}
		}, `spec.chart is {"spec":{"chart":"kubernetes-nodes"}}, want unset`},
		{"a tenant's annotation", func(hr map[string]any) { meta(hr)["annotations"] = map[string]any{"note": "mine"} }, `metadata.annotations is {"note":"mine"}, want unset`},
		{"another finalizer", func(hr map[string]any) { meta(hr)["finalizers"] = []any{"example.com/keep"} }, `metadata.finalizers is ["example.com/keep"], want unset`},
		{"no prefix", func(hr map[string]any) { meta(hr)["name"] = "acme-workers" }, `metadata.name "acme-workers" lacks the ApplicationDefinition's prefix "kubernetes-nodes-"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			drift := cozystackDrift(t, pool(c.edit))
			require.NotEmpty(t, drift)
			assert.Contains(t, strings.Join(drift, "\n"), c.want)
		})
	}
}

// The shape's release settings are upstream's ApplicationDefinition's: its
// prefix, release labels and chartRef, and its helm-install-timeout and
// helm-install-disable-wait, which cozystack-api puts on install and upgrade.
func TestCozystackHelmReleaseIsUpstreamRDs(t *testing.T) {
	rd := upstreamRD(t)
	hr := cozystackHelmReleaseFor(t, "tenant-acme", support.CozystackReleasePrefix+"acme-workers")

	assert.Equal(t, render.Get(rd, "spec.release.prefix"), support.CozystackReleasePrefix)
	labels := render.Get(hr, "metadata.labels").(map[string]any)
	for k, v := range render.Get(rd, "spec.release.labels").(map[string]any) {
		assert.Equal(t, v, labels[k], "release label %s", k)
	}
	assert.Equal(t, render.Get(rd, "spec.application.kind"), labels["apps.cozystack.io/application.kind"])
	assert.Equal(t, "acme-workers", labels["apps.cozystack.io/application.name"])
	assert.Equal(t, render.Get(rd, "spec.release.chartRef"), render.Get(hr, "spec.chartRef"))

	timeout := render.Get(rd, "metadata.annotations").(map[string]any)["release.cozystack.io/helm-install-timeout"]
	noWait := render.Get(rd, "metadata.annotations").(map[string]any)["release.cozystack.io/helm-install-disable-wait"]
	require.Equal(t, "true", noWait)
	for _, action := range []string{"install", "upgrade"} {
		assert.Equal(t, timeout, render.Get(hr, "spec."+action+".timeout"), action)
		assert.Equal(t, true, render.Get(hr, "spec."+action+".disableWait"), action)
		assert.Equal(t, "RetryOnFailure", render.Get(hr, "spec."+action+".strategy.name"), action)
	}
}
