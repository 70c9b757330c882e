package report

import (
	"context"
	"fmt"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/engine"
)

// Target is where a render's lookups go: a cluster-state file, a live cluster,
// or nothing at all (helm template: every lookup answers empty).
type Target struct {
	// Provider answers the lookups; nil for none.
	Provider engine.ClientProvider
	// Desc names the cluster in a report's first lines.
	Desc string
	// APIVersions are what the cluster serves of the API versions the charts
	// ask .Capabilities about, so a render sees what `helm install` would.
	APIVersions []string
	// Progress, when set, is told what a long read of the cluster is doing
	// (one short line each step); the CLI shows it on a terminal only.
	Progress func(step string)
	// Catalog, when set, is the goldens cozy-public holds, read once by the
	// caller (ReadCatalog) for a report over many pools; otherwise each
	// report that judges a pool behind lists them itself.
	Catalog map[string]fleet.Golden
}

// ReadCatalog lists the goldens cozy-public holds (two lists of cozy-public,
// whatever the tenants hold); none without a cluster.
func ReadCatalog(t Target) (map[string]fleet.Golden, error) {
	if t.Provider == nil {
		return map[string]fleet.Golden{}, nil
	}
	return fleet.CatalogGoldens(context.Background(), t.Provider)
}

// catalog is Catalog, or the goldens cozy-public holds read now.
func (t Target) catalog() (map[string]fleet.Golden, error) {
	if t.Catalog != nil {
		return t.Catalog, nil
	}
	return ReadCatalog(t)
}

// Progressf tells Progress, when there is one.
func (t Target) Progressf(format string, args ...any) {
	if t.Progress != nil {
		t.Progress(fmt.Sprintf(format, args...))
	}
}

func (t Target) Options(rel render.Release, values map[string]any) render.Options {
	return render.Options{Release: rel, Values: values, Cluster: t.Provider, APIVersions: t.APIVersions}
}

// goldenSource reads a golden's import (fleet.GoldenSource); nothing
// without a cluster.
func (t Target) goldenSource(name string) (url, certConfigMap, checksum string, err error) {
	if t.Provider == nil {
		return "", "", "", nil
	}
	return fleet.GoldenSource(context.Background(), t.Provider, name)
}
