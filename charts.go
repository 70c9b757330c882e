// Package charts carries this repository's charts inside the Go binaries that
// import it, so the operator CLI renders the pool chart it was built with from
// any folder. It sits at the repository root because go:embed reaches only
// files at or below the embedding package.
package charts

import "embed"

// FS holds the pool chart, the catalog chart, the platform chart and every
// library chart, at their repository paths (render.PoolChart,
// render.CatalogChart, render.PlatformChart, packages/library/<name>); the
// fleet reports ask the catalog who uses a golden, and `workerimage catalog`
// renders the catalog with the values the platform chart forwards to it. The charts are embedded file by file rather than as a folder: a library dependency is linked into its
// charts/ folder by a symlink, which go:embed refuses; render.LoadChartFS
// attaches those dependencies from packages/library instead. The all: prefix
// keeps the templates' _*.tpl helpers, which a plain pattern would skip.
//
//go:embed packages/apps/kubernetes-nodes/Chart.yaml
//go:embed packages/apps/kubernetes-nodes/values.yaml
//go:embed packages/apps/kubernetes-nodes/values.schema.json
//go:embed packages/apps/kubernetes-nodes/README.md
//go:embed packages/apps/kubernetes-nodes/.helmignore
//go:embed all:packages/apps/kubernetes-nodes/templates
//go:embed packages/system/kubernetes-worker-image/Chart.yaml
//go:embed packages/system/kubernetes-worker-image/values.yaml
//go:embed packages/system/kubernetes-worker-image/values.schema.json
//go:embed all:packages/system/kubernetes-worker-image/templates
//go:embed packages/core/platform/Chart.yaml
//go:embed packages/core/platform/values.yaml
//go:embed packages/core/platform/values.schema.json
//go:embed all:packages/core/platform/templates
//go:embed all:packages/library
var FS embed.FS
