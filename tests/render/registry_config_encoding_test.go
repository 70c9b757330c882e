package render

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

// pemBase64 is a PEM block as Talos reads a registry's certificate or key in
// machine.registries.config: base64 of the PEM.
// It holds a real certificate: the charts read each block's DER as one.
var pemBase64 = base64.StdEncoding.EncodeToString(mustReadFixture("ca/registry-ca.pem"))

func mustReadFixture(name string) []byte {
	raw, err := os.ReadFile(support.Fixture(name))
	if err != nil {
		panic(err)
	}
	return raw
}

// talosCABundleAtBound is base64 of 65,538 bytes of PEM, 87,384 characters
// (the chart's bound): real certificates, then line breaks, which Talos and
// the chart skip between blocks.
func talosCABundleAtBound() string {
	bundle := certificates(65538)
	return base64.StdEncoding.EncodeToString([]byte(bundle + strings.Repeat("\n", 65538-len(bundle))))
}

// The certificates and keys of Talos's registry config (tls.ca,
// tls.clientIdentity.crt and .key) are base64 of the PEM: Talos refuses a
// machine config holding anything else there (tests/talos shows it for a
// PEM written as it is), so no worker of the pool would get one. A pool
// refuses each such value of the platform's _cluster.talos.registryConfig,
// and the platform refuses it in its registries.config, schema off (its
// schema takes no certificate there); each refusal names the value, why,
// and the fix, and its neighbour renders.
func TestTalosRegistryCertificatesAreBase64OfPEM(t *testing.T) {
	pem := strings.Join([]string{"-----BEGIN CERTIFICATE-----", "MIIBmzCCAUGgAwIBAgIU", "-----END CERTIFICATE-----", ""}, "\n")
	// Base64 of 65,538 bytes of PEM: 87,384 characters, the bound.
	atBound := talosCABundleAtBound()
	require.Len(t, atBound, 87384)
	wrapped := pemBase64[:20] + "\n" + pemBase64[20:]
	const caFix = "write it base64-encoded, as Talos reads it: the output of base64 -w0 <PEM file>; or publish the CA as PEM in the catalog's registries.config.<host>.tls.ca, which encodes it for every pool"
	const keyFix = "write it base64-encoded, as Talos reads it: the output of base64 -w0 <PEM file>"
	for _, tc := range []struct {
		name, field, value, neighbour, refusal string
	}{
		{"CA as PEM", "tls.ca", pem, pemBase64, `tls.ca is PEM text, "-----BEGIN CERTIFICATE-----\nMIIBmzCCAUGgAwIBAgIU\n-----END CERTIFICATE-----", but Talos reads it as base64 of the PEM and refuses the whole machine config otherwise; ` + caFix},
		{"CA not base64", "tls.ca", "not base64!", wrapped, `tls.ca is "not base64!", not base64, which Talos reads it as; ` + caFix},
		{"CA base64 of no PEM", "tls.ca", base64.StdEncoding.EncodeToString([]byte("hello")), pemBase64, `tls.ca is base64 of no PEM block (aGVsbG8= decoded), so it holds no certificate or key; ` + caFix},
		{"CA past the bound", "tls.ca", atBound + "AAAA", atBound, "tls.ca is 87388 characters, more than the 87384 of base64 of 64 KiB of PEM"},
		{"client certificate as PEM", "tls.clientIdentity.crt", pem, pemBase64, "tls.clientIdentity.crt is PEM text, \"-----BEGIN CERTIFICATE-----\\nMIIBmzCCAUGgAwIBAgIU\\n-----END CERTIFICATE-----\", but Talos reads it as base64 of the PEM and refuses the whole machine config otherwise; " + keyFix},
		{"client key not base64", "tls.clientIdentity.key", "k", pemBase64, `tls.clientIdentity.key is "k", not base64, which Talos reads it as; ` + keyFix},
	} {
		entry := func(value string) map[string]interface{} {
			tls := map[string]interface{}{"ca": value}
			if strings.HasPrefix(tc.field, "tls.clientIdentity.") {
				tls = map[string]interface{}{"clientIdentity": map[string]interface{}{strings.TrimPrefix(tc.field, "tls.clientIdentity."): value}}
			}
			return map[string]interface{}{"m.internal": map[string]interface{}{"tls": tls}}
		}
		t.Run("pool/"+tc.name, func(t *testing.T) {
			_, err := renderPoolAs(t, schemaOff, withChannel(t, "cluster: acme", map[string]interface{}{"talos": map[string]interface{}{"registryConfig": entry(tc.value)}}), nil)
			requireRefusal(t, err, "pool kubernetes-acme-workers: _cluster.talos.registryConfig[m.internal]."+tc.refusal)
			_, err = renderPoolAs(t, schemaOff, withChannel(t, "cluster: acme", map[string]interface{}{"talos": map[string]interface{}{"registryConfig": entry(tc.neighbour)}}), nil)
			require.NoError(t, err, "neighbour %s=%.40s renders", tc.field, tc.neighbour)
		})
		t.Run("platform/"+tc.name, func(t *testing.T) {
			c, err := support.LoadChart(render.PlatformChart)
			require.NoError(t, err)
			skip := render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: true}
			_, err = render.Render(c, render.Options{Release: skip, Values: map[string]interface{}{"registries": map[string]interface{}{"config": entry(tc.value)}}})
			requireRefusal(t, err, "registries.config[m.internal]."+tc.refusal)
			_, err = render.Render(c, render.Options{Release: skip, Values: map[string]interface{}{"registries": map[string]interface{}{"config": entry(tc.neighbour)}}})
			require.NoError(t, err, fmt.Sprintf("neighbour %s=%.40s renders", tc.field, tc.neighbour))
		})
	}
}
