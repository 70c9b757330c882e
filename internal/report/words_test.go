package report

import (
	"errors"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestOneLineKeepsTheChartsWords(t *testing.T) {
	msg := "execution error at (x/templates/a.yaml:3:4): pool p: golden g\nis absent"
	assert.Equal(t, "pool p: golden g is absent", OneLine(msg))
	assert.Equal(t, "plain text", OneLine("plain\n  text"))
	// Helm's words inside a message (a value it quotes) are the message's.
	quoted := "values don't meet the specifications: 'execution error at (x): pool fine' does not match"
	assert.Equal(t, quoted, OneLine(quoted))
	assert.Equal(t, "pool p: class \"execution error at (x): y\" is refused", OneLine("execution error at (x/a.yaml:1:2): pool p: class \"execution error at (x): y\" is refused"))
}

func TestRenderFailureTellsARefusalFromAClusterError(t *testing.T) {
	refusal, prob := RenderFailure(errors.New("execution error at (kubernetes-nodes/templates/x.yaml:1:2): pool p: refused"))
	assert.NoError(t, prob)
	assert.Equal(t, "pool p: refused", refusal)

	// A render the cluster failed: the provider's own error, whatever Helm wraps it in.
	chrt, err := LoadPoolChart("")
	require.NoError(t, err)
	c, err := support.LoadCluster(filepath.Join(support.RepoRoot(), "cmd", "workerimage", "testdata", "state", "golden.yaml"))
	require.NoError(t, err)
	c.FailWith = map[string]error{"MachineDeployment": apierrors.NewForbidden(schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "machinedeployments"}, "", errors.New("no"))}
	_, err = render.Render(chrt, render.Options{Release: render.Release{Name: support.PoolRelease, Namespace: support.PoolNamespace}, Values: map[string]any{"cluster": "acme"}, Cluster: c})
	require.Error(t, err)
	refusal, prob = RenderFailure(err)
	assert.Empty(t, refusal)
	require.Error(t, prob)
	assert.Equal(t, "the cluster answered a lookup with an error: machinedeployments.cluster.x-k8s.io is forbidden: no", prob.Error())
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
		assert.Equal(t, want, ShellWord(in), in)
	}
}
