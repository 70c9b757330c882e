package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
)

// The CLI never resolves a disk source itself: it adds this template to the
// pool chart and reads what the chart's own helpers answered in that render.
//
// Helm executes a chart's templates in reverse name order, so "0-..." runs
// after every template of the chart: the chart's own refusal, in the chart's
// own order, is the one a failed render reports, and by then the chart has
// memoised its disk source, so reading it costs no extra lookup.
const (
	factsTemplate = "templates/0-workerimage-facts.yaml"
	FactsKind     = "WorkerImageFacts"
)

// factsBody reads the chart's answers through diskSourceHelper. reportOnly
// asks the chart for a render made only to report: its clone refusals are
// recorded as the outcomes of their checks instead of failing the render, so
// a refused pool still shows every check. It is set on the root context,
// where the chart keeps its render state and values cannot reach.
func factsBody(diskSourceHelper string, reportOnly bool) []byte {
	mode := ""
	if reportOnly {
		mode = `{{- $_ := set . "_kubernetesNodes" (dict "reportOnly" true) }}
`
	}
	return []byte(mode + `kind: ` + FactsKind + `
pool: {{ include "kubernetes-nodes.poolName" . | quote }}
diskSource:
  {{- include "` + diskSourceHelper + `" . | nindent 2 }}
creationDefaults:
  {{- include "kubernetes-nodes.creationDefaults" . | nindent 2 }}
behind:
  {{- include "kubernetes-nodes.behindFacts" . | nindent 2 }}
machineConfig:
  {{- include "kubernetes-nodes.machineConfigFacts" . | nindent 2 }}
`)
}

// Scalar reads any YAML scalar as its text: the chart's toYaml writes a size
// such as 21474836480 as a number and "6Gi" as a string.
type Scalar string

// UnmarshalJSON reads a string or a number as its text.
func (s *Scalar) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = Scalar(v)
		return nil
	}
	*s = Scalar(b)
	return nil
}

// ChartFacts mirrors what kubernetes-nodes.diskSource (or, when the guards
// refuse, kubernetes-nodes.osImage) and kubernetes-nodes.creationDefaults return.
type ChartFacts struct {
	Pool       Scalar `json:"pool"`
	DiskSource struct {
		Clone                 bool   `json:"clone"`
		Golden                Scalar `json:"golden"`
		URL                   Scalar `json:"url"`
		StorageClassName      Scalar `json:"storageClassName"`
		SchematicID           Scalar `json:"schematicID"`
		SchematicIDSource     Scalar `json:"schematicIDSource"`
		Version               Scalar `json:"version"`
		VersionSource         Scalar `json:"versionSource"`
		ImageFactoryURL       Scalar `json:"imageFactoryURL"`
		ImageFactoryURLSource Scalar `json:"imageFactoryURLSource"`
		CertConfigMap         Scalar `json:"certConfigMap"`
		ImageFactoryCASource  Scalar `json:"imageFactoryCASource"`
		Preview               bool   `json:"preview"`
		Report                *struct {
			GoldenPhase       Scalar `json:"goldenPhase"`
			GoldenFoundAs     Scalar `json:"goldenFoundAs"`
			RunningTemplate   Scalar `json:"runningTemplate"`
			ReadyWorkers      Scalar `json:"readyWorkers"`
			PoolClassSource   Scalar `json:"poolClassSource"`
			GoldenClass       Scalar `json:"goldenClass"`
			GoldenClassSource Scalar `json:"goldenClassSource"`
			GoldenSize        Scalar `json:"goldenSize"`
			GoldenRetiring    bool   `json:"goldenRetiring"`
			// GoldenChoice is plain, per-class or none (no golden of the
			// flavor on the pool's class: only in a refused pool's report).
			GoldenChoice        Scalar       `json:"goldenChoice"`
			GoldenChoiceReason  Scalar       `json:"goldenChoiceReason"`
			PerClassGolden      Scalar       `json:"perClassGolden"`
			CloneStrategy       Scalar       `json:"cloneStrategy"`
			CloneStrategySource Scalar       `json:"cloneStrategySource"`
			FallbackChecks      []chartCheck `json:"fallbackChecks"`
		} `json:"report"`
	} `json:"diskSource"`
	CreationDefaults struct {
		Origin          Scalar `json:"origin"`
		ImageFactoryURL Scalar `json:"imageFactoryURL"`
		OSImage         Scalar `json:"osImage"`
		From            Scalar `json:"from"`
		ImageFactoryCA  bool   `json:"imageFactoryCA"`
		// FromCatalog names the fields taken from the catalog's published
		// defaults rather than _cluster.
		FromCatalog []Scalar `json:"fromCatalog"`
	} `json:"creationDefaults"`
	// Behind is kubernetes-nodes.behindFacts: the Kubernetes release the
	// pool runs, and what the chart and the platform give a new pool now.
	Behind struct {
		Kubernetes struct {
			Minor   Scalar `json:"minor"`
			Release Scalar `json:"release"`
			Source  Scalar `json:"source"`
		} `json:"kubernetes"`
		Defaults struct {
			SchematicID     Scalar `json:"schematicID"`
			Version         Scalar `json:"version"`
			ImageFactoryURL Scalar `json:"imageFactoryURL"`
			// ImageFactoryURLFrom names the catalog's published defaults
			// when the URL came from there; "" for _cluster or the built-in.
			ImageFactoryURLFrom Scalar `json:"imageFactoryURLFrom"`
			// VersionFrom names the channel the Talos release came from
			// (the platform's _cluster, the catalog's published defaults);
			// "" for the chart's built-in.
			VersionFrom Scalar `json:"versionFrom"`
			// SchematicIDFrom names the channel the schematic came from,
			// as VersionFrom does.
			SchematicIDFrom    Scalar            `json:"schematicIDFrom"`
			KubernetesReleases map[string]Scalar `json:"kubernetesReleases"`
			// TalosMinors are the Talos minors the chart's support rows
			// list (kubernetes-nodes.talosSupportMatrix), sorted.
			TalosMinors []Scalar `json:"talosMinors"`
		} `json:"defaults"`
	} `json:"behind"`
	// MachineConfig is kubernetes-nodes.machineConfigFacts, in the shape
	// the report prints (every value in it is a string the chart quotes, or
	// a boolean): what the worker's Talos machine config takes besides its
	// image's flavor, each with the channel it came from.
	MachineConfig MachineConfigReport `json:"machineConfig"`
	// guarded is false when the clone guards refused. The facts then come
	// from a render made only to report (reportOnly), else, when even that
	// is refused, from kubernetes-nodes.osImage alone: golden, classes and
	// URL not read.
	guarded    bool
	reportOnly bool
}

// chartCheck is one outcome the chart recorded for the check behind one of
// its host-assisted-fallback refusals (4 to 9).
type chartCheck struct {
	Refusal Scalar `json:"refusal"`
	Outcome Scalar `json:"outcome"`
	Detail  Scalar `json:"detail"`
}

// takeFacts removes the facts file from r and parses it: the chart's
// answers are read from the file itself, once.
func takeFacts(chrt *chart.Chart, r *render.Rendered) (*ChartFacts, error) {
	text, ok := r.Take(chrt.Name() + "/" + factsTemplate)
	var f ChartFacts
	if !ok || !strings.Contains(text, "kind: "+FactsKind) {
		return nil, fmt.Errorf("the render has no %s document", FactsKind)
	}
	if err := yaml.Unmarshal([]byte(text), &f); err != nil {
		return nil, fmt.Errorf("reading the chart's disk source: %w", err)
	}
	f.guarded = true
	return &f, nil
}

// renderWithFacts renders the whole chart, as Helm would, plus the facts;
// the render's documents are read only as they are asked for.
func renderWithFacts(chrt *chart.Chart, opts render.Options) (*render.Rendered, *ChartFacts, error) {
	r, err := render.RenderLazy(render.WithTemplate(chrt, factsTemplate, factsBody("kubernetes-nodes.diskSource", false)), opts)
	if err != nil {
		return nil, nil, err
	}
	f, err := takeFacts(chrt, r)
	return r, f, err
}

// HelperFacts renders only the chart's helpers, so none of its objects' guards
// run (an unknown instancetype, say): the disk source with its clone guards;
// when those refuse, the same in a render made only to report; when even that
// is refused, the image resolution alone (which golden, from where).
// refusal is the first render's: what kept the guards' facts out, in the
// chart's own words where its schema refused first (as plan leads with them),
// else the schema's. facts is nil when even the image does not resolve; err is
// a cluster problem.
func HelperFacts(chrt *chart.Chart, opts render.Options) (facts *ChartFacts, refusal string, err error) {
	helpers := render.HelpersOnly(chrt)
	m, err := render.RenderLazy(render.WithTemplate(helpers, factsTemplate, factsBody("kubernetes-nodes.diskSource", false)), opts)
	if err == nil {
		facts, err = takeFacts(chrt, m)
		return facts, "", err
	}
	var schema *render.SchemaError
	refusedBySchema := errors.As(err, &schema)
	refusal, err = RenderFailure(err)
	if err != nil {
		return nil, "", err
	}
	if refusedBySchema {
		off := opts
		off.Release.SkipSchemaValidation = true
		if _, err := render.RenderLazy(render.WithTemplate(helpers, factsTemplate, factsBody("kubernetes-nodes.diskSource", false)), off); err != nil {
			chartSays, prob := RenderFailure(err)
			if prob != nil {
				return nil, "", prob
			}
			refusal = chartSays
		}
	}
	reportOnly := true
	m, err = render.RenderLazy(render.WithTemplate(helpers, factsTemplate, factsBody("kubernetes-nodes.diskSource", true)), opts)
	if err != nil {
		// Going on past a refusal makes lookups the refused render did not.
		if _, prob := RenderFailure(err); prob != nil {
			return nil, "", prob
		}
		reportOnly = false
		m, err = render.RenderLazy(render.WithTemplate(helpers, factsTemplate, factsBody("kubernetes-nodes.osImage", false)), opts)
	}
	if err != nil {
		return nil, refusal, nil
	}
	if facts, err = takeFacts(chrt, m); err != nil {
		return nil, "", err
	}
	facts.guarded, facts.reportOnly = false, reportOnly
	return facts, refusal, nil
}

// RenderFailure splits a failed render into the chart's refusal (exit 1) and
// a problem (exit 2): a cluster that answered a lookup with an API error, a
// lookup of a kind the chart may not read, a render too slow to finish. The chart never
// falls back on an API error, and neither does the report. The two are told
// apart by the error's structure (render.LookupError: the error the client
// provider itself returned), never by its text, which quotes tenants' values.
func RenderFailure(err error) (refusal string, prob error) {
	if errors.Is(err, render.ErrTooSlow) {
		return "", err
	}
	var lookup *render.LookupError
	if errors.As(err, &lookup) {
		if errors.Is(lookup.Err, render.ErrLookupNotAllowed) {
			return "", lookup.Err
		}
		return "", fmt.Errorf("the cluster answered a lookup with an error: %v", lookup.Err)
	}
	return OneLine(err.Error()), nil
}
