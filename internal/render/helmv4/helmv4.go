// Package helmv4 renders the harness's charts with the newest Helm v4's
// loader, values and engine (the one go.mod names; tools/helm-v4.1 renders
// with Helm v4.1, Cozystack's helm-controller's), to prove they render the
// same bytes as under Helm v3. It is a
// package of its own because every Helm v4 package links client-go's fake
// clientsets (through k8s.io/client-go/kubernetes), which the CLI must not.
package helmv4

import (
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	loaderv4 "helm.sh/helm/v4/pkg/chart/v2/loader"
	enginev4 "helm.sh/helm/v4/pkg/engine"
)

// Render is render.Render on Helm v4. The chart is handed over as its files,
// so v4's loader reads the chart itself (as Flux on Helm v4 will) rather than
// a structure Helm v3 already parsed.
func Render(chrt *chart.Chart, opts render.Options) (*render.Manifest, error) {
	files, err := RenderFiles(chrt, opts)
	if err != nil {
		return nil, err
	}
	return render.NewManifest(files)
}

// RenderFiles is Helm v4's render alone, as helm-controller's SDK makes it:
// the chart as v4 loads it, its values coalesced and checked against the
// schema, and each template's output by file name, nothing parsed after.
func RenderFiles(chrt *chart.Chart, opts render.Options) (map[string]string, error) {
	if err := render.CheckValues(opts.Values); err != nil {
		return nil, err
	}
	c, err := loaderv4.LoadFiles(chartFiles(chrt))
	if err != nil {
		return nil, err
	}
	rel := opts.Release
	vals, err := util.ToRenderValuesWithSchemaValidation(c, opts.Values, common.ReleaseOptions{
		Name: rel.Name, Namespace: rel.Namespace, Revision: rel.Revision(), IsInstall: !rel.Upgrade, IsUpgrade: rel.Upgrade,
	}, capabilities(opts.APIVersions), rel.SkipSchemaValidation)
	if err != nil {
		return nil, err
	}
	return renderFiles(c, vals, opts.Provider())
}

// renderFiles renders with no cluster (every lookup answers empty) when p is nil.
func renderFiles(c *chartv2.Chart, vals common.Values, p engine.ClientProvider) (map[string]string, error) {
	if p == nil {
		return enginev4.Render(c, vals)
	}
	return enginev4.RenderWithClientProvider(c, vals, p)
}

// chartFiles is the chart as v4's loader takes its files.
func chartFiles(chrt *chart.Chart) []*archive.BufferedFile {
	var out []*archive.BufferedFile
	for _, f := range render.ChartFiles(chrt) {
		out = append(out, &archive.BufferedFile{Name: f.Name, Data: f.Data})
	}
	return out
}

// capabilities is Helm v4's default capabilities plus extra API versions, as
// render.Options.Capabilities is for v3.
func capabilities(extra []string) *common.Capabilities {
	caps := *common.DefaultCapabilities
	caps.APIVersions = append(append(common.VersionSet{}, caps.APIVersions...), extra...)
	return &caps
}
