package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plan and pins show where each golden was imported from: its DataVolume's
// source URL, or with only its PVC left, CDI's import endpoint; a golden that
// records neither says so, and an absent one has none.
func TestPlanAndPinsShowEachGoldensSourceURL(t *testing.T) {
	const endpoint = "https://factory.mirror.internal/image/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.4/openstack-amd64.raw.xz"
	g4, g6 := goldenName("v1.13.4"), goldenName("v1.13.6")
	fixture, err := readFile(td("pins", "cluster.yaml"))
	require.NoError(t, err)
	withEndpoint := strings.Replace(fixture, "  name: "+g4+"\n  namespace: cozy-public\n", "  name: "+g4+"\n  namespace: cozy-public\n  annotations: {cdi.kubevirt.io/storage.import.endpoint: \""+endpoint+"\"}\n", 1)
	require.NotEqual(t, fixture, withEndpoint)

	for _, tc := range []struct {
		state, want4 string
	}{
		{td("pins", "cluster.yaml"), ""},
		{writeTemp(t, "cluster.yaml", withEndpoint), endpoint},
	} {
		r := decode[pinsReport](t, cli(t, "pins", "-cluster", tc.state, "-o", "json"))
		assert.Equal(t, "https://factory.talos.dev/image/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.6/openstack-amd64.raw.xz", goldenIn(t, r, g6).SourceURL)
		assert.Equal(t, tc.want4, goldenIn(t, r, g4).SourceURL, "a golden kept as its PVC: CDI's import endpoint")
		for _, g := range r.Goldens {
			if g.FoundAs == "absent" {
				assert.Empty(t, g.SourceURL, g.Name)
			}
		}
		text := cli(t, "pins", "-cluster", tc.state).stdout
		assert.Contains(t, text, g6+"  (DataVolume, phase Succeeded)")
		assert.Contains(t, text, "\n  imported from https://factory.talos.dev/image/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.6/openstack-amd64.raw.xz\n")
		if tc.want4 == "" {
			assert.Contains(t, text, "\n  imported from not recorded (no DataVolume source URL, no CDI import endpoint on its PVC)\n")
		} else {
			assert.Contains(t, text, "\n  imported from "+endpoint+"\n")
		}
	}

	plan := decode[planReport](t, cli(t, "plan", "-values", example("pools/golden.yaml"), "-cluster", example("cluster-state.yaml"), "-o", "json"))
	require.NotNil(t, plan.DiskSource)
	assert.Equal(t, "DataVolume", plan.DiskSource.GoldenFoundAs)
	assert.True(t, strings.HasSuffix(plan.DiskSource.GoldenSourceURL, "/image/"+plan.DiskSource.SchematicID.Value+"/"+plan.DiskSource.Version.Value+"/openstack-amd64.raw.xz"), plan.DiskSource.GoldenSourceURL)
	text := cli(t, "plan", "-values", example("pools/golden.yaml"), "-cluster", example("cluster-state.yaml")).stdout
	assert.Contains(t, text, "golden source     "+plan.DiskSource.GoldenSourceURL+"\n")

	http := decode[planReport](t, cli(t, "plan", "-values", td("pools", "http.yaml"), "-cluster", td("state", "cluster.yaml"), "-o", "json"))
	assert.Empty(t, http.DiskSource.GoldenSourceURL, "an HTTP pool clones no golden")
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func example(path string) string { return filepath.Join(support.RepoRoot(), "examples", path) }
