package render

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
)

// A text is parsed once: the same name and text give the parse already made,
// another text or the same text under another name (its errors and its
// trees name the file) a parse of its own; a parse error is kept too.
func TestTemplateTextParsedOnce(t *testing.T) {
	text := []byte(`{{ define "x" }}x{{ end }}a: {{ include "x" . }}`)
	first := parsedFile("c/templates/a.yaml", text)
	require.NoError(t, first.err)
	assert.Len(t, first.trees, 2, "the file's own tree and the one it defines")
	assert.Same(t, first, parsedFile("c/templates/a.yaml", append([]byte(nil), text...)), "the same text, another slice")
	assert.NotSame(t, first, parsedFile("c/templates/b.yaml", text))
	assert.NotSame(t, first, parsedFile("c/templates/a.yaml", append(text, '\n')))

	broken := parsedFile("c/templates/broken.yaml", []byte("{{ nosuch }}"))
	require.Error(t, broken.err)
	assert.Contains(t, broken.err.Error(), `c/templates/broken.yaml:1: function "nosuch" not defined`)
	assert.Same(t, broken, parsedFile("c/templates/broken.yaml", []byte("{{ nosuch }}")))
}

// Texts of a caller's own (a probe generated per render) cannot grow the
// cache without end: past its bound it starts over, and what it parses
// again is parsed as before.
func TestParseCacheStartsOverPastItsBound(t *testing.T) {
	kept := parsedFile("c/templates/kept.yaml", []byte("kept: {{ .Values.x }}"))
	filler := []byte("# " + strings.Repeat("x", 1<<20) + "\n")
	for i := 0; i <= maxParseCacheBytes>>20; i++ {
		parsedFile(fmt.Sprintf("c/templates/filler-%d.yaml", i), filler)
		parseCache.Lock()
		held := parseCache.bytes
		parseCache.Unlock()
		require.LessOrEqual(t, held, maxParseCacheBytes)
	}
	again := parsedFile("c/templates/kept.yaml", []byte("kept: {{ .Values.x }}"))
	assert.NotSame(t, kept, again, "the cache started over")
	assert.Equal(t, kept.trees["c/templates/kept.yaml"].Root.String(), again.trees["c/templates/kept.yaml"].Root.String())
}

// Renders at once share the parsed trees and nothing else: each gets what
// it gets alone, its .Template, its includes and its values.
func TestRendersAtOnceShareOnlyTheParse(t *testing.T) {
	c := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "c", Version: "0.1.0"},
		Templates: []*chart.File{
			{Name: "templates/_h.tpl", Data: []byte(`{{ define "c.n" }}{{ .Values.n }}-{{ .Template.Name }}{{ end }}`)},
			// b.yaml runs first (Helm's order) and leaves a value a.yaml reads.
			{Name: "templates/a.yaml", Data: []byte("a: {{ include \"c.n\" . }} {{ .Values.seen }}\nt: {{ tpl \"{{ .Values.n }}\" . }}\n")},
			{Name: "templates/b.yaml", Data: []byte("b: {{ include \"c.n\" . }}\n{{- $_ := set .Values \"seen\" \"b\" }}")},
		},
	}
	render := func(with func(*chart.Chart, Options) (*Manifest, error), n int) string {
		m, err := with(c, Options{Release: Release{Name: "r", Namespace: "ns"}, Values: map[string]any{"n": n}})
		require.NoError(t, err)
		return m.Text()
	}
	want := map[int]string{}
	for n := range 8 {
		want[n] = render(RenderWithHelm, n)
	}
	require.Equal(t, "---\n# Source: c/templates/a.yaml\na: 3-c/templates/a.yaml b\nt: 3\n---\n# Source: c/templates/b.yaml\nb: 3-c/templates/b.yaml\n", want[3])
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				n := i % 8
				assert.Equal(t, want[n], render(Render, n))
			}
		}()
	}
	wg.Wait()
}
