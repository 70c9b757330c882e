package main

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An empty value of a selection flag is refused as the flag is read (exit
// 2, one line naming the flag and why, nothing on stdout), never taken as
// the flag left out: an unset shell variable would turn a one-pool rollout
// into a fleet rollout. Each spelling a shell leaves behind is refused: the
// flag and "" as two words, --flag= and -n= (which pflag reads as the value
// "="), and an empty name among the comma-separated names of a list flag.
func TestAnEmptySelectionIsRefused(t *testing.T) {
	target := []string{"rollout", "--to-talos", "v1.13.7", "--cluster", rolloutFixture}
	why := map[string]string{
		"-n/--namespace": "it would keep no namespace out, and every namespace's pools would be read as selected (an unset shell variable gives one); give a namespace, or leave -n out for every namespace",
		"--pool":         "it would name no pool, and every pool of the cluster would be selected (an unset shell variable gives one); give a pool as a HelmRelease's name, its release, kubernetes-<cluster>-<pool>, or NAMESPACE/any of those, or leave --pool out for every pool",
		"--flavor":       "it would name no flavor, and the pools of every flavor would be selected (an unset shell variable gives one); give SCHEMATIC/vMAJOR.MINOR.PATCH or SCHEMATIC/vMAJOR.MINOR, or leave --flavor out for every flavor",
		"--exclude":      "it would leave no pool out, and the pool it was meant to leave out would move (an unset shell variable gives one); give a pool as --pool names it, or leave --exclude out",
	}
	for _, c := range []struct {
		args        []string
		flag, value string
	}{
		{append(target, "-n", ""), "-n/--namespace", ""},
		{append(target, "-n="), "-n/--namespace", ""},
		{append(target, "--namespace="), "-n/--namespace", ""},
		{append(target, "--namespace", ""), "-n/--namespace", ""},
		{append(target, "--pool="), "--pool", ""},
		{append(target, "--pool", ""), "--pool", ""},
		{append(target, "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--pool", ""), "--pool", ""},
		{append(target, "--pool", "tenant-beta/kubernetes-nodes-beta-web,"), "--pool", "tenant-beta/kubernetes-nodes-beta-web,"},
		{append(target, "--pool", "a,,b"), "--pool", "a,,b"},
		{append(target, "--flavor="), "--flavor", ""},
		{append(target, "--flavor", ""), "--flavor", ""},
		{append(target, "--exclude="), "--exclude", ""},
		{append(target, "--exclude", ""), "--exclude", ""},
		{append(target, "--exclude", ",kubernetes-nodes-beta-spot"), "--exclude", ",kubernetes-nodes-beta-spot"},
		{[]string{"pins", "-n=", "--cluster", rolloutFixture}, "-n/--namespace", ""},
		{[]string{"pins", "--namespace", "", "--cluster", rolloutFixture}, "-n/--namespace", ""},
		{[]string{"adopt", "-n", "", "--cluster", rolloutFixture}, "-n/--namespace", ""},
		{[]string{"adopt", "--namespace=", "--cluster", rolloutFixture}, "-n/--namespace", ""},
		{[]string{"rollcheck", "../../packages/apps/kubernetes-nodes", "-n=", "--cluster", rolloutFixture}, "-n/--namespace", ""},
		{[]string{"rollcheck", "../../packages/apps/kubernetes-nodes", "-n", "", "-f", "../../examples/pools/*.yaml"}, "-n/--namespace", ""},
	} {
		r := cli(t, c.args...)
		assert.Equal(t, exitProblem, r.code, "%q", c.args)
		assert.Empty(t, r.stdout, "%q", c.args)
		want := "workerimage " + c.args[0] + ": " + c.flag + " \"" + c.value + "\": an empty value is refused, never read as the flag left out: " + why[c.flag] + "\n"
		assert.Equal(t, want, r.stderr, "%q", c.args)
	}
}

// The neighbours: each selection flag given a value, in each spelling,
// selects what it names.
func TestASelectionFlagWithAValueSelects(t *testing.T) {
	// --to-factory: beta-web is on the public factory while the fixture's
	// catalog publishes the mirror (blocked without it).
	r := cli(t, "rollout", "--to-talos", "v1.13.7", "--to-factory", "https://factory.mirror.internal", "--cluster", rolloutFixture, "-o", "json",
		"-n=tenant-beta", "--pool=tenant-beta/kubernetes-nodes-beta-web,kubernetes-nodes-beta-spot", "--exclude=kubernetes-nodes-beta-spot", "--flavor="+flavorMinor)
	require.Equal(t, exitOK, r.code, r.stderr)
	plan := decode[rollout.RolloutPlan](t, r)
	assert.Equal(t, rollout.RolloutSelection{Namespace: "tenant-beta", Pools: []string{"tenant-beta/kubernetes-nodes-beta-web", "kubernetes-nodes-beta-spot"}, Flavor: flavorMinor, Exclude: []string{"kubernetes-nodes-beta-spot"}}, plan.Selection)
	require.Len(t, plan.Pools(), 1)
	assert.Equal(t, "tenant-beta/kubernetes-nodes-beta-web", plan.Pools()[0].HelmRelease)

	r = cli(t, "rollout", "--to-talos", "v1.13.7", "--to-factory", "https://factory.mirror.internal", "--cluster", rolloutFixture, "-o", "json", "-n", "tenant-beta", "--pool", "kubernetes-nodes-beta-web", "--pool", "kubernetes-nodes-beta-spot", "--flavor", flavorMinor)
	require.Equal(t, exitOK, r.code, r.stderr)
	plan = decode[rollout.RolloutPlan](t, r)
	assert.Equal(t, []string{"kubernetes-nodes-beta-web", "kubernetes-nodes-beta-spot"}, plan.Selection.Pools, "repeated, in order")
	assert.Len(t, plan.Pools(), 2)

	for _, args := range [][]string{
		{"pins", "-n=tenant-beta", "--cluster", rolloutFixture},
		{"adopt", "-n", "tenant-beta", "--cluster", rolloutFixture},
		{"rollcheck", "../../packages/apps/kubernetes-nodes", "--namespace=tenant-beta", "--cluster", rolloutFixture},
	} {
		r := cli(t, args...)
		assert.NotEqual(t, exitProblem, r.code, "%q: %s", args, r.stderr)
		assert.Contains(t, r.stdout, "tenant-beta/", "%q", args)
		assert.NotContains(t, r.stdout, "tenant-acme/", "%q: one namespace's pools", args)
	}
}

// flavorMinor is the example fleet's flavor, every patch of its minor.
const flavorMinor = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13"
