package report

import "github.com/cozystack/golden-worker-images/internal/fleet"

// Outcomes of switching a pool to osImage.builtin, from the chart's answer.
const (
	OutcomeReady          = "ready"                  // renders, and its golden is populated
	OutcomeImporting      = "golden-importing"       // renders; CDI holds the disks until the golden populates
	OutcomeNeedsEntry     = "needs-catalog-entry"    // no golden of the flavor at all
	OutcomeNeedsPerClass  = "needs-per-class-golden" // the flavor's golden is on another class
	OutcomeRefused        = "refused"                // the chart refuses it for another reason
	UnknownBytes          = "unknown"
	PublicImageFactoryURL = "https://factory.talos.dev"
	// The catalog's Package: the operator's own on a stock Cozystack, or
	// rendered by this repository's platform chart from kubernetesWorkerImage.
	packageAPI     = "cozystack.io/v1alpha1"
	catalogPackage = "cozystack.kubernetes-worker-image"
)

// AdoptReport is what adopt answers for a cluster.
type AdoptReport struct {
	Cluster string `json:"cluster"`
	// Chart is the chart name a HelmRelease must install to count as a pool.
	Chart string `json:"chart"`
	// PoolChart is the chart source a HelmRelease's chart reference must
	// name to count as a pool, and who named it (fleet.PoolChart).
	PoolChart string `json:"poolChart,omitempty"`
	// Flavors are the pools that import over HTTP, by the flavor they boot
	// and then by class.
	Flavors []AdoptFlavor `json:"flavors"`
	// Catalog is the catalog's images list the switches need.
	Catalog AdoptCatalog `json:"catalog"`
	Savings AdoptSavings `json:"savings"`
	// Cloning are the pools that already clone a golden.
	Cloning []PoolPin `json:"cloning"`
	// RefusedToday are HTTP pools the chart refuses as they are: fix them first.
	RefusedToday []PoolPin `json:"refusedToday"`
	// Unresolved are pools whose values are refused before a disk source resolves.
	Unresolved []PoolPin `json:"unresolved"`
	// UnreadNamespaces and Ignored are pins': namespaces whose pools could
	// not be read (adopt says nothing of them), and tenant objects not read
	// as pools.
	UnreadNamespaces []fleet.UnreadNamespace `json:"unreadNamespaces,omitempty"`
	Ignored          []fleet.Ignored         `json:"ignored,omitempty"`
}

// AdoptFlavor is the HTTP pools booting one flavor from one factory URL.
type AdoptFlavor struct {
	SchematicID     string `json:"schematicID"`
	Version         string `json:"version"`
	ImageFactoryURL string `json:"imageFactoryURL"`
	// Golden is the flavor's plain golden, talos-worker-<schematicID>-<version>.
	Golden  string       `json:"golden"`
	Classes []AdoptClass `json:"classes"`
}

// AdoptClass is a flavor's HTTP pools on one StorageClass.
type AdoptClass struct {
	// Class is the pool's StorageClass as the chart resolves it on the clone
	// path; "" when it resolves none.
	Class string      `json:"class"`
	Pools []AdoptPool `json:"pools"`
}

// AdoptPool is one HTTP pool, as it is and switched to osImage.builtin.
type AdoptPool struct {
	HelmRelease string `json:"helmRelease"`
	Release     string `json:"release"`
	Namespace   string `json:"namespace"`
	Pool        string `json:"pool"`
	// Workers is its MachineDeployment's status.replicas; MachineDeployment
	// is false when the pool has none yet.
	Workers           int64 `json:"workers"`
	MachineDeployment bool  `json:"machineDeployment"`
	// MinReplicas and MaxReplicas are the autoscaler bounds the chart renders.
	MinReplicas string `json:"minReplicas"`
	MaxReplicas string `json:"maxReplicas"`
	// ImageSources say where the flavor came from (talos.*, osImage.factory,
	// a platform default recorded at creation), as the chart resolved them.
	ImageSources ImageSources `json:"imageSources"`
	// Outcome of the switch: ready, golden-importing, needs-catalog-entry,
	// needs-per-class-golden or refused.
	Outcome string `json:"outcome"`
	// Golden is the golden the switched pool would clone, per the chart.
	Golden string `json:"golden,omitempty"`
	// GoldenImageFactoryURL is the factory URL that golden is (or, for a new
	// catalog entry, would be) imported from; OtherImageFactoryURL: the pool
	// boots its flavor from another URL today (ImageSources says which), so
	// the switch changes where its image comes from.
	GoldenImageFactoryURL string `json:"goldenImageFactoryURL,omitempty"`
	OtherImageFactoryURL  bool   `json:"otherImageFactoryURL"`
	// Refusal is the chart's refusal of the switched pool, word for word.
	Refusal string `json:"refusal,omitempty"`
	// ValuesChange is what to set in the pool's values; it replaces the
	// pool's own osImage (Replaces says which) when it has one.
	ValuesChange map[string]any `json:"valuesChange"`
	Replaces     string         `json:"replaces,omitempty"`
	// MachineTemplate: a switch re-images the pool, so its template is
	// renamed and the pool rolls once; New is "" until the switched pool renders.
	MachineTemplate AdoptTemplates `json:"machineTemplate"`
	// Switched is the chart's report on the switched pool's disk source, as
	// plan -o json reports it (diskSource): golden, classes, clone strategy,
	// every check the chart made.
	Switched *DiskReport `json:"switched,omitempty"`
	// ImportsAvoidedNow is Workers when the pool is ready: its roll replaces
	// each worker with a clone instead of an HTTP import.
	ImportsAvoidedNow int64 `json:"importsAvoidedNow"`
	// BytesPerImport is what one avoided import would have written: the size
	// of the golden the switched pool clones, or "unknown".
	BytesPerImport string `json:"bytesPerImport"`

	// Flavor, for grouping.
	SchematicID, Version, ImageFactoryURL string `json:"-"`
}

// ImageSources say where each part of a pool's flavor came from.
type ImageSources struct {
	SchematicID     string `json:"schematicID"`
	Version         string `json:"version"`
	ImageFactoryURL string `json:"imageFactoryURL"`
}

// AdoptTemplates are a pool's KubevirtMachineTemplate now and once switched.
type AdoptTemplates struct {
	Current string `json:"current"`
	New     string `json:"new,omitempty"`
}

// AdoptSavings add up what switching the HTTP pools saves. An HTTP import is
// one download of the Talos image per worker; a switched pool's workers clone
// a golden instead. Each golden the catalog values add is one download.
type AdoptSavings struct {
	// HTTPPools counts every pool that imports over HTTP, as pins lists them;
	// RenderToday those the chart renders as they are, RefusedToday the rest
	// (fix them first); ReadyPools those that can switch now.
	HTTPPools    int `json:"httpPools"`
	RenderToday  int `json:"renderToday"`
	RefusedToday int `json:"refusedToday"`
	ReadyPools   int `json:"readyPools"`
	// ImportsAvoidedNow is the workers of ready pools: downloads their roll
	// replaces with clones.
	ImportsAvoidedNow int64 `json:"importsAvoidedNow"`
	// BytesAvoidedNow is the sum of workers times golden storage over the
	// ready pools whose golden has a known size (what CDI writes per import;
	// the download itself is the compressed image); ImportsOfUnknownSize
	// counts the avoided imports whose size is not known (left out of the sum).
	BytesAvoidedNow      string `json:"bytesAvoidedNow"`
	ImportsOfUnknownSize int64  `json:"importsOfUnknownSize"`
	// WaitingPools are the pools that can switch once a golden exists (a
	// catalog entry, a per-class golden, or an import to finish), and
	// ImportsAvoidedLater their workers.
	WaitingPools        int   `json:"waitingPools"`
	ImportsAvoidedLater int64 `json:"importsAvoidedLater"`
	// GoldensToAdd are the goldens the catalog values add (new entries, with
	// their classes, and added classes): one download each, of
	// GoldenBytesToAdd (their storage; GoldensOfUnknownSize left out).
	GoldensToAdd         int    `json:"goldensToAdd"`
	GoldenBytesToAdd     string `json:"goldenBytesToAdd"`
	GoldensOfUnknownSize int    `json:"goldensOfUnknownSize,omitempty"`
	// NetImportsAvoided is ImportsAvoidedNow + ImportsAvoidedLater -
	// GoldensToAdd: downloads not made once every switchable pool switched.
	NetImportsAvoided int64 `json:"netImportsAvoided"`
}

// Boots is the flavor the pool boots today: its schematicID, version and
// image factory URL, as the chart resolved them.
func (p AdoptPool) Boots() (schematicID, version, imageFactoryURL string) {
	return p.SchematicID, p.Version, p.ImageFactoryURL
}

// Class is the switched pool's StorageClass, as the chart resolved it; ""
// when it resolves none.
func (p AdoptPool) Class() string {
	if p.Switched != nil && p.Switched.PoolClass != nil {
		return p.Switched.PoolClass.Value
	}
	return ""
}

// AdoptCatalog is the catalog's images list the switches need.
type AdoptCatalog struct {
	// URL is the factory a new entry imports from, as the catalog chart
	// resolves one with the cluster's catalog values (its imageFactoryURL,
	// else the chart's default), and where it took it from. A new entry
	// never takes a URL a tenant's pool chose.
	URL Sourced `json:"url"`
	// Changed: some pool waits for a new entry or an added class.
	Changed bool `json:"changed"`
	// Images is the catalog's images list with the changes, existing entries
	// first (by golden name), then the new ones.
	Images []CatalogEntry `json:"images"`
	// Values are the catalog change whole, with this images list, as YAML
	// with comments, ready to apply; "" when nothing changes. The output
	// layer (internal/output) writes it, as it writes every report's text.
	Values string `json:"values"`
	// ChangeShape says what Values is: ShapePackage, the Package
	// cozystack.kubernetes-worker-image as the cluster holds it (or as a
	// stock Cozystack installs it, where it holds none) with the list in
	// its spec.components.kubernetes-worker-image.values, to apply with
	// kubectl; or ShapePlatform, the platform release's values whole with
	// kubernetesWorkerImage.images replaced (WholePlatform), to upgrade the
	// platform with. ValuesFrom says what was read.
	// TenantFactory is the Image Factory new pools are given now (the
	// platform's _cluster, else what the catalog publishes), which each
	// entry's goldens are compared with; nil for none.
	TenantFactory *Sourced `json:"tenantFactory,omitempty"`
	// NewPools, in a rollout's change, are the published defaults it moves
	// so that new pools take the target too (none in adopt's); NewPoolsNote
	// says why they do not move where the target is newer than theirs.
	NewPools      []DefaultMove  `json:"newPools,omitempty"`
	NewPoolsNote  string         `json:"newPoolsNote,omitempty"`
	ChangeShape   string         `json:"changeShape,omitempty"`
	WholePlatform bool           `json:"wholePlatform"`
	ValuesFrom    string         `json:"valuesFrom,omitempty"`
	Platform      map[string]any `json:"-"`
	Package       map[string]any `json:"-"`
}

// CatalogEntry is one images[] entry of the catalog, and why it is there.
type CatalogEntry struct {
	// Entry is the images[] entry, as the catalog takes it.
	Entry CatalogImage `json:"entry"`
	// Change is kept (as its golden shows it), classes-added, or new.
	Change string `json:"change"`
	// AddedClasses are the classes added to additionalStorageClasses.
	AddedClasses []string `json:"addedClasses,omitempty"`
	// Pools are the HelmReleases of the pools that wait for the change.
	Pools []string `json:"pools,omitempty"`
	// ImportsFrom is the factory URL the entry's goldens import from (the
	// catalog's URL for a new entry; "" when it cannot be read back).
	ImportsFrom string `json:"importsFrom,omitempty"`
	// FactoryNote, when its goldens import from another Image Factory than
	// the one new pools are given (AdoptCatalog.TenantFactory), says so: for
	// goldens it creates, which key to set.
	FactoryNote string `json:"factoryNote,omitempty"`
	// OtherURLPools are the pools waiting for the entry that boot its flavor
	// from another factory URL today: switching changes where their image
	// comes from, for the operator to decide.
	OtherURLPools []URLPool `json:"otherURLPools,omitempty"`
	// Notes say what could not be read back from the cluster.
	Notes []string `json:"notes,omitempty"`

	// Plain is the entry's plain golden, talos-worker-<schematicID>-<version>.
	Plain string `json:"-"`
}

// URLPool is a pool booting an entry's flavor from another factory URL.
type URLPool struct {
	HelmRelease     string `json:"helmRelease"`
	ImageFactoryURL string `json:"imageFactoryURL"`
}

// CatalogImage is an images[] entry as the catalog chart takes it.
type CatalogImage struct {
	SchematicID     string `json:"schematicID"`
	Version         string `json:"version"`
	ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
	// ImageFactoryCA and Checksum are kept as the cluster's values write
	// them, for an entry whose golden is not created yet (ChangeListed).
	ImageFactoryCA string `json:"imageFactoryCA,omitempty"`
	Checksum       string `json:"checksum,omitempty"`
	Storage        string `json:"storage,omitempty"`
	// StorageClass is set when known; "" (the cluster default) is a value.
	StorageClass             *string  `json:"storageClass,omitempty"`
	AdditionalStorageClasses []string `json:"additionalStorageClasses,omitempty"`
	Retire                   bool     `json:"retire,omitempty"`
}

const (
	ChangeKept         = "kept"
	ChangeClassesAdded = "classes-added"
	ChangeNew          = "new"
	// ChangeListed: an entry the cluster's catalog values list (or the
	// chart's default list, where they list none) whose golden is not in
	// cozy-public yet: kept as they write it.
	ChangeListed = "listed"
)

// DefaultMove is one published default a rollout's catalog change moves so
// that new pools take the target too.
type DefaultMove struct {
	// Key is where it is written, under the catalog's values (the
	// Package's) or the platform's values: tenantWorkers.talos.version, or
	// the published osImage's own field where the default comes from it.
	Key string `json:"key"`
	// From is what new pools take now, and where the chart takes it from.
	From Sourced `json:"from"`
	To   string  `json:"to"`
}
