package render

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
)

// Issue 60, item 1: a certificate is a certificate. Wherever a CA enters, the
// chart reads each PEM block's DER far enough that no key passes: the outer
// SEQUENCE's length is the block's decoded length, and it opens with a
// tbsCertificate SEQUENCE whose first element is the explicit version [0].

var (
	derOnce sync.Once
	derKeys map[string][]byte // key kind -> DER
	rsaCert string            // a generated RSA CA certificate's PEM
)

// generated makes the keys and the RSA certificate once per test binary.
func generated(t testing.TB) (map[string][]byte, string) {
	t.Helper()
	derOnce.Do(func() {
		rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
		require.NoError(t, err)
		ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		pkcs8, err := x509.MarshalPKCS8PrivateKey(ecKey)
		require.NoError(t, err)
		// P-384: its SEC1 DER is long enough to start MI, as the check before took.
		ec384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		require.NoError(t, err)
		sec1, err := x509.MarshalECPrivateKey(ec384)
		require.NoError(t, err)
		spki, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
		require.NoError(t, err)
		derKeys = map[string][]byte{
			"PKCS#8 key":      pkcs8,
			"PKCS#1 RSA key":  x509.MarshalPKCS1PrivateKey(rsaKey),
			"SEC1 EC key":     sec1,
			"SPKI public key": spki,
		}
		tpl := &x509.Certificate{
			SerialNumber: big.NewInt(60), Subject: pkix.Name{CommonName: "Generated RSA Mirror CA"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			BasicConstraintsValid: true, IsCA: true, KeyUsage: x509.KeyUsageCertSign,
		}
		der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &rsaKey.PublicKey, rsaKey)
		require.NoError(t, err)
		rsaCert = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	})
	require.NotNil(t, derKeys, "keys generated")
	return derKeys, rsaCert
}

// asCertificate is DER labelled as a certificate: the mislabelled file.
func asCertificate(der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// cutAtALine is a certificate's PEM with its last base64 line dropped, so the
// rest is whole base64 of fewer bytes than its DER declares.
func cutAtALine(t testing.TB, cert string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(cert, "\n"), "\n")
	require.Greater(t, len(lines), 4)
	cut := strings.Join(append(append([]string{}, lines[:len(lines)-2]...), lines[len(lines)-1]), "\n") + "\n"
	require.Len(t, strings.Split(cut, "\n"), len(lines))
	return cut
}

func mirrorCA(t testing.TB) string {
	t.Helper()
	raw, err := os.ReadFile("../../examples/platform/mirror-ca.pem")
	require.NoError(t, err)
	return string(raw)
}

// notCertificates are CA values no check before this one refused, each with
// the words of its refusal that say which block and why.
func notCertificates(t testing.TB) []struct{ name, value, why string } {
	keys, _ := generated(t)
	ca := mirrorCA(t)
	const notCert = "certificate block 1 of 1's DER does not open as an X.509 certificate does (a tbsCertificate SEQUENCE starting with its explicit version [0]): it is not a certificate, and a private key (PKCS#1, PKCS#8 or SEC1) or a public key labelled CERTIFICATE reads like this; never publish a key"
	var out []struct{ name, value, why string }
	for _, kind := range []string{"PKCS#8 key", "PKCS#1 RSA key", "SEC1 EC key", "SPKI public key"} {
		out = append(out, struct{ name, value, why string }{kind + " labelled CERTIFICATE", asCertificate(keys[kind]), notCert})
	}
	out = append(out,
		struct{ name, value, why string }{"a PKCS#8 key as the second block of a bundle", ca + asCertificate(keys["PKCS#8 key"]), "certificate block 2 of 2's DER does not open as an X.509 certificate does"},
		struct{ name, value, why string }{"a certificate cut at a line boundary", cutAtALine(t, ca), "certificate block 1 of 1's DER declares a certificate of"},
		struct{ name, value, why string }{"a cut certificate after a whole one", ca + cutAtALine(t, ca), "certificate block 2 of 2's DER declares a certificate of"},
	)
	return out
}

// goodCAs are real certificates, which every place a CA enters takes.
func goodCAs(t testing.TB) map[string]string {
	_, rsa := generated(t)
	return map[string]string{
		"examples/platform/mirror-ca.pem": mirrorCA(t),
		"a generated RSA certificate":     rsa,
		"a bundle of two":                 mirrorCA(t) + rsa,
	}
}

// Each of the refused values is whole base64 of a DER SEQUENCE that starts
// MI: the shape the check took before (so the test fails without this one).
func TestNotCertificatesLookLikePEMCertificates(t *testing.T) {
	for _, bad := range notCertificates(t) {
		require.Regexp(t, `^(-----BEGIN CERTIFICATE-----\nMI[A-Za-z0-9+/=\n]*\n-----END CERTIFICATE-----\n)+$`, bad.value, bad.name)
		for rest := []byte(bad.value); ; {
			block, r := pem.Decode(rest)
			if block == nil {
				break
			}
			rest = r
			if _, err := x509.ParseCertificate(block.Bytes); err != nil {
				goto refused
			}
		}
		t.Fatalf("%s: every block parses as a certificate", bad.name)
	refused:
	}
	for name, good := range goodCAs(t) {
		for rest := []byte(good); len(strings.TrimSpace(string(rest))) > 0; {
			block, r := pem.Decode(rest)
			require.NotNil(t, block, name)
			_, err := x509.ParseCertificate(block.Bytes)
			require.NoError(t, err, name)
			rest = r
		}
	}
}

// caPlace renders one place a CA enters with a CA value.
type caPlace struct {
	name, subject string
	render        func(t *testing.T, ca string) error
}

func caPlaces() []caPlace {
	schemaOffPlatform := func(t *testing.T, v map[string]interface{}) error {
		_, err := renderPlatformAs(t, true, v)
		return err
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	poolRels := []render.Release{{Name: testRelease, Namespace: testNamespace}, schemaOff}
	pool := func(rel render.Release) func(t *testing.T, v map[string]interface{}) error {
		return func(t *testing.T, v map[string]interface{}) error {
			_, err := renderPoolAs(t, rel, v, nil)
			return err
		}
	}
	var places []caPlace
	for i, rel := range poolRels {
		r := pool(rel)
		suffix := []string{"", " (schema off)"}[i]
		places = append(places,
			caPlace{"pool talos.imageFactoryCA" + suffix, "pool kubernetes-acme-workers: talos.imageFactoryCA", func(t *testing.T, ca string) error {
				return r(t, withTalos(vals(t, "cluster: acme"), "imageFactoryCA", ca))
			}},
			caPlace{"pool _cluster.talos.imageFactoryCA" + suffix, "pool kubernetes-acme-workers: _cluster.talos.imageFactoryCA", func(t *testing.T, ca string) error {
				return r(t, withChannel(t, "cluster: acme", map[string]interface{}{"talos": map[string]interface{}{"imageFactoryCA": ca}}))
			}},
			caPlace{"pool _cluster.talos.registryConfig tls.ca" + suffix, "pool kubernetes-acme-workers: _cluster.talos.registryConfig[m.internal].tls.ca", func(t *testing.T, ca string) error {
				return r(t, withChannel(t, "cluster: acme", map[string]interface{}{"talos": map[string]interface{}{"registryConfig": map[string]interface{}{"m.internal": map[string]interface{}{"tls": map[string]interface{}{"ca": b64(ca)}}}}}))
			}},
		)
	}
	for _, rel := range []render.Release{{Name: catalogRelease, Namespace: catalogNamespace}, schemaOffCatalog} {
		rel := rel
		suffix := map[bool]string{false: "", true: " (schema off)"}[rel.SkipSchemaValidation]
		catalog := func(t *testing.T, v map[string]interface{}) error {
			_, err := renderChartAs(t, catalogChart(t), rel, v, nil)
			return err
		}
		places = append(places,
			caPlace{"catalog imageFactoryCA" + suffix, "imageFactoryCA (", func(t *testing.T, ca string) error {
				return catalog(t, map[string]interface{}{"imageFactoryCA": ca})
			}},
			caPlace{"catalog images[0].imageFactoryCA" + suffix, `images[0] (schematicID "abc", version "v1.13.6"): imageFactoryCA`, func(t *testing.T, ca string) error {
				v := vals(t, "{images: [{schematicID: abc, version: v1.13.6}]}")
				v["images"].([]interface{})[0].(map[string]interface{})["imageFactoryCA"] = ca
				return catalog(t, v)
			}},
			caPlace{"catalog published tenantWorkers.talos.imageFactoryCA" + suffix, "tenantWorkers.talos.imageFactoryCA", func(t *testing.T, ca string) error {
				return catalog(t, withTalosCA(t, "tenantWorkers: {talos: {imageFactoryURL: 'https://factory.mirror.internal'}}", ca))
			}},
			caPlace{"catalog published registries.config tls.ca" + suffix, "registries.config[registry.mirror.internal].tls.ca", func(t *testing.T, ca string) error {
				return catalog(t, withRegistryCAs(t, "{}", map[string]string{"registry.mirror.internal": ca}))
			}},
		)
	}
	places = append(places,
		caPlace{"platform kubernetesWorkerImage.imageFactoryCA", "kubernetesWorkerImage.imageFactoryCA", func(t *testing.T, ca string) error {
			v := vals(t, "kubernetesWorkerImage: {}")
			v["kubernetesWorkerImage"].(map[string]interface{})["imageFactoryCA"] = ca
			return schemaOffPlatform(t, v)
		}},
		caPlace{"platform tenantWorkers.talos.imageFactoryCA", "tenantWorkers.talos.imageFactoryCA", func(t *testing.T, ca string) error {
			return schemaOffPlatform(t, withTalosCA(t, "tenantWorkers: {talos: {imageFactoryURL: 'https://factory.mirror.internal'}}", ca))
		}},
		caPlace{"platform registries.config tls.ca", "registries.config[m.internal].tls.ca", func(t *testing.T, ca string) error {
			return schemaOffPlatform(t, map[string]interface{}{"registries": map[string]interface{}{"config": map[string]interface{}{"m.internal": map[string]interface{}{"tls": map[string]interface{}{"ca": b64(ca)}}}}})
		}},
		caPlace{"pool reading the published imageFactoryCA", "ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults", func(t *testing.T, ca string) error {
			_, err := renderPool(t, vals(t, "cluster: acme"), stock(t, publishedJSON(`{"talos": {"imageFactoryURL": "https://factory.mirror.internal", "imageFactoryCA": `+mustJSON(t, ca)+`}}`)))
			return err
		}},
		caPlace{"pool reading the published registryConfig", "ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults", func(t *testing.T, ca string) error {
			_, err := renderPool(t, vals(t, "cluster: acme"), stock(t, publishedJSON(`{"talos": {"registryConfig": {"m.internal": {"tls": {"ca": `+mustJSON(t, ca)+`}}}}}`)))
			return err
		}},
	)
	return places
}

// withTalosCA is values with tenantWorkers.talos.imageFactoryCA set to ca.
func withTalosCA(t testing.TB, snippet, ca string) map[string]interface{} {
	v := vals(t, snippet)
	v["tenantWorkers"].(map[string]interface{})["talos"].(map[string]interface{})["imageFactoryCA"] = ca
	return v
}

// A key's DER labelled CERTIFICATE, and a certificate cut at a line boundary,
// are refused wherever a CA enters, schema on and off, naming the place, the
// block and why; real certificates (the example's, a generated RSA one, a
// bundle of two) render at each place.
func TestEveryPlaceACAEntersRefusesWhatIsNotACertificate(t *testing.T) {
	for _, place := range caPlaces() {
		t.Run(place.name, func(t *testing.T) {
			for _, bad := range notCertificates(t) {
				err := place.render(t, bad.value)
				requireRefusal(t, err, place.subject, bad.why)
				require.NotContains(t, err.Error(), "values don't meet the specifications of the schema", "%s: the chart's own message", bad.name)
			}
			for name, good := range goodCAs(t) {
				require.NoError(t, place.render(t, good), "%s renders", name)
			}
		})
	}
}

// The blocks of one CA value are bounded before any is read: 129 PEM blocks
// (small enough to fit 64 KiB) are refused with the bound; the neighbour,
// 128 of them, is read block by block (the first, a key, refused as one).
func TestCABlocksAreBoundedBeforeTheyAreRead(t *testing.T) {
	keys, _ := generated(t)
	small := asCertificate(keys["SEC1 EC key"])
	_, err := renderPoolAs(t, schemaOff, withTalos(vals(t, "cluster: acme"), "imageFactoryCA", strings.Repeat(small, 129)), nil)
	requireRefusal(t, err, "pool kubernetes-acme-workers: talos.imageFactoryCA", "it holds 129 PEM blocks, more than the 128 certificates the chart reads in one value")
	_, err = renderPoolAs(t, schemaOff, withTalos(vals(t, "cluster: acme"), "imageFactoryCA", strings.Repeat(small, 128)), nil)
	requireRefusal(t, err, "certificate block 1 of 128's DER does not open as an X.509 certificate does")
	_, err = renderPoolAs(t, schemaOff, withTalos(vals(t, "cluster: acme"), "imageFactoryCA", strings.Repeat(mirrorCA(t), 100)), nil)
	require.NoError(t, err, "100 certificates in 64 KiB render")
}
