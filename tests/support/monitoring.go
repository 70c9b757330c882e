package support

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cozystack/golden-worker-images/internal/render"
)

// The rule object the catalog renders with monitoring.enabled (docs/monitoring.md).
const (
	RuleObjectName      = "kubernetes-worker-image"
	RuleObjectNamespace = "cozy-public"
	// MonitoringAgentsPackage is the Package the platform renders with
	// kubernetesWorkerImage.metrics.enabled.
	MonitoringAgentsPackage = "cozystack.monitoring-agents"
)

// The metrics the platform's kube-state-metrics configuration exports and the
// alert rules read (docs/monitoring.md).
const (
	GoldenInfoMetric   = "kubernetes_worker_image_golden_info"
	GoldenStatusMetric = "kubernetes_worker_image_golden_status_info"
	WorkerDiskMetric   = "kubernetes_worker_image_worker_disk_info"
	GoldenPatchMetric  = "kubernetes_worker_image_golden_talos_patch"
	PoolPatchMetric    = "kubernetes_worker_image_pool_talos_patch"
)

// RenderCatalog renders the catalog as the platform installs it (release
// kubernetes-worker-image in cozy-public), with no cluster.
func RenderCatalog(values map[string]any) (*render.Manifest, error) {
	c, err := LoadChart(render.CatalogChart)
	if err != nil {
		return nil, err
	}
	return render.Render(c, render.Options{Release: render.Release{Name: "kubernetes-worker-image", Namespace: "cozy-public"}, Values: values})
}

// RenderPlatform renders the platform chart as Cozystack installs it.
func RenderPlatform(values map[string]any) (*render.Manifest, error) {
	c, err := LoadChart(render.PlatformChart)
	if err != nil {
		return nil, err
	}
	return render.Render(c, render.Options{Release: render.Release{Name: "cozystack-platform", Namespace: "cozy-system"}, Values: values})
}

// RuleObject is the catalog's one VMRule or PrometheusRule in m.
func RuleObject(m *render.Manifest) (render.Doc, error) {
	var found []render.Doc
	for _, kind := range []string{"VMRule", "PrometheusRule"} {
		found = append(found, m.OfKind(kind)...)
	}
	if len(found) != 1 {
		return render.Doc{}, fmt.Errorf("the render holds %d rule objects, want 1", len(found))
	}
	return found[0], nil
}

// PackageComponentValues is spec.components.<component>.values of the Package
// named pkg in a platform render: what the Cozystack operator hands that
// component's HelmRelease.
func PackageComponentValues(m *render.Manifest, pkg, component string) (map[string]any, error) {
	d, ok := m.Find("Package", pkg)
	if !ok {
		return nil, fmt.Errorf("the platform renders no Package %s", pkg)
	}
	values, ok := render.Get(d.Object, "spec.components."+component+".values").(map[string]any)
	if !ok {
		return nil, fmt.Errorf("Package %s has no values for component %s", pkg, component)
	}
	return values, nil
}

// Tool is the path of a binary the Makefile builds from a tools/ module into
// .cache/<name>/bin (env names another place). A missing one is an error in
// CI and a reason to skip elsewhere: ok is false and why says how to build it.
func Tool(name, env string) (path string, ok bool, why string) {
	path = os.Getenv(env)
	if path == "" {
		path = Path(".cache", name, "bin", name)
	}
	if _, err := os.Stat(path); err != nil {
		return path, false, fmt.Sprintf("%s is not built at %s: run `make %s` (or set %s)", name, filepath.Clean(path), name, env)
	}
	return path, true, ""
}
