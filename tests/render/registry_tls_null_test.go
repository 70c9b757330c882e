package render

import (
	"fmt"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A registry config entry's `tls: null` is absent, as the chart and Talos
// read it: the facts the CLI adds to a render (machineConfigFacts) render
// wherever the chart does (here the platform's registry config as a tenant's
// cozystack-values carries it in _cluster), and say the host trusts no CA.
func TestRegistryTLSNullRendersItsFacts(t *testing.T) {
	f, _ := machineConfigFacts(t, vals(t, "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tls: null, auth: null}, n.internal: {tls: {clientIdentity: null, insecureSkipVerify: true}}}}}}"), stock(t))
	_, config := f.sources()
	assert.Equal(t, []string{"m.internal=no CA from " + clusterConfig, "n.internal=no CA from " + clusterConfig}, config)
}

// tls (and auth, tls.clientIdentity) set to a value that is neither a map
// nor null ("", false, 0, []) is refused: Talos refuses the whole machine
// config for it, so no worker of the pool would boot. Refused by the pool
// with the schema off and by the platform chart; the neighbours (null, {})
// render.
func TestRegistryTLSNotAMapRefused(t *testing.T) {
	platformOff := render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: true}
	for _, tc := range []struct{ value, seen string }{
		{`""`, `""`},
		{"false", "false (a boolean)"},
		{"0", "0 (a number)"},
		{"[]", "a list"},
	} {
		for _, part := range []struct{ entry, field, fix string }{
			{"{tls: %s}", "tls", "write it as a map of insecureSkipVerify, ca, clientIdentity, or remove the key"},
			{"{auth: %s}", "auth", "write it as a map of username, password, auth, identityToken, or remove the key"},
			{"{tls: {clientIdentity: %s}}", "tls.clientIdentity", "write it as {crt: ..., key: ...}, or remove the key"},
		} {
			entry := fmt.Sprintf(part.entry, tc.value)
			_, err := renderPoolAs(t, schemaOff, vals(t, "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: "+entry+"}}}}"), nil)
			requireRefusal(t, err, "_cluster.talos.registryConfig[m.internal]."+part.field+" is "+tc.seen+", not a map", "Talos refuses the whole machine config for it (no worker would boot)", part.fix)
			_, err = renderChartAs(t, platformChart(t), platformOff, vals(t, "{registries: {config: {m.internal: "+entry+"}}}"), nil)
			requireRefusal(t, err, "registries.config[m.internal]."+part.field+" is "+tc.seen+", not a map", part.fix)
		}
	}
	for _, entry := range []string{"{tls: null}", "{tls: {}}", "{auth: null}", "{auth: {}}", "{tls: {clientIdentity: null}}", "{tls: {clientIdentity: {}}}"} {
		_, err := renderPoolAs(t, schemaOff, vals(t, "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: "+entry+"}}}}"), nil)
		require.NoError(t, err, entry)
		_, err = renderChartAs(t, platformChart(t), platformOff, vals(t, "{registries: {config: {m.internal: "+entry+"}}}"), nil)
		require.NoError(t, err, entry)
	}
}
