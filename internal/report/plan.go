package report

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
)

// PlanReport is what `plan` prints; -o json prints it as is.
type PlanReport struct {
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	// Pool is kubernetes-<cluster>-<pool>, the name of the pool's objects.
	Pool    string `json:"pool,omitempty"`
	Cluster string `json:"cluster"`
	// DiskSource is absent only when the chart refused before resolving it.
	DiskSource      *DiskReport  `json:"diskSource,omitempty"`
	CreatedWith     *CreatedWith `json:"createdWith,omitempty"`
	MachineTemplate string       `json:"machineTemplate,omitempty"`
	Objects         []string     `json:"objects,omitempty"`
	Result          string       `json:"result"`
	// Refusal is the chart's own words: when values.schema.json refused too,
	// what the chart's checks say of the same values (rendered again with the
	// schema off, only to explain), which names the fix; the schema's message
	// when only the schema refuses (SchemaOnly).
	Refusal string `json:"refusal,omitempty"`
	// SchemaRefusal is values.schema.json's message, its patterns shown as
	// the regex reads them; "" when the schema accepted the values.
	SchemaRefusal string `json:"schemaRefusal,omitempty"`
	// SchemaOnly: the schema refused values the chart's own checks accept.
	SchemaOnly bool `json:"schemaOnly,omitempty"`
	// Suggestions name, for each key of the values the chart does not know,
	// the known key nearest to it (a refused pool only).
	Suggestions []KeySuggestion `json:"suggestions,omitempty"`
	// ReleaseHint: the release name was taken from the values file's name,
	// and that name cannot name a pool.
	ReleaseHint string `json:"releaseHint,omitempty"`
	// Preview: no cluster was read, so no golden, class or clone check ran.
	Preview bool `json:"preview,omitempty"`
	// Kubernetes is the release the pool's MachineDeployment runs (its
	// kubelet's too), and where the chart took it from; absent when the
	// chart refused before resolving it.
	Kubernetes *Sourced `json:"kubernetes,omitempty"`
	// Behind says how the pool is behind what a new pool gets now (Behind):
	// empty when it is not, absent when the chart resolved no image.
	Behind []BehindReason `json:"behind,omitempty"`
	// MachineConfig is what the worker's Talos machine config takes besides
	// its image's flavor, as the chart writes it into the TalosConfigTemplate
	// (applied at every render, to new and running pools alike: its name
	// stays, so nothing rolls); absent when the chart refused before
	// resolving the image.
	MachineConfig *MachineConfigReport `json:"machineConfig,omitempty"`
}

// DiskReport is how the chart resolved a pool's disk source, and what it checked.
type DiskReport struct {
	// Path is "clone" (a CSI clone of a golden) or "http" (an import).
	Path          string `json:"path"`
	URL           string `json:"url,omitempty"`
	Golden        string `json:"golden,omitempty"`
	GoldenFoundAs string `json:"goldenFoundAs,omitempty"`
	GoldenPhase   string `json:"goldenPhase,omitempty"`
	GoldenSize    string `json:"goldenSize,omitempty"`
	// GoldenSourceURL is where the golden was imported from: its DataVolume's
	// spec.source.http.url, or with only its PVC left, CDI's import endpoint
	// annotation ("" when the golden is absent or it is not recorded).
	GoldenSourceURL string `json:"goldenSourceURL,omitempty"`
	// GoldenCertConfigMap and GoldenChecksum are the CA ConfigMap and the
	// checksum the golden was imported with (its DataVolume's source.http,
	// else CDI's import annotations on its PVC); "" when none.
	GoldenCertConfigMap string `json:"goldenCertConfigMap,omitempty"`
	GoldenChecksum      string `json:"goldenChecksum,omitempty"`
	// GoldenRetiring: the catalog retires the golden (retire: true); only a
	// pool already running from it still renders.
	GoldenRetiring bool `json:"goldenRetiring,omitempty"`
	// RunningTemplate is the KubevirtMachineTemplate the pool runs from when it
	// clones this golden, with its MachineDeployment's ready workers.
	RunningTemplate string   `json:"runningTemplate,omitempty"`
	ReadyWorkers    string   `json:"readyWorkers,omitempty"`
	SchematicID     Sourced  `json:"schematicID"`
	Version         Sourced  `json:"version"`
	ImageFactoryURL *Sourced `json:"imageFactoryURL,omitempty"`
	// ImageFactoryCA: the ConfigMap of the CA the HTTP import trusts, and
	// where the CA came from; absent when none is in effect.
	ImageFactoryCA *Sourced `json:"imageFactoryCA,omitempty"`
	// ImageFactoryCAProblems name each certificate of that CA that X.509
	// says CDI's importer cannot use as a CA (CAProblems): it does not
	// parse, is expired or not yet valid, or is not a CA. Read from the
	// rendered ConfigMap, so only when the pool renders.
	ImageFactoryCAProblems []string `json:"imageFactoryCAProblems,omitempty"`
	// PoolClass is the class the disk is written with; Value "" means none is
	// written and the cluster's default applies when the disk is created.
	PoolClass   *Sourced `json:"poolStorageClass,omitempty"`
	GoldenClass *Sourced `json:"goldenStorageClass,omitempty"`
	// GoldenChoice: which golden serves the pool's class, and why.
	GoldenChoice *GoldenChoice `json:"goldenChoice,omitempty"`
	// CloneStrategy is the strategy CDI would clone with; Value "" when the
	// cluster does not tell (Source says why).
	CloneStrategy *Sourced `json:"cloneStrategy,omitempty"`
	// FallbackChecks are the checks behind refusals 4 to 9, each a way CDI
	// would fall back to a host-assisted copy, with what they found.
	FallbackChecks []FallbackCheck `json:"fallbackChecks,omitempty"`
	// Note is what no render can check (on the clone path).
	Note string `json:"note,omitempty"`
	// Preview: a clone pool rendered with no cluster; no guard ran.
	Preview bool `json:"preview,omitempty"`
	// Checked is false when the clone guards refused. The golden, the
	// classes and the checks are then those of a render made only to report,
	// where each refusal is a check's outcome; when even that is refused,
	// they were not read, only which golden the pool names.
	Checked bool `json:"checked"`
}

// GoldenChoice is which golden serves the pool's class, and why.
type GoldenChoice struct {
	// Choice is plain (talos-worker-<schematicID>-<version>), per-class
	// (<plain>--<class>), or none: no golden of the flavor is on the pool's
	// class, and the pool is refused.
	Choice string `json:"choice"`
	Reason string `json:"reason"`
	// PerClassGolden is the flavor's golden for the pool's class, when the
	// plain golden does not serve it and the class is known.
	PerClassGolden string `json:"perClassGolden,omitempty"`
}

// FallbackCheck is one check behind a host-assisted-fallback refusal.
type FallbackCheck struct {
	Refusal int    `json:"refusal"`
	Check   string `json:"check"`
	// Outcome: passed, refused, not needed (the fallback cannot arise), or
	// skipped (what the check needs is not known, so CDI may still fall back).
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
}

// CheckNames label the chart's refusal numbers (docs/design.md) in reports.
var CheckNames = map[int]string{
	4:  "same class",
	5:  "not smaller",
	6:  "expandable",
	7:  "not copy",
	8:  "snapshot class",
	9:  "volume mode",
	10: "access modes",
	11: "class exists",
	12: "CSI driver",
	13: "same driver",
	14: "one CDI",
	15: "clone source",
}

// NodeLocalNote: a golden on a node-local class passes every check, yet
// each clone lands on the golden's node; the render cannot tell such a class.
const NodeLocalNote = "a node-local StorageClass is a poor home for a golden: every clone lands on the golden's node, and no render can tell such a class apart"

// Sourced is a value and where the chart took it from.
type Sourced struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

// CreatedWith is the pool's record of the platform defaults it was created
// with, and where the chart read it (docs/design.md: its MachineDeployment's
// annotation, an earlier version's ConfigMap, or today's defaults for a new pool).
type CreatedWith struct {
	From            string `json:"from"`
	Origin          string `json:"origin"`
	ImageFactoryURL string `json:"imageFactoryURL"`
	OSImage         string `json:"osImage"`
	// ImageFactoryCA: the platform's CA applied at creation (never the PEM).
	ImageFactoryCA bool `json:"imageFactoryCA,omitempty"`
	// FromCatalog names the fields taken from the catalog's published
	// defaults (CatalogChannel) rather than _cluster.
	FromCatalog []string `json:"fromCatalog,omitempty"`
}

// CatalogChannel is how the chart names the catalog's published defaults,
// the channel after _cluster (worker-image-lib.tenantDefaultsChannel).
const CatalogChannel = "the catalog's published defaults (ConfigMap cozy-public/" + TenantDefaultsConfigMap + ")"

// TenantDefaultsConfigMap is the ConfigMap in cozy-public the catalog
// publishes the platform defaults for tenant workers in.
const TenantDefaultsConfigMap = "kubernetes-worker-image-tenant-defaults"

// Plan renders one pool and reports on it. A refusal is a report; only a
// cluster problem is an error.
func Plan(chrt *chart.Chart, t Target, rel render.Release, vals map[string]any) (*PlanReport, *render.Manifest, error) {
	r, facts, err := renderWithFacts(chrt, t.Options(rel, vals))
	return planFrom(chrt, t, rel, vals, r, facts, err, false, true)
}

// planFrom is Plan's report of a render already made (renderWithFacts's
// answers: m, facts, err), so a pool rendered once is not rendered again.
// helpersAsked: the render was refused and facts are the chart's helpers'
// answer already asked for the same values (helperFacts), not asked again.
// objects: the report lists the render's objects, and the render is
// returned read whole (Plan); else only the documents the report reads are
// parsed, and no manifest is returned (a fleet's plan, planWhole).
func planFrom(chrt *chart.Chart, t Target, rel render.Release, vals map[string]any, r *render.Rendered, facts *ChartFacts, err error, helpersAsked, objects bool) (*PlanReport, *render.Manifest, error) {
	var m *render.Manifest
	rep := &PlanReport{Release: rel.Name, Namespace: rel.Namespace, Cluster: t.Desc, Preview: t.Provider == nil}
	if err != nil {
		refusal, prob := RenderFailure(err)
		if prob != nil {
			return nil, nil, prob
		}
		rep.Result, rep.Refusal = "refused", refusal
		var schema *render.SchemaError
		if errors.As(err, &schema) {
			// The schema's message quotes its patterns JSON-escaped; shown as written in the schema's regex.
			rep.SchemaRefusal = strings.ReplaceAll(refusal, `\\`, `\`)
			rep.Refusal = rep.SchemaRefusal
			opts := t.Options(rel, vals)
			opts.Release.SkipSchemaValidation = true
			if _, _, err := renderWithFacts(chrt, opts); err != nil {
				chartSays, prob := RenderFailure(err)
				if prob != nil {
					return nil, nil, prob
				}
				rep.Refusal = chartSays
			} else {
				rep.SchemaOnly = true
			}
		}
		rep.Suggestions = SuggestKeys(chrt.Schema, vals)
		// What the pool would have done, as far as the chart resolves it
		// without the guard that refused.
		if !helpersAsked {
			if facts, _, err = HelperFacts(chrt, t.Options(rel, vals)); err != nil {
				return nil, nil, err
			}
		}
	} else {
		rep.Result = "renders"
		if objects {
			if m, err = r.Manifest(); err != nil {
				return nil, nil, err
			}
			for _, d := range m.Docs {
				rep.Objects = append(rep.Objects, d.Kind()+"/"+d.Name())
			}
		}
		if kmt, err := r.One("KubevirtMachineTemplate"); err == nil {
			rep.MachineTemplate = kmt.Name()
		}
	}
	if facts != nil {
		rep.Pool = string(facts.Pool)
		rep.DiskSource = diskFromFacts(facts)
		if name := string(facts.DiskSource.CertConfigMap); name != "" && r != nil && !facts.DiskSource.Clone {
			if cm, ok := r.Find("ConfigMap", name); ok {
				rep.DiskSource.ImageFactoryCAProblems = CAProblems(fleet.Text(cm.Object, "data", fleet.CAKey), time.Now())
			}
		}
		if d := rep.DiskSource; d.Golden != "" && (d.GoldenFoundAs == "DataVolume" || d.GoldenFoundAs == "PersistentVolumeClaim") {
			if d.GoldenSourceURL, d.GoldenCertConfigMap, d.GoldenChecksum, err = t.goldenSource(d.Golden); err != nil {
				return nil, nil, err
			}
		}
		cd := facts.CreationDefaults
		rep.CreatedWith = &CreatedWith{From: string(cd.From), Origin: string(cd.Origin), ImageFactoryURL: string(cd.ImageFactoryURL), OSImage: strings.TrimSpace(string(cd.OSImage)), ImageFactoryCA: cd.ImageFactoryCA}
		for _, f := range cd.FromCatalog {
			rep.CreatedWith.FromCatalog = append(rep.CreatedWith.FromCatalog, string(f))
		}
		running := RunningFromFacts(facts)
		if running.Kubernetes != "" {
			rep.Kubernetes = &Sourced{Value: running.Kubernetes, Source: running.KubernetesSource}
		}
		catalog, err := t.catalog()
		if err != nil {
			return nil, nil, err
		}
		rep.Behind = append([]BehindReason{}, Behind(running, catalog)...)
		rep.MachineConfig = machineConfigFromFacts(facts)
	}
	return rep, m, nil
}

// machineConfigFromFacts is the chart's answer, with empty lists said as
// such in JSON rather than null.
func machineConfigFromFacts(f *ChartFacts) *MachineConfigReport {
	r := f.MachineConfig
	r.RegistryMirrors = append([]RegistryMirror{}, r.RegistryMirrors...)
	r.RegistryConfig = append([]RegistryConfigHost{}, r.RegistryConfig...)
	for i := range r.RegistryMirrors {
		r.RegistryMirrors[i].Endpoints = append([]string{}, r.RegistryMirrors[i].Endpoints...)
	}
	return &r
}

func diskFromFacts(f *ChartFacts) *DiskReport {
	ds := f.DiskSource
	d := &DiskReport{
		Path:        "http",
		SchematicID: Sourced{string(ds.SchematicID), string(ds.SchematicIDSource)},
		Version:     Sourced{string(ds.Version), string(ds.VersionSource)},
		Checked:     f.guarded,
	}
	if !ds.Clone {
		d.URL = string(ds.URL)
		d.ImageFactoryURL = &Sourced{string(ds.ImageFactoryURL), string(ds.ImageFactoryURLSource)}
		if ds.CertConfigMap != "" {
			d.ImageFactoryCA = &Sourced{"ConfigMap " + string(ds.CertConfigMap), string(ds.ImageFactoryCASource)}
		}
		if f.guarded {
			src := "storageClass"
			if ds.StorageClassName == "" {
				src = "storageClass \"\": none written, the cluster's default class applies when the disk is created"
			}
			d.PoolClass = &Sourced{string(ds.StorageClassName), src}
		}
		return d
	}
	d.Path = "clone"
	d.Golden = string(ds.Golden)
	d.Preview = ds.Preview
	d.Note = NodeLocalNote
	if !f.guarded && !f.reportOnly {
		return d
	}
	if ds.Preview {
		d.PoolClass = &Sourced{string(ds.StorageClassName), "storageClass (preview: not resolved against a cluster)"}
		return d
	}
	if r := ds.Report; r != nil {
		d.GoldenFoundAs = string(r.GoldenFoundAs)
		d.GoldenPhase = string(r.GoldenPhase)
		d.GoldenSize = string(r.GoldenSize)
		d.GoldenRetiring = r.GoldenRetiring
		d.RunningTemplate = string(r.RunningTemplate)
		if d.RunningTemplate != "" {
			d.ReadyWorkers = string(r.ReadyWorkers)
		}
		poolSrc := string(r.PoolClassSource)
		if ds.StorageClassName == "" {
			poolSrc += ": no default class, none written and the comparison skipped"
		}
		d.PoolClass = &Sourced{string(ds.StorageClassName), poolSrc}
		if r.GoldenClassSource != "" {
			d.GoldenClass = &Sourced{string(r.GoldenClass), string(r.GoldenClassSource)}
		}
		d.GoldenChoice = &GoldenChoice{Choice: string(r.GoldenChoice), Reason: string(r.GoldenChoiceReason)}
		// On the plain golden's own class no per-class golden can exist (the
		// catalog refuses one), so naming it would only mislead.
		if d.GoldenChoice.Choice != "plain" {
			d.GoldenChoice.PerClassGolden = string(r.PerClassGolden)
		}
		d.CloneStrategy = &Sourced{string(r.CloneStrategy), string(r.CloneStrategySource)}
		for _, c := range r.FallbackChecks {
			n, _ := strconv.Atoi(string(c.Refusal))
			name := CheckNames[n]
			if name == "" {
				name = "refusal " + string(c.Refusal)
			}
			d.FallbackChecks = append(d.FallbackChecks, FallbackCheck{Refusal: n, Check: name, Outcome: string(c.Outcome), Detail: string(c.Detail)})
		}
	}
	return d
}
