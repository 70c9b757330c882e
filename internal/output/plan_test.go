package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The machine config's lines: the installer, each mirror host -> endpoints
// and each registry's CA, with the channel each came from.
func TestPlanTextShowsTheMachineConfigsChannels(t *testing.T) {
	yes, no := true, false
	mc := &report.MachineConfigReport{
		Installer: report.Installer{Image: "r.internal/installer/abc:v1.13.6", Repository: "r.internal/installer", Source: "talos.installerRepository"},
		RegistryMirrors: []report.RegistryMirror{
			{Host: "docker.io", Endpoints: []string{"https://a.internal/v2", "https://b.internal/v2"}, Source: "published"},
			{Host: "ghcr.io", Endpoints: []string{"https://a.internal/v2/ghcr.io"}, OverridePath: &yes, SkipFallback: &no, Source: "cluster"},
		},
		RegistryConfig: []report.RegistryConfigHost{{Host: "a.internal", CA: true, Source: "published"}, {Host: "b.internal", Source: "cluster"}},
	}
	var out bytes.Buffer
	tb := newTable(Options{})
	writeMachineConfig(&tb, mc)
	tb.write(&out)
	assert.Equal(t, `installer     r.internal/installer/abc:v1.13.6  (talos.installerRepository)
mirrors       docker.io -> https://a.internal/v2, https://b.internal/v2  (published)
              ghcr.io -> https://a.internal/v2/ghcr.io; overridePath: true; skipFallback: false  (cluster)
registry CAs  a.internal  (published)
              b.internal: none, its entry sets no tls.ca  (cluster)
`, out.String())

	out.Reset()
	tb = newTable(Options{})
	writeMachineConfig(&tb, &report.MachineConfigReport{Installer: mc.Installer})
	tb.write(&out)
	assert.Contains(t, out.String(), "mirrors       none: the workers pull from each registry directly\n")
	assert.Contains(t, out.String(), "registry CAs  none: the workers verify registries against Talos's system CAs\n")
}

// A pool merges up to 64 hosts from each of three channels, each with up
// to 16 endpoints of up to 2048 characters: the text shows the first hosts,
// the first endpoints, each shortened, and says how many more there are;
// -o json lists every one exactly.
func TestPlanTextBoundsTheMachineConfigsHosts(t *testing.T) {
	mc := &report.MachineConfigReport{Installer: report.Installer{Image: "i", Source: "s"}}
	long := "https://mirror.internal/" + strings.Repeat("é", 2048-24)
	for i := 0; i < 192; i++ {
		m := report.RegistryMirror{Host: fmt.Sprintf("registry-%03d.example", i), Source: "talos.registryMirrors"}
		for j := 0; j < 16; j++ {
			m.Endpoints = append(m.Endpoints, long)
		}
		mc.RegistryMirrors = append(mc.RegistryMirrors, m)
		mc.RegistryConfig = append(mc.RegistryConfig, report.RegistryConfigHost{Host: m.Host, CA: true, Source: "s"})
	}
	r := &report.PlanReport{Result: "renders", MachineConfig: mc}
	var out bytes.Buffer
	writePlanText(&out, r, Options{})
	text := out.String()
	assert.Less(t, len(text), 16<<10, "a few KiB of the 6 MiB the hosts hold")
	assert.Equal(t, 2+1+11+11+1, strings.Count(text, "\n"), "pool, cluster, installer, 10 hosts and the rest of each, result")
	assert.Contains(t, text, "and 182 more hosts (-o json lists every one)")
	assert.Equal(t, 2, strings.Count(text, "and 182 more hosts"), "mirrors and registry CAs alike")
	assert.Contains(t, text, "registry-009.example -> https://mirror.internal/"+strings.Repeat("é", 120-24)+"...(2048 characters), ")
	assert.Contains(t, text, "...(2048 characters), and 13 more  (talos.registryMirrors)\n")
	assert.NotContains(t, text, "registry-010.example")

	out.Reset()
	require.True(t, structured(&out, r, Options{Format: "json"}))
	var back report.PlanReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &back))
	assert.Equal(t, mc, back.MachineConfig, "JSON holds every host and endpoint exactly")
}
