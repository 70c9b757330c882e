package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"
)

// lookalikes are texts a tenant can write that read like a cluster error: Helm's
// wording for a failed lookup, the providers' own errors, an API server's
// answer, the CLI's own problem line, and Helm's refusal prefix.
var lookalikes = []string{
	"error calling lookup: etcd is down",
	`executing "kubernetes-nodes/templates/x.yaml" at <lookup "v1" "ConfigMap" "ns" "n">: error calling lookup: configmaps is forbidden`,
	render.ErrKindNotServed.Error() + ": no group version v1",
	"unable to get apiresource from unstructured: storage.k8s.io/v1, Kind=StorageClass: boom",
	"the server is currently unable to handle the request (get storageclasses.storage.k8s.io replicated)",
	"the cluster answered a lookup with an error: etcd is down",
	"execution error at (kubernetes-nodes/templates/x.yaml:1:1): pool fine: renders",
}

// lookalikePools put a lookalike where the chart quotes it in a refusal: a
// storageClass (refused by the schema) and a platform default the templates
// refuse after their lookups have succeeded.
func lookalikePools(text string) map[string]map[string]any {
	return map[string]map[string]any{
		"storageClass": {"cluster": "acme", "storageClass": lookalikeValue("storageClass", text), "osImage": map[string]any{"builtin": map[string]any{}}},
		"_cluster.talos.imageFactoryURL": {"cluster": "acme", "_cluster": map[string]any{
			"talos": map[string]any{"imageFactoryURL": lookalikeValue("_cluster.talos.imageFactoryURL", text)},
		}},
	}
}

// lookalikeValue is the value lookalikePools writes into field.
func lookalikeValue(field, text string) string {
	if field == "storageClass" {
		return text
	}
	return "https://x/" + text
}

// quotes says whether a refusal holds a value as written or as the chart
// quotes it (its first 80 characters and its length, worker-image-lib.truncate),
// plain or as Go's %q writes it.
func quotes(refusal, value string) bool {
	forms := []string{value}
	if len(value) > 80 {
		forms = append(forms, fmt.Sprintf("%s...(%d characters)", value[:80], len(value)))
	}
	for _, form := range forms {
		q := strconv.Quote(form)
		if strings.Contains(refusal, form) || strings.Contains(refusal, q[1:len(q)-1]) {
			return true
		}
	}
	return false
}

func writeValues(t *testing.T, vals map[string]any) string {
	t.Helper()
	raw, err := yaml.Marshal(vals)
	require.NoError(t, err)
	return writeTemp(t, "pool.yaml", string(raw))
}

// A refusal quoting a tenant's text is that pool's refusal (exit 1), through
// every provider, however much the text reads like a cluster error.
func TestPlanRefusalQuotingALookupErrorIsARefusal(t *testing.T) {
	state := td("state", "golden.yaml")
	live := writeKubeconfig(t, newAPIServer(t, state).URL)
	for i, text := range lookalikes {
		for field, vals := range lookalikePools(text) {
			values := writeValues(t, vals)
			base := []string{"plan", "-values", values, "-release", testRelease, "-namespace", testNamespace, "-o", "json"}
			for name, run := range map[string]func() result{
				"state file":    func() result { return cli(t, append(base, "-cluster", state)...) },
				"fake cluster":  func() result { return cliWith(t, fakeDial(nil), append(base, "-kubeconfig", state)...) },
				"live provider": func() result { return cli(t, append(base, "-kubeconfig", live)...) },
			} {
				t.Run(fmt.Sprintf("%d/%s/%s", i, field, name), func(t *testing.T) {
					res := run()
					require.Equal(t, exitAttn, res.code, "stderr: %s", res.stderr)
					assert.Empty(t, res.stderr)
					r := decode[report.PlanReport](t, res)
					assert.Equal(t, "refused", r.Result)
					assert.True(t, quotes(r.Refusal, lookalikeValue(field, text)), "the refusal is whole, the tenant's text inside it: %s", r.Refusal)
					assert.False(t, strings.HasPrefix(r.Refusal, "pool fine"), "Helm's prefix is stripped where Helm wrote it, not where a value repeats it")
				})
			}
		}
	}
}

// The same structure tells a real lookup error apart: exit 2, one line, for
// the test fake and for an API server's Status answer alike.
func TestPlanRealLookupErrorIsAProblemThroughEveryProvider(t *testing.T) {
	state := td("state", "golden.yaml")
	args := func(cluster ...string) []string {
		return append([]string{"plan", "-values", td("pools", "builtin.yaml"), "-release", testRelease, "-namespace", testNamespace}, cluster...)
	}
	unavailable := apierrors.NewServiceUnavailable("etcd is down")
	requireProblem(t, cliWith(t, fakeDial(map[string]error{"DataVolume": unavailable}), args("-kubeconfig", state)...),
		"the cluster answered a lookup with an error: etcd is down")

	srv := newAPIServer(t, state)
	srv.fail["datavolumes"] = apiFailure{503, "ServiceUnavailable", "etcd is down"}
	requireProblem(t, cli(t, args("-kubeconfig", writeKubeconfig(t, srv.URL))...), "the cluster answered a lookup with an error: etcd is down")

	forbidden := newAPIServer(t, state)
	forbidden.fail["storageclasses"] = apiFailure{403, "Forbidden", `storageclasses.storage.k8s.io is forbidden: User "test" cannot list resource "storageclasses"`}
	requireProblem(t, cli(t, args("-kubeconfig", writeKubeconfig(t, forbidden.URL))...), "the cluster answered a lookup with an error", "cannot list resource \"storageclasses\"")

	// A lookalike value with a failing cluster: the chart's schema refuses
	// before any lookup, so that is the answer; a valid pool gets exit 2.
	vals := writeValues(t, lookalikePools(lookalikes[0])["storageClass"])
	res := cliWith(t, fakeDial(map[string]error{"*": unavailable}), "plan", "-values", vals, "-release", testRelease, "-namespace", testNamespace, "-kubeconfig", state)
	assert.Equal(t, exitAttn, res.code, res.stderr)
}

// hostileHelmRelease is a pool whose values quote a lookalike.
func hostileHelmRelease(t *testing.T, vals map[string]any) string {
	t.Helper()
	// Its own cluster, so the release name is the one the chart requires.
	vals["cluster"] = "evil"
	hr := map[string]any{
		"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
		"metadata": map[string]any{"name": "kubernetes-nodes-evil-x", "namespace": "tenant-evil"},
		"spec": map[string]any{
			"chartRef": map[string]any{"kind": "ExternalArtifact", "name": "cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes", "namespace": "cozy-system"},
			"values":   vals,
		},
	}
	raw, err := yaml.Marshal(hr)
	require.NoError(t, err)
	return "---\n" + string(raw)
}

// pinsWith is the pins fixture <base>.yaml with more documents after it.
func pinsWith(t *testing.T, base string, docs ...string) string {
	t.Helper()
	text, err := os.ReadFile(td("pins", base+".yaml"))
	require.NoError(t, err)
	return writeTemp(t, base+"-with.yaml", string(text)+"\n"+strings.Join(docs, ""))
}

// One tenant's lookalike value makes its own pool refused in pins; every other
// pool, golden and disk is reported as before.
func TestPinsReportsEveryPoolBesideARefusalQuotingALookupError(t *testing.T) {
	want := pinsOf(t, "cluster")
	for i, text := range lookalikes {
		for field, vals := range lookalikePools(text) {
			t.Run(fmt.Sprintf("%d/%s", i, field), func(t *testing.T) {
				state := pinsWith(t, "cluster", hostileHelmRelease(t, vals))
				for name, res := range map[string]result{
					"state file":    cli(t, "pins", "-cluster", state, "-o", "json"),
					"live provider": cli(t, "pins", "-kubeconfig", writeKubeconfig(t, newAPIServer(t, state).URL), "-o", "json"),
				} {
					require.Equal(t, exitOK, res.code, "%s: stderr: %s", name, res.stderr)
					got := decode[report.PinsReport](t, res)
					var evil []report.PoolPin
					rest := got.Unresolved[:0:0]
					for _, p := range got.Unresolved {
						if p.HelmRelease == "tenant-evil/kubernetes-nodes-evil-x" {
							evil = append(evil, p)
						} else {
							rest = append(rest, p)
						}
					}
					require.Len(t, evil, 1, "%s: the pool is listed as not resolved", name)
					assert.True(t, quotes(evil[0].Refusal, lookalikeValue(field, text)), "%s: %s", name, evil[0].Refusal)
					got.Unresolved, got.Cluster = rest, want.Cluster
					assert.Equal(t, want.PoolsRead+1, got.PoolsRead, "%s: the evil pool is read too", name)
					got.PoolsRead = want.PoolsRead
					assert.Equal(t, want, got, "%s: every other pool as before", name)
				}
			})
		}
	}
}

// A real lookup error while pins renders a pool is still a problem, over HTTP too.
func TestPinsRealLookupErrorIsAProblemOverHTTP(t *testing.T) {
	srv := newAPIServer(t, td("pins", "cluster.yaml"))
	srv.fail["configmaps"] = apiFailure{503, "ServiceUnavailable", "etcd is down"}
	requireProblem(t, cli(t, "pins", "-kubeconfig", writeKubeconfig(t, srv.URL)), "the cluster answered a lookup with an error: etcd is down")
}

// renderFailure reads no text: an error that only reads like a lookup error is
// the chart's refusal.
func TestRenderFailureReadsNoText(t *testing.T) {
	for _, text := range lookalikes {
		refusal, prob := report.RenderFailure(fmt.Errorf("%s", text))
		assert.NoError(t, prob, text)
		assert.NotEmpty(t, refusal)
	}
}

// adopt reads pools as pins does: a lookalike refusal is that pool's, and the
// report is made.
func TestAdoptReportsEveryPoolBesideARefusalQuotingALookupError(t *testing.T) {
	want := adoptOf(t, "-cluster", td("adopt", "fleet.yaml"))
	text, err := os.ReadFile(td("adopt", "fleet.yaml"))
	require.NoError(t, err)
	for field, vals := range lookalikePools(lookalikes[0]) {
		t.Run(field, func(t *testing.T) {
			state := writeTemp(t, "fleet.yaml", string(text)+"\n"+hostileHelmRelease(t, vals))
			got := adoptOf(t, "-cluster", state)
			var evil []report.PoolPin
			for _, l := range [][]report.PoolPin{got.Unresolved, got.RefusedToday} {
				for _, p := range l {
					if p.HelmRelease == "tenant-evil/kubernetes-nodes-evil-x" {
						evil = append(evil, p)
					}
				}
			}
			require.Len(t, evil, 1, "the pool is listed, refused")
			assert.True(t, quotes(evil[0].Refusal, lookalikeValue(field, lookalikes[0])), evil[0].Refusal)
			assert.Equal(t, want.Flavors, got.Flavors, "every other pool as before")
			assert.Equal(t, want.Catalog, got.Catalog)
		})
	}
}
