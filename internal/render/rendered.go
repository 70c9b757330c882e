package render

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"sigs.k8s.io/yaml"
)

// Render renders chrt as `helm install` (or `helm upgrade`, or `helm
// template` with no cluster) does, with Helm v3's own values, schema check
// and engine (engine.Render, or engine.RenderWithClientProvider with a
// cluster), as Flux's helm-controller calls them. It returns the manifest,
// or Helm's error (a template `fail`, a schema violation), a *LookupError
// when the cluster answered a lookup with an error, or ErrValuesTooDeep
// before Helm copies values nested past MaxValuesDepth. Helm v4 renders
// through package helmv4, which the CLI does not link.
func Render(chrt *chart.Chart, opts Options) (*Manifest, error) {
	r, err := RenderLazy(chrt, opts)
	if err != nil {
		return nil, err
	}
	return r.Manifest()
}

// RenderLazy renders as Render does, and leaves each document unread until
// it is asked for (Rendered): a report that reads a few objects of a render
// does not parse the others. Helm's work is the same.
func RenderLazy(chrt *chart.Chart, opts Options) (*Rendered, error) {
	if h := observer.Load(); h != nil {
		(*h)(chrt, opts)
	}
	if err := CheckValues(opts.Values); err != nil {
		return nil, err
	}
	// Helm's own coalescing and schema check, in Helm's own words.
	vals, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, opts.Values, chartutil.ReleaseOptions{
		Name:      opts.Release.Name,
		Namespace: opts.Release.Namespace,
		Revision:  opts.Release.Revision(),
		IsInstall: !opts.Release.Upgrade,
		IsUpgrade: opts.Release.Upgrade,
	}, opts.Capabilities(), opts.Release.SkipSchemaValidation)
	if err != nil {
		if !opts.Release.SkipSchemaValidation && strings.HasPrefix(err.Error(), helmSchemaRefusal) {
			return nil, &SchemaError{Err: err}
		}
		return nil, err
	}
	var files map[string]string
	if p := opts.Provider(); p == nil {
		files, err = renderFiles(chrt, func() (map[string]string, error) { return engine.Render(chrt, vals) })
	} else {
		rec := &recordingProvider{inner: p}
		files, err = renderFiles(chrt, func() (map[string]string, error) { return engine.RenderWithClientProvider(chrt, vals, rec) })
		if cause := rec.failure(); err != nil && cause != nil && !errors.Is(err, ErrTooSlow) {
			return nil, &LookupError{Err: cause, render: err}
		}
	}
	if err != nil {
		return nil, err
	}
	return NewRendered(files), nil
}

// NewManifest orders an engine's rendered files as `helm template` prints them.
func NewManifest(files map[string]string) (*Manifest, error) {
	return NewRendered(files).Manifest()
}

// manifestFiles are the rendered files `helm template` prints, in its order.
func manifestFiles(files map[string]string) []string {
	names := make([]string, 0, len(files))
	for name := range files {
		if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Rendered is a render's documents as Helm's engine wrote them, each parsed
// only when first asked for. A plan reads a few objects of each pool's
// render (its machine template, its MachineDeployment, its CA); parsing
// every document of every render into objects was most of what a fleet's
// plan spent beyond Helm's own renders. Manifest parses them all, as
// NewManifest does.
type Rendered struct {
	files map[string]string
	docs  []*lazyDoc
}

type lazyDoc struct {
	source, text string
	once         sync.Once
	obj          map[string]any
	err          error
}

func (d *lazyDoc) parse() (map[string]any, error) {
	d.once.Do(func() {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(d.text), &obj); err != nil {
			d.err = fmt.Errorf("%s: rendered YAML does not parse: %w\n%s", d.source, err, d.text)
			return
		}
		d.obj = obj
	})
	return d.obj, d.err
}

// NewRendered holds an engine's rendered files, in the order `helm
// template` prints them, unread.
func NewRendered(files map[string]string) *Rendered {
	r := &Rendered{files: files}
	for _, name := range manifestFiles(files) {
		for _, text := range SplitDocuments(files[name]) {
			r.docs = append(r.docs, &lazyDoc{source: name, text: text})
		}
	}
	return r
}

// File is one rendered file's text as the engine wrote it, and whether the
// render has it.
func (r *Rendered) File(name string) (string, bool) {
	text, ok := r.files[name]
	return text, ok
}

// Manifest parses every document, as NewManifest does (its errors alike).
func (r *Rendered) Manifest() (*Manifest, error) {
	m := &Manifest{}
	for _, d := range r.docs {
		obj, err := d.parse()
		if err != nil {
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		m.Docs = append(m.Docs, Doc{Source: d.source, Text: d.text, Object: obj})
	}
	return m, nil
}

// OfKind returns every document of that kind, in manifest order, parsing
// only the documents whose text holds the kind's name: a document of that
// kind writes it (`kind: X`), and each one parsed is then checked for it.
// A document that does not parse is an error, as it is for Manifest.
func (r *Rendered) OfKind(kind string) ([]Doc, error) {
	var out []Doc
	for _, d := range r.docs {
		if !strings.Contains(d.text, kind) {
			continue
		}
		obj, err := d.parse()
		if err != nil {
			return nil, err
		}
		if doc := (Doc{Source: d.source, Text: d.text, Object: obj}); len(obj) > 0 && doc.Kind() == kind {
			out = append(out, doc)
		}
	}
	return out, nil
}

// One returns the only document of that kind, or an error naming how many
// there were.
func (r *Rendered) One(kind string) (Doc, error) {
	docs, err := r.OfKind(kind)
	if err != nil {
		return Doc{}, err
	}
	if len(docs) != 1 {
		return Doc{}, fmt.Errorf("want exactly one %s, the render has %d", kind, len(docs))
	}
	return docs[0], nil
}

// Find returns the document of that kind and name.
func (r *Rendered) Find(kind, name string) (Doc, bool) {
	for _, d := range r.docs {
		if !strings.Contains(d.text, kind) || !strings.Contains(d.text, name) {
			continue
		}
		obj, err := d.parse()
		if err != nil || len(obj) == 0 {
			continue
		}
		if doc := (Doc{Source: d.source, Text: d.text, Object: obj}); doc.Kind() == kind && doc.Name() == name {
			return doc, true
		}
	}
	return Doc{}, false
}

// Take removes the documents of one rendered file (the engine's name for
// it: chart/templates/...) and returns the file's text: a file a tool added
// to read the chart's answers (WithTemplate), kept out of the manifest.
func (r *Rendered) Take(file string) (string, bool) {
	text, ok := r.files[file]
	if !ok {
		return "", false
	}
	kept := r.docs[:0:0]
	for _, d := range r.docs {
		if d.source != file {
			kept = append(kept, d)
		}
	}
	r.docs = kept
	return text, true
}
