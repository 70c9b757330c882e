package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileText holds what a tenant can put in a string the CLI prints: clear
// screen, an OSC 8 link, an OSC 52 clipboard write, BEL, a carriage return, a
// newline, NUL, DEL, a C1 CSI, bidi overrides and isolates and a line
// separator (an API object holds only UTF-8; file names are tested with a
// byte that is not).
const hostileText = "a\x1b[2J\x1b]8;;http://evil/\x07link\x1b]8;;\x07\x1b]52;c;cm0gLXJm\x07\r\nb\x00\x7f\u009b31m\u202egnp.exe\u2066\u2069\u2028z"

// requireTerminalSafe fails when text holds anything a terminal acts on, other
// than the newlines that end its lines.
func requireTerminalSafe(t *testing.T, what, text string) {
	t.Helper()
	for i, r := range text {
		if r == '\n' {
			continue
		}
		if r == utf8.RuneError || !strconv.IsPrint(r) && r != ' ' {
			t.Fatalf("%s: byte %d is %q, which a terminal would act on:\n%s", what, i, r, text)
		}
	}
}

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
		assert.Equal(t, want, termSafe(in), "%q", in)
	}
	requireTerminalSafe(t, "termSafe(hostileText)", termSafe(hostileText))
}

// fillStrings sets every string the value holds to hostileText, and gives
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
		v.SetString(hostileText)
	}
}

// Every text writer, given a report whose every string is hostile, prints
// nothing a terminal acts on; the same report as JSON reads back exactly.
func TestTextReportsEscapeEveryString(t *testing.T) {
	var plan planReport
	fillStrings(reflect.ValueOf(&plan))
	var pins pinsReport
	fillStrings(reflect.ValueOf(&pins))
	var roll rollReport
	fillStrings(reflect.ValueOf(&roll))
	roll.Pools[0].Base.Refusal, roll.Pools[0].Head.Refusal = "", ""
	roll.Pools[0].Diff = []string{hostileText}
	var adopt adoptReport
	fillStrings(reflect.ValueOf(&adopt))
	for _, f := range adopt.Flavors {
		for _, c := range f.Classes {
			for i := range c.Pools {
				c.Pools[i].ValuesChange = map[string]interface{}{"osImage": map[string]interface{}{"builtin": map[string]interface{}{"schematicID": hostileText, "version": hostileText}}}
			}
		}
	}
	adopt.Catalog.Changed = true
	adopt.Catalog.Values = catalogValuesYAML(adopt.Catalog.Images)

	for name, write := range map[string]func(*bytes.Buffer){
		"plan":      func(b *bytes.Buffer) { writePlanText(b, &plan) },
		"pins":      func(b *bytes.Buffer) { writePinsText(b, &pins) },
		"rollcheck": func(b *bytes.Buffer) { writeRollText(b, &roll) },
		"adopt":     func(b *bytes.Buffer) { writeAdoptText(b, &adopt) },
	} {
		var out bytes.Buffer
		write(&out)
		requireTerminalSafe(t, name, out.String())
		assert.Contains(t, out.String(), termSafe(hostileText), "%s prints the string, escaped", name)
	}

	for name, report := range map[string]interface{}{"plan": &plan, "pins": &pins, "rollcheck": &roll} {
		var out bytes.Buffer
		writeJSON(&out, report)
		back := reflect.New(reflect.TypeOf(report).Elem())
		require.NoError(t, json.Unmarshal(out.Bytes(), back.Interface()), name)
		assert.Equal(t, report, back.Interface(), "%s -o json reads back exactly", name)
	}
}

// End to end: PVC annotations a tenant sets reach pins' text escaped and its
// JSON exact; a hostile file name reaches rollcheck's text escaped; the one
// line of a problem on stderr is escaped too.
func TestHostileClusterStringsAreEscapedInText(t *testing.T) {
	pvc := fmt.Sprintf(`---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: kubernetes-acme-evil-1a2b3c-aaaaa-disk-system
  namespace: tenant-acme
  annotations:
    kubernetes-worker-image.cozystack.io/golden: %q
    kubernetes-worker-image.cozystack.io/pool: kubernetes-acme-evil
    cdi.kubevirt.io/cloneType: %q
    cdi.kubevirt.io/cloneFallbackReason: %q
`, goldenName("v1.13.6"), hostileText, hostileText)
	state := stateWith(t, "cluster", pvc)
	report, text := pinsOfFile(t, state)
	requireTerminalSafe(t, "pins", text)
	assert.Contains(t, text, `\x1b]52;c;cm0gLXJm\a`, "the clipboard write is shown, not sent")
	found := false
	for _, d := range report.HostAssisted {
		if d.Name == "kubernetes-acme-evil-1a2b3c-aaaaa-disk-system" {
			found = true
			assert.Equal(t, hostileText, d.FallbackReason, "JSON holds the annotation exactly")
			assert.Equal(t, hostileText, d.CloneType)
		}
	}
	assert.True(t, found, "the disk is reported as a host-assisted copy")

	missing := cli(t, "plan", "-values", "/nonexistent/\x1b[2J\u202e\xff.yaml")
	assert.Equal(t, exitProblem, missing.code)
	requireTerminalSafe(t, "stderr", strings.TrimSuffix(missing.stderr, "\n"))
	assert.Contains(t, missing.stderr, `\x1b[2J\u202e\xff.yaml`)

	// rollcheck lists each values file by its name.
	dir := t.TempDir()
	name := filepath.Join(dir, "evil\x1b]52;c;cm0gLXJm\x07\u202e.yaml")
	require.NoError(t, os.WriteFile(name, []byte("cluster: acme\n"), 0o600))
	roll := cli(t, "rollcheck", "-base", support.RepoRoot(), "-head", support.RepoRoot(), "-values", filepath.Join(dir, "*.yaml"))
	require.NotEqual(t, exitProblem, roll.code, "stderr: %s", roll.stderr)
	requireTerminalSafe(t, "rollcheck", roll.stdout)
	assert.Contains(t, roll.stdout, `evil\x1b]52;c;cm0gLXJm\a\u202e.yaml`)
}

// plan -o yaml writes a refusal as YAML comments: escaped, so no refusal
// quoting a hostile name ends a comment and starts data.
func TestPlanYAMLRefusalCommentsAreEscaped(t *testing.T) {
	res := cli(t, "plan", "-values", td("pools", "http.yaml"), "-release", "evil\x1b[2J\r\nkind: Secret\u202e", "-o", "yaml")
	require.Equal(t, exitAttn, res.code, res.stderr)
	requireTerminalSafe(t, "plan -o yaml", res.stdout)
	for _, line := range strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n") {
		assert.True(t, strings.HasPrefix(line, "# "), "only comments: %q", line)
	}
	assert.Contains(t, res.stdout, `evil\x1b[2J\r\nkind: Secret\u202e`)
}
