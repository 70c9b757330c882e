package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const trustedChecksum = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// trustedState is testdata/pins/per-class.yaml once the catalog holds a CA
// (its ConfigMap in cozy-public), an entry of its own CA for v1.13.5, and a
// golden of a new flavor imported with the CA and a checksum.
func trustedState(t *testing.T) string {
	return pinsWith(t, "per-class", `
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubernetes-worker-image-ca, namespace: cozy-public}
data: {ca.pem: "-----BEGIN CERTIFICATE-----"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubernetes-worker-image-ca-`+defaultSchematic+`-v1.13.5, namespace: cozy-public}
data: {ca.pem: "-----BEGIN CERTIFICATE-----"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: some-other-config, namespace: cozy-public}
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: talos-worker-`+defaultSchematic+`-v1.13.7, namespace: cozy-public}
spec:
  source: {http: {url: "https://factory.mirror.internal/image/`+defaultSchematic+`/v1.13.7/openstack-amd64.raw.xz", certConfigMap: kubernetes-worker-image-ca, checksum: "`+trustedChecksum+`"}}
  storage: {resources: {requests: {storage: 6Gi}}, storageClassName: replicated}
status: {phase: Succeeded}
`)
}

func TestPinsMarksGoldensImportedWithoutTheCAOrAChecksum(t *testing.T) {
	r, text := pinsOfFile(t, trustedState(t))
	fresh := goldenIn(t, r, goldenName("v1.13.7"))
	assert.Equal(t, "kubernetes-worker-image-ca", fresh.CertConfigMap)
	assert.Equal(t, trustedChecksum, fresh.Checksum)
	assert.Empty(t, fresh.ImportedWithout, "imported with both")
	for _, name := range []string{goldenName("v1.13.6"), perClassOf("v1.13.6", "fast"), goldenName("v1.13.5"), perClassOf("v1.13.5", "fast")} {
		g := goldenIn(t, r, name)
		assert.Equal(t, []string{"CA", "checksum"}, g.ImportedWithout, name)
		assert.Empty(t, g.CertConfigMap, name)
	}
	assert.Contains(t, text, "\n"+goldenName("v1.13.6")+"  (DataVolume, phase Succeeded, imported without the CA the catalog now holds, imported without a checksum)  in use: 3 pools, 0 disks\n")
	// Newer than every pool of its line: the next rollout's target, never unused (issue 59).
	assert.Contains(t, text, "\n"+goldenName("v1.13.7")+"  (DataVolume, phase Succeeded)  in use: newer than every pool on its schematic and minor")
}

// A golden marked only for what the cluster shows: a CA ConfigMap that serves
// its flavor, a checksum on another golden.
func TestPinsMarksNothingWithoutTrustedImports(t *testing.T) {
	r := pinsOf(t, "per-class")
	for _, g := range r.Goldens {
		assert.Empty(t, g.ImportedWithout, g.Name)
	}
	only := pinsWith(t, "per-class", `
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubernetes-worker-image-ca-`+defaultSchematic+`-v1.13.5, namespace: cozy-public}
`)
	r, _ = pinsOfFile(t, only)
	for _, g := range r.Goldens {
		want := []string(nil)
		if strings.Contains(g.Name, "-v1.13.5") {
			want = []string{"CA"}
		}
		require.Equal(t, want, g.ImportedWithout, "an entry's own CA serves its flavor only: %s", g.Name)
	}
}

// plan shows the CA an HTTP pool's import trusts (its ConfigMap, and where the
// CA came from) and whether the platform's CA applied at creation.
func TestPlanShowsTheFactoryCA(t *testing.T) {
	ca, err := os.ReadFile(filepath.Join("..", "..", "tests", "render", "testdata", "ca", "factory-ca.pem"))
	require.NoError(t, err)
	indented := "    " + strings.ReplaceAll(strings.TrimSpace(string(ca)), "\n", "\n    ")
	own := writeTemp(t, "own.yaml", "cluster: acme\ntalos:\n  imageFactoryURL: https://factory.mirror.internal\n  imageFactoryCA: |\n"+indented+"\n")
	res := cli(t, "plan", "-values", own, "-cluster", td("state", "per-class.yaml"))
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "\nfactory CA        ConfigMap kubernetes-acme-own-image-factory-ca  (talos.imageFactoryCA)\n")
	assert.NotContains(t, res.stdout, "imageFactoryCA (applies")

	platform := writeTemp(t, "platform.yaml", "cluster: acme\n_cluster:\n  talos:\n    imageFactoryURL: https://factory.mirror.internal\n    imageFactoryCA: |\n  "+strings.ReplaceAll(indented, "\n", "\n  ")+"\n")
	res = cli(t, "plan", "-values", platform, "-cluster", td("state", "per-class.yaml"), "-o", "json")
	require.Equal(t, exitOK, res.code, res.stderr)
	rep := decode[report.PlanReport](t, res)
	require.NotNil(t, rep.DiskSource.ImageFactoryCA)
	assert.Equal(t, "ConfigMap kubernetes-acme-platform-image-factory-ca", rep.DiskSource.ImageFactoryCA.Value)
	assert.Contains(t, rep.DiskSource.ImageFactoryCA.Source, "the platform default _cluster.talos.imageFactoryCA")
	assert.True(t, rep.CreatedWith.ImageFactoryCA)
	assert.NotContains(t, res.stdout, "BEGIN CERTIFICATE", "the report names the ConfigMap, never the PEM")

	// Without a CA: no such line.
	res = cli(t, "plan", "-values", writeTemp(t, "plain.yaml", "cluster: acme\n"), "-cluster", td("state", "per-class.yaml"))
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.NotContains(t, res.stdout, "factory CA")
}

// plan shows what a clone pool's golden was imported with: the CA ConfigMap
// and the checksum, when either is set.
func TestPlanShowsWhatTheGoldenWasImportedWith(t *testing.T) {
	raw, err := os.ReadFile(td("state", "per-class.yaml"))
	require.NoError(t, err)
	url := "      url: https://factory.talos.dev/image/" + defaultSchematic + "/v1.13.6/openstack-amd64.raw.xz\n"
	require.Contains(t, string(raw), url)
	state := writeTemp(t, "state.yaml", strings.Replace(string(raw), url, url+"      certConfigMap: kubernetes-worker-image-ca\n      checksum: "+trustedChecksum+"\n", 1))
	res := cli(t, "plan", "-values", td("pools", "builtin.yaml"), "-cluster", state)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, "\ngolden import     trusting the CA in ConfigMap cozy-public/kubernetes-worker-image-ca, checksum "+trustedChecksum+" (CDI verifies it on import from v1.65.0 on;")
	res = cli(t, "plan", "-values", td("pools", "builtin.yaml"), "-cluster", state, "-o", "json")
	rep := decode[report.PlanReport](t, res)
	assert.Equal(t, "kubernetes-worker-image-ca", rep.DiskSource.GoldenCertConfigMap)
	assert.Equal(t, trustedChecksum, rep.DiskSource.GoldenChecksum)
	// Imported with neither: no such line.
	res = cli(t, "plan", "-values", td("pools", "builtin.yaml"), "-cluster", td("state", "per-class.yaml"))
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.NotContains(t, res.stdout, "golden import")
}
