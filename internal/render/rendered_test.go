package render_test

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
)

// A render read as asked parses only the documents that can be of the kind
// asked for, and answers as the whole manifest does; read whole, a document
// that does not parse is the error NewManifest gives.
func TestRenderedParsesOnlyWhatIsAskedFor(t *testing.T) {
	files := map[string]string{
		"pool/templates/a.yaml":      "kind: ConfigMap\nmetadata: {name: ca}\ndata: {ca.crt: x}\n---\nkind: ConfigMap\nmetadata: {name: other}\n",
		"pool/templates/b.yaml":      "kind: MachineDeployment\nmetadata: {name: md}\n---\n# only a comment\n",
		"pool/templates/broken.yaml": "kind: Job\nmetadata: [unclosed\n",
		"pool/templates/facts.yaml":  "kind: Facts\npool: p\n",
		"pool/templates/NOTES.txt":   "not a manifest",
	}
	r := render.NewRendered(files)
	md, err := r.One("MachineDeployment")
	require.NoError(t, err)
	require.Equal(t, "md", md.Name())
	cm, ok := r.Find("ConfigMap", "ca")
	require.True(t, ok)
	require.Equal(t, "x", render.Get(cm.Object, "data[ca.crt]"))
	_, ok = r.Find("ConfigMap", "md")
	require.False(t, ok, "a document of another kind that holds the name")
	cms, err := r.OfKind("ConfigMap")
	require.NoError(t, err)
	require.Len(t, cms, 2)
	_, err = r.One("ConfigMap")
	require.EqualError(t, err, "want exactly one ConfigMap, the render has 2")

	text, ok := r.Take("pool/templates/facts.yaml")
	require.True(t, ok)
	require.Equal(t, "kind: Facts\npool: p\n", text)
	_, err = r.One("Facts")
	require.Error(t, err, "a file taken is out of the documents")

	// The Job does not parse: only reading it (or all) says so.
	_, err = r.OfKind("Job")
	require.ErrorContains(t, err, "pool/templates/broken.yaml: rendered YAML does not parse")
	_, err = r.Manifest()
	require.ErrorContains(t, err, "pool/templates/broken.yaml: rendered YAML does not parse")
	_, err = render.NewManifest(files)
	require.ErrorContains(t, err, "pool/templates/broken.yaml: rendered YAML does not parse")

	delete(files, "pool/templates/broken.yaml")
	whole, err := render.NewManifest(files)
	require.NoError(t, err)
	var kinds []string
	for _, d := range whole.Docs {
		kinds = append(kinds, d.Source+" "+d.Kind()+"/"+d.Name())
	}
	require.Equal(t, []string{"pool/templates/a.yaml ConfigMap/ca", "pool/templates/a.yaml ConfigMap/other", "pool/templates/b.yaml MachineDeployment/md", "pool/templates/facts.yaml Facts/"}, kinds)
}
