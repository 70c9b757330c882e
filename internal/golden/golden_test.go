package golden

import (
	"strings"
	"testing"

	charts "github.com/cozystack/golden-worker-images"
	"github.com/cozystack/golden-worker-images/internal/render"
)

// flavors are names as operators write them, and the edges of the rule:
// a schematicID with "-v" inside, pre-release and build versions, classes
// with dots and dashes.
var flavors = []struct{ schematicID, version, class string }{
	{"376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba", "v1.10.6", "replicated"},
	{"abc-v2-def", "v1.11.0-beta.1", "local-path.ssd"},
	{"s", "v1.9.5+build.7", "a--b"},
	{"x", "v2.0.0", "c"},
}

// TestNamesAreTheChartsNames renders worker-image-lib's goldenName,
// perClassGoldenName and imageURL for each flavor and compares them with
// Name, PerClassName and ImagePath, then reads each name back with Parse.
func TestNamesAreTheChartsNames(t *testing.T) {
	lib, err := render.LoadChartFS(charts.FS, "packages/library/worker-image-lib")
	if err != nil {
		t.Fatal(err)
	}
	// A library chart does not render on its own: the same templates as an
	// application chart with one template calling the helpers.
	lib.Metadata.Type = "application"
	tpl := strings.Builder{}
	tpl.WriteString("kind: Names\nnames:\n")
	for _, f := range flavors {
		d := `(dict "schematicID" "` + f.schematicID + `" "version" "` + f.version + `" "class" "` + f.class + `" "imageFactoryURL" "https://factory.example")`
		tpl.WriteString(`- {{ include "worker-image-lib.goldenName" ` + d + ` | quote }}` + "\n")
		tpl.WriteString(`- {{ include "worker-image-lib.perClassGoldenName" ` + d + ` | quote }}` + "\n")
		tpl.WriteString(`- {{ include "worker-image-lib.imageURL" ` + d + ` | quote }}` + "\n")
	}
	m, err := render.Render(render.WithTemplate(lib, "templates/names.yaml", []byte(tpl.String())), render.Options{Release: render.Release{Name: "names", Namespace: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := m.One("Names")
	if err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, n := range render.Get(doc.Object, "names").([]any) {
		rendered = append(rendered, n.(string))
	}
	if len(rendered) != 3*len(flavors) {
		t.Fatalf("rendered %d lines, want %d:\n%s", len(rendered), 3*len(flavors), strings.Join(rendered, "\n"))
	}
	for i, f := range flavors {
		plain, perClass, url := rendered[3*i], rendered[3*i+1], rendered[3*i+2]
		if got := Name(f.schematicID, f.version); got != plain {
			t.Errorf("Name(%q, %q) = %q, the chart's goldenName %q", f.schematicID, f.version, got, plain)
		}
		if got := PerClassName(f.schematicID, f.version, f.class); got != perClass {
			t.Errorf("PerClassName(%q, %q, %q) = %q, the chart's perClassGoldenName %q", f.schematicID, f.version, f.class, got, perClass)
		}
		if got := "https://factory.example" + ImagePath(f.schematicID, f.version); got != url {
			t.Errorf("ImagePath(%q, %q) = %q, the chart's imageURL %q", f.schematicID, f.version, got, url)
		}
		for name, class := range map[string]string{plain: "", perClass: f.class} {
			want := Flavor{Plain: plain, SchematicID: f.schematicID, Version: f.version, Class: class}
			if got, ok := Parse(name); !ok || got != want {
				t.Errorf("Parse(%q) = %+v, %v; want %+v, true", name, got, ok, want)
			}
		}
	}
}

// TestParseRefusesOtherNames: a name the catalog does not build is not read
// as a flavor, and stays whole as Plain.
func TestParseRefusesOtherNames(t *testing.T) {
	for _, name := range []string{"talos-worker-", "talos-worker-abc", "talos-worker-v1.2.3", "ubuntu-22.04", "talos-worker-abc-1.2.3"} {
		if f, ok := Parse(name); ok || f != (Flavor{Plain: name}) {
			t.Errorf("Parse(%q) = %+v, %v; want not a flavor", name, f, ok)
		}
	}
}

// Parse reads back what Name and PerClassName write, however the parts
// hold "--" and "-v".
func TestParseSplitsTheCatalogsNames(t *testing.T) {
	for _, c := range []struct{ schematicID, version, class string }{
		{"376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba", "v1.13.6", ""},
		{"376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba", "v1.13.6", "fast"},
		{"abc--def-v1", "v1.13.0-alpha.1", ""},       // a schematicID may hold "--" and "-v1"
		{"abc--def-v1", "v1.13.0-alpha.1", "a--b.c"}, // so may a class
		{"x", "v2.0.10", "ceph-rbd-v1.2"},
	} {
		name := Name(c.schematicID, c.version)
		if c.class != "" {
			name = PerClassName(c.schematicID, c.version, c.class)
		}
		f, ok := Parse(name)
		if !ok || f != (Flavor{Plain: Name(c.schematicID, c.version), SchematicID: c.schematicID, Version: c.version, Class: c.class}) {
			t.Errorf("Parse(%q) = %+v, %v", name, f, ok)
		}
	}
	for _, name := range []string{"talos-worker-custom", "talos-worker-v1.2", "vm-image-ubuntu"} {
		if f, ok := Parse(name); ok || f.Plain != name {
			t.Errorf("Parse(%q) = %+v, %v; a name the catalog does not build is its own flavor", name, f, ok)
		}
	}
}
