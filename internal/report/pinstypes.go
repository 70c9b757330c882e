package report

import (
	"fmt"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PinsReport is what pins answers for a cluster: which golden each pool and
// disk pins, and which goldens nothing pins.
type PinsReport struct {
	Cluster string `json:"cluster"`
	// Golden is the one golden asked about (pins GOLDEN); "" for all.
	Golden string `json:"golden,omitempty"`
	// Namespace is the one namespace asked about (pins -n): only its pools
	// and disks are listed, under every golden cozy-public holds; "" for all.
	Namespace string `json:"namespace,omitempty"`
	// Chart is the chart name a HelmRelease must install to count as a pool.
	Chart string `json:"chart"`
	// PoolChart is the chart source a HelmRelease's chart reference must
	// name to count as a pool, and who named it (fleet.PoolChart).
	PoolChart string       `json:"poolChart,omitempty"`
	Goldens   []GoldenPins `json:"goldens"`
	// Unused are the goldens safe to delete: no pool's values resolve to one
	// and the catalog chart counts no user (a disk, a KubevirtMachineTemplate).
	Unused []string `json:"unused"`
	// PoolsRead counts the pools found (resolved or not): with Namespace,
	// those of that namespace, the pools the report lists.
	PoolsRead    int       `json:"poolsRead"`
	HostAssisted []DiskPin `json:"hostAssisted"`
	HTTPPools    []PoolPin `json:"httpPools"`
	Unresolved   []PoolPin `json:"unresolved"`
	// NoPoolDisks are the disks, of every golden, that belong to no pool:
	// their namespace holds no MachineDeployment named by their pool
	// annotation. Each still keeps its golden from being safe to delete.
	NoPoolDisks []DiskPin `json:"noPoolDisks"`
	// Flavors group the goldens by (schematicID, version): the plain golden
	// and its per-class ones, and the classes whose pools have none.
	Flavors []FlavorPins `json:"flavors"`
	// UnreadNamespaces hold pool objects none of whose pools could be read:
	// what those pools use is not known (their values could name any golden
	// next), so while one is listed no golden is called safe to delete and
	// pins exits 2, whatever other namespaces hold.
	UnreadNamespaces []fleet.UnreadNamespace `json:"unreadNamespaces,omitempty"`
	// Ignored are tenant objects not read as pools: they name what their
	// place does not (a release record whose body names another release or
	// namespace, a HelmRelease whose release or record is elsewhere), or
	// cannot be decoded.
	Ignored []fleet.Ignored `json:"ignored,omitempty"`
	// CAProblems are the catalog's CA ConfigMaps holding a certificate that
	// does not parse, is expired or not yet valid, or is not a CA: the
	// goldens imported with it from now on may fail TLS.
	CAProblems []CAConfigMapProblems `json:"caProblems,omitempty"`
	// ChangeShape says where the goldens' deleteSteps change the catalog:
	// ShapePackage (its Package, applied with kubectl) or ShapePlatform (the
	// platform's values, upgraded); "" when no golden has steps.
	ChangeShape string `json:"changeShape,omitempty"`
	// PoolsBehind are the pools behind what a new pool gets now (Behind):
	// a newer patch of their flavor in the catalog, a newer chart default or
	// Kubernetes patch, another factory than the platform's. A chart
	// release moves none of them; workerimage rollout does.
	PoolsBehind []PoolBehind `json:"poolsBehind"`
}

// CAConfigMapProblems are what X.509 makes of one CA ConfigMap (CAProblems).
type CAConfigMapProblems struct {
	// ConfigMap is "<namespace>/<name>".
	ConfigMap string   `json:"configMap"`
	Problems  []string `json:"problems"`
}

// Concludes: no namespace's pools went unread, so the verdicts stand.
func (r PinsReport) Concludes() bool { return len(r.UnreadNamespaces) == 0 }

// WhyNotConcluded says, in one line, which namespaces keep the report from
// concluding; "" when it concludes.
func (r PinsReport) WhyNotConcluded() string {
	if r.Concludes() {
		return ""
	}
	var names []string
	for _, u := range r.UnreadNamespaces {
		names = append(names, u.Namespace)
	}
	return fmt.Sprintf("will not conclude: the pools of %s could not be read (%s), though they hold pool objects, so no golden is called safe to delete; make their HelmReleases or Helm release records readable, or name their chart artifact with --artifact", Count(len(names), "namespace"), FirstFive(names))
}

// FlavorPins are the goldens of one flavor and the classes it lacks.
type FlavorPins struct {
	// Flavor is the flavor's plain golden name, talos-worker-<schematicID>-<version>.
	Flavor      string `json:"flavor"`
	SchematicID string `json:"schematicID,omitempty"`
	Version     string `json:"version,omitempty"`
	// Goldens are the names in Goldens of this flavor, plain one first.
	Goldens []string `json:"goldens"`
	// ClassesWithoutGolden are classes with pools that find no golden of
	// this flavor on their class: the chart refuses them.
	ClassesWithoutGolden []ClassGap `json:"classesWithoutGolden"`
}

// ClassGap is a class whose pools find no golden of their flavor.
type ClassGap struct {
	Class string `json:"class"`
	// Golden is the per-class golden the class would get from the catalog
	// entry's additionalStorageClasses; "" when the class is not known.
	Golden string `json:"golden,omitempty"`
	// Pools are their HelmReleases.
	Pools []string `json:"pools"`
}

// GoldenPins is one golden, what pins it, and whether it is safe to delete.
type GoldenPins struct {
	Name string `json:"name"`
	// Flavor is the plain golden name of its flavor (its own name unless it
	// is a per-class golden); Class is a per-class golden's class.
	Flavor string `json:"flavor"`
	Class  string `json:"class,omitempty"`
	// FoundAs: DataVolume, PersistentVolumeClaim (its DataVolume was garbage
	// collected), or absent (named by a pool or a disk, not in cozy-public).
	FoundAs string `json:"foundAs"`
	Phase   string `json:"phase,omitempty"`
	// SourceURL is where it was imported from (its DataVolume's source URL,
	// or its PVC's CDI import endpoint); "" when absent or not recorded.
	SourceURL string    `json:"sourceURL,omitempty"`
	Pools     []PoolPin `json:"pools"`
	// Disks are the disks naming it that belong to a pool (see DiskPin.NoPool);
	// NoPoolDisks are those that belong to none.
	Disks       []DiskPin `json:"disks"`
	NoPoolDisks []DiskPin `json:"noPoolDisks"`
	// Templates are the KubevirtMachineTemplates cloning it, as
	// "<namespace>/KubevirtMachineTemplate/<name>": a pool at zero workers
	// holds its golden through its template alone.
	Templates    []string `json:"templates"`
	SafeToDelete bool     `json:"safeToDelete"`
	// NewPoolsDefault, NewerThanEveryPool and RolloutTargets say why a
	// golden nothing uses is still needed (set only then): NewPoolsDefault,
	// where new pools take its flavor by default, in the catalog chart's
	// words (the catalog refuses to retire it).
	NewPoolsDefault string `json:"newPoolsDefault,omitempty"`
	// NewerThanEveryPool: a newer Talos patch than every pool on its
	// schematic and minor runs, so a rollout's next target, not unused.
	NewerThanEveryPool bool `json:"newerThanEveryPool,omitempty"`
	// RolloutTargets are the rollout records (cozy-system/workerimage-rollout-...)
	// that move pools to its flavor.
	RolloutTargets []string `json:"rolloutTargets,omitempty"`
	// DeleteSteps, for a golden safe to delete that exists, say how to
	// delete it for good: through its catalog entry, as the catalog retires
	// a golden (a kubectl delete alone would be undone by Helm).
	DeleteSteps []string `json:"deleteSteps,omitempty"`
	// RetireValues, where the cluster's catalog values list no images (the
	// chart's default list applies), are the whole values its first step
	// applies (the Package, or the platform's values, as changeShape says):
	// the default entries written out and its entry with retire: true, so
	// applying them keeps the default golden.
	RetireValues map[string]any `json:"retireValues,omitempty"`
	// NotConcluded: nothing read uses it, yet it is not called safe to
	// delete: some namespace's pools could not be read (UnreadNamespaces).
	NotConcluded bool `json:"notConcluded,omitempty"`
	// Retiring: the catalog entry sets retire: true (its DataVolume is marked
	// retiring and has lost helm.sh/resource-policy: keep).
	Retiring bool `json:"retiring,omitempty"`
	// Blockers, for a retiring golden, are what the catalog refuses to let
	// Helm delete it for, as the catalog chart itself lists them: its disks
	// and the KubevirtMachineTemplates cloning it, as "<namespace>/<kind>/<name>".
	Blockers []string `json:"blockers,omitempty"`
	// BlockersWithoutPool are the Blockers that are disks belonging to no
	// pool: the catalog's refusal names them apart, to be deleted once
	// nothing needs them.
	BlockersWithoutPool []string `json:"blockersWithoutPool,omitempty"`
	// CertConfigMap and Checksum are what a live golden was imported with.
	// ImportedWithout lists "CA" when the catalog now holds a CA for it (its
	// ConfigMap is in cozy-public) that it was imported without, and
	// "checksum" when other goldens carry one and it does not: a DataVolume's
	// source cannot change, so only a new golden takes them.
	CertConfigMap   string   `json:"certConfigMap,omitempty"`
	Checksum        string   `json:"checksum,omitempty"`
	ImportedWithout []string `json:"importedWithout,omitempty"`
}

// PoolPin is one pool, as pins resolves it.
type PoolPin struct {
	// HelmRelease is "<namespace>/<name>" of the pool's Flux HelmRelease, or
	// of its Helm release for one installed without a HelmRelease.
	HelmRelease string `json:"helmRelease"`
	// FoundBy says what made it a pool: its chart reference, or its Helm
	// release record (and whether a HelmRelease manages it).
	FoundBy string `json:"foundBy"`
	// Unresolved: its values could not be computed as Flux computes them (a
	// required valuesFrom reference is missing), so it is not rendered.
	Unresolved string `json:"unresolved,omitempty"`
	Release    string `json:"release"`
	Namespace  string `json:"namespace"`
	Pool       string `json:"pool,omitempty"`
	Golden     string `json:"golden,omitempty"`
	// Disks counts the pool's disks cloned from this golden: 0 for a pool at
	// zero workers, or one that has not rolled onto this golden yet.
	Disks int `json:"disks"`
	// Refusal: the pool's render is refused (the golden is absent, say); the
	// golden it declares is still known, from the chart's image resolution.
	Refusal string `json:"refusal,omitempty"`
	// Class and GoldenChoice are the pool's StorageClass and which golden
	// serves it (plain, per-class, or none), as the chart resolved them.
	Class        string `json:"class,omitempty"`
	GoldenChoice string `json:"goldenChoice,omitempty"`
	// perClassGolden is the flavor's golden for Class.
	perClassGolden string
}

// DiskPin is one worker disk naming a golden.
type DiskPin struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Golden    string `json:"golden"`
	// Pool is the disk's kubernetes-worker-image.cozystack.io/pool annotation.
	Pool string `json:"pool,omitempty"`
	// NoPool: the disk belongs to no pool, because its namespace holds no
	// MachineDeployment named by Pool (anyone who can create a DataVolume can
	// annotate one; a pool's disks can outlive it). It still keeps its golden.
	NoPool bool `json:"noPool,omitempty"`
	// PVC is the disk's PersistentVolumeClaim, "" when it has none yet.
	PVC            string `json:"pvc,omitempty"`
	CloneType      string `json:"cloneType,omitempty"`
	FallbackReason string `json:"fallbackReason,omitempty"`
	CSIClone       bool   `json:"csiClone"`
	HostAssisted   bool   `json:"hostAssisted"`
	Clone          string `json:"clone"`
	// kind: DataVolume, or PersistentVolumeClaim for a disk kept only as its PVC.
	kind string
}

// PinsFacts is what pins reads from the cluster, before any verdict: the
// report is assembled from it in pins.go, as plan's is from chartFacts.
type PinsFacts struct {
	// Stored are the goldens cozy-public holds, by name.
	Stored map[string]fleet.Golden
	disks  []DiskPin
	Pools  []ResolvedPool
	// users are, by golden, what the catalog chart counts as using it
	// (kubernetes-worker-image.goldenUsers, its retirement rule): disks and
	// KubevirtMachineTemplates, as "<namespace>/<kind>/<name>". The report
	// never decides this itself.
	users *fleet.Users
	// poolObjects are the pool MachineDeployments and KubevirtMachineTemplates
	// the cluster holds (fleet.Fleet.PoolObjects).
	poolObjects []string
	// MachineDeployments are the cluster's MachineDeployments by
	// "<namespace>/<name>": a disk belongs to the pool its annotation names
	// only where that pool's MachineDeployment is.
	MachineDeployments map[string]*unstructured.Unstructured
	// caConfigMaps are the catalog's CA ConfigMaps in cozy-public
	// (kubernetes-worker-image-ca, and -<schematicID>-<version> for an
	// entry's own), with the PEM each holds; now is when they were read.
	caConfigMaps map[string]string
	now          time.Time
	// Unread are the namespaces holding pool objects none of whose pools
	// could be read; ignored the tenant objects not read as pools.
	Unread  []fleet.UnreadNamespace
	Ignored []fleet.Ignored
	// PoolChart is fleet.PoolChart, as the reports name it.
	PoolChart string
	// rolloutTargets are the flavors the rollouts recorded in
	// RecordNamespace move pools to.
	rolloutTargets []rolloutTarget
}

type ResolvedPool struct {
	Pin PoolPin
	// clone: the pool clones pin.Golden; false for an HTTP import or a pool
	// whose image does not resolve.
	clone bool
	// Release and Values are what the pool was rendered with; Facts is what
	// the chart answered (nil when the image does not resolve).
	Release render.Release
	Values  map[string]any
	Facts   *ChartFacts
	// Now is the pool planned as it is, when the pools were read to be
	// planned (ReadPinsToPlan): its report and what planning reads of its
	// render, so it is not rendered again; the render itself is not kept.
	// nil otherwise, and once the pool is planned.
	Now *plannedNow
	// HelmRelease is "<namespace>/<name>" of its HelmRelease, "" for a
	// release installed without one.
	HelmRelease string
}

// rolloutTarget is the flavor a rollout's record (record.go) is named
// for: schematicID "" when the rollout keeps each pool's own schematic.
type rolloutTarget struct {
	record, schematicID, version string
}
