package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// deployedWith is the deployed cluster (testdata/rollcheck/deployed.yaml)
// with edit applied to the spec.values of the HelmRelease named
// namespace/name, written to a file of the test's own.
func deployedWith(t *testing.T, helmRelease string, edit func(values map[string]any)) string {
	t.Helper()
	objs, err := render.LoadObjects(deployedFixture)
	require.NoError(t, err)
	var b strings.Builder
	found := false
	for _, o := range objs {
		if o.GetKind() == "HelmRelease" && o.GetNamespace()+"/"+o.GetName() == helmRelease {
			edit(o.Object["spec"].(map[string]any)["values"].(map[string]any))
			found = true
		}
		raw, err := yaml.Marshal(o.Object)
		require.NoError(t, err)
		b.WriteString("---\n" + string(raw))
	}
	require.True(t, found, helmRelease)
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// upstreamsDefaults are the values cozystack-api writes into a pool at an
// edit under upstream's ApplicationDefinition, of those this chart
// resolves otherwise (tests/render checks them against upstream's schema).
func upstreamsDefaults(values map[string]any) {
	talos, _ := values["talos"].(map[string]any)
	if talos == nil {
		talos = map[string]any{}
		values["talos"] = talos
	}
	talos["imageFactoryURL"] = report.UpstreamImageFactoryURL
	talos["installerRepository"] = report.UpstreamInstallerRepository
}

func upstreamDefaultsOf(r report.RollReport) map[string][]report.UpstreamDefault {
	out := map[string][]report.UpstreamDefault{}
	for _, p := range r.Pools {
		if len(p.UpstreamDefaults) > 0 {
			out[p.Values] = p.UpstreamDefaults
		}
	}
	return out
}

// rollcheck names the pools whose values carry upstream's
// ApplicationDefinition's defaults only because cozystack-api wrote them
// (an edit of a pool this chart created, under upstream's
// ApplicationDefinition: its chartRef patched, or gone back) where this
// chart gives another setting: gamma-edge's public factory beats the
// mirror its creation record holds, and it rolls; the installer beats the
// published one on it, and on the pools upstream's form created before the
// takeover. The fix removes them. gamma-edge without them is the control.
func TestRollcheckNamesUpstreamsDefaultsOverThisChartsSettings(t *testing.T) {
	const edge = "helmrelease tenant-gamma/kubernetes-nodes-gamma-edge"
	const published = "the default talos.installerRepository of the catalog's published defaults (ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults)"
	chartDir := filepath.Join("..", "..", render.PoolChart)
	installer := func(helmRelease string) report.UpstreamDefault {
		_, hr, _ := strings.Cut(helmRelease, "/")
		ns := strings.TrimPrefix(strings.Split(helmRelease, "/")[0], "helmrelease ")
		return report.UpstreamDefault{Field: "talos.installerRepository", Value: "factory.talos.dev/installer", Written: true, Instead: "registry.mirror.internal/siderolabs/installer", InsteadFrom: published,
			Fix: "remove it from the pool's values (kubectl patch helmrelease " + hr + " -n " + ns + ` --type json -p '[{"op":"remove","path":"/spec/values/talos/installerRepository"}]'), once the ApplicationDefinition kubernetes-nodes is this chart's (docs/cozystack.md): under upstream's, the next edit writes it again`}
	}

	res := cli(t, "rollcheck", chartDir, "--cluster", deployedFixture, "-o", "json")
	control := decode[report.RollReport](t, res)
	assert.Equal(t, map[string][]report.UpstreamDefault{
		"helmrelease tenant-acme/kubernetes-nodes-acme-golden": {installer("helmrelease tenant-acme/kubernetes-nodes-acme-golden")},
		"helmrelease tenant-beta/kubernetes-nodes-beta-web":    {installer("helmrelease tenant-beta/kubernetes-nodes-beta-web")},
	}, upstreamDefaultsOf(control), "created before the takeover through upstream's form: their installer; gamma-edge carries none")
	assert.Equal(t, 2, control.Summary.UpstreamDefaults)

	edited := deployedWith(t, "tenant-gamma/kubernetes-nodes-gamma-edge", upstreamsDefaults)
	res = cli(t, "rollcheck", chartDir, "--cluster", edited, "-o", "json")
	require.Equal(t, exitAttn, res.code, res.stderr)
	r := decode[report.RollReport](t, res)
	got := upstreamDefaultsOf(r)
	require.Len(t, got[edge], 2)
	factory := got[edge][0]
	assert.Equal(t, "talos.imageFactoryURL", factory.Field)
	assert.Equal(t, report.UpstreamImageFactoryURL, factory.Value)
	assert.True(t, factory.Written)
	assert.Equal(t, "https://factory.mirror.internal", factory.Instead)
	assert.Contains(t, factory.InsteadFrom, "recorded when the pool was created")
	assert.Equal(t, `remove it from the pool's values (kubectl patch helmrelease kubernetes-nodes-gamma-edge -n tenant-gamma --type json -p '[{"op":"remove","path":"/spec/values/talos/imageFactoryURL"}]'), once the ApplicationDefinition kubernetes-nodes is this chart's (docs/cozystack.md): under upstream's, the next edit writes it again`, factory.Fix)
	assert.Equal(t, installer(edge), got[edge][1])
	assert.Equal(t, 3, r.Summary.UpstreamDefaults)
	for _, p := range r.Pools {
		if p.Values == edge {
			assert.True(t, p.Rolls, "onto the public factory")
			assert.Contains(t, strings.Join(p.Diff, "\n"), report.UpstreamImageFactoryURL+"/image/")
		}
	}

	text := cli(t, "rollcheck", chartDir, "--cluster", edited)
	assert.Contains(t, text.stdout, "\n    upstream's default: talos.imageFactoryURL https://factory.talos.dev (upstream's ApplicationDefinition's default, in its values) instead of https://factory.mirror.internal (the default talos.imageFactoryURL of ")
	assert.Contains(t, text.stdout, "; 3 take upstream's defaults at head over what this chart gives them (each says so, with the fix)\n")

	// A value of the pool's own that is not upstream's default is its
	// tenant's choice: not named.
	own := deployedWith(t, "tenant-gamma/kubernetes-nodes-gamma-edge", func(v map[string]any) {
		v["talos"].(map[string]any)["imageFactoryURL"] = "https://factory.other.internal"
	})
	assert.NotContains(t, upstreamDefaultsOf(decode[report.RollReport](t, cli(t, "rollcheck", chartDir, "--cluster", own, "-o", "json"))), edge)
}

// upstreamLikeChart is a chart as upstream Cozystack's kubernetes-nodes
// reads the settings rollcheck names: its values' talos.imageFactoryURL
// and talos.installerRepository, defaulted to upstream's, no creation
// record, no published default.
func upstreamLikeChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kubernetes-nodes")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "templates"), 0o755))
	for name, text := range map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: kubernetes-nodes\nversion: 0.0.0-upstream\n",
		"values.yaml": "talos:\n  imageFactoryURL: " + report.UpstreamImageFactoryURL + "\n  installerRepository: " + report.UpstreamInstallerRepository + "\n",
		"templates/kubevirtmachinetemplate.yaml": `apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata:
  name: {{ .Release.Name | trimPrefix "kubernetes-nodes-" | printf "kubernetes-%s" }}-{{ .Values.talos.imageFactoryURL | sha256sum | trunc 6 }}
spec:
  template:
    spec:
      virtualMachineTemplate:
        spec:
          dataVolumeTemplates:
          - metadata: {name: disk-system}
            spec:
              source:
                http: {url: {{ .Values.talos.imageFactoryURL }}/image}
`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	return dir
}

// Going back to upstream's chart (rollcheck with it as the head), a pool
// this chart created loses what only this chart reads: gamma-edge's
// factory, recorded at its creation, and the installer every pool takes
// from the platform's published defaults; rollcheck names them, the fix
// writing each into the pool's values first (this chart renders them the
// same). A setting the pool's values carry already is not named.
func TestRollcheckNamesWhatGoingBackLoses(t *testing.T) {
	res := cli(t, "rollcheck", upstreamLikeChart(t), "--cluster", deployedFixture, "-o", "json")
	require.Equal(t, exitAttn, res.code, res.stderr)
	got := upstreamDefaultsOf(decode[report.RollReport](t, res))
	edge := got["helmrelease tenant-gamma/kubernetes-nodes-gamma-edge"]
	require.Len(t, edge, 2, "%+v", got)
	assert.Equal(t, report.UpstreamDefault{Field: "talos.imageFactoryURL", Value: report.UpstreamImageFactoryURL, Written: false, Instead: "https://factory.mirror.internal", InsteadFrom: edge[0].InsteadFrom,
		Fix: `before going back, write it into the pool's values (kubectl patch helmrelease kubernetes-nodes-gamma-edge -n tenant-gamma --type merge -p '{"spec":{"values":{"talos":{"imageFactoryURL":"https://factory.mirror.internal"}}}}'): this chart renders it the same, and upstream's reads no creation record nor published default`}, edge[0])
	assert.Equal(t, "talos.installerRepository", edge[1].Field)
	assert.False(t, edge[1].Written)
	assert.Equal(t, "registry.mirror.internal/siderolabs/installer", edge[1].Instead)
	web := got["helmrelease tenant-beta/kubernetes-nodes-beta-web"]
	require.Len(t, web, 1, "its values' public factory is the built-in it would take anyway")
	assert.Equal(t, "talos.installerRepository", web[0].Field)
	assert.True(t, web[0].Written)
	assert.Contains(t, web[0].Fix, `--type merge -p '{"spec":{"values":{"talos":{"installerRepository":"registry.mirror.internal/siderolabs/installer"}}}}'`)
	for _, clone := range []string{"helmrelease tenant-beta/kubernetes-nodes-beta-batch", "helmrelease tenant-beta/kubernetes-nodes-beta-spot"} {
		for _, u := range got[clone] {
			assert.NotEqual(t, "talos.imageFactoryURL", u.Field, "%s clones a golden: no factory of its own", clone)
		}
	}
}
