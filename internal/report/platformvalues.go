// The platform's values a catalog change goes into, read from the cluster:
// what adopt, rollout and catalog print whole, to apply as they are.

package report

import (
	"context"
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

// platformValues are the values a catalog change goes into: the platform
// release's values, as its newest Helm release record holds them (what helm
// get values prints, so what an upgrade with the printed file keeps); where
// no record of the platform chart is readable, the kubernetesWorkerImage
// section alone, as the platform forwarded it into the catalog's Package
// (every key it sets), to put in place of that section.
func platformValues(t Target) (values map[string]any, whole bool, from string, err error) {
	if t.Provider != nil {
		chrt, err := render.LoadChartFS(charts.FS, render.PlatformChart)
		if err != nil {
			return nil, false, "", fmt.Errorf("built-in chart %s: %v", render.PlatformChart, err)
		}
		vals, secret, err := fleet.ReleaseValues(context.Background(), t.Provider, platformNamespace, platformRelease, chrt.Metadata.Name)
		if err != nil {
			return nil, false, "", err
		}
		if vals != nil {
			return vals, true, fmt.Sprintf("the values of the platform's release %s/%s (Helm release record %s, as helm get values prints them)", platformNamespace, platformRelease, secret), nil
		}
	}
	section := map[string]any{}
	from = fmt.Sprintf("no Helm release record of the platform chart for release %s/%s is readable, so its values are not known here: this is its kubernetesWorkerImage section alone", platformNamespace, platformRelease)
	if t.Provider != nil {
		pkg, err := fleet.Get(context.Background(), t.Provider, packageAPI, "Package", "", catalogPackage)
		if err != nil {
			return nil, false, "", err
		}
		if pkg != nil {
			if v, ok, _ := unstructured.NestedMap(pkg.Object, "spec", "components", "kubernetes-worker-image", "values"); ok {
				section = v
				from += ", every key of it the catalog's Package " + catalogPackage + " holds"
			}
		}
	}
	return map[string]any{"kubernetesWorkerImage": section}, false, from, nil
}

// WithPlatformValues fills in the platform's values the -f files make
// (files, layered already), where the platform release's values are
// readable: a catalog change previewed from a part of the values is printed
// as the whole values to apply.
func (r *CatalogReport) WithPlatformValues(t Target, files map[string]any) error {
	vals, whole, from, err := platformValues(t)
	if err != nil || !whole {
		return err
	}
	r.Platform = render.MergeValues(vals, files)
	r.PlatformFrom = from + ", with the -f files layered over them as Helm layers -f files"
	return nil
}
