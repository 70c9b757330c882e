package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// --to-defaults moves a pool to the chart's Kubernetes release of its minor
// when that is newer than the release it runs (as Behind says), and leaves
// one on it, or on another minor the chart does not ship, alone.
func TestKubernetesPatch(t *testing.T) {
	defaults := Defaults{KubernetesReleases: map[string]string{"v1.35": "v1.35.6", "v1.34": "v1.34.9"}}
	for _, c := range []struct {
		running, from, to string
		ok                bool
	}{
		{"v1.35.5", "v1.35.5", "v1.35.6", true},
		{"v1.35.6", "", "", false},
		{"v1.34.2", "v1.34.2", "v1.34.9", true},
		{"v1.30.1", "", "", false},
		{"", "", "", false},
	} {
		from, to, ok := kubernetesPatch(Running{Kubernetes: c.running, Defaults: defaults})
		assert.Equal(t, c.ok, ok, c.running)
		assert.Equal(t, c.from, from, c.running)
		assert.Equal(t, c.to, to, c.running)
	}
}

// A field of the osImage recorded at creation is recognised whichever
// channel it came from, so a rollout writes it into the pool's own osImage.
func TestRecordedOSImageFromEitherChannel(t *testing.T) {
	for _, source := range []string{
		"the platform default _cluster.osImage.builtin.version recorded when the pool was created (annotation ...)",
		"the default osImage.builtin.version of " + CatalogChannel + ", recorded when the pool was created (annotation ...)",
	} {
		path, recorded, ok := osImagePathOf(source, "version")
		assert.Equal(t, []any{"builtin", true, true}, []any{path, recorded, ok}, source)
	}
	_, _, ok := osImagePathOf("the default talos.imageFactoryURL of "+CatalogChannel+", recorded when the pool was created (x)", "version")
	assert.False(t, ok, "a published talos default is no osImage field")
}

// A word of the printed command reads back as itself in a shell: names,
// URLs and flags as they are, anything else single-quoted.
func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"--to-factory":                    "--to-factory",
		"https://factory.mirror.internal": "https://factory.mirror.internal",
		"tenant-a/kubernetes-nodes-a-web": "tenant-a/kubernetes-nodes-a-web",
		"a b":                             "'a b'",
		"it's":                            `'it'\''s'`,
		"$(reboot)":                       "'$(reboot)'",
		"":                                "''",
	} {
		assert.Equal(t, want, shellWord(in), in)
	}
}
