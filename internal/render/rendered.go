package render

import (
	"fmt"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"
)

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
