package main

import (
	"encoding/json"
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
	factsKind     = "WorkerImageFacts"
)

func factsBody(diskSourceHelper string) []byte {
	return []byte(`kind: ` + factsKind + `
pool: {{ include "kubernetes-nodes.poolName" . | quote }}
diskSource:
  {{- include "` + diskSourceHelper + `" . | nindent 2 }}
creationDefaults:
  {{- include "kubernetes-nodes.creationDefaults" . | nindent 2 }}
`)
}

// scalar reads any YAML scalar as its text: the chart's toYaml writes a size
// such as 21474836480 as a number and "6Gi" as a string.
type scalar string

func (s *scalar) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = scalar(v)
		return nil
	}
	*s = scalar(b)
	return nil
}

// chartFacts mirrors what kubernetes-nodes.diskSource (or, when the guards
// refuse, kubernetes-nodes.osImage) and kubernetes-nodes.creationDefaults return.
type chartFacts struct {
	Pool       scalar `json:"pool"`
	DiskSource struct {
		Clone                 bool   `json:"clone"`
		Golden                scalar `json:"golden"`
		URL                   scalar `json:"url"`
		StorageClassName      scalar `json:"storageClassName"`
		SchematicID           scalar `json:"schematicID"`
		SchematicIDSource     scalar `json:"schematicIDSource"`
		Version               scalar `json:"version"`
		VersionSource         scalar `json:"versionSource"`
		ImageFactoryURL       scalar `json:"imageFactoryURL"`
		ImageFactoryURLSource scalar `json:"imageFactoryURLSource"`
		Preview               bool   `json:"preview"`
		Report                *struct {
			GoldenPhase       scalar `json:"goldenPhase"`
			GoldenFoundAs     scalar `json:"goldenFoundAs"`
			RunningTemplate   scalar `json:"runningTemplate"`
			ReadyWorkers      scalar `json:"readyWorkers"`
			PoolClassSource   scalar `json:"poolClassSource"`
			GoldenClass       scalar `json:"goldenClass"`
			GoldenClassSource scalar `json:"goldenClassSource"`
			GoldenSize        scalar `json:"goldenSize"`
			GoldenRetiring    bool   `json:"goldenRetiring"`
		} `json:"report"`
	} `json:"diskSource"`
	CreationDefaults struct {
		Origin          scalar `json:"origin"`
		ImageFactoryURL scalar `json:"imageFactoryURL"`
		OSImage         scalar `json:"osImage"`
	} `json:"creationDefaults"`
	// guarded is false when the facts come from kubernetes-nodes.osImage alone:
	// the clone guards refused, so golden, classes and URL were not read.
	guarded bool
}

// takeFacts removes the facts document from m and parses it.
func takeFacts(m *render.Manifest) (*chartFacts, error) {
	for i, d := range m.Docs {
		if d.Kind() != factsKind {
			continue
		}
		m.Docs = append(m.Docs[:i:i], m.Docs[i+1:]...)
		var f chartFacts
		if err := yaml.Unmarshal([]byte(d.Text), &f); err != nil {
			return nil, fmt.Errorf("reading the chart's disk source: %w", err)
		}
		f.guarded = true
		return &f, nil
	}
	return nil, fmt.Errorf("the render has no %s document", factsKind)
}

// renderWithFacts renders the whole chart, as Helm would, plus the facts.
func renderWithFacts(chrt *chart.Chart, opts render.Options) (*render.Manifest, *chartFacts, error) {
	m, err := render.Render(render.WithTemplate(chrt, factsTemplate, factsBody("kubernetes-nodes.diskSource")), opts)
	if err != nil {
		return nil, nil, err
	}
	f, err := takeFacts(m)
	return m, f, err
}

// helperFacts renders only the chart's helpers, so none of its objects' guards
// run (an unknown instancetype, say): the disk source with its clone guards,
// and when those refuse, the image resolution alone (which golden, from where).
// refusal is the first render's: what kept the guards' facts out. facts is nil
// when even the image does not resolve; err is a cluster problem.
func helperFacts(chrt *chart.Chart, opts render.Options) (facts *chartFacts, refusal string, err error) {
	helpers := render.HelpersOnly(chrt)
	m, err := render.Render(render.WithTemplate(helpers, factsTemplate, factsBody("kubernetes-nodes.diskSource")), opts)
	if err == nil {
		facts, err = takeFacts(m)
		return facts, "", err
	}
	refusal, err = renderFailure(err)
	if err != nil {
		return nil, "", err
	}
	m, err = render.Render(render.WithTemplate(helpers, factsTemplate, factsBody("kubernetes-nodes.osImage")), opts)
	if err != nil {
		return nil, refusal, nil
	}
	if facts, err = takeFacts(m); err != nil {
		return nil, "", err
	}
	facts.guarded = false
	return facts, refusal, nil
}

// renderFailure splits a failed render into the chart's refusal (exit 1) and
// a cluster that answered a lookup with an API error (exit 2): the chart never
// falls back on an API error, and neither does the report.
func renderFailure(err error) (refusal string, prob error) {
	msg := err.Error()
	const marker = "error calling lookup: "
	if i := strings.LastIndex(msg, marker); i >= 0 {
		return "", problemf("the cluster answered a lookup with an error: %s", msg[i+len(marker):])
	}
	return oneLine(msg), nil
}
