package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notCAs are what issue 60 found published or written as a CA, each with
// what the refusal says of it; mirrorCA (a real CA) is their neighbour.
type notCA struct{ name, pem, says string }

func mirrorCA(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(support.Path("examples", "platform", "mirror-ca.pem"))
	require.NoError(t, err)
	return string(raw)
}

func notCAs(t *testing.T) []notCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	ca := mirrorCA(t)
	lines := strings.Split(strings.TrimSpace(ca), "\n")
	require.Greater(t, len(lines), 4)
	now, day := time.Now(), 24*time.Hour
	return []notCA{
		// The easy mistake: the key's file pasted, labelled CERTIFICATE.
		{"a PKCS#8 key labelled CERTIFICATE", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
			"certificate 1 of 1: its DER is not an X.509 certificate"},
		{"a key as itself", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
			`certificate 1 of 1 is a "PRIVATE KEY" block, not a certificate`},
		// Cut at a line boundary, its END line kept.
		{"a certificate cut at a line boundary", strings.Join(append(lines[:len(lines)-2:len(lines)-2], lines[len(lines)-1]), "\n") + "\n",
			"certificate 1 of 1: its DER is not an X.509 certificate"},
		// Cut before its END line: no PEM block decodes.
		{"a certificate cut before its END line", strings.Join(lines[:len(lines)-2], "\n") + "\n",
			"1 of its 1 PEM blocks do not decode"},
		{"a CA then a cut one", ca + strings.Join(lines[:3], "\n") + "\n",
			"1 of its 2 PEM blocks do not decode"},
		{"no PEM at all", "not a certificate\n", "it holds no PEM block"},
		{"a leaf", support.Certificate(t, "registry.mirror.internal", false, now.Add(-day), now.Add(365*day)),
			"certificate 1 of 1 (CN=registry.mirror.internal) is not a CA"},
		{"an expired CA", support.Certificate(t, "Old Mirror CA", true, now.Add(-365*day), now.Add(-day)),
			"certificate 1 of 1 (CN=Old Mirror CA) expired on "},
	}
}

// indentPEM puts a PEM under a YAML block scalar at n spaces.
func indentPEM(text string, n int) string { return indent(text, strings.Repeat(" ", n)) }

// catalog -f reads every CA the catalog would publish to every tenant (its
// tenantWorkers.talos.imageFactoryCA and registries.config.<host>.tls.ca,
// in cozy-public/kubernetes-worker-image-tenant-defaults) or write into its
// own CA ConfigMaps (imageFactoryCA, images[N].imageFactoryCA) as X.509,
// and refuses (exit 2) what is not CA certificates, naming the place and the
// block, before anything renders; a real CA in each place previews.
func TestCatalogRefusesACAToPublishThatIsNotACACertificate(t *testing.T) {
	images := "images:\n  - schematicID: ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515\n    version: v1.13.7\n"
	places := []struct{ at, values string }{
		{"tenantWorkers.talos.imageFactoryCA", "tenantWorkers:\n  talos:\n    imageFactoryURL: https://factory.mirror.internal\n    imageFactoryCA: |\n%s"},
		{"registries.config.registry.mirror.internal.tls.ca", "registries:\n  config:\n    registry.mirror.internal:\n      tls:\n        ca: |\n%s"},
		{"imageFactoryCA", "imageFactoryURL: https://factory.mirror.internal\nimageFactoryCA: |\n%s"},
		{"images[0].imageFactoryCA", "images:\n  - schematicID: ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515\n    version: v1.13.7\n    imageFactoryURL: https://factory.mirror.internal\n    imageFactoryCA: |\n%s"},
	}
	depth := map[string]int{"tenantWorkers.talos.imageFactoryCA": 6, "registries.config.registry.mirror.internal.tls.ca": 10, "imageFactoryCA": 2, "images[0].imageFactoryCA": 6}
	fill := func(format, at, pem string) string {
		v := strings.Replace(format, "%s", indentPEM(pem, depth[at]), 1)
		if !strings.HasPrefix(v, "images:") {
			v += images
		}
		return v
	}
	for _, p := range places {
		for _, c := range notCAs(t) {
			file := writeTemp(t, "catalog.yaml", fill(p.values, p.at, c.pem))
			r := cli(t, "catalog", "-f", file, "--reset-values", "--cluster", stockState)
			requireProblem(t, r, "workerimage catalog: "+p.at+" (the catalog's values, from "+file+" alone (--reset-values)) is not CA certificates: ", c.says)
		}
		good := cli(t, "catalog", "-f", writeTemp(t, "catalog.yaml", fill(p.values, p.at, mirrorCA(t))), "--reset-values", "--cluster", stockState, "-o", "json")
		assert.Equal(t, exitOK, good.code, "%s: %s", p.at, good.stderr)
	}

	// Platform values: what they give pools through _cluster, and what they
	// forward to the catalog, named where the platform values hold them.
	platform := "kubernetesWorkerImage:\n  images:\n    - schematicID: ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515\n      version: v1.13.7\n  imageFactoryURL: https://factory.mirror.internal\n  imageFactoryCA: |\n%s"
	key := notCAs(t)[0]
	r := cli(t, "catalog", "-f", writeTemp(t, "platform.yaml", strings.Replace(platform, "%s", indentPEM(key.pem, 4), 1)), "--reset-values", "--cluster", stockState)
	requireProblem(t, r, "kubernetesWorkerImage.imageFactoryCA (platform values ", key.says)
	good := cli(t, "catalog", "-f", writeTemp(t, "platform.yaml", strings.Replace(platform, "%s", indentPEM(mirrorCA(t), 4), 1)), "--reset-values", "--cluster", stockState, "-o", "json")
	assert.Equal(t, exitOK, good.code, "%s\n%s", good.stderr, good.stdout)
}

// plan -f reads a pool's talos.imageFactoryCA (and a platform _cluster's
// CAs, where the values carry them) as X.509 and refuses (exit 2) what is
// not CA certificates, naming the place and the block; a real CA plans.
func TestPlanRefusesAPoolCAThatIsNotACACertificate(t *testing.T) {
	pool := "cluster: acme\ntalos:\n  imageFactoryURL: https://factory.mirror.internal\n  imageFactoryCA: |\n%s"
	for _, c := range notCAs(t) {
		file := writeTemp(t, "own.yaml", strings.Replace(pool, "%s", indentPEM(c.pem, 4), 1))
		r := cli(t, "plan", "-f", file, "--cluster", support.Path("examples", "cluster-state.yaml"))
		requireProblem(t, r, "workerimage plan: talos.imageFactoryCA of the pool values "+file+" is not CA certificates: ", c.says)
	}
	key := notCAs(t)[0]
	cluster := "cluster: acme\n_cluster:\n  talos:\n    registryConfig:\n      registry.mirror.internal:\n        tls:\n          ca: " + base64.StdEncoding.EncodeToString([]byte(key.pem)) + "\n"
	requireProblem(t, cli(t, "plan", "-f", writeTemp(t, "own.yaml", cluster), "--cluster", support.Path("examples", "cluster-state.yaml")),
		"_cluster.talos.registryConfig.registry.mirror.internal.tls.ca (base64 of PEM, decoded) of the pool values ", key.says)

	good := cli(t, "plan", "-f", writeTemp(t, "own.yaml", strings.Replace(pool, "%s", indentPEM(mirrorCA(t), 4), 1)), "--cluster", support.Path("examples", "cluster-state.yaml"), "-o", "json")
	assert.NotEqual(t, exitProblem, good.code, good.stderr)
	assert.Empty(t, good.stderr)
	assert.Contains(t, good.stdout, `"imageFactoryCA"`)
}

// rollout --factory-ca reads its file as X.509 before anything is read of
// the cluster: besides what TestRolloutFactoryCAIsReadAsX509 holds, a key
// labelled CERTIFICATE, a certificate cut (at a line boundary, or before
// its END line, where no PEM block decodes and X.509 alone said nothing), and
// a file with no PEM block are refused (exit 2), naming the file and the
// block; the example's mirror CA plans.
func TestRolloutFactoryCARefusesWhatIsNotACACertificate(t *testing.T) {
	for _, c := range notCAs(t) {
		path := writeTemp(t, "ca.pem", c.pem)
		r := cli(t, "rollout", "--to-factory", "https://factory.mirror.internal", "--factory-ca", path, "-n", "tenant-beta", "--cluster", rolloutFixture)
		requireProblem(t, r, "workerimage rollout: --factory-ca "+path+": ", c.says, "; every pool moved would import trusting it")
	}
	r := cli(t, "rollout", "--to-factory", "https://factory.mirror.internal", "--factory-ca", writeTemp(t, "ca.pem", mirrorCA(t)), "-n", "tenant-beta", "--cluster", rolloutFixture)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "change    talos.imageFactoryCA: ")
}
