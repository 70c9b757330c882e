package main

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func adoptOf(t *testing.T, args ...string) report.AdoptReport {
	t.Helper()
	res := cli(t, append(append([]string{"adopt"}, args...), "-o", "json")...)
	require.Equal(t, exitOK, res.code, "stderr: %s", res.stderr)
	assert.Empty(t, res.stderr)
	return decode[report.AdoptReport](t, res)
}

// adoptPools indexes every HTTP pool of the report by HelmRelease, with its
// flavor's version and factory URL and its class group.
type placedPool struct {
	report.AdoptPool
	flavor report.AdoptFlavor
	class  string
}

func adoptPools(r report.AdoptReport) map[string]placedPool {
	out := map[string]placedPool{}
	for _, f := range r.Flavors {
		for _, c := range f.Classes {
			for _, p := range c.Pools {
				out[p.HelmRelease] = placedPool{p, f, c.Class}
			}
		}
	}
	return out
}

// kmtName renders a pool with the harness against the fake cluster, as the
// independent reference for the names adopt reports.
func kmtName(t *testing.T, state string, rel render.Release, values map[string]any) string {
	t.Helper()
	c, err := support.LoadChart(render.PoolChart)
	require.NoError(t, err)
	cluster, err := support.LoadCluster(state)
	require.NoError(t, err)
	m, err := render.Render(c, render.Options{Release: rel, Values: values, Cluster: cluster, APIVersions: []string{"snapshot.storage.k8s.io/v1"}})
	require.NoError(t, err)
	kmt, err := m.One("KubevirtMachineTemplate")
	require.NoError(t, err)
	return kmt.Name()
}

func fleetValues(t *testing.T, namespace, name string) map[string]any {
	t.Helper()
	objs, err := render.LoadObjects(td("adopt", "fleet.yaml"))
	require.NoError(t, err)
	for _, o := range objs {
		if o.GetKind() == "HelmRelease" && o.GetNamespace() == namespace && o.GetName() == name {
			v, _ := o.Object["spec"].(map[string]any)["values"].(map[string]any)
			return v
		}
	}
	t.Fatalf("no HelmRelease %s/%s in the fleet", namespace, name)
	return nil
}

func withOSImage(values map[string]any, osImage map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range values {
		out[k] = v
	}
	out["osImage"] = osImage
	return out
}

// Every pool of the mixed fleet gets the outcome the chart gives its switch.
func TestAdoptReportsWhatSwitchingEachPoolDoes(t *testing.T) {
	fleet := td("adopt", "fleet.yaml")
	r := adoptOf(t, "-cluster", fleet)
	pools := adoptPools(r)
	g6 := goldenName("v1.13.6")
	builtin := map[string]any{"osImage": map[string]any{"builtin": map[string]any{}}}

	cases := []struct {
		helmRelease, outcome, class, version, factory string
		workers                                       int64
		valuesChange                                  map[string]any
		refusal                                       []string
	}{
		{"tenant-acme/kubernetes-nodes-acme-workers", report.OutcomeReady, "replicated", "v1.13.6", "https://factory.talos.dev", 3, builtin, nil},
		{"tenant-gamma/kubernetes-nodes-gamma-idle", report.OutcomeReady, "replicated", "v1.13.6", "https://factory.talos.dev", 0, builtin, nil},
		{"tenant-acme/kubernetes-nodes-acme-fast", report.OutcomeNeedsPerClass, "fast", "v1.13.6", "https://factory.talos.dev", 2, builtin,
			[]string{`its disks would be on StorageClass "fast"`, `add "fast" to the additionalStorageClasses`}},
		{"tenant-beta/kubernetes-nodes-beta-fixed", report.OutcomeRefused, "fixed", "v1.13.6", "https://factory.talos.dev", 1, builtin,
			[]string{`StorageClass "fixed" (storageClass) does not set allowVolumeExpansion: true`}},
		{"tenant-beta/kubernetes-nodes-beta-slow", report.OutcomeRefused, "slow", "v1.13.6", "https://factory.talos.dev", 1, builtin,
			[]string{`with the strategy "copy" (status.cloneStrategy of the StorageProfile slow)`}},
		{"tenant-gamma/kubernetes-nodes-gamma-mirror", report.OutcomeNeedsEntry, "replicated", "v1.13.5", "https://factory.mirror.internal", 2,
			map[string]any{"osImage": map[string]any{"builtin": map[string]any{"version": "v1.13.5"}}},
			[]string{"golden " + goldenName("v1.13.5") + " is absent from cozy-public"}},
		{"tenant-delta/kubernetes-nodes-delta-old", report.OutcomeNeedsEntry, "replicated", "v1.13.5", "https://factory.talos.dev", 2, builtin,
			[]string{"is absent from cozy-public"}},
		{"tenant-delta/kubernetes-nodes-delta-oldfast", report.OutcomeNeedsEntry, "fast", "v1.13.5", "https://factory.talos.dev", 1, builtin,
			[]string{"is absent from cozy-public"}},
		{"tenant-delta/kubernetes-nodes-delta-new", report.OutcomeImporting, "replicated", "v1.13.4", "https://factory.talos.dev", 1, builtin, nil},
	}
	require.Len(t, pools, len(cases), "every HTTP pool that renders today, and no other")
	for _, c := range cases {
		t.Run(c.helmRelease, func(t *testing.T) {
			p, ok := pools[c.helmRelease]
			require.True(t, ok)
			assert.Equal(t, c.outcome, p.Outcome)
			assert.Equal(t, c.class, p.class)
			assert.Equal(t, c.version, p.flavor.Version)
			assert.Equal(t, c.factory, p.flavor.ImageFactoryURL)
			assert.Equal(t, support.GoldenName(defaultSchematic, c.version), p.flavor.Golden)
			assert.Equal(t, c.workers, p.Workers)
			assert.True(t, p.MachineDeployment)
			assert.Equal(t, c.valuesChange, p.ValuesChange)
			for _, want := range c.refusal {
				assert.Contains(t, p.Refusal, want)
			}
			if c.refusal == nil {
				assert.Empty(t, p.Refusal)
			}
			require.NotNil(t, p.Switched, "the chart's report on the switched pool")
			assert.Equal(t, "clone", p.Switched.Path)

			// The names are the chart's, as the harness renders them: today's,
			// and the switched pool's where it renders.
			ns, name, _ := strings.Cut(c.helmRelease, "/")
			rel := render.Release{Name: name, Namespace: ns, Upgrade: true}
			values := fleetValues(t, ns, name)
			assert.Equal(t, kmtName(t, fleet, rel, values), p.MachineTemplate.Current)
			if c.outcome == report.OutcomeReady || c.outcome == report.OutcomeImporting {
				switched := withOSImage(values, c.valuesChange["osImage"].(map[string]any))
				assert.Equal(t, kmtName(t, fleet, rel, switched), p.MachineTemplate.New)
				assert.NotEqual(t, p.MachineTemplate.Current, p.MachineTemplate.New, "a switch re-images the pool")
			} else {
				assert.Empty(t, p.MachineTemplate.New)
			}
		})
	}

	acme := pools["tenant-acme/kubernetes-nodes-acme-workers"]
	assert.Equal(t, "1", acme.MinReplicas)
	assert.Equal(t, "5", acme.MaxReplicas)
	assert.Equal(t, g6, acme.Golden)
	assert.Equal(t, int64(3), acme.ImportsAvoidedNow)
	assert.Equal(t, "6Gi", acme.BytesPerImport)
	assert.Equal(t, "", acme.Replaces)
	assert.Equal(t, "osImage.factory", pools["tenant-delta/kubernetes-nodes-delta-old"].Replaces)
	assert.Equal(t, report.ImageSources{
		SchematicID:     "talos.schematicID unset: the chart's default, since what the pool runs could not be read: its MachineDeployment tenant-gamma/kubernetes-gamma-mirror names no KubevirtMachineTemplate",
		Version:         "the platform default _cluster.osImage.factory.version recorded when the pool was created (annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-gamma/kubernetes-gamma-mirror)",
		ImageFactoryURL: "the platform default _cluster.talos.imageFactoryURL recorded when the pool was created (annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment tenant-gamma/kubernetes-gamma-mirror)",
	}, pools["tenant-gamma/kubernetes-nodes-gamma-mirror"].ImageSources)
	perClass := pools["tenant-acme/kubernetes-nodes-acme-fast"]
	assert.Equal(t, g6+"--fast", perClass.Switched.GoldenChoice.PerClassGolden)
	assert.Equal(t, "unknown", perClass.BytesPerImport, "its golden does not exist yet")
	assert.Equal(t, "unknown", pools["tenant-delta/kubernetes-nodes-delta-old"].BytesPerImport)
	assert.Equal(t, "6Gi", pools["tenant-delta/kubernetes-nodes-delta-new"].BytesPerImport, "an importing golden has its size")
	assert.Zero(t, pools["tenant-delta/kubernetes-nodes-delta-new"].ImportsAvoidedNow, "not ready: nothing avoided yet")

	// Every refused check the chart reports is there, by number.
	refused := func(p placedPool) []int {
		var out []int
		for _, c := range p.Switched.FallbackChecks {
			if c.Outcome == "refused" {
				out = append(out, c.Refusal)
			}
		}
		return out
	}
	assert.Equal(t, []int{6}, refused(pools["tenant-beta/kubernetes-nodes-beta-fixed"]))
	assert.Equal(t, []int{7}, refused(pools["tenant-beta/kubernetes-nodes-beta-slow"]))

	// The others, listed apart and never dropped.
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-golden"}, helmReleases(r.Cloning))
	assert.Equal(t, g6, r.Cloning[0].Golden)
	require.Equal(t, []string{"tenant-beta/kubernetes-nodes-beta-big"}, helmReleases(r.RefusedToday))
	assert.Contains(t, r.RefusedToday[0].Refusal, `instanceType "u1.4xlarge" is not a VirtualMachineClusterInstancetype`)
	require.Equal(t, []string{"tenant-beta/kubernetes-nodes-beta-broken"}, helmReleases(r.Unresolved))
	assert.Contains(t, r.Unresolved[0].Refusal, `"Not_Valid"`)
	assert.NotContains(t, adoptText(t, fleet), "postgres-main", "another chart's release is not a pool")

	// Every HTTP pool pins lists is counted, the refused one too; of the
	// goldens to add, each is one download less saved.
	assert.Equal(t, report.AdoptSavings{HTTPPools: 10, RenderToday: 9, RefusedToday: 1, ReadyPools: 2, ImportsAvoidedNow: 3, BytesAvoidedNow: "18Gi",
		WaitingPools: 5, ImportsAvoidedLater: 8, GoldensToAdd: 3, GoldenBytesToAdd: "18Gi", NetImportsAvoided: 8}, r.Savings)
	pins := decode[report.PinsReport](t, cli(t, "pins", "-cluster", fleet, "-o", "json"))
	assert.Len(t, pins.HTTPPools, r.Savings.HTTPPools, "adopt counts the HTTP pools pins lists")
}

func adoptText(t *testing.T, state string) string {
	t.Helper()
	res := cli(t, "adopt", "-cluster", state)
	require.Equal(t, exitOK, res.code, res.stderr)
	return res.stdout
}

// Flavors are (schematicID, version, factory URL) as the chart resolves them,
// platform creation defaults included; classes within them as the chart
// resolves each pool's class on the clone path.
func TestAdoptGroupsByFlavorAndClass(t *testing.T) {
	r := adoptOf(t, "-cluster", td("adopt", "fleet.yaml"))
	var got []string
	for _, f := range r.Flavors {
		for _, c := range f.Classes {
			got = append(got, f.Version+" "+f.ImageFactoryURL+" "+c.Class+" "+strings.Join(helmReleasesOf(c.Pools), ","))
		}
	}
	assert.Equal(t, []string{
		"v1.13.4 https://factory.talos.dev replicated tenant-delta/kubernetes-nodes-delta-new",
		"v1.13.5 https://factory.mirror.internal replicated tenant-gamma/kubernetes-nodes-gamma-mirror",
		"v1.13.5 https://factory.talos.dev fast tenant-delta/kubernetes-nodes-delta-oldfast",
		"v1.13.5 https://factory.talos.dev replicated tenant-delta/kubernetes-nodes-delta-old",
		"v1.13.6 https://factory.talos.dev fast tenant-acme/kubernetes-nodes-acme-fast",
		"v1.13.6 https://factory.talos.dev fixed tenant-beta/kubernetes-nodes-beta-fixed",
		"v1.13.6 https://factory.talos.dev replicated tenant-acme/kubernetes-nodes-acme-workers,tenant-gamma/kubernetes-nodes-gamma-idle",
		"v1.13.6 https://factory.talos.dev slow tenant-beta/kubernetes-nodes-beta-slow",
	}, got)
}

func helmReleasesOf(pools []report.AdoptPool) []string {
	out := []string{}
	for _, p := range pools {
		out = append(out, p.HelmRelease)
	}
	return out
}

// The pasted catalog values keep every entry the cluster has (the catalog
// reads none as edited), add what the pools wait for, and once the catalog
// has rendered them and the goldens imported, those pools are ready.
func TestAdoptCatalogValuesArePasteable(t *testing.T) {
	fleet := td("adopt", "fleet.yaml")
	r := adoptOf(t, "-cluster", fleet)
	require.True(t, r.Catalog.Changed)

	// No Package and no platform release in the fixture: the Package as a
	// stock Cozystack installs the catalog, whole, to apply.
	assert.Equal(t, report.ShapePackage, r.Catalog.ChangeShape)
	var pasted struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Variant    string `json:"variant"`
			Components struct {
				Catalog struct {
					Values struct {
						Images []any `json:"images"`
					} `json:"values"`
				} `json:"kubernetes-worker-image"`
			} `json:"components"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.UnmarshalStrict([]byte(r.Catalog.Values), &pasted), r.Catalog.Values)
	assert.Equal(t, []string{"cozystack.io/v1alpha1", "Package", "cozystack.kubernetes-worker-image", "default"}, []string{pasted.APIVersion, pasted.Kind, pasted.Metadata.Name, pasted.Spec.Variant})
	images := pasted.Spec.Components.Catalog.Values.Images
	require.Len(t, images, 3)
	var entries []any
	for _, e := range r.Catalog.Images {
		raw, err := yaml.Marshal(e.Entry)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, yaml.Unmarshal(raw, &m))
		entries = append(entries, m)
	}
	assert.Equal(t, entries, images, "the YAML and the JSON entries agree")
	assert.Equal(t, []string{report.ChangeKept, report.ChangeClassesAdded, report.ChangeNew}, []string{r.Catalog.Images[0].Change, r.Catalog.Images[1].Change, r.Catalog.Images[2].Change})
	assert.Equal(t, []string{"fast"}, r.Catalog.Images[1].AddedClasses)
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-fast"}, r.Catalog.Images[1].Pools)
	newEntry := r.Catalog.Images[2].Entry
	assert.Equal(t, "v1.13.5", newEntry.Version)
	require.NotNil(t, newEntry.StorageClass)
	assert.Equal(t, "replicated", *newEntry.StorageClass, "the class most of its pools are on")
	assert.Equal(t, []string{"fast"}, newEntry.AdditionalStorageClasses)
	assert.Empty(t, newEntry.ImageFactoryURL, "most of its pools boot from the public factory: the catalog's own URL applies")

	// The catalog renders it against the same cluster: no entry reads as edited.
	cluster, err := support.LoadCluster(fleet)
	require.NoError(t, err)
	catalog, err := support.LoadChart(render.CatalogChart)
	require.NoError(t, err)
	m, err := render.Render(catalog, render.Options{Release: render.Release{Name: "kubernetes-worker-image", Namespace: golden.Namespace, Upgrade: true}, Values: map[string]any{"images": images}, Cluster: cluster})
	require.NoError(t, err)
	var goldens []string
	for _, d := range m.OfKind("DataVolume") {
		goldens = append(goldens, d.Name())
		if live, err := cluster.Get("cdi.kubevirt.io/v1beta1", "DataVolume", golden.Namespace, d.Name()); err == nil {
			assert.Equal(t, live.Object["spec"], d.Object["spec"], "an existing golden %s keeps its spec", d.Name())
		}
	}
	g5, g6 := goldenName("v1.13.5"), goldenName("v1.13.6")
	assert.ElementsMatch(t, []string{goldenName("v1.13.4"), g6, g6 + "--fast", g6 + "--fixed", g6 + "--slow", g5, g5 + "--fast"}, goldens)

	// The catalog's upgrade applied, and the new goldens imported (CDI writes
	// their status; the existing ones keep theirs): every pool that waited
	// for one is ready.
	for _, d := range m.OfKind("DataVolume") {
		d.Object["status"] = map[string]any{"phase": "Succeeded"}
		if live, err := cluster.Get("cdi.kubevirt.io/v1beta1", "DataVolume", golden.Namespace, d.Name()); err == nil {
			d.Object["status"] = live.Object["status"]
		}
	}
	require.NoError(t, cluster.Apply(m, golden.Namespace))
	live := servingAPIs{cluster, []string{"snapshot.storage.k8s.io/v1"}}
	after := decode[report.AdoptReport](t, cliWith(t, func(kubeAccess) (engine.ClientProvider, string, error) { return live, "kubeconfig fleet", nil }, "adopt", "-kubeconfig", "fleet", "-o", "json"))
	for hr, p := range adoptPools(after) {
		switch hr {
		case "tenant-beta/kubernetes-nodes-beta-fixed", "tenant-beta/kubernetes-nodes-beta-slow":
			assert.Equal(t, report.OutcomeRefused, p.Outcome, hr)
		case "tenant-delta/kubernetes-nodes-delta-new":
			assert.Equal(t, report.OutcomeImporting, p.Outcome, hr)
		default:
			assert.Equal(t, report.OutcomeReady, p.Outcome, hr)
		}
	}
	assert.False(t, after.Catalog.Changed, "nothing more to add")
	assert.Empty(t, after.Catalog.Values)
}

// A check the chart adds later (here 16 and 17, past the chart's 15) reaches
// adopt's report as the chart words it, with no change to the CLI.
func TestAdoptReportsEveryCheckTheChartMakes(t *testing.T) {
	root := chartCopy(t, "packages/library/kubernetes-nodes-lib/templates/_clone.tpl", func(s string) string {
		return strings.Replace(s, `{{- include "kubernetes-nodes.assertNoHostAssistedCopy" $ctx -}}`,
			`{{- include "kubernetes-nodes.assertNoHostAssistedCopy" $ctx -}}
{{- include "kubernetes-nodes.checked" (list $ctx 17 "skipped" "a check the chart added later could not tell") -}}
{{- include "kubernetes-nodes.refuse" (list $ctx 16 (printf "pool %s: a check the chart added later refuses it" $ctx.pool)) -}}`, 1)
	})
	chartDir := root + "/" + render.PoolChart
	r := adoptOf(t, "-cluster", td("adopt", "fleet.yaml"), "-chart", chartDir)
	p := adoptPools(r)["tenant-acme/kubernetes-nodes-acme-workers"]
	assert.Equal(t, report.OutcomeRefused, p.Outcome)
	assert.Equal(t, "pool kubernetes-acme-workers: a check the chart added later refuses it", p.Refusal)
	var checks []string
	for _, c := range p.Switched.FallbackChecks {
		checks = append(checks, c.Check+": "+c.Outcome)
	}
	assert.Contains(t, checks, "refusal 16: refused")
	assert.Contains(t, checks, "refusal 17: skipped")

	res := cli(t, "adopt", "-cluster", td("adopt", "fleet.yaml"), "-chart", chartDir)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Regexp(t, `\n    check     16 refusal 16 +refused +the refusal above\n`, res.stdout)
	assert.Regexp(t, `\n    check     17 refusal 17 +skipped +a check the chart added later could not tell\n`, res.stdout)
}

func TestAdoptTextSaysWhatToDo(t *testing.T) {
	text := adoptText(t, td("adopt", "fleet.yaml"))
	for _, want := range []string{
		"\nclass replicated: 2 pools, 3 workers\n",
		"\n  pool tenant-acme/kubernetes-nodes-acme-workers (kubernetes-acme-workers): 3 workers, autoscaler 1 to 5\n",
		"\n    outcome   ready: the switched pool renders and clones " + goldenName("v1.13.6") + "\n",
		"\n    values    osImage: {builtin: {}}  (replaces its osImage.factory)\n",
		"\n    values    osImage: {builtin: {version: v1.13.5}}\n",
		"\n    saves     3 HTTP imports now (its workers), then 1 per worker that joins; 6Gi each (the golden's size)\n",
		"(the switch rolls this pool once)\n",
		`needs a per-class golden: add "fast" to the additionalStorageClasses of the catalog entry`,
		"needs a catalog entry: add {schematicID: " + defaultSchematic + ", version: v1.13.5}",
		"golden importing: the switched pool renders; CDI holds its disks until " + goldenName("v1.13.4") + " (phase ImportInProgress) has imported",
		"\napiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata:\n  name: cozystack.kubernetes-worker-image\nspec:\n  components:\n    kubernetes-worker-image:\n      values:\n        images:\n",
		"\nsavings  10 pools import over HTTP: 9 render today, 1 is refused today (fix it first; workerimage plan shows why)\n",
		"\n         now: 2 pools ready, 3 downloads not made (their workers), 18Gi\n",
		"\n         later: 5 pools waiting for a golden, 8 downloads not made once their goldens exist, minus 3 goldens to add (one download each, 18Gi)\n",
		"\n         net: 8 downloads not made once every pool above has switched (3 now + 8 later - 3 goldens)",
		"\npools already cloning a golden:\n  pool  tenant-acme/kubernetes-nodes-acme-golden",
		"\npools that import over HTTP and are refused today (fix them first; workerimage plan shows why):\n  pool  tenant-beta/kubernetes-nodes-beta-big",
		"\npools not resolved (their values are refused before a disk source resolves):\n  pool  tenant-beta/kubernetes-nodes-beta-broken",
	} {
		assert.Contains(t, text, want)
	}
	// A pool that waits for its golden shows no checks against a golden that is not there.
	_, block, _ := strings.Cut(text, "pool tenant-acme/kubernetes-nodes-acme-fast")
	block, _, _ = strings.Cut(block, "\n  pool ")
	assert.NotContains(t, block, "    check ")
}

// A cluster where nothing imports over HTTP, or nothing at all, is a report too.
func TestAdoptWithNothingToAdopt(t *testing.T) {
	r := adoptOf(t, "-cluster", td("pins", "empty.yaml"))
	assert.Empty(t, r.Flavors)
	assert.False(t, r.Catalog.Changed)
	assert.Equal(t, report.AdoptSavings{BytesAvoidedNow: "0", GoldenBytesToAdd: "0"}, r.Savings)
	text := adoptText(t, td("pins", "empty.yaml"))
	assert.Contains(t, text, "\nno pool imports over HTTP\n")
	assert.Contains(t, text, "\ncatalog: no change needed (no pool that imports over HTTP waits for a golden)\n")
	assert.Contains(t, text, "pools already cloning a golden: none\n")
}

func TestAdoptBadInputAndClusterProblemsAreExit2(t *testing.T) {
	fleet := td("adopt", "fleet.yaml")
	for name, args := range map[string][]string{
		"no cluster":     {"adopt"},
		"both clusters":  {"adopt", "-cluster", fleet, "-kubeconfig", fleet},
		"unknown flag":   {"adopt", "-cluster", fleet, "-all"},
		"bad output":     {"adopt", "-cluster", fleet, "-o", "xml"},
		"missing state":  {"adopt", "-cluster", td("adopt", "nope.yaml")},
		"stray argument": {"adopt", "-cluster", fleet, "extra"},
	} {
		t.Run(name, func(t *testing.T) {
			res := cli(t, args...)
			assert.Equal(t, exitProblem, res.code, res.stderr)
			assert.Empty(t, res.stdout)
			assert.Equal(t, 1, strings.Count(res.stderr, "\n"), res.stderr)
		})
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}, "", nil)
	requireProblem(t, cliWith(t, fakeDial(map[string]error{"StorageClass": forbidden}), "adopt", "-kubeconfig", fleet), "the cluster answered a lookup with an error", "forbidden")
	requireProblem(t, cliWith(t, fakeDial(map[string]error{"MachineDeployment": apierrors.NewServiceUnavailable("try later")}), "adopt", "-kubeconfig", fleet), "listing MachineDeployment", "try later")

	// Over HTTP: without Flux, and a lookup the API server fails.
	noFlux := newAPIServer(t, fleet, "helm.toolkit.fluxcd.io/v2")
	requireProblem(t, cli(t, "adopt", "-kubeconfig", writeKubeconfig(t, noFlux.URL)), "could not read the pools: the cluster serves no HelmRelease")
	failing := newAPIServer(t, fleet)
	failing.fail["datavolumes"] = apiFailure{503, "ServiceUnavailable", "etcd is down"}
	requireProblem(t, cli(t, "adopt", "-kubeconfig", writeKubeconfig(t, failing.URL)), "etcd is down")
}

// The live provider reports what the state file reports.
func TestAdoptKubeconfigMatchesTheStateFile(t *testing.T) {
	fleet := td("adopt", "fleet.yaml")
	srv := newAPIServer(t, fleet)
	a := adoptOf(t, "-cluster", fleet)
	b := adoptOf(t, "-kubeconfig", writeKubeconfig(t, srv.URL))
	b.Cluster = a.Cluster
	assert.Equal(t, a, b)
}

// servingAPIs is a fake cluster that tells which APIs it serves, as discovery does.
type servingAPIs struct {
	*support.Cluster
	apis []string
}

func (s servingAPIs) APIVersions() ([]string, error) { return s.apis, nil }
