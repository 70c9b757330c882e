package main

import (
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
)

// plan renders with the API versions the cluster serves: a state file holding
// a CDI resource (snapshot strategy by default) and a VolumeSnapshotClass for
// the class's provisioner serves the snapshot API, and the pool renders; the
// same file without it is refused as the chart refuses it on such a cluster.
func TestPlanSeesTheSnapshotAPIOfTheCluster(t *testing.T) {
	cdi := support.CDIResource("cdi", "") + support.StorageProfile("replicated", "", "Filesystem")
	snapshots := support.SnapshotClass("linstor", "linstor.csi.linbit.com")
	args := func(state string) []string {
		return []string{"plan", "-values", td("pools", "builtin.yaml"), "-release", testRelease, "-namespace", testNamespace, "-cluster", state}
	}
	res := cli(t, args(stateWith(t, "golden", cdi, snapshots))...)
	assert.Equal(t, exitOK, res.code, res.stdout+res.stderr)

	res = cli(t, args(stateWith(t, "golden", cdi))...)
	assert.Equal(t, exitAttn, res.code, res.stderr)
	assert.Contains(t, res.stdout, "the cluster does not serve snapshot.storage.k8s.io/v1")
}
