// The catalog preview's report: what `workerimage catalog` answers.

package report

// Outcomes of a golden in the catalog preview.
const (
	GoldenCreates       = "creates"        // no golden of that name yet: CDI imports it
	GoldenKeeps         = "keeps"          // exists as the entry says: untouched
	GoldenRefusesEdit   = "refuses-edit"   // exists with another source, storage or class
	GoldenRetires       = "retires"        // retire: true and nothing uses it
	GoldenRetireRefused = "retire-refused" // retire: true (or dropped while retiring), still used
	GoldenDeletes       = "deletes"        // marked retiring, dropped from the values: Helm deletes it
	GoldenDropped       = "dropped"        // exists, not in the values: kept by Helm, no longer managed
)

// CatalogReport is what `workerimage catalog` answers.
type CatalogReport struct {
	Cluster string `json:"cluster"`
	// ValuesFrom says where the catalog's values came from.
	ValuesFrom string `json:"valuesFrom"`
	// Enabled: the platform values enable the catalog
	// (bundles.enabledPackages), or the Package's component is enabled (its
	// enabled, where it sets one); nil for the catalog's own values.
	Enabled *bool `json:"enabled,omitempty"`
	// Values are the catalog's values the preview renders with.
	Values map[string]any `json:"values"`
	// Result is "renders" or "refused": the whole catalog chart, as an upgrade
	// renders it (or, when the platform chart refuses its values, that chart).
	Result        string          `json:"result"`
	Refusal       string          `json:"refusal,omitempty"`
	SchemaRefusal string          `json:"schemaRefusal,omitempty"`
	SchemaOnly    bool            `json:"schemaOnly,omitempty"`
	Suggestions   []KeySuggestion `json:"suggestions,omitempty"`
	// Goldens are the values' goldens and the live goldens they leave out,
	// each with what the chart does to it.
	Goldens []CatalogGolden `json:"goldens"`
	// CloneRole are the goldens the rendered clone Role lets workers clone
	// (empty when the render is refused, or there is no Role).
	CloneRole []string `json:"cloneRole"`
	// CAConfigMaps are the CA ConfigMaps the render holds.
	CAConfigMaps []string `json:"caConfigMaps"`
	// TenantDefaults is the JSON the catalog publishes for new pools in
	// the ConfigMap TenantDefaultsConfigMap; empty when it publishes {}.
	TenantDefaults string `json:"tenantDefaults,omitempty"`
	// Publishes is that ConfigMap field by field, beside what the cluster's
	// holds now; nil when the render is refused.
	Publishes *PublishedDefaults `json:"publishedDefaults,omitempty"`
	// TenantFactory is the Image Factory new pools are given (the
	// platform's _cluster, else what the catalog publishes), which the
	// goldens are compared with; nil when neither gives one.
	TenantFactory *Sourced `json:"tenantFactory,omitempty"`
	// MergedOver, with -f, says how the files met the catalog values the
	// cluster holds: merged over them as helm upgrade --reuse-values -f
	// merges, or alone (--reset-values).
	MergedOver string `json:"mergedOver,omitempty"`
	// Removes, with -f, are the defaults published for new pools and the
	// images[] entries the cluster's catalog values hold that the values
	// previewed do not, each on its own line; RemovesFrom says what they
	// were compared with.
	Removes     []CatalogRemoval `json:"removes,omitempty"`
	RemovesFrom string           `json:"removesFrom,omitempty"`
	// ValuesShape is what the values were read as: ValuesPlatform,
	// ValuesCatalog or ValuesPackage; ValuesShapeWhy says how it was told.
	ValuesShape    string `json:"valuesShape"`
	ValuesShapeWhy string `json:"valuesShapeWhy,omitempty"`
	// ChangeShape is what the change to apply is printed as (with -f):
	// ShapePlatform (Platform, the platform's values whole) or ShapePackage
	// (Package, the catalog's Package whole); "" when none is printed
	// (ChangeNote says why, or what to do instead).
	ChangeShape string `json:"changeShape,omitempty"`
	ChangeNote  string `json:"changeNote,omitempty"`
	// Platform, with platform values on a cluster whose platform release's
	// values are readable (its Helm release record), are the platform's
	// values they make: the release's values with the files layered over
	// them as Helm layers -f files, the whole values to apply. PlatformFrom
	// says where they were read.
	Platform     map[string]any `json:"platform,omitempty"`
	PlatformFrom string         `json:"platformFrom,omitempty"`
	// Package, on a cluster whose catalog is a Package, is that Package (as
	// the cluster holds it, or as a stock Cozystack installs it) holding
	// exactly the values previewed, the whole object to apply. PackageFrom
	// says what it was made from.
	Package     map[string]any `json:"package,omitempty"`
	PackageFrom string         `json:"packageFrom,omitempty"`
}

// PublishedDefaults are the platform defaults for tenant workers the
// catalog publishes for new pools (ConfigMap TenantDefaultsConfigMap),
// beside what the cluster's ConfigMap holds now.
type PublishedDefaults struct {
	// Publishes is what the values publish, as the ConfigMap's values.json
	// holds it ({} for nothing).
	Publishes map[string]any `json:"publishes"`
	// Now is what the cluster's ConfigMap holds; nil where none was read
	// (NowFrom says why).
	Now     map[string]any `json:"now"`
	NowFrom string         `json:"nowFrom"`
	// Fields are each default, what the values publish and what is
	// published now (null for none), and whether the values change it.
	Fields []PublishedField `json:"fields"`
}

// PublishedField is one published default.
type PublishedField struct {
	// Field is its path in values.json (talos.imageFactoryURL, osImage, ...).
	Field     string `json:"field"`
	Publishes any    `json:"publishes"`
	Now       any    `json:"now"`
	Changes   bool   `json:"changes"`
}

// CatalogGolden is one golden and what the catalog does to it.
type CatalogGolden struct {
	Name string `json:"name"`
	// Entry is the images[] entry it comes from, as the chart labels it; ""
	// for a live golden no entry lists.
	Entry        string `json:"entry,omitempty"`
	SourceURL    string `json:"sourceURL,omitempty"`
	Storage      string `json:"storage,omitempty"`
	StorageClass string `json:"storageClass,omitempty"`
	// Outcome: creates, keeps, refuses-edit, retires, retire-refused,
	// deletes or dropped.
	Outcome string `json:"outcome"`
	// Detail is the chart's refusal, word for word, or what the outcome means.
	Detail string `json:"detail,omitempty"`
	// Live is how cozy-public holds it now ("" when it does not).
	Live        string `json:"live,omitempty"`
	InCloneRole bool   `json:"inCloneRole"`
	// CAConfigMap and Checksum are what a golden to create imports with (the
	// CA ConfigMap it trusts, the checksum CDI verifies); "" when none.
	CAConfigMap string `json:"caConfigMap,omitempty"`
	Checksum    string `json:"checksum,omitempty"`
	// FactoryNote, for a golden the values create or keep that imports from
	// another Image Factory than the one new pools are given
	// (CatalogReport.TenantFactory), says so and which key sets it.
	FactoryNote string `json:"factoryNote,omitempty"`

	// factory is the Image Factory the chart resolved for its entry, and
	// factoryFrom the key it took it from (imageFactoryURL, images[N]...).
	factory, factoryFrom string
	// createsFrom is the factory its entry resolves to now, which a golden
	// the catalog created from it would import from (a golden that exists
	// keeps the one it was imported from when nobody set it).
	createsFrom string
}

// Refused: the catalog (or the platform chart before it) refuses the values.
func (r *CatalogReport) Refused() bool { return r.Result != "renders" }
