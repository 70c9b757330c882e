package main

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pins GOLDEN for a golden a catalog entry names that cozy-public does not
// hold yet says so and names the entry (exit 1), never "did you mean" an
// older golden; a name no entry gives stays bad input with the suggestion.
func TestPinsGoldenNotCreatedYet(t *testing.T) {
	next := goldenName("v1.13.7")
	state := stateWith(t, "golden", `---
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata: {name: cozystack.kubernetes-worker-image}
spec:
  variant: default
  components:
    kubernetes-worker-image:
      values:
        images:
          - {schematicID: `+defaultSchematic+`, version: `+defaultVersion+`}
          - {schematicID: `+defaultSchematic+`, version: v1.13.7}
`)
	res := cli(t, "pins", next, "--cluster", state)
	require.Equal(t, exitAttn, res.code, res.stderr)
	assert.Empty(t, res.stderr)
	assert.Contains(t, res.stdout, next+"  not created yet: cozy-public holds no DataVolume or PersistentVolumeClaim of that name\n")
	assert.Contains(t, res.stdout, `  catalog entry  images[1] (schematicID "`+defaultSchematic+`", version "v1.13.7"), in the cluster's Package cozystack.kubernetes-worker-image`)
	assert.NotContains(t, res.stdout, "did you mean")
	assert.Contains(t, res.stdout, "\n  next: the catalog creates it once Flux has upgraded its release with that entry (HelmRelease cozy-public/kubernetes-worker-image; the import takes minutes)")
	assert.NotContains(t, res.stdout, "platform", "no platform to upgrade: the Package holds the entry already")

	res = cli(t, "pins", next, "--cluster", state, "-o", "json")
	require.Equal(t, exitAttn, res.code, res.stderr)
	nc := decode[report.NotCreated](t, res)
	assert.Equal(t, next, nc.Golden)
	assert.Contains(t, nc.Entry, `version "v1.13.7"`)
	assert.True(t, nc.InPackage)

	// No Package: the entry is the catalog's built-in one, which it creates
	// once installed.
	res = cli(t, "pins", goldenName(defaultVersion), "--cluster", td("state", "cluster.yaml"))
	require.Equal(t, exitAttn, res.code, res.stderr)
	assert.Contains(t, res.stdout, "in the catalog's built-in values (the cluster has no Package cozystack.kubernetes-worker-image)")
	assert.Contains(t, res.stdout, "\n  next: the cluster has no Package cozystack.kubernetes-worker-image, so the entry is one of the catalog's built-in values: the catalog creates the golden once it is installed with them")
	assert.False(t, decode[report.NotCreated](t, cli(t, "pins", goldenName(defaultVersion), "--cluster", td("state", "cluster.yaml"), "-o", "json")).InPackage)

	// The neighbours: the golden that exists is answered as before, and a
	// name no entry gives is bad input with the nearest golden.
	res = cli(t, "pins", goldenName(defaultVersion), "--cluster", state)
	require.Equal(t, exitOK, res.code, res.stderr)
	requireProblem(t, cli(t, "pins", goldenName("v1.13.8"), "--cluster", state), "no pool or disk names it", "did you mean")
}
