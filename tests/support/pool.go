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

// Defaults are the pool chart's own defaults, read from its values.yaml
// rather than from any output, so a test follows a deliberate change of them.
type Defaults struct {
	SchematicID, Version, StorageClass string
}

// PoolDefaults reads the pool chart's values.yaml.
func PoolDefaults() (Defaults, error) {
	v, err := render.ReadValues(Path(render.PoolChart, "values.yaml"))
	if err != nil {
		return Defaults{}, err
	}
	str := func(path string) string { return fmt.Sprint(render.Get(v, path)) }
	return Defaults{SchematicID: str("talos.schematicID"), Version: str("talos.version"), StorageClass: str("storageClass")}, nil
}

// GoldenName is the contract's name of a golden DataVolume (docs/design.md):
// internal/golden's, the one Go copy of the rule, whose own test renders the
// catalog's worker-image-lib.goldenName and compares.
func GoldenName(schematicID, version string) string {
	return golden.Name(schematicID, version)
}
