package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"text/template"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// render.Render runs the charts' templates in the harness's own engine (Helm
// v3's, with each template file parsed once per process, so a rollout over
// thousands of pools does not parse the chart thousands of times);
// render.RenderWithHelm runs them in Helm v3's own engine, which Flux runs.
// These tests hold the two to the same bytes, the same error text and the
// same kind of error (a lookup's, the schema's, a template's) for every
// golden case and baseline corner, every hostile value in every field and
// every hostile finding (schema on and off: the templates' own refusals),
// clusters that fail, and a chart made of the engine's corners the charts do
// not use (tpl, .Files, subcharts, parse errors, include depth, ...).
//
// `go test -tags rendercrosscheck` does the same for every render any test
// makes (internal/render/crosscheck.go).

// engineOutcome is what a render leaves, as a caller can tell it.
type engineOutcome struct {
	text                 string
	lookup, schema, exec bool
}

func outcomeOf(m *render.Manifest, err error) engineOutcome {
	if err != nil {
		var le *render.LookupError
		var se *render.SchemaError
		return engineOutcome{
			text:   "error: " + err.Error(),
			lookup: errors.As(err, &le),
			schema: errors.As(err, &se),
			exec:   errors.As(err, new(template.ExecError)),
		}
	}
	return engineOutcome{text: m.Text()}
}

// engineComparison counts what a test compared: renders, the refusals among
// them, and the renders the schema refused before any template ran.
type engineComparison struct{ renders, refusals, schema int }

// requireSameAsHelm renders with both engines, each with its own fresh
// options (a template may change the values it is given, and a cluster
// counts what it is asked), and fails at the first difference.
func (n *engineComparison) requireSameAsHelm(t testing.TB, what string, chrt *chart.Chart, opts func() render.Options) {
	t.Helper()
	ours := outcomeOf(render.Render(chrt, opts()))
	helms := outcomeOf(render.RenderWithHelm(chrt, opts()))
	if ours.schema && helms.schema {
		// Refused before any template ran, by the same validator; its list
		// of violations is not always in the same order from one run to the
		// next, under either engine.
		n.schema++
		return
	}
	if line, a, b, differ := firstDifference(ours.text, helms.text); differ {
		t.Fatalf("%s: the parsed-once engine and Helm's differ at line %d:\n  ours:  %q\n  Helm's: %q", what, line, a, b)
	}
	if ours != helms {
		t.Fatalf("%s: the same text, another kind of error: ours %+v, Helm's %+v", what, ours, helms)
	}
	n.renders++
	if strings.HasPrefix(ours.text, "error: ") {
		n.refusals++
	}
}

func TestParsedOnceRendersGoldenCasesAsHelm(t *testing.T) {
	cases, found, err := support.GoldenCases()
	require.NoError(t, err)
	require.True(t, found)
	var n engineComparison
	baseline := 0
	for _, c := range cases {
		if c.Baseline {
			baseline++
		}
		chrt, err := support.LoadChart(c.ChartDir())
		require.NoError(t, err)
		for _, withCluster := range []bool{false, true} {
			n.requireSameAsHelm(t, fmt.Sprintf("%s (cluster: %v)", c.Name, withCluster), chrt, func() render.Options {
				vals, err := render.ReadValues(c.ValuesFile)
				require.NoError(t, err)
				opts := render.Options{Release: c.ReleaseOf(), Values: vals}
				if withCluster {
					opts.Cluster, err = c.LoadCluster()
					require.NoError(t, err)
				}
				return opts
			})
		}
	}
	require.Equal(t, 2*len(cases), n.renders)
	t.Logf("%d golden cases (%d of them baseline corners), offline and with their clusters: %d renders the same under both engines", len(cases), baseline, n.renders)
}

func TestParsedOnceRefusesAsHelm(t *testing.T) {
	var n engineComparison
	for _, hc := range hostileCharts() {
		chrt := hc.chart(t)
		for _, field := range hc.fields {
			for _, p := range hostilePayloads {
				for _, skip := range []bool{false, true} {
					rel := hc.release
					rel.SkipSchemaValidation = skip
					n.requireSameAsHelm(t, fmt.Sprintf("%s %s = %s (schema off: %v)", hc.name, field.name, p.name, skip), chrt, func() render.Options {
						values := vals(t, hc.base)
						field.set(values, p.value)
						return render.Options{Release: rel, Values: values, Cluster: hc.cluster(t)}
					})
				}
			}
		}
	}
	hostile := n
	for _, f := range hostileFindings() {
		c, rel, _ := costChart(t, f.chart)
		for _, skip := range []bool{false, true} {
			rel.SkipSchemaValidation = skip
			n.requireSameAsHelm(t, fmt.Sprintf("finding %s (schema off: %v)", f.name, skip), c, func() render.Options {
				_, _, cluster := costChart(t, f.chart)
				return render.Options{Release: rel, Values: f.values(), Cluster: cluster}
			})
		}
	}
	require.Greater(t, hostile.refusals, 500, "the hostile values reach the charts' refusals")
	t.Logf("hostile values: %d renders, %d of them refused; with the hostile findings: %d renders, %d refused: the same under both engines (and %d refused by the schema under both)", hostile.renders, hostile.refusals, n.renders, n.refusals, n.schema)
}

// A cluster that answers with errors: the render fails on the lookup with
// the same message, told apart as a lookup error by both.
func TestParsedOnceFailsOnTheClusterAsHelm(t *testing.T) {
	cases, _, err := support.GoldenCases()
	require.NoError(t, err)
	failures := map[string]error{
		"*":                     apierrors.NewServiceUnavailable("etcd is down"),
		"StorageClass":          apierrors.NewForbidden(schema.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}, "", errors.New("RBAC")),
		"DataVolume":            errors.New(`dial tcp: HELM_ERR_STARTinjectedHELM_ERR_END`),
		"ConfigMap":             apierrors.NewTooManyRequestsError("slow down"),
		"PersistentVolumeClaim": apierrors.NewInternalError(errors.New("boom")),
	}
	var n engineComparison
	for _, c := range cases {
		chrt, err := support.LoadChart(c.ChartDir())
		require.NoError(t, err)
		for kind, failure := range failures {
			n.requireSameAsHelm(t, fmt.Sprintf("%s with %s failing", c.Name, kind), chrt, func() render.Options {
				vals, err := render.ReadValues(c.ValuesFile)
				require.NoError(t, err)
				cluster, err := c.LoadCluster()
				require.NoError(t, err)
				cluster.FailWith = map[string]error{kind: failure}
				return render.Options{Release: c.ReleaseOf(), Values: vals, Cluster: cluster}
			})
		}
	}
	require.Greater(t, n.refusals, len(cases), "the clusters' errors fail renders")
	t.Logf("%d renders against failing clusters, %d failed: the same under both engines", n.renders, n.refusals)
}

// cornersChart exercises what Helm's engine does that the charts do not
// (yet) use, so the parsed-once engine is held to it too: a subchart with
// its own values and a library chart, .Files, .Template, .Subcharts, tpl
// (with its own defines), a named template defined in several files (the
// parse order picks the winner; an empty definition never replaces one), a
// file of only definitions, NOTES.txt, Helm's conversion functions, lookups
// of a cluster, and every way a render fails.
func cornersChart(t *testing.T, extra map[string]string) *chart.Chart {
	t.Helper()
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: corners\nversion: 0.1.0\ndescription: engine corners\n",
		"values.yaml": "name: corner\nlist: [a, b]\nsub: {greeting: hello}\n",
		"README.md":   "read me\n",
		"files/a.txt": "line one\nline two\n",
		"files/b.cfg": "x = 1\n",
		"templates/_helpers.tpl": `{{- define "corners.name" -}}{{ .Values.name }}-{{ .Release.Name }}{{- end -}}
{{- define "corners.winner" -}}helpers{{- end -}}
{{- define "corners.empty" -}}kept{{- end -}}
{{- define "corners.deep" -}}{{ include "corners.deep" . }}{{- end -}}
`,
		"templates/defs-only.yaml": "{{- define \"corners.fromDefsOnly\" -}}from a file of definitions{{- end -}}",
		// Parsed after _helpers.tpl ('E' sorts before '_'), it would replace
		// corners.empty but for being empty.
		"templates/Empty.yaml": `{{ define "corners.empty" }}{{ end }}`,
		"templates/nested/more/winner.yaml": `{{- define "corners.winner" -}}nested{{- end -}}
{{- /* Executed before main.yaml, which reads what it leaves in the values. */ -}}
{{- $_ := set .Values "memo" "set by nested" -}}
kind: Nested
name: {{ include "corners.winner" . }}
template: {{ .Template.Name }} in {{ .Template.BasePath }}
`,
		"templates/main.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "corners.name" . }}
  namespace: {{ .Release.Namespace }}
data:
  chart: {{ .Chart.Name }} {{ .Chart.Version }} root={{ .Chart.IsRoot }}
  release: {{ .Release.Service }} {{ .Release.Revision }} install={{ .Release.IsInstall }} upgrade={{ .Release.IsUpgrade }}
  kube: {{ .Capabilities.KubeVersion.Version }} {{ .Capabilities.APIVersions.Has "snapshot.storage.k8s.io/v1" }} {{ .Capabilities.APIVersions.Has "apps/v1" }}
  template: {{ .Template.Name }} {{ .Template.BasePath }}
  missing: "{{ .Values.nothing }}|{{ index .Values "nothing" }}"
  winner: {{ include "corners.winner" . }}
  memo: {{ .Values.memo | quote }}
  empty: {{ include "corners.empty" . }}
  defsOnly: {{ include "corners.fromDefsOnly" . }}
  sub: {{ .Subcharts.sub.Values.greeting }} {{ .Subcharts.sub.Chart.Name }}
  lib: {{ include "lib.hello" . }}
  file: {{ .Files.Get "files/a.txt" | quote }}
  bytes: {{ .Files.GetBytes "files/b.cfg" | len }} {{ .Files.GetBytes "nope" | len }}
  glob: {{ .Files.Glob "files/*.txt" | len }} {{ .Files.Glob "[" | len }}
  lines: {{ .Files.Lines "files/a.txt" | join "," }} {{ .Files.Lines "nope" | len }}
  config: {{ (.Files.Glob "files/**").AsConfig | quote }}
  secrets: {{ (.Files.Glob "files/**").AsSecrets | quote }}
  yaml: {{ .Values | toYaml | quote }}
  pretty: {{ dict "a" (list 1 2) "b" (dict "c" "d") | toYamlPretty | quote }}
  json: {{ .Values.list | toJson | quote }}
  toml: {{ dict "a" 1 "b" "c" | toToml | quote }}
  fromYaml: {{ (fromYaml "a: [1, 2]").a | toJson | quote }}
  fromYamlError: {{ (fromYaml "a: [").Error | quote }}
  fromYamlArray: {{ fromYamlArray "[1, x]" | toJson | quote }}
  fromYamlArrayError: {{ fromYamlArray "a: b" | toJson | quote }}
  fromJson: {{ (fromJson "{\"a\": 1}").a }}
  fromJsonError: {{ (fromJson "{").Error | quote }}
  fromJsonArray: {{ fromJsonArray "[1, 2]" | len }}
  fromJsonArrayError: {{ fromJsonArray "{" | toJson | quote }}
  fromToml: {{ (fromToml "a = 1").a }}
  fromTomlError: {{ (fromToml "a = ").Error | quote }}
  host: "{{ getHostByName "example.com" }}"
  tpl: {{ tpl "{{ define \"corners.inTpl\" }}in tpl {{ .Values.name }}{{ end }}{{ include \"corners.inTpl\" . }} {{ include \"corners.name\" . }}" . | quote }}
  tplNested: {{ tpl "{{ tpl \"{{ .Values.name }}\" . }}" . | quote }}
  tplMissing: {{ tpl "{{ .Values.nothing }}" . | quote }}
  cm: {{ (lookup "v1" "ConfigMap" "ns" "cm").data | toJson | quote }}
  cmMissing: {{ lookup "v1" "ConfigMap" "ns" "nope" | toJson | quote }}
  cms: {{ (lookup "v1" "ConfigMap" "ns" "").items | default list | len }}
  classes: {{ (lookup "storage.k8s.io/v1" "StorageClass" "" "").items | default list | len }}
  class: {{ (lookup "storage.k8s.io/v1" "StorageClass" "ns" "fast").provisioner | quote }}
{{- if .Values.failWith }}
{{ fail .Values.failWith }}
{{- end }}
{{- if hasKey .Values "requiredValue" }}
  required: {{ required "requiredValue is required: set it" .Values.requiredValue }}
{{- end }}
{{- if .Values.deep }}
  deep: {{ include "corners.deep" . }}
{{- end }}
{{- if .Values.nilPointer }}
  nil: {{ .Values.nothing.deeper }}
{{- end }}
{{- if .Values.badIndex }}
  index: {{ index .Values.list 5 }}
{{- end }}
{{- if .Values.noSuchTemplate }}
  include: {{ include "corners.none" . }}
{{- end }}
{{- if .Values.tplFails }}
  tplFails: {{ tpl .Values.tplFails . }}
{{- end }}
{{- if .Values.badLookup }}
  badLookup: {{ lookup "v1" "" "ns" "x" }}
{{- end }}
`,
		"templates/other.yml":   "kind: Other\nname: {{ template \"corners.name\" . }}\n",
		"templates/skipped.txt": "{{ .Values.name }}\n",
		"templates/NOTES.txt": `{{ if .Values.notesFail }}{{ fail "NOTES refuses" }}{{ end }}installed {{ .Release.Name }}
`,
		"charts/sub/Chart.yaml":          "apiVersion: v2\nname: sub\nversion: 0.2.0\n",
		"charts/sub/values.yaml":         "greeting: default\nown: sub-value\n",
		"charts/sub/templates/sub.yaml":  "kind: Sub\ngreeting: {{ .Values.greeting }}\nown: {{ .Values.own }}\nparent: \"{{ .Values.name }}\"\ntemplate: {{ .Template.Name }}\nroot: {{ .Chart.IsRoot }}\nwinner: {{ include \"corners.winner\" . }}\n",
		"charts/sub/templates/_sub.tpl":  `{{- define "corners.winner" -}}sub{{- end -}}`,
		"charts/lib/Chart.yaml":          "apiVersion: v2\nname: lib\nversion: 0.3.0\ntype: library\n",
		"charts/lib/templates/_lib.tpl":  `{{- define "lib.hello" -}}hello from lib to {{ .Chart.Name }}{{- end -}}`,
		"charts/lib/templates/lib.yaml":  "kind: NeverRendered\n",
		"charts/lib/templates/_more.tpl": "{{ define \"lib.more\" }}more{{ end }}",
	}
	for name, text := range extra {
		files[name] = text
	}
	var buffered []*loader.BufferedFile
	for name, text := range files {
		if text != "" {
			buffered = append(buffered, &loader.BufferedFile{Name: name, Data: []byte(text)})
		}
	}
	c, err := loader.LoadFiles(buffered)
	require.NoError(t, err)
	return c
}

func TestParsedOnceEngineCornersAsHelm(t *testing.T) {
	cluster := func() *support.Cluster {
		return clusterFromYAML(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns}
data: {k: v}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm2, namespace: ns}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: rbd.csi.ceph.com
`)
	}
	values := []string{
		"{}",
		"{name: other, sub: {greeting: hi, own: mine}}",
		"{failWith: 'refused: HELM_ERR_END inside HELM_ERR_START, name it'}",
		"{failWith: \"two\nlines\"}",
		"{requiredValue: ''}",
		"{requiredValue: null}",
		"{requiredValue: 0}",
		"{requiredValue: set}",
		"{deep: true}",
		"{nilPointer: true}",
		"{badIndex: true}",
		"{noSuchTemplate: true}",
		"{tplFails: '{{ fail \"from tpl\" }}'}",
		"{tplFails: '{{ .Values.x'}",
		"{tplFails: '{{ include \"corners.none\" . }}'}",
		"{badLookup: true}",
		"{notesFail: true}",
		"{name: '{{ .Release.Name }}'}",
		"{list: [{a: 1}], name: null}",
	}
	broken := map[string]map[string]string{
		"unclosed action":           {"templates/broken.yaml": "a: {{ .Values.name\n"},
		"function Helm removes":     {"templates/broken.yaml": "a: {{ env \"HOME\" }}\n"},
		"unknown function":          {"templates/zz/broken.yaml": "a: {{ nosuch 1 }}\n"},
		"two broken files":          {"templates/a-broken.yaml": "{{ end }}", "templates/z-broken.yaml": "{{ if }}"},
		"broken partial":            {"templates/_broken.tpl": "{{ define \"x\" }}"},
		"broken in a subchart":      {"charts/sub/templates/broken.yaml": "{{ .Values.greeting ) }}"},
		"defined twice in one file": {"templates/twice.yaml": "{{ define \"t\" }}a{{ end }}{{ define \"t\" }}b{{ end }}"},
		"defines gotpl":             {"templates/gotpl.yaml": "{{ define \"gotpl\" }}root{{ end }}x: {{ include \"gotpl\" . }} {{ tpl \"{{ include \\\"gotpl\\\" . }}\" . }}\n"},
		"template named like a file": {"templates/named.yaml": "{{ define \"corners/templates/other.yml\" }}kind: Replaced\n{{ end }}",
			"templates/uses.yaml": "{{ include \"corners/templates/other.yml\" . }}"},
	}
	var n engineComparison
	for _, v := range values {
		for _, withCluster := range []bool{false, true} {
			for _, upgrade := range []bool{false, true} {
				n.requireSameAsHelm(t, fmt.Sprintf("values %s (cluster %v, upgrade %v)", v, withCluster, upgrade), cornersChart(t, nil), func() render.Options {
					opts := render.Options{Release: render.Release{Name: "rel", Namespace: "ns", Upgrade: upgrade}, Values: vals(t, v), APIVersions: []string{"snapshot.storage.k8s.io/v1"}}
					if withCluster {
						opts.Cluster = cluster()
					}
					return opts
				})
			}
		}
	}
	for name, extra := range broken {
		for _, withCluster := range []bool{false, true} {
			n.requireSameAsHelm(t, fmt.Sprintf("%s (cluster %v)", name, withCluster), cornersChart(t, extra), func() render.Options {
				opts := render.Options{Release: render.Release{Name: "rel", Namespace: "ns"}, Values: vals(t, "{}")}
				if withCluster {
					opts.Cluster = cluster()
				}
				return opts
			})
		}
	}
	// The same chart after those, and two charts of one name with other
	// texts in one file: a render never reads another chart's parse.
	n.requireSameAsHelm(t, "the corners chart again", cornersChart(t, nil), func() render.Options {
		return render.Options{Release: render.Release{Name: "rel", Namespace: "ns"}, Values: vals(t, "{}")}
	})
	for _, text := range []string{"kind: A\n", "kind: B\n", "{{ fail \"C\" }}"} {
		n.requireSameAsHelm(t, "templates/other.yml as "+text, cornersChart(t, map[string]string{"templates/other.yml": text}), func() render.Options {
			return render.Options{Release: render.Release{Name: "rel", Namespace: "ns"}, Values: vals(t, "{}")}
		})
	}
	require.Greater(t, n.refusals, 20, "the corners reach Helm's failures")
	t.Logf("engine corners: %d renders, %d of them failed: the same under both engines", n.renders, n.refusals)
}
