package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plan renders with the API versions the cluster serves: a state file holding
// a CDI resource (snapshot strategy by default) and a VolumeSnapshotClass for
// the class's provisioner serves the snapshot API, and the pool renders; the
// same file without it is refused as the chart refuses it on such a cluster.
func TestPlanSeesTheSnapshotAPIOfTheCluster(t *testing.T) {
	base, err := os.ReadFile(td("state", "golden.yaml"))
	require.NoError(t, err)
	cdi := "\n---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: CDI\nmetadata: {name: cdi}\nspec: {}\n"
	snapshots := "---\napiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata: {name: linstor}\ndriver: linstor.csi.linbit.com\ndeletionPolicy: Delete\n"
	write := func(name, text string) string {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	args := func(state string) []string {
		return []string{"plan", "-values", td("pools", "builtin.yaml"), "-release", testRelease, "-namespace", testNamespace, "-cluster", state}
	}
	res := cli(t, args(write("with.yaml", string(base)+cdi+snapshots))...)
	assert.Equal(t, exitOK, res.code, res.stdout+res.stderr)

	res = cli(t, args(write("without.yaml", string(base)+cdi))...)
	assert.Equal(t, exitAttn, res.code, res.stderr)
	assert.Contains(t, res.stdout, "the cluster does not serve snapshot.storage.k8s.io/v1")
}
