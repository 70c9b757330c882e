package output

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"
)

func TestTermSafeEscapesWhatATerminalActsOn(t *testing.T) {
	for in, want := range map[string]string{
		"talos-worker-abc-v1.13.6":           "talos-worker-abc-v1.13.6",
		"http://factory.mirror.internal/a b": "http://factory.mirror.internal/a b",
		"déjà vu, 日本":                        "déjà vu, 日本",
		"\x1b[2Jclear":                       `\x1b[2Jclear`,
		"bell\x07":                           `bell\a`,
		"line\r\nnext\ttab":                  `line\r\nnext\ttab`,
		"nul\x00del\x7f":                     `nul\x00del\x7f`,
		"c1\u009b":                           `c1\u009b`,
		"\u202eabc\u202c\u2066\u2069\u200f":  `\u202eabc\u202c\u2066\u2069\u200f`,
		"ls\u2028ps\u2029":                   `ls\u2028ps\u2029`,
		"bad\xff\xfe":                        `bad\xff\xfe`,
		"":                                   "",
	} {
		assert.Equal(t, want, TermSafe(in), "%q", in)
	}
	support.RequireTerminalSafe(t, "TermSafe(support.HostileText)", TermSafe(support.HostileText))
}

// fillStrings sets every string the value holds to support.HostileText, and gives
// every empty slice one element to fill, so a writer meets the payload in each
// field it prints.
func fillStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.Ptr:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillStrings(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				fillStrings(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
		}
		for i := 0; i < v.Len(); i++ {
			fillStrings(v.Index(i))
		}
	case reflect.String:
		v.SetString(support.HostileText)
	}
}

// Every text writer, given a report whose every string is hostile, prints
// nothing a terminal acts on; the same report as JSON reads back exactly.
func TestTextReportsEscapeEveryString(t *testing.T) {
	var plan report.PlanReport
	fillStrings(reflect.ValueOf(&plan))
	var pins report.PinsReport
	fillStrings(reflect.ValueOf(&pins))
	var roll report.RollReport
	fillStrings(reflect.ValueOf(&roll))
	roll.Pools[0].Base.Refusal, roll.Pools[0].Head.Refusal = "", ""
	roll.Pools[0].Diff = []string{support.HostileText}
	var adopt report.AdoptReport
	fillStrings(reflect.ValueOf(&adopt))
	for _, f := range adopt.Flavors {
		for _, c := range f.Classes {
			for i := range c.Pools {
				c.Pools[i].ValuesChange = map[string]any{"osImage": map[string]any{"builtin": map[string]any{"schematicID": support.HostileText, "version": support.HostileText}}}
			}
		}
	}
	adopt.Catalog.Changed = true
	adopt.Catalog.Values = catalogValuesYAML(adopt.Catalog)

	var moves rollout.RolloutPlan
	fillStrings(reflect.ValueOf(&moves))
	moves.Waves[0].Pools[0].ValuesChange = map[string]any{"talos": map[string]any{"version": support.HostileText}, "osImage": map[string]any{"factory": nil}}
	moves.Catalog.Changed = true
	moves.Catalog.Values = catalogValuesYAML(*moves.Catalog)
	var event rollout.RolloutEvent
	fillStrings(reflect.ValueOf(&event))

	var catalog report.CatalogReport
	fillStrings(reflect.ValueOf(&catalog))
	var version report.VersionReport
	fillStrings(reflect.ValueOf(&version))

	for _, width := range []int{0, 80} {
		o := Options{Format: "text", Width: width}
		for name, write := range map[string]func(*bytes.Buffer){
			"plan":      func(b *bytes.Buffer) { writePlanText(b, &plan, o) },
			"pins":      func(b *bytes.Buffer) { writePinsText(b, &pins, o) },
			"pins tree": func(b *bytes.Buffer) { writePinsTree(b, &pins) },
			"rollcheck": func(b *bytes.Buffer) { writeRollText(b, &roll, o) },
			"adopt":     func(b *bytes.Buffer) { writeAdoptText(b, &adopt, o) },
			"catalog":   func(b *bytes.Buffer) { writeCatalogPreviewText(b, &catalog, o) },
			"rollout":   func(b *bytes.Buffer) { writeRolloutText(b, &moves, o) },
			"event":     func(b *bytes.Buffer) { RolloutEvent(b, event, o) },
			"version":   func(b *bytes.Buffer) { Version(b, version, o) },
		} {
			var out bytes.Buffer
			write(&out)
			support.RequireTerminalSafe(t, name, out.String())
			assert.Contains(t, out.String(), TermSafe(support.HostileText)[:20], "%s prints the string, escaped", name)
		}
	}

	event.Plan = nil
	for name, report := range map[string]any{"plan": &plan, "pins": &pins, "rollcheck": &roll, "catalog": &catalog, "version": &version, "event": &event} {
		for _, format := range []string{"json", "yaml"} {
			var out bytes.Buffer
			require.True(t, structured(&out, report, Options{Format: format}))
			back := reflect.New(reflect.TypeOf(report).Elem())
			read := json.Unmarshal
			if format == "yaml" {
				read = func(b []byte, v any) error { return sigsyaml.Unmarshal(b, v) }
			}
			require.NoError(t, read(out.Bytes(), back.Interface()), name)
			assert.Equal(t, report, back.Interface(), "%s -o %s reads back exactly", name, format)
		}
	}
}

// Prose wraps to a terminal's width under where it started, at spaces; a
// pipe (width 0) gets each item on one line; a word wider than the room
// stays whole; what is not prose (YAML to paste) never wraps.
func TestLongLinesWrapOnATerminalOnly(t *testing.T) {
	long := "refused: pool kubernetes-beta-web: its disks would be on StorageClass ceph-rbd but golden talos-worker-x is on replicated; set storageClass to replicated"
	build := func(width int) string {
		tb := table{width: width}
		tb.row("result", long)
		tb.raw("    - schematicID: " + strings.Repeat("a", 70) + " " + strings.Repeat("b", 20))
		tb.wrap("    refused at head: " + long)
		var out bytes.Buffer
		tb.write(&out)
		return out.String()
	}
	piped := build(0)
	assert.Equal(t, 3, strings.Count(piped, "\n"), "one line each on a pipe: %s", piped)

	wrapped := build(60)
	lines := strings.Split(strings.TrimSuffix(wrapped, "\n"), "\n")
	require.Greater(t, len(lines), 3, wrapped)
	assert.Equal(t, "result  refused: pool kubernetes-beta-web: its disks would", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "        be on"), "continued under the cell: %q", lines[1])
	for _, l := range lines {
		if !strings.Contains(l, "schematicID") {
			assert.LessOrEqual(t, len(l), 60, "%q", l)
		}
	}
	assert.Contains(t, wrapped, "    - schematicID: "+strings.Repeat("a", 70)+" "+strings.Repeat("b", 20)+"\n", "not prose: never wrapped")
	assert.Contains(t, wrapped, "\n      ", "a wrapped raw line goes on two columns in")
	assert.Equal(t, strings.Fields(piped), strings.Fields(wrapped), "the same words")

	assert.Equal(t, "a  "+strings.Repeat("x", 80), wrapText("a  "+strings.Repeat("x", 80), 3, 3, 40), "one word wider than the room stays whole")
}

func TestTableAlignsColumnsAcrossRawLines(t *testing.T) {
	var tb table
	tb.row("a", "one", "x")
	tb.raw("  free text")
	tb.row("longer", "2", "y")
	var out bytes.Buffer
	tb.write(&out)
	assert.Equal(t, "a       one  x\n  free text\nlonger  2    y\n", out.String())
}

// What keeps pins from concluding, the objects not read as pools and the
// catalog CAs X.509 finds wanting each have their lines, after the verdicts.
func TestPinsTextNamesUnreadNamespacesIgnoredObjectsAndCAProblems(t *testing.T) {
	r := &report.PinsReport{
		Cluster: "state file x", Chart: "kubernetes-nodes",
		Goldens:          []report.GoldenPins{{Name: "talos-worker-abc-v1.13.6", FoundAs: "DataVolume", Phase: "Succeeded", NotConcluded: true}},
		Flavors:          []report.FlavorPins{{Flavor: "talos-worker-abc-v1.13.6", SchematicID: "abc", Version: "v1.13.6", Goldens: []string{"talos-worker-abc-v1.13.6"}}},
		UnreadNamespaces: []fleet.UnreadNamespace{{Namespace: "tenant-acme", Objects: []string{"tenant-acme/MachineDeployment/kubernetes-acme-w"}}},
		Ignored:          []fleet.Ignored{{Object: "Secret tenant-evil/sh.helm.release.v1.x.v1", Reason: "its body names release \"x\" in namespace \"tenant-acme\""}},
		CAProblems:       []report.CAConfigMapProblems{{ConfigMap: "cozy-public/kubernetes-worker-image-ca", Problems: []string{"certificate 1 of 1 (CN=Old) expired on 2020-01-01T00:00:00Z: TLS refuses a chain through it"}}},
	}
	var out bytes.Buffer
	Pins(&out, r, Options{Format: "text"}, false)
	text := out.String()
	assert.Contains(t, text, "talos-worker-abc-v1.13.6  (DataVolume, phase Succeeded)  not concluded: nothing read uses it, but some namespaces' pools could not be read (below)\n")
	assert.Contains(t, text, "\nunused goldens (safe to delete): not concluded while the pools of 1 namespace could not be read (below)\n")
	assert.Contains(t, text, "\ncatalog CAs with certificates CDI's importer cannot use as a CA (goldens imported with them from now on may fail TLS; fix the catalog's imageFactoryCA):\n  ConfigMap cozy-public/kubernetes-worker-image-ca: certificate 1 of 1 (CN=Old) expired on 2020-01-01T00:00:00Z: TLS refuses a chain through it\n")
	assert.Contains(t, text, "\n  namespace tenant-acme: 1 pool object: tenant-acme/MachineDeployment/kubernetes-acme-w\n")
	assert.Contains(t, text, "\n  Secret tenant-evil/sh.helm.release.v1.x.v1: its body names release \"x\" in namespace \"tenant-acme\"\n")
}
