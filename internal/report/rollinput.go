package report

import (
	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
)

// RollInput is one pool to check: where its values came from, the values
// and its release; or, from a cluster, a tenant object not read as a pool
// (ignored), listed in the report beside the pools.
type RollInput struct {
	source     string
	values     map[string]any
	release    render.Release
	unresolved string
	ignored    *fleet.Ignored
}
