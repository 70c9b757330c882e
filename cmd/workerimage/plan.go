package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	charts "github.com/cozystack/golden-worker-images"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
)

// planReport is what `plan` prints; -o json prints it as is.
type planReport struct {
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	// Pool is kubernetes-<cluster>-<pool>, the name of the pool's objects.
	Pool    string `json:"pool,omitempty"`
	Cluster string `json:"cluster"`
	// DiskSource is absent only when the chart refused before resolving it.
	DiskSource      *diskReport  `json:"diskSource,omitempty"`
	CreatedWith     *createdWith `json:"createdWith,omitempty"`
	MachineTemplate string       `json:"machineTemplate,omitempty"`
	Objects         []string     `json:"objects,omitempty"`
	Result          string       `json:"result"`
	Refusal         string       `json:"refusal,omitempty"`
	// ChartRefusal: when values.schema.json refused, what the chart's own
	// checks say of the same values (rendered again with the schema off, only
	// to explain); "" when they accept them.
	ChartRefusal string `json:"chartRefusal,omitempty"`
	// SchemaOnly: the schema refused values the chart's own checks accept.
	SchemaOnly bool `json:"schemaOnly,omitempty"`
	// ReleaseHint: the release name was taken from the values file's name,
	// and that name cannot name a pool.
	ReleaseHint string `json:"releaseHint,omitempty"`
	// Preview: no cluster was read, so no golden, class or clone check ran.
	Preview bool `json:"preview,omitempty"`
}

type diskReport struct {
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
	SchematicID     sourced  `json:"schematicID"`
	Version         sourced  `json:"version"`
	ImageFactoryURL *sourced `json:"imageFactoryURL,omitempty"`
	// ImageFactoryCA: the ConfigMap of the CA the HTTP import trusts, and
	// where the CA came from; absent when none is in effect.
	ImageFactoryCA *sourced `json:"imageFactoryCA,omitempty"`
	// PoolClass is the class the disk is written with; Value "" means none is
	// written and the cluster's default applies when the disk is created.
	PoolClass   *sourced `json:"poolStorageClass,omitempty"`
	GoldenClass *sourced `json:"goldenStorageClass,omitempty"`
	// GoldenChoice: which golden serves the pool's class, and why.
	GoldenChoice *goldenChoice `json:"goldenChoice,omitempty"`
	// CloneStrategy is the strategy CDI would clone with; Value "" when the
	// cluster does not tell (Source says why).
	CloneStrategy *sourced `json:"cloneStrategy,omitempty"`
	// FallbackChecks are the checks behind refusals 4 to 9, each a way CDI
	// would fall back to a host-assisted copy, with what they found.
	FallbackChecks []fallbackCheck `json:"fallbackChecks,omitempty"`
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

type goldenChoice struct {
	// Choice is plain (talos-worker-<schematicID>-<version>), per-class
	// (<plain>--<class>), or none: no golden of the flavor is on the pool's
	// class, and the pool is refused.
	Choice string `json:"choice"`
	Reason string `json:"reason"`
	// PerClassGolden is the flavor's golden for the pool's class, when the
	// plain golden does not serve it and the class is known.
	PerClassGolden string `json:"perClassGolden,omitempty"`
}

type fallbackCheck struct {
	Refusal int    `json:"refusal"`
	Check   string `json:"check"`
	// Outcome: passed, refused, not needed (the fallback cannot arise), or
	// skipped (what the check needs is not known, so CDI may still fall back).
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
}

// checkNames label the chart's refusal numbers (docs/design.md) in reports.
var checkNames = map[int]string{
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

// nodeLocalNote: a golden on a node-local class passes every check, yet
// each clone lands on the golden's node; the render cannot tell such a class.
const nodeLocalNote = "a node-local StorageClass is a poor home for a golden: every clone lands on the golden's node, and no render can tell such a class apart"

type sourced struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

// createdWith is the pool's record of the platform defaults it was created
// with, and where the chart read it (docs/design.md: its MachineDeployment's
// annotation, an earlier version's ConfigMap, or today's defaults for a new pool).
type createdWith struct {
	From            string `json:"from"`
	Origin          string `json:"origin"`
	ImageFactoryURL string `json:"imageFactoryURL"`
	OSImage         string `json:"osImage"`
	// ImageFactoryCA: the platform's CA applied at creation (never the PEM).
	ImageFactoryCA bool `json:"imageFactoryCA,omitempty"`
}

func (a app) plan(args []string, out *bytes.Buffer) (int, error) {
	fs := newFlags("plan")
	values := fs.String("values", "", "pool values file (YAML)")
	release := fs.String("release", "", "release name (default kubernetes-nodes-<cluster>-<values file name>)")
	namespace := fs.String("namespace", "", "release namespace (default tenant-<cluster>)")
	state, kube := clusterFlags(fs, "kubeconfig of a live cluster")
	chartDir := fs.String("chart", "", "pool chart folder (default: the "+render.PoolChart+" built into this binary)")
	output := fs.String("o", "text", "output: text, yaml or json")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if *values == "" {
		return 0, problemf("-values is required")
	}
	if err := oneOf("o", *output, "text", "yaml", "json"); err != nil {
		return 0, err
	}
	vals, err := readValues(*values)
	if err != nil {
		return 0, err
	}
	chrt, err := loadPoolChart(*chartDir)
	if err != nil {
		return 0, err
	}
	t, err := a.connect(*state, *kube, false)
	if err != nil {
		return 0, err
	}
	rel := releaseFor(*values, vals, *release, *namespace)
	rep, manifest, err := planPool(chrt, t, rel, vals)
	if err != nil {
		return 0, err
	}
	if *release == "" {
		rep.ReleaseHint = releaseHint(*values, vals)
	}
	switch *output {
	case "yaml":
		if rep.Result != "renders" {
			// Comments, not data: escaped like text, so no refusal starts a line.
			fmt.Fprintf(out, "# %s: refused\n# %s\n", termSafe(rep.Release), termSafe(rep.Refusal))
		} else {
			out.WriteString(manifest.Text())
		}
	case "json":
		writeJSON(out, rep)
	default:
		writePlanText(out, rep)
	}
	if rep.Result != "renders" {
		return exitAttn, nil
	}
	return exitOK, nil
}

// planPool renders one pool and reports on it. A refusal is a report; only a
// cluster problem is an error.
func planPool(chrt *chart.Chart, t target, rel render.Release, vals map[string]interface{}) (*planReport, *render.Manifest, error) {
	rep := &planReport{Release: rel.Name, Namespace: rel.Namespace, Cluster: t.desc, Preview: t.provider == nil}
	m, facts, err := renderWithFacts(chrt, t.options(rel, vals))
	if err != nil {
		refusal, prob := renderFailure(err)
		if prob != nil {
			return nil, nil, prob
		}
		rep.Result, rep.Refusal = "refused", refusal
		var schema *render.SchemaError
		if errors.As(err, &schema) {
			// The schema's message quotes its patterns JSON-escaped; shown as written in the schema's regex.
			rep.Refusal = strings.ReplaceAll(refusal, `\\`, `\`)
			opts := t.options(rel, vals)
			opts.Release.SkipSchemaValidation = true
			if _, _, err := renderWithFacts(chrt, opts); err != nil {
				chartSays, prob := renderFailure(err)
				if prob != nil {
					return nil, nil, prob
				}
				rep.ChartRefusal = chartSays
			} else {
				rep.SchemaOnly = true
			}
		}
		// What the pool would have done, as far as the chart resolves it
		// without the guard that refused.
		if facts, _, err = helperFacts(chrt, t.options(rel, vals)); err != nil {
			return nil, nil, err
		}
	} else {
		rep.Result = "renders"
		for _, d := range m.Docs {
			rep.Objects = append(rep.Objects, d.Kind()+"/"+d.Name())
		}
		if kmt, err := m.One("KubevirtMachineTemplate"); err == nil {
			rep.MachineTemplate = kmt.Name()
		}
	}
	if facts != nil {
		rep.Pool = string(facts.Pool)
		rep.DiskSource = diskFromFacts(facts)
		if d := rep.DiskSource; d.Golden != "" && (d.GoldenFoundAs == "DataVolume" || d.GoldenFoundAs == "PersistentVolumeClaim") {
			if d.GoldenSourceURL, d.GoldenCertConfigMap, d.GoldenChecksum, err = goldenSource(t, d.Golden); err != nil {
				return nil, nil, err
			}
		}
		cd := facts.CreationDefaults
		rep.CreatedWith = &createdWith{From: string(cd.From), Origin: string(cd.Origin), ImageFactoryURL: string(cd.ImageFactoryURL), OSImage: strings.TrimSpace(string(cd.OSImage)), ImageFactoryCA: cd.ImageFactoryCA}
	}
	return rep, m, nil
}

func diskFromFacts(f *chartFacts) *diskReport {
	ds := f.DiskSource
	d := &diskReport{
		Path:        "http",
		SchematicID: sourced{string(ds.SchematicID), string(ds.SchematicIDSource)},
		Version:     sourced{string(ds.Version), string(ds.VersionSource)},
		Checked:     f.guarded,
	}
	if !ds.Clone {
		d.URL = string(ds.URL)
		d.ImageFactoryURL = &sourced{string(ds.ImageFactoryURL), string(ds.ImageFactoryURLSource)}
		if ds.CertConfigMap != "" {
			d.ImageFactoryCA = &sourced{"ConfigMap " + string(ds.CertConfigMap), string(ds.ImageFactoryCASource)}
		}
		if f.guarded {
			src := "storageClass"
			if ds.StorageClassName == "" {
				src = "storageClass \"\": none written, the cluster's default class applies when the disk is created"
			}
			d.PoolClass = &sourced{string(ds.StorageClassName), src}
		}
		return d
	}
	d.Path = "clone"
	d.Golden = string(ds.Golden)
	d.Preview = ds.Preview
	d.Note = nodeLocalNote
	if !f.guarded && !f.reportOnly {
		return d
	}
	if ds.Preview {
		d.PoolClass = &sourced{string(ds.StorageClassName), "storageClass (preview: not resolved against a cluster)"}
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
		d.PoolClass = &sourced{string(ds.StorageClassName), poolSrc}
		if r.GoldenClassSource != "" {
			d.GoldenClass = &sourced{string(r.GoldenClass), string(r.GoldenClassSource)}
		}
		d.GoldenChoice = &goldenChoice{Choice: string(r.GoldenChoice), Reason: string(r.GoldenChoiceReason)}
		// On the plain golden's own class no per-class golden can exist (the
		// catalog refuses one), so naming it would only mislead.
		if d.GoldenChoice.Choice != "plain" {
			d.GoldenChoice.PerClassGolden = string(r.PerClassGolden)
		}
		d.CloneStrategy = &sourced{string(r.CloneStrategy), string(r.CloneStrategySource)}
		for _, c := range r.FallbackChecks {
			n, _ := strconv.Atoi(string(c.Refusal))
			name := checkNames[n]
			if name == "" {
				name = "refusal " + string(c.Refusal)
			}
			d.FallbackChecks = append(d.FallbackChecks, fallbackCheck{Refusal: n, Check: name, Outcome: string(c.Outcome), Detail: string(c.Detail)})
		}
	}
	return d
}

func writePlanText(out *bytes.Buffer, r *planReport) {
	var tb table
	tb.row("pool", fmt.Sprintf("%s in %s", r.Release, r.Namespace))
	tb.row("cluster", r.Cluster)
	if d := r.DiskSource; d != nil {
		if d.Path == "clone" {
			tb.row("disk source", "clone of golden "+d.Golden)
			switch {
			case d.Preview:
				tb.row("golden", "not checked (no cluster)")
			case d.GoldenFoundAs == "":
				tb.row("golden", "not read: the clone guards refused (see result)")
			case d.GoldenFoundAs == "absent" && !d.Checked:
				tb.row("golden", "absent from cozy-public")
			case d.GoldenFoundAs == "absent":
				tb.row("golden", "absent from cozy-public; the pool already runs from it (template "+d.RunningTemplate+")")
			default:
				g := "found as " + d.GoldenFoundAs
				if d.GoldenPhase != "" {
					g += ", phase " + d.GoldenPhase
				}
				if d.GoldenSize != "" {
					g += ", size " + d.GoldenSize
				}
				switch {
				case d.GoldenRetiring && !d.Checked:
					g += ", retiring (its catalog entry sets retire: true)"
				case d.GoldenRetiring:
					g += ", retiring (its catalog entry sets retire: true; this pool still renders because it already runs from it; move it to another flavor or to HTTP before the entry is dropped)"
				}
				tb.row("golden", g)
				tb.row("golden source", orNotRecorded(d.GoldenSourceURL))
				if d.GoldenCertConfigMap != "" || d.GoldenChecksum != "" {
					tb.row("golden import", goldenImport(d.GoldenCertConfigMap, d.GoldenChecksum))
				}
			}
		} else {
			tb.row("disk source", "HTTP import from "+orNone(d.URL))
			tb.row("golden", "none (HTTP path)")
		}
		tb.row("schematicID", d.SchematicID.Value+"  ("+d.SchematicID.Source+")")
		tb.row("version", d.Version.Value+"  ("+d.Version.Source+")")
		if d.ImageFactoryURL != nil {
			tb.row("image factory", d.ImageFactoryURL.Value+"  ("+d.ImageFactoryURL.Source+")")
		}
		if d.ImageFactoryCA != nil {
			tb.row("factory CA", d.ImageFactoryCA.Value+"  ("+d.ImageFactoryCA.Source+")")
		}
		if d.PoolClass != nil {
			tb.row("pool class", orNone(d.PoolClass.Value)+"  ("+d.PoolClass.Source+")")
		}
		if d.GoldenClass != nil {
			tb.row("golden class", orNone(d.GoldenClass.Value)+"  ("+d.GoldenClass.Source+")")
		}
		if c := d.GoldenChoice; c != nil {
			tb.row("golden choice", c.Choice+": "+c.Reason)
		}
		if s := d.CloneStrategy; s != nil {
			if s.Value == "" {
				tb.row("clone strategy", s.Source)
			} else {
				tb.row("clone strategy", s.Value+"  ("+s.Source+")")
			}
		}
		for i, c := range d.FallbackChecks {
			label := ""
			if i == 0 {
				label = "fallback checks"
			}
			detail := c.Detail
			if c.Outcome == "refused" && detail == r.Refusal {
				detail = "the refusal in result"
			}
			tb.row(label, fmt.Sprintf("%d %s", c.Refusal, c.Check), c.Outcome, detail)
		}
		if d.RunningTemplate != "" {
			tb.row("running from", "template "+d.RunningTemplate+", which clones this golden ("+d.ReadyWorkers+" ready workers)")
		}
		if d.Note != "" {
			tb.row("note", d.Note)
		}
	}
	if c := r.CreatedWith; c != nil {
		what := fmt.Sprintf("platform defaults imageFactoryURL %s, osImage %s", orNone(c.ImageFactoryURL), orNone(strings.Join(strings.Fields(c.OSImage), " ")))
		if c.ImageFactoryCA {
			what += ", imageFactoryCA (applies: the platform's CA is read at each render)"
		}
		if c.Origin == "builtin" {
			what = "the chart's built-in values"
		}
		tb.row("created with", what+"  ("+c.From+")")
	}
	if r.MachineTemplate != "" {
		tb.row("machine template", r.MachineTemplate)
	}
	switch {
	case r.Result == "renders" && r.Preview:
		tb.row("result", "renders in a preview: no cluster was read, so the golden, class, clone and instancetype checks did not run; give -cluster or -kubeconfig to run them")
	case r.Result == "renders":
		tb.row("result", "renders")
	default:
		tb.row("result", "refused: "+r.Refusal)
	}
	if r.ChartRefusal != "" {
		tb.row("chart says", r.ChartRefusal+"  (the chart's own check of the same values, rendered again without the schema only to explain)")
	}
	if r.SchemaOnly {
		tb.row("chart says", "nothing: only values.schema.json refuses these values, the chart's own checks accept them")
	}
	if r.ReleaseHint != "" {
		tb.row("release", r.ReleaseHint)
	}
	tb.write(out)
}

// releaseHint explains a release name taken from the values file's name when
// that name cannot name a pool ("" when it can, or -release was given).
func releaseHint(valuesPath string, vals map[string]any) string {
	cluster, _ := vals["cluster"].(string)
	base := filepath.Base(valuesPath)
	pool := strings.TrimSuffix(base, filepath.Ext(base))
	if cluster != "" && dnsLabel.MatchString(pool) {
		return ""
	}
	if cluster == "" {
		cluster = "<cluster>"
	}
	return fmt.Sprintf("the release name was taken from the values file's name %q (kubernetes-nodes-<cluster>-<file name>); name the pool with -release kubernetes-nodes-%s-<pool>, where <pool> is a DNS label, or rename the file", base, cluster)
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// releaseFor names the release as the chart requires, from the flags or from
// the values: kubernetes-nodes-<cluster>-<pool>, where <pool> is the values
// file's name without its extension, in namespace tenant-<cluster>.
func releaseFor(valuesPath string, vals map[string]interface{}, name, namespace string) render.Release {
	cluster, _ := vals["cluster"].(string)
	if name == "" {
		base := filepath.Base(valuesPath)
		pool := strings.TrimSuffix(base, filepath.Ext(base))
		name = fmt.Sprintf("kubernetes-nodes-%s-%s", cluster, pool)
	}
	if namespace == "" {
		namespace = "tenant-" + cluster
	}
	return render.Release{Name: name, Namespace: namespace}
}

func readValues(path string) (map[string]interface{}, error) {
	vals, err := render.ReadValues(path)
	if err != nil {
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			return nil, problemf("values %s: %v", path, pathErr.Err)
		}
		return nil, problemf("values %s %v", path, err)
	}
	if len(vals) == 0 {
		return nil, problemf("values %s is empty: %s", path, render.ValuesFileIs)
	}
	return vals, nil
}

// loadPoolChart loads the chart at dir, or with no dir the pool chart built
// into this binary.
func loadPoolChart(dir string) (*chart.Chart, error) {
	if dir == "" {
		c, err := render.LoadChartFS(charts.FS, render.PoolChart)
		if err != nil {
			return nil, problemf("built-in chart %s: %v", render.PoolChart, err)
		}
		return c, nil
	}
	if err := checkChartLinks(dir); err != nil {
		return nil, problemf("chart %s: %v", dir, err)
	}
	c, err := render.LoadChart(dir)
	if err != nil {
		return nil, problemf("chart %s: %v", dir, err)
	}
	return c, nil
}

// goldenSource reads where a golden in cozy-public was imported from: its
// DataVolume's spec.source.http.url, else, with only its PVC left, CDI's
// import endpoint annotation ("" when neither records one); and the CA
// ConfigMap and checksum of that import, read the same way.
func goldenSource(t target, name string) (url, certConfigMap, checksum string, err error) {
	if t.provider == nil {
		return "", "", "", nil
	}
	for _, kind := range []struct{ apiVersion, kind string }{{"cdi.kubevirt.io/v1beta1", "DataVolume"}, {"v1", "PersistentVolumeClaim"}} {
		obj, err := t.get(kind.apiVersion, kind.kind, goldenNamespace, name)
		if err != nil {
			return "", "", "", err
		}
		if obj == nil {
			continue
		}
		if kind.kind == "DataVolume" {
			return text(obj.Object, "spec", "source", "http", "url"), text(obj.Object, "spec", "source", "http", "certConfigMap"), text(obj.Object, "spec", "source", "http", "checksum"), nil
		}
		a := obj.GetAnnotations()
		return a[annImportEndpoint], a[annImportCertConfigMap], a[annImportChecksum], nil
	}
	return "", "", "", nil
}

// goldenImport says what a golden's import was verified with.
func goldenImport(certConfigMap, checksum string) string {
	var parts []string
	if certConfigMap != "" {
		parts = append(parts, "trusting the CA in ConfigMap "+goldenNamespace+"/"+certConfigMap)
	}
	if checksum != "" {
		parts = append(parts, "checksum "+checksum+" (CDI verifies it on import from v1.65.0 on; the catalog refuses it on an older CDI, but a catalog rendered where no CDI resource was readable left that unchecked)")
	}
	return strings.Join(parts, ", ")
}

// orNotRecorded names a golden's source URL, or says it is not recorded.
func orNotRecorded(url string) string {
	if url == "" {
		return "not recorded (no DataVolume source URL, no CDI import endpoint on its PVC)"
	}
	return url
}
