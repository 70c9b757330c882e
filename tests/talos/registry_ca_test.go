package talos

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/talos/workerconfig"
	"sigs.k8s.io/yaml"
)

// publishedRegistryCAPool is the committed render of a new pool on a stock
// Cozystack whose catalog publishes the registry mirror's CA.
const publishedRegistryCAPool = "pool-published-registry-ca.golden.yaml"

// TestPublishedRegistryCAReachesTalos: the pool render with the catalog's
// published registry CA gives a worker config Talos loads and strictly
// validates, in which Talos reads, for each published registry host, exactly
// the CA's PEM (the chart writes it base64-encoded, as Talos's tls.ca is).
func TestPublishedRegistryCAReachesTalos(t *testing.T) {
	var pool *poolRender
	for _, p := range goldenPoolRenders(t) {
		if p.file == publishedRegistryCAPool {
			pool = &p
		}
	}
	if pool == nil {
		t.Fatalf("no committed pool render %s", publishedRegistryCAPool)
	}
	ca, err := os.ReadFile(filepath.Join("..", "render", "testdata", "ca", "registry-ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	var tct tctSpec
	if err := yaml.Unmarshal([]byte(fill(pool.template, parentValues(t))), &tct); err != nil {
		t.Fatal(err)
	}
	cfg, err := workerconfig.Load([]byte(tct.Spec.Template.Spec.Data))
	if err != nil {
		t.Fatal(err)
	}
	tls := cfg.RegistryTLSConfigs()
	for _, host := range []string{"registry.mirror.internal", "registry.mirror.internal:5000"} {
		c, ok := tls[host]
		if !ok {
			t.Fatalf("Talos reads no TLS config for %s (it reads %v)", host, keysOf(tls))
		}
		if !bytes.Equal(c.CA(), ca) {
			t.Errorf("%s: Talos reads the CA\n%s\nwant the published PEM\n%s", host, c.CA(), ca)
		}
		if c.InsecureSkipVerify() || c.ClientIdentity() != nil {
			t.Errorf("%s: more than the CA reached the worker", host)
		}
	}
	if len(tls) != 2 {
		t.Errorf("Talos reads TLS config for %v, want the two published hosts", keysOf(tls))
	}
	if m := cfg.RegistryMirrorConfigs(); len(m) != 2 {
		t.Errorf("Talos reads mirrors for %d hosts, want the two published", len(m))
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
