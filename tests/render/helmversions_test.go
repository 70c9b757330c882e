package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"text/template"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/render/helmv4"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// render.Render renders with Helm v3's engine (the CLI's SDK); production
// renders with Helm v4.1 (Cozystack's helm-controller v1.5.0), and the
// newest v4 is what Flux and the Helm CLI move to. These tests hold the three
// to the same bytes and the same error text for every hostile value in every
// field and every hostile finding (schema on and off: the templates' own
// refusals), clusters that fail, and a chart made of the engine's corners the
// charts do not use (tpl, .Files, subcharts, parse errors, include depth,
// ...). TestHelmV3AndV4RenderTheSameBytes does the same for every golden case.

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
// them, the renders the schema refused before any template ran, the
// failures Helm v4 words otherwise than v3 (helmsOwnError), and the schema
// refusals Helm v4.1 does not make because it dropped a null first.
type engineComparison struct{ renders, refusals, schema, reworded, nullsDropped int }

// dropNulls is values without their null entries, at any depth of maps.
func dropNulls(values map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(values))
	for k, v := range values {
		switch v := v.(type) {
		case nil:
		case map[string]interface{}:
			out[k] = dropNulls(v)
		default:
			out[k] = v
		}
	}
	return out
}

// helmsOwnError: a render that failed with Go's template error as Helm v3
// passes it on (a nil pointer, a missing template, include's depth), not
// with the chart's refusal ("execution error at (...): <the chart's
// words>", which every Helm words alike). Helm v4 splits such an error over
// lines of its own (pkg/engine's TraceableError), by design.
func helmsOwnError(text string) bool {
	return strings.HasPrefix(text, "error: template: ")
}

// requireSameUnderEveryHelm renders under Helm v3, v4.1 and the newest v4,
// each with its own fresh options (a template may change the values it is
// given, and a cluster counts what it is asked), and fails at the first
// difference of text.
func (n *engineComparison) requireSameUnderEveryHelm(t testing.TB, what string, chrt *chart.Chart, opts func() render.Options) {
	t.Helper()
	v3 := outcomeOf(render.Render(chrt, opts()))
	v4s := []struct {
		name    string
		outcome engineOutcome
	}{
		{"v4.1", outcomeOf(helmV41(t).Render(chrt, opts()))},
		{"newest v4", outcomeOf(helmv4.Render(chrt, opts()))},
	}
	if v3.schema {
		// Refused before any template ran; the validator's list of
		// violations is not always in the same order from one run to the
		// next, under any Helm.
		if v4 := v4s[0].outcome.text; !strings.HasPrefix(v4, schemaRefusal) {
			// Helm v4.1's coalescing drops a null the values give for a key
			// whose chart default is null too, before the schema sees it
			// (v3 and v4.3 keep it): v4.1 renders the values without it.
			opts := opts()
			withoutNulls := outcomeOf(render.Render(chrt, render.Options{Release: opts.Release, Values: dropNulls(opts.Values), Cluster: opts.Cluster, APIVersions: opts.APIVersions}))
			if v4 != withoutNulls.text {
				t.Fatalf("%s: Helm v3's schema refuses, v4.1 gives %.300q, not what v3 renders of the values without their nulls: %.300q", what, v4, withoutNulls.text)
			}
			n.nullsDropped++
		}
		if v4 := v4s[1].outcome.text; !strings.HasPrefix(v4, schemaRefusal) {
			t.Fatalf("%s: Helm v3's schema refuses, the newest v4 gives %.300q", what, v4)
		}
		n.schema++
		return
	}
	if v3.text != v4s[0].outcome.text && helmsOwnError(v3.text) && v4s[0].outcome.text == v4s[1].outcome.text && strings.HasPrefix(v4s[0].outcome.text, "error: ") {
		// Helm's own words for a template that breaks (not the chart's
		// refusal): Helm v4 rewrites them, the same in v4.1 and the newest.
		n.reworded++
		n.renders++
		n.refusals++
		return
	}
	for _, v4 := range v4s {
		if line, a, b, differ := firstDifference(v3.text, v4.outcome.text); differ {
			t.Fatalf("%s: Helm v3 and %s differ at line %d:\n  v3: %q\n  %s: %q", what, v4.name, line, a, v4.name, b)
		}
	}
	n.renders++
	if strings.HasPrefix(v3.text, "error: ") {
		n.refusals++
	}
}

// schemaRefusal starts Helm's message for values its schema refuses (v3 and v4 alike).
const schemaRefusal = "error: values don't meet the specifications of the schema(s) in the following chart(s):\n"

func TestHelmVersionsRefuseAlike(t *testing.T) {
	var n engineComparison
	for _, hc := range hostileCharts() {
		chrt := hc.chart(t)
		for _, field := range hc.fields {
			for _, p := range hostilePayloads {
				for _, skip := range []bool{false, true} {
					rel := hc.release
					rel.SkipSchemaValidation = skip
					n.requireSameUnderEveryHelm(t, fmt.Sprintf("%s %s = %s (schema off: %v)", hc.name, field.name, p.name, skip), chrt, func() render.Options {
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
			n.requireSameUnderEveryHelm(t, fmt.Sprintf("finding %s (schema off: %v)", f.name, skip), c, func() render.Options {
				_, _, cluster := costChart(t, f.chart)
				return render.Options{Release: rel, Values: f.values(), Cluster: cluster}
			})
		}
	}
	require.Greater(t, hostile.refusals, 500, "the hostile values reach the charts' refusals")
	t.Logf("hostile values: %d renders, %d of them refused; with the hostile findings: %d renders, %d refused: the same under every Helm (and %d refused by the schema under v3 and the newest v4, %d of them rendered by v4.1 without a null, as v3 renders them; %d failures Helm v4 words its own way)", hostile.renders, hostile.refusals, n.renders, n.refusals, n.schema, n.nullsDropped, n.reworded)
}

// A cluster that answers with errors: the render fails on the lookup with
// the same message under every Helm.
func TestHelmVersionsFailOnTheClusterAlike(t *testing.T) {
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
			n.requireSameUnderEveryHelm(t, fmt.Sprintf("%s with %s failing", c.Name, kind), chrt, func() render.Options {
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
	t.Logf("%d renders against failing clusters, %d failed: the same under every Helm", n.renders, n.refusals)
}

// cornersChart exercises what Helm's engine does that the charts do not
// (yet) use, so every Helm is held to the same bytes there too: a subchart with
// its own values and a library chart, .Files, .Template, .Subcharts, tpl
// (with its own defines), a named template defined in several files (the
// parse order picks the winner; an empty definition never replaces one), a
// file of only definitions, NOTES.txt, Helm's conversion functions, lookups
// of a cluster, and every way a render fails. Not .Capabilities.KubeVersion:
// with no cluster each Helm has a default of its own (v3 v1.20.0, v4.1
// v1.35.0), a cluster gives its own, and no chart reads it.
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
  kube: {{ .Capabilities.APIVersions.Has "snapshot.storage.k8s.io/v1" }} {{ .Capabilities.APIVersions.Has "apps/v1" }}
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

func TestHelmVersionsRenderTheEngineCornersAlike(t *testing.T) {
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
				n.requireSameUnderEveryHelm(t, fmt.Sprintf("values %s (cluster %v, upgrade %v)", v, withCluster, upgrade), cornersChart(t, nil), func() render.Options {
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
			n.requireSameUnderEveryHelm(t, fmt.Sprintf("%s (cluster %v)", name, withCluster), cornersChart(t, extra), func() render.Options {
				opts := render.Options{Release: render.Release{Name: "rel", Namespace: "ns"}, Values: vals(t, "{}")}
				if withCluster {
					opts.Cluster = cluster()
				}
				return opts
			})
		}
	}
	// Two charts of one name with other texts in one file.
	n.requireSameUnderEveryHelm(t, "the corners chart again", cornersChart(t, nil), func() render.Options {
		return render.Options{Release: render.Release{Name: "rel", Namespace: "ns"}, Values: vals(t, "{}")}
	})
	for _, text := range []string{"kind: A\n", "kind: B\n", "{{ fail \"C\" }}"} {
		n.requireSameUnderEveryHelm(t, "templates/other.yml as "+text, cornersChart(t, map[string]string{"templates/other.yml": text}), func() render.Options {
			return render.Options{Release: render.Release{Name: "rel", Namespace: "ns"}, Values: vals(t, "{}")}
		})
	}
	require.Greater(t, n.refusals, 20, "the corners reach Helm's failures")
	require.Greater(t, n.renders-n.reworded, 60, "most corners render, or refuse, byte for byte alike")
	t.Logf("engine corners: %d renders, %d of them failed: the same under every Helm, but %d failures Helm v4 words its own way (the same in v4.1 and the newest)", n.renders, n.refusals, n.reworded)
}
