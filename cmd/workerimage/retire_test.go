package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pins shows a retiring golden and what still keeps the catalog from letting
// Helm delete it: the same users the catalog checks (disks, machine templates).
func TestPinsShowsRetiringGoldensAndWhatBlocksThem(t *testing.T) {
	r := pinsOf(t, "retiring")
	used := goldenIn(t, r, goldenName("v1.13.5"))
	assert.True(t, used.Retiring)
	assert.Equal(t, []string{
		"tenant-acme/DataVolume/kubernetes-acme-old-1a2b3c-aaaaa-disk-system",
		"tenant-beta/KubevirtMachineTemplate/kubernetes-beta-batch-9f8e7d",
	}, used.Blockers)
	assert.False(t, used.SafeToDelete)

	idle := goldenIn(t, r, goldenName("v1.13.4"))
	assert.True(t, idle.Retiring)
	assert.Empty(t, idle.Blockers, "a template cloning a same-named PVC elsewhere is no user")
	assert.True(t, idle.SafeToDelete)

	kept := goldenIn(t, r, goldenName("v1.13.6"))
	assert.False(t, kept.Retiring)
	assert.Nil(t, kept.Blockers)

	text := cli(t, "pins", "-cluster", td("pins", "retiring.yaml"))
	require.Equal(t, exitOK, text.code, text.stderr)
	assert.Contains(t, text.stdout, goldenName("v1.13.5")+"  (DataVolume, phase Succeeded, retiring)")
	assert.Contains(t, text.stdout, "retiring: its entry cannot be dropped yet (the catalog refuses), still used by 2 objects:")
	assert.Regexp(t, `\n  blocks +tenant-beta/KubevirtMachineTemplate/kubernetes-beta-batch-9f8e7d\n`, text.stdout)
	assert.Contains(t, text.stdout, "retiring: nothing blocks its deletion; drop its entry from the catalog's images and Helm deletes it")
}

func TestPinsWithoutRetiringGoldensReportsNoRetirement(t *testing.T) {
	r := pinsOf(t, "cluster")
	for _, g := range r.Goldens {
		assert.False(t, g.Retiring, g.Name)
		assert.Nil(t, g.Blockers, g.Name)
	}
}

func TestPlanShowsARetiringGolden(t *testing.T) {
	res := cli(t, planArgs("builtin", "golden-retiring-running", "-o", "json")...)
	require.Equal(t, exitOK, res.code, res.stderr)
	r := decode[planReport](t, res)
	assert.True(t, r.DiskSource.GoldenRetiring)
	assert.Equal(t, "kubernetes-acme-workers-abc123", r.DiskSource.RunningTemplate)

	text := cli(t, planArgs("builtin", "golden-retiring-running")...)
	assert.Contains(t, text.stdout, "size 6Gi, retiring (its catalog entry sets retire: true; this pool still renders because it already runs from it")

	// A pool not running from it is refused, and plan says why.
	res = cli(t, planArgs("builtin", "golden-retiring", "-o", "json")...)
	require.Equal(t, exitAttn, res.code, res.stderr)
	r = decode[planReport](t, res)
	assert.Contains(t, r.Refusal, "in cozy-public is retiring")
	assert.Contains(t, r.Refusal, "Point osImage.builtin at another flavor")
	assert.True(t, r.DiskSource.GoldenRetiring)
	text = cli(t, planArgs("builtin", "golden-retiring")...)
	assert.Contains(t, text.stdout, "size 6Gi, retiring (its catalog entry sets retire: true)\n", "refused: no claim that the pool still renders")

	// The same pool against the golden before it retired: nothing about retiring.
	res = cli(t, planArgs("builtin", "golden", "-o", "json")...)
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.False(t, decode[planReport](t, res).DiskSource.GoldenRetiring)
	assert.NotContains(t, res.stdout, "goldenRetiring")
}
