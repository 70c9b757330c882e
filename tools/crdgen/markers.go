package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// markerIndex holds the `// +...` comment markers of types and fields, read
// from the Go source of their packages (reflection cannot see comments).
type markerIndex struct {
	pkgs map[string]map[string][]string // package path -> "Type" or "Type.Field" -> markers
}

func newMarkerIndex() *markerIndex {
	return &markerIndex{pkgs: map[string]map[string][]string{}}
}

func (m *markerIndex) get(pkg, key string) []string {
	if pkg == "" {
		return nil
	}
	idx, ok := m.pkgs[pkg]
	if !ok {
		var err error
		if idx, err = loadMarkers(pkg); err != nil {
			// A schema without markers would be silently looser; refuse instead.
			fmt.Fprintf(os.Stderr, "crdgen: reading markers of %s: %v\n", pkg, err)
			os.Exit(1)
		}
		m.pkgs[pkg] = idx
	}
	return idx[key]
}

func loadMarkers(pkg string) (map[string][]string, error) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", pkg).Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", pkg, err)
	}
	dir := strings.TrimSpace(string(out))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	idx := map[string][]string{}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				idx[ts.Name.Name] = markerLines(doc)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, f := range st.Fields.List {
					markers := append(markerLines(f.Doc), markerLines(f.Comment)...)
					for _, n := range fieldNames(f) {
						idx[ts.Name.Name+"."+n] = markers
					}
				}
			}
		}
	}
	return idx, nil
}

func fieldNames(f *ast.Field) []string {
	if len(f.Names) > 0 {
		names := make([]string, len(f.Names))
		for i, n := range f.Names {
			names[i] = n.Name
		}
		return names
	}
	// Embedded: the field is named after its type.
	t := f.Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch t := t.(type) {
	case *ast.Ident:
		return []string{t.Name}
	case *ast.SelectorExpr:
		return []string{t.Sel.Name}
	}
	return nil
}

func markerLines(g *ast.CommentGroup) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, c := range g.List {
		text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		if strings.HasPrefix(text, "+") {
			out = append(out, text)
		}
	}
	return out
}

// applyMarkers applies the validation markers the schema carries.
func applyMarkers(s *apiextv1.JSONSchemaProps, markers []string) error {
	for _, m := range markers {
		key, value, _ := strings.Cut(m, "=")
		switch key {
		case "+kubebuilder:validation:Enum":
			for _, v := range strings.Split(value, ";") {
				raw, err := enumValue(s.Type, strings.TrimSpace(v))
				if err != nil {
					return fmt.Errorf("%s: %w", m, err)
				}
				s.Enum = append(s.Enum, apiextv1.JSON{Raw: raw})
			}
		case "+kubebuilder:validation:Minimum", "+kubebuilder:validation:Maximum":
			f, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			if key == "+kubebuilder:validation:Minimum" {
				s.Minimum = &f
			} else {
				s.Maximum = &f
			}
		case "+kubebuilder:pruning:PreserveUnknownFields", "+kubebuilder:validation:XPreserveUnknownFields":
			t := true
			s.XPreserveUnknownFields = &t
		case "+kubebuilder:validation:Schemaless":
			*s = preserveUnknown()
		}
	}
	return nil
}

func enumValue(typ, v string) ([]byte, error) {
	if unq, err := strconv.Unquote(v); err == nil {
		v = unq
	}
	if typ == "integer" || typ == "number" {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return nil, err
		}
		return []byte(v), nil
	}
	return json.Marshal(v)
}
