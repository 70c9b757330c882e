package support

import (
	"strings"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// HelmRender renders chrt as `helm install` (or upgrade) does, with Helm v3's
// own pipeline and nothing of this repository's render or report code: Helm's
// coalescing and schema check (chartutil.ToRenderValuesWithSchemaValidation,
// the schema skipped as rel says), Helm's engine (engine.Render, or
// engine.RenderWithClientProvider against cluster for lookups), then Helm's
// own sorting of the rendered manifests (releaseutil.SortManifests, which
// refuses a document that does not parse). It is the reference a verdict of
// the CLI is held to: nil means Helm renders the pool; otherwise the error is
// Helm's refusal, in Helm's words. apiVersions are what the cluster serves
// beyond Helm's defaults (.Capabilities.APIVersions).
func HelmRender(chrt *chart.Chart, rel render.Release, values map[string]any, cluster engine.ClientProvider, apiVersions []string) (map[string]string, error) {
	// Helm is given its own copy: a template may set into what it reads.
	return HelmRenderOwned(chrt, rel, CopyValues(values), cluster, apiVersions)
}

// HelmRenderOwned is HelmRender on values Helm may keep and write into (no
// copy made), so that a measure of it is Helm's render alone.
func HelmRenderOwned(chrt *chart.Chart, rel render.Release, values map[string]any, cluster engine.ClientProvider, apiVersions []string) (map[string]string, error) {
	caps := *chartutil.DefaultCapabilities
	caps.APIVersions = append(append(chartutil.VersionSet{}, caps.APIVersions...), apiVersions...)
	vals, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, values, chartutil.ReleaseOptions{
		Name:      rel.Name,
		Namespace: rel.Namespace,
		Revision:  rel.Revision(),
		IsInstall: !rel.Upgrade,
		IsUpgrade: rel.Upgrade,
	}, &caps, rel.SkipSchemaValidation)
	if err != nil {
		return nil, err
	}
	var files map[string]string
	if cluster == nil {
		files, err = engine.Render(chrt, vals)
	} else {
		files, err = engine.RenderWithClientProvider(chrt, vals, cluster)
	}
	if err != nil {
		return nil, err
	}
	if _, _, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder); err != nil {
		return nil, err
	}
	return files, nil
}

// HelmRefusal is the message of Helm's refusal as a tenant reads it: a
// template's fail without Helm's "execution error at (FILE:LINE:COL): "
// location, whitespace folded, so it can be found in a report that prints
// the message on one line.
func HelmRefusal(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "execution error at ("); ok {
		if _, after, found := strings.Cut(rest, "): "); found {
			msg = after
		}
	}
	return strings.Join(strings.Fields(msg), " ")
}

// CopyValues is a deep copy of chart values (maps and lists copied, scalars of
// any type kept), so each render gets values no other render has touched.
func CopyValues(v map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, x := range v {
		out[k] = copyValue(x)
	}
	return out
}

func copyValue(x any) any {
	switch x := x.(type) {
	case map[string]any:
		return CopyValues(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	}
	return x
}
