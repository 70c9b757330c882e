package report

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
)

// The ways a pool is behind (docs/design.md, "Day 2"): a chart release never
// moves a running pool, so what the platform offers now reaches it only
// through its own values (workerimage rollout writes them).
const (
	// BehindCatalogPatch: the catalog holds a Succeeded golden of a newer
	// patch of the pool's Talos minor and schematic, on the pool's class.
	BehindCatalogPatch = "catalog-patch"
	// BehindChartDefault: the Talos release the chart gives a new pool is
	// newer than the pool's, on the same schematic.
	BehindChartDefault = "chart-default"
	// BehindKubernetesPatch: the chart ships a newer Kubernetes patch of the
	// pool's minor than the pool runs.
	BehindKubernetesPatch = "kubernetes-patch"
	// BehindFactory: an HTTP pool imports from a factory URL other than the
	// platform's current default (the closed-network cutover).
	BehindFactory = "factory-url"
)

// BehindReason is one way a pool is behind: what it runs (From) and what is
// offered (To), with what offers it (Detail).
type BehindReason struct {
	// Kind is one of BehindCatalogPatch, BehindChartDefault,
	// BehindKubernetesPatch, BehindFactory.
	Kind string `json:"kind"`
	// From and To are Talos releases (v1.13.6), Kubernetes releases
	// (v1.35.6) or factory URLs, as Kind says.
	From string `json:"from"`
	To   string `json:"to"`
	// Detail names what offers To: the golden, the chart's default flavor,
	// the chart's Kubernetes release of the minor, the platform's factory.
	Detail string `json:"detail,omitempty"`
}

// Running is what a pool runs, as the pool chart resolves it against the
// cluster (its own values, else what it was created with and runs), and
// what the chart and the platform give a new pool now.
type Running struct {
	// SchematicID and Version are the Talos flavor of its disk and installer.
	SchematicID string `json:"schematicID"`
	Version     string `json:"version"`
	// Clone: its disk clones Golden; else it imports over HTTP from
	// ImageFactoryURL.
	Clone           bool   `json:"clone,omitempty"`
	Golden          string `json:"golden,omitempty"`
	ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
	// Class is its disk's StorageClass; "" when none is written (an HTTP
	// pool on the cluster's default class): then any class counts.
	Class string `json:"storageClass,omitempty"`
	// Kubernetes is its MachineDeployment's release (v1.35.6); "" when the
	// chart ships no release of its minor.
	Kubernetes string `json:"kubernetes,omitempty"`
	// KubernetesSource says where Kubernetes came from.
	KubernetesSource string   `json:"kubernetesSource,omitempty"`
	Defaults         Defaults `json:"defaults"`
}

// Defaults are what a new pool gets now: the chart's Talos flavor, the
// platform's factory URL (_cluster.talos.imageFactoryURL, else the catalog's
// published one, else the chart's built-in), and the chart's Kubernetes
// release of each minor.
type Defaults struct {
	SchematicID     string `json:"schematicID"`
	Version         string `json:"version"`
	ImageFactoryURL string `json:"imageFactoryURL"`
	// ImageFactoryURLFrom names the catalog's published defaults when the
	// URL came from there; empty for _cluster and the built-in.
	ImageFactoryURLFrom string `json:"imageFactoryURLFrom,omitempty"`
	// VersionFrom names where the Talos release for new pools came from
	// when the platform or the catalog gives it; empty for the chart's.
	VersionFrom        string            `json:"versionFrom,omitempty"`
	KubernetesReleases map[string]string `json:"kubernetesReleases"`
}

// Behind says every way a pool running r is behind, given the goldens
// cozy-public holds (ReadCatalog); none when it is not. It reads nothing.
// Kinds come in a fixed order: catalog patch, chart default, Kubernetes
// patch, factory URL.
func Behind(r Running, catalog map[string]fleet.Golden) []BehindReason {
	var out []BehindReason
	running, err := TalosVersion(r.Version)
	if err == nil {
		if g, v := newestCatalogPatch(r, running, catalog); g != "" {
			out = append(out, BehindReason{Kind: BehindCatalogPatch, From: r.Version, To: v,
				Detail: fmt.Sprintf("golden %s/%s (Succeeded)", golden.Namespace, g)})
		}
		if def, err := TalosVersion(r.Defaults.Version); err == nil && r.SchematicID == r.Defaults.SchematicID && def.GreaterThan(running) {
			detail := fmt.Sprintf("the chart's Talos release for new pools (schematic %s)", r.Defaults.SchematicID)
			if r.Defaults.VersionFrom != "" {
				detail = fmt.Sprintf("the Talos release for new pools, %s (schematic %s)", r.Defaults.VersionFrom, r.Defaults.SchematicID)
			}
			out = append(out, BehindReason{Kind: BehindChartDefault, From: r.Version, To: r.Defaults.Version, Detail: detail})
		}
	}
	if minor := kubernetesMinor(r.Kubernetes); minor != "" {
		if ship := r.Defaults.KubernetesReleases[minor]; ship != "" {
			have, errHave := semver.StrictNewVersion(strings.TrimPrefix(r.Kubernetes, "v"))
			want, errWant := semver.StrictNewVersion(strings.TrimPrefix(ship, "v"))
			if errHave == nil && errWant == nil && want.GreaterThan(have) {
				out = append(out, BehindReason{Kind: BehindKubernetesPatch, From: r.Kubernetes, To: ship,
					Detail: fmt.Sprintf("the chart's Kubernetes release for %s", minor)})
			}
		}
	}
	if !r.Clone && r.ImageFactoryURL != "" && r.Defaults.ImageFactoryURL != "" &&
		strings.TrimRight(r.ImageFactoryURL, "/") != strings.TrimRight(r.Defaults.ImageFactoryURL, "/") {
		detail := "the platform's factory URL for new pools"
		if r.Defaults.ImageFactoryURLFrom != "" {
			detail = "the factory URL for new pools of " + r.Defaults.ImageFactoryURLFrom
		}
		out = append(out, BehindReason{Kind: BehindFactory, From: r.ImageFactoryURL, To: r.Defaults.ImageFactoryURL, Detail: detail})
	}
	return out
}

// newestCatalogPatch is the newest golden of r's schematic and Talos minor,
// newer than running, that a pool on r's class could clone now: Succeeded
// (or kept as its PVC once CDI collected its DataVolume), not retiring, on
// r's class (when both classes are known). "" when there is none.
func newestCatalogPatch(r Running, running *semver.Version, catalog map[string]fleet.Golden) (name, version string) {
	var best *semver.Version
	for _, n := range SortedKeys(catalog) {
		g := catalog[n]
		fl, ok := golden.Parse(n)
		if !ok || fl.SchematicID != r.SchematicID || g.Retiring {
			continue
		}
		if g.FoundAs != "PersistentVolumeClaim" && g.Phase != "Succeeded" {
			continue
		}
		class := g.Class
		if fl.Class != "" {
			class = fl.Class
		}
		if r.Class != "" && class != "" && class != r.Class {
			continue
		}
		v, err := TalosVersion(fl.Version)
		if err != nil || v.Major() != running.Major() || v.Minor() != running.Minor() || !v.GreaterThan(running) {
			continue
		}
		// Names come sorted: of one release, the plain golden before its per-class ones.
		if best == nil || v.GreaterThan(best) {
			best, name, version = v, n, fl.Version
		}
	}
	return name, version
}

// TalosVersion reads a Talos release, vMAJOR.MINOR.PATCH with an optional
// pre-release suffix, ordered as semantic versions are.
func TalosVersion(v string) (*semver.Version, error) {
	if !strings.HasPrefix(v, "v") {
		return nil, fmt.Errorf("%q is not a release", v)
	}
	return semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
}

// kubernetesMinor is v1.35 of the release v1.35.6; "" for anything else.
func kubernetesMinor(release string) string {
	parts := strings.Split(release, ".")
	if len(parts) != 3 || !strings.HasPrefix(release, "v") {
		return ""
	}
	return parts[0] + "." + parts[1]
}

// RunningFromFacts is what the chart resolved, as Behind reads it.
func RunningFromFacts(f *ChartFacts) Running {
	ds := f.DiskSource
	r := Running{
		SchematicID: string(ds.SchematicID), Version: string(ds.Version),
		Clone: ds.Clone, Class: string(ds.StorageClassName),
		Kubernetes: string(f.Behind.Kubernetes.Release), KubernetesSource: string(f.Behind.Kubernetes.Source),
		Defaults: Defaults{
			SchematicID: string(f.Behind.Defaults.SchematicID), Version: string(f.Behind.Defaults.Version),
			ImageFactoryURL: string(f.Behind.Defaults.ImageFactoryURL), ImageFactoryURLFrom: string(f.Behind.Defaults.ImageFactoryURLFrom),
			VersionFrom: string(f.Behind.Defaults.VersionFrom), KubernetesReleases: map[string]string{},
		},
	}
	if ds.Clone {
		r.Golden = string(ds.Golden)
	} else {
		r.ImageFactoryURL = string(ds.ImageFactoryURL)
	}
	for minor, release := range f.Behind.Defaults.KubernetesReleases {
		r.Defaults.KubernetesReleases[minor] = string(release)
	}
	return r
}

// PoolBehind is one pool of the fleet (pins) and how it is behind.
type PoolBehind struct {
	// HelmRelease is "<namespace>/<name>" of its Flux HelmRelease, or of its
	// Helm release for one installed without a HelmRelease.
	HelmRelease string `json:"helmRelease"`
	Release     string `json:"release"`
	Namespace   string `json:"namespace"`
	// Refusal: the chart refuses it (Running is then what its values
	// resolve to).
	Refusal string         `json:"refusal,omitempty"`
	Running *Running       `json:"running,omitempty"`
	Behind  []BehindReason `json:"behind"`
}
