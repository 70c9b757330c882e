// Where the cluster's catalog values are written, so where a catalog change
// goes: what adopt, rollout, catalog and pins print whole, to apply as they
// are. On a stock Cozystack that is the operator's own Package; where this
// repository's platform chart is installed, the platform's values, which it
// forwards into that Package.

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	charts "github.com/cozystack/golden-worker-images"
	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The platform's own release, as the platform chart is installed.
const (
	platformRelease   = "cozystack"
	platformNamespace = "cozy-system"
)

// Shapes a catalog change is printed in (changeShape in -o json).
const (
	// ShapePackage: the Package cozystack.kubernetes-worker-image, whole,
	// the change in its spec.components.kubernetes-worker-image.values, to
	// apply with kubectl: the operator owns it (a stock Cozystack).
	ShapePackage = "package"
	// ShapePlatform: the platform's values, whose kubernetesWorkerImage this
	// repository's platform chart forwards into that Package, to upgrade the
	// platform with.
	ShapePlatform = "platform-values"
)

// catalogComponent is the Package's component the catalog's values are under.
const catalogComponent = "kubernetes-worker-image"

// CatalogHome is where the cluster's catalog values are written.
type CatalogHome struct {
	// Shape is ShapePackage or ShapePlatform.
	Shape string
	// From says, in words, what was read to decide it and what the change
	// is printed from.
	From string
	// Package is the Package as the cluster holds it (apiVersion, kind,
	// metadata.name and its whole spec), or, where the cluster holds none,
	// as a stock Cozystack installs the catalog; nil on ShapePlatform.
	// PackageFound says which.
	Package      map[string]any
	PackageFound bool
	// Platform are the platform release's values (its newest Helm release
	// record, as helm get values prints them), on ShapePlatform.
	Platform map[string]any
}

// CatalogValues are the catalog's values the home holds: the Package's
// spec.components.kubernetes-worker-image.values, or the platform's
// kubernetesWorkerImage section (what it forwards); nil for none.
func (h CatalogHome) CatalogValues() map[string]any {
	if h.Shape == ShapePlatform {
		v, _ := h.Platform["kubernetesWorkerImage"].(map[string]any)
		return v
	}
	v, _, _ := unstructured.NestedMap(h.Package, "spec", "components", catalogComponent, "values")
	return v
}

// WithCatalogValues is the home's Package with values as its catalog's
// values, every other field of it as held; nil on ShapePlatform.
func (h CatalogHome) WithCatalogValues(values map[string]any) map[string]any {
	if h.Package == nil {
		return nil
	}
	pkg := jsonCopy(h.Package)
	if values == nil {
		values = map[string]any{}
	}
	at := pkg
	for _, k := range []string{"spec", "components", catalogComponent} {
		next, ok := at[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			at[k] = next
		}
		at = next
	}
	at["values"] = values
	return pkg
}

// jsonCopy is a deep copy of m, as JSON holds it (numbers as json.Number).
func jsonCopy(m map[string]any) map[string]any {
	raw, err := json.Marshal(m)
	if err != nil {
		return map[string]any{}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers stay as written
	out := map[string]any{}
	if err := dec.Decode(&out); err != nil {
		return map[string]any{}
	}
	return out
}

// PackageKey is where a key of the catalog's values is written in the
// home: spec.components.kubernetes-worker-image.values.<key> of the
// Package, or kubernetesWorkerImage.<key> of the platform's values.
func (h CatalogHome) PackageKey(key string) string {
	if h.Shape == ShapePlatform {
		return "kubernetesWorkerImage." + key + " in the platform's values"
	}
	return "spec.components." + catalogComponent + ".values." + key + " of Package " + catalogPackage
}

// ReadCatalogHome decides where the cluster's catalog values are written:
// the platform's values where a Helm release record of this repository's
// platform chart is readable (release cozystack in cozy-system: it renders
// the catalog's Package from kubernetesWorkerImage); else the Package
// cozystack.kubernetes-worker-image as the cluster holds it, which the
// operator owns; where the cluster holds neither, that Package as a stock
// Cozystack installs the catalog, said plainly.
func ReadCatalogHome(t Target) (CatalogHome, error) {
	ctx := context.Background()
	if t.Provider != nil {
		chrt, err := render.LoadChartFS(charts.FS, render.PlatformChart)
		if err != nil {
			return CatalogHome{}, fmt.Errorf("built-in chart %s: %v", render.PlatformChart, err)
		}
		vals, secret, err := fleet.ReleaseValues(ctx, t.Provider, platformNamespace, platformRelease, chrt.Metadata.Name)
		if err != nil {
			return CatalogHome{}, err
		}
		if vals != nil {
			return CatalogHome{Shape: ShapePlatform, Platform: vals,
				From: fmt.Sprintf("the values of the platform's release %s/%s (Helm release record %s, as helm get values prints them)", platformNamespace, platformRelease, secret)}, nil
		}
		pkg, err := fleet.Get(ctx, t.Provider, packageAPI, "Package", "", catalogPackage)
		if err != nil {
			return CatalogHome{}, err
		}
		if pkg != nil {
			spec, _, _ := unstructured.NestedMap(pkg.Object, "spec")
			if spec == nil {
				spec = map[string]any{}
			}
			return CatalogHome{Shape: ShapePackage, PackageFound: true,
				Package: map[string]any{"apiVersion": pkg.GetAPIVersion(), "kind": pkg.GetKind(), "metadata": map[string]any{"name": pkg.GetName()}, "spec": spec},
				From:    fmt.Sprintf("the Package %s as the cluster holds it (its apiVersion, kind, name and whole spec); no Helm release record of this repository's platform chart (release %s/%s) is readable, so no platform release writes it: it is the operator's own", catalogPackage, platformNamespace, platformRelease)}, nil
		}
	}
	return CatalogHome{Shape: ShapePackage, Package: newCatalogPackage(),
		From: fmt.Sprintf("the cluster holds no Package %s and no Helm release record of this repository's platform chart (release %s/%s) is readable: this is the Package as a stock Cozystack installs the catalog (docs/cozystack.md, \"Installing the catalog\", with its PackageSource); where a platform chart forwards kubernetesWorkerImage into it, put the images there instead", catalogPackage, platformNamespace, platformRelease)}, nil
}

// newCatalogPackage is the catalog's Package as a stock Cozystack installs
// it, with no values yet.
func newCatalogPackage() map[string]any {
	return map[string]any{
		"apiVersion": packageAPI,
		"kind":       "Package",
		"metadata":   map[string]any{"name": catalogPackage},
		"spec": map[string]any{
			"variant":    "default",
			"components": map[string]any{catalogComponent: map[string]any{"values": map[string]any{}}},
		},
	}
}
