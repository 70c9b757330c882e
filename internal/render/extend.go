package render

import (
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
)

// WithTemplate returns a copy of chrt with one more template file, leaving chrt
// itself untouched. The added template sees the chart's named templates, so a
// tool can read what the chart resolved (include "...") in the same render,
// with the same lookups, instead of re-implementing it.
func WithTemplate(chrt *chart.Chart, name string, data []byte) *chart.Chart {
	cp := *chrt
	cp.Templates = make([]*chart.File, 0, len(chrt.Templates)+1)
	cp.Templates = append(cp.Templates, chrt.Templates...)
	cp.Templates = append(cp.Templates, &chart.File{Name: name, Data: data})
	return &cp
}

// HelpersOnly returns a copy of chrt that keeps only its named-template files
// (templates/_*), so a render of the copy outputs nothing of the chart and
// none of its objects' guards run: only templates added with WithTemplate.
func HelpersOnly(chrt *chart.Chart) *chart.Chart {
	cp := *chrt
	cp.Templates = nil
	for _, f := range chrt.Templates {
		if strings.HasPrefix(path.Base(f.Name), "_") {
			cp.Templates = append(cp.Templates, f)
		}
	}
	return &cp
}

// ChartFiles lists a loaded chart as the files a loader would make it of
// again (for Helm v4, whose loader reads a chart itself): its templates as
// they are now (WithTemplate and HelpersOnly edit those), its other files as
// loaded, and each dependency under charts/<name>/ (also those attached after
// loading, which its own files do not list).
func ChartFiles(chrt *chart.Chart) []*chart.File {
	return chartFiles(chrt, "")
}

func chartFiles(chrt *chart.Chart, prefix string) []*chart.File {
	var out []*chart.File
	for _, f := range chrt.Raw {
		if strings.HasPrefix(f.Name, "templates/") || strings.HasPrefix(f.Name, "charts/") {
			continue
		}
		out = append(out, &chart.File{Name: prefix + f.Name, Data: f.Data})
	}
	for _, f := range chrt.Templates {
		out = append(out, &chart.File{Name: prefix + f.Name, Data: f.Data})
	}
	for _, dep := range chrt.Dependencies() {
		out = append(out, chartFiles(dep, path.Join(prefix+"charts", dep.Name())+"/")...)
	}
	return out
}
