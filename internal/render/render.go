// Package render renders the charts with Helm v3's own engine
// (helm.sh/helm/v3/pkg/engine: its Render, and RenderWithClientProvider for
// lookups) against a cluster (a cluster-state file, a live cluster, or none),
// the way `helm install` and `helm template` do and as Flux's helm-controller
// calls it, so that the operator CLI and the tests see exactly the bytes Helm
// would apply. None of Helm's code is carried here: Helm is called. It holds
// no test doubles: those live in tests/support.
package render

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync/atomic"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"sigs.k8s.io/yaml"
)

// Chart paths relative to the repository root.
const (
	PoolChart     = "packages/apps/kubernetes-nodes"
	CatalogChart  = "packages/system/kubernetes-worker-image"
	PlatformChart = "packages/core/platform"
)

// LoadChart loads a chart folder, as `helm install DIR` does.
func LoadChart(dir string) (*chart.Chart, error) {
	return loader.Load(dir)
}

// Release describes the release a render is for.
type Release struct {
	Name      string
	Namespace string
	// Upgrade renders as `helm upgrade` does (Release.IsUpgrade, revision 2).
	Upgrade bool
	// SkipSchemaValidation renders as `helm install --skip-schema-validation`,
	// which reaches the template's own guards behind the schema.
	SkipSchemaValidation bool
}

// Options for one render. A nil Cluster renders with no cluster at all, as
// `helm template` does: every lookup answers an empty map.
type Options struct {
	Release Release
	Values  map[string]any
	Cluster engine.ClientProvider
	// APIVersions are served on top of Helm's defaults, as a cluster's
	// discovery would add them to .Capabilities.APIVersions ("group/version"
	// or "group/version/Kind"), so a chart that asks before it looks a kind up
	// can be rendered with and without it.
	APIVersions []string
}

// Capabilities is Helm's default capabilities plus opts.APIVersions.
func (o Options) Capabilities() *chartutil.Capabilities {
	caps := *chartutil.DefaultCapabilities
	caps.APIVersions = append(append(chartutil.VersionSet{}, caps.APIVersions...), o.APIVersions...)
	return &caps
}

// Provider is the cluster to render against, or nil for none. A nil pointer
// held in the interface counts as none too, so callers can pass their *T
// straight through.
func (o Options) Provider() engine.ClientProvider {
	if o.Cluster == nil {
		return nil
	}
	if v := reflect.ValueOf(o.Cluster); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return o.Cluster
}

// Revision is the release revision Helm gives the render: 1 installs, 2 upgrades.
func (r Release) Revision() int {
	if r.Upgrade {
		return 2
	}
	return 1
}

// observer is told of each Render before it runs (Observe).
var observer atomic.Pointer[func(*chart.Chart, Options)]

// Observe has f told of every Render from now on, before Helm runs it (nil:
// no longer): how a test counts the renders a verb makes, and a benchmark
// replays them through Helm alone. f may be called from several goroutines
// at once.
func Observe(f func(chrt *chart.Chart, opts Options)) {
	if f == nil {
		observer.Store(nil)
		return
	}
	observer.Store(&f)
}

// Manifest is a render's documents in the order Helm prints them for
// `helm template`: by template file name, then by position in the file.
type Manifest struct {
	Docs []Doc
}

// Doc is one rendered YAML document: its exact text and its parsed object.
type Doc struct {
	Source string
	Text   string
	Object map[string]any
}

// Kind, Name and Namespace read the document's identity.
func (d Doc) Kind() string      { return str(d.Object["kind"]) }
func (d Doc) Name() string      { return str(Get(d.Object, "metadata.name")) }
func (d Doc) Namespace() string { return str(Get(d.Object, "metadata.namespace")) }

func str(v any) string {
	s, _ := v.(string)
	return s
}

// SplitDocuments splits a multi-document YAML stream on `---` lines and drops
// empty documents, keeping each document's bytes as rendered.
func SplitDocuments(stream string) []string {
	var docs []string
	var cur []string
	flush := func() {
		text := strings.Trim(strings.Join(cur, "\n"), "\n")
		if strings.TrimSpace(text) != "" {
			docs = append(docs, text+"\n")
		}
		cur = cur[:0]
	}
	for _, line := range strings.Split(stream, "\n") {
		if line == "---" || strings.HasPrefix(line, "--- ") {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return docs
}

// Text joins the documents as `helm template` prints them.
func (m *Manifest) Text() string {
	var b strings.Builder
	for _, d := range m.Docs {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s", d.Source, d.Text)
	}
	return b.String()
}

// Find returns the document of that kind and name.
func (m *Manifest) Find(kind, name string) (Doc, bool) {
	for _, d := range m.Docs {
		if d.Kind() == kind && d.Name() == name {
			return d, true
		}
	}
	return Doc{}, false
}

// OfKind returns every document of that kind, in manifest order.
func (m *Manifest) OfKind(kind string) []Doc {
	var out []Doc
	for _, d := range m.Docs {
		if d.Kind() == kind {
			out = append(out, d)
		}
	}
	return out
}

// One returns the only document of that kind, or an error naming how many there were.
func (m *Manifest) One(kind string) (Doc, error) {
	docs := m.OfKind(kind)
	if len(docs) != 1 {
		return Doc{}, fmt.Errorf("want exactly one %s, the render has %d", kind, len(docs))
	}
	return docs[0], nil
}

// Get reads a dotted path such as "spec.template.spec.dataVolumeTemplates.0.metadata.name";
// a numeric segment indexes a list. A key that itself holds dots is written in
// brackets: "metadata.annotations[helm.sh/resource-policy]". A missing step gives nil.
func Get(obj any, path string) any {
	cur := obj
	for _, seg := range splitPath(path) {
		switch node := cur.(type) {
		case map[string]any:
			cur = node[seg]
		case []any:
			var i int
			if _, err := fmt.Sscanf(seg, "%d", &i); err != nil || i < 0 || i >= len(node) {
				return nil
			}
			cur = node[i]
		default:
			return nil
		}
	}
	return cur
}

func splitPath(path string) []string {
	var segs []string
	for path != "" {
		if strings.HasPrefix(path, "[") {
			end := strings.Index(path, "]")
			if end < 0 {
				segs = append(segs, path[1:])
				break
			}
			segs = append(segs, path[1:end])
			path = strings.TrimPrefix(path[end+1:], ".")
			continue
		}
		next := strings.IndexAny(path, ".[")
		if next < 0 {
			segs = append(segs, path)
			break
		}
		segs = append(segs, path[:next])
		path = strings.TrimPrefix(path[next:], ".")
	}
	return segs
}

// MaxValuesBytes bounds a values file, standard input alike, as the API
// bounds what it stores (a Secret or ConfigMap holds at most 1 MiB): no
// values file is larger, and /dev/zero is not read to the end.
const MaxValuesBytes = 1 << 20

// ReadValues reads a values file (YAML) into the map Helm would merge, at
// most MaxValuesBytes of it.
func ReadValues(path string) (map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadValuesFrom(f)
}

// ReadValuesFrom reads one values document from r (a file, standard input),
// refusing one larger than MaxValuesBytes before it is parsed.
func ReadValuesFrom(r io.Reader) (map[string]any, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxValuesBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > MaxValuesBytes {
		return nil, fmt.Errorf("is larger than %d bytes, more than any values file (a Secret or ConfigMap holds at most 1 MiB): give a values file of at most 1 MiB", MaxValuesBytes)
	}
	return ParseValues(raw)
}

// ParseValues reads one values document (a file's bytes, or standard input's)
// as Helm reads a -f file: sigs.k8s.io/yaml into a map; no document at all is
// no values.
func ParseValues(raw []byte) (map[string]any, error) {
	const want = ValuesFileIs
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("is not YAML (%s): %s", strings.TrimPrefix(strings.TrimPrefix(err.Error(), "error converting YAML to JSON: "), "yaml: "), want)
	}
	switch v := doc.(type) {
	case nil:
		// No document, or only comments: no values, as Helm reads it.
		return map[string]any{}, nil
	case map[string]any:
		return v, nil
	case []any:
		return nil, fmt.Errorf("is a list, not a map: %s", want)
	default:
		return nil, fmt.Errorf("is a single %T value, not a map: %s", v, want)
	}
}

// MergeValues layers over on base as Helm layers its -f files, the later
// over the earlier (helm's pkg/cli/values): a key both hold as maps merges
// key by key, any other value of over replaces base's (a list whole, a null
// included, which the render then drops as Helm does). Neither map is changed.
func MergeValues(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if overMap, ok := v.(map[string]any); ok {
			if baseMap, ok := out[k].(map[string]any); ok {
				out[k] = MergeValues(baseMap, overMap)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// ValuesFileIs says what a values file must be, for the messages that refuse one.
const ValuesFileIs = "a values file is a YAML map of the pool's values, such as `cluster: acme`"

// helmSchemaRefusal starts Helm's error for values its schema refuses
// (chartutil.ToRenderValuesWithSchemaValidation), and no other error of it:
// coalescing, the one other step that can fail, words its own. Asking Helm
// again without the check would tell them apart too, at the price of copying
// the values twice, which a 1 MiB values file makes 50 MB.
const helmSchemaRefusal = "values don't meet the specifications of the schema(s) in the following chart(s):\n"

// SchemaError is a render refused by the chart's values.schema.json, before
// any template ran: Helm's own message.
type SchemaError struct{ Err error }

func (e *SchemaError) Error() string { return e.Err.Error() }
func (e *SchemaError) Unwrap() error { return e.Err }
