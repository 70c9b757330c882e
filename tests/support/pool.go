package support

import (
	"fmt"

	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/render"
)

// Pool release the tests render as unless they say otherwise: pool "workers"
// of tenant cluster "acme".
const (
	PoolRelease   = "kubernetes-nodes-acme-workers"
	PoolNamespace = "tenant-acme"
	PoolName      = "kubernetes-acme-workers"
)

// Defaults are the pool chart's own defaults for a new pool, read from the
// chart rather than from any output, so a test follows a deliberate change
// of them.
type Defaults struct {
	SchematicID, Version, StorageClass string
}

// PoolDefaults reads the pool chart's storageClass from its values.yaml and
// the Talos flavor it gives a new pool from its kubernetes-nodes.builtinTalos
// (values.yaml leaves talos.schematicID and talos.version "": what a running
// pool runs), rendered alone.
func PoolDefaults() (Defaults, error) {
	v, err := render.ReadValues(Path(render.PoolChart, "values.yaml"))
	if err != nil {
		return Defaults{}, err
	}
	chrt, err := LoadChart(render.PoolChart)
	if err != nil {
		return Defaults{}, err
	}
	m, err := render.Render(render.WithTemplate(render.HelpersOnly(chrt), "templates/defaults.yaml",
		[]byte("apiVersion: v1\nkind: PoolDefaults\n{{ include \"kubernetes-nodes.builtinTalos\" . }}\n")),
		render.Options{Release: render.Release{Name: PoolRelease, Namespace: PoolNamespace}, Values: map[string]any{"cluster": "acme"}})
	if err != nil {
		return Defaults{}, err
	}
	d, err := m.One("PoolDefaults")
	if err != nil {
		return Defaults{}, err
	}
	str := func(obj map[string]any, path string) string { return fmt.Sprint(render.Get(obj, path)) }
	return Defaults{SchematicID: str(d.Object, "schematicID"), Version: str(d.Object, "version"), StorageClass: str(v, "storageClass")}, nil
}

// GoldenName is the contract's name of a golden DataVolume (docs/design.md):
// internal/golden's, the one Go copy of the rule, whose own test renders the
// catalog's worker-image-lib.goldenName and compares.
func GoldenName(schematicID, version string) string {
	return golden.Name(schematicID, version)
}
