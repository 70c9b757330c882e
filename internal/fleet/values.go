package fleet

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	yaml3 "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// What computing one pool's values may cost the reader: tenants write the
// HelmRelease, its valuesFrom objects and release records, and one process
// reads every tenant's, then renders each pool. A pool's values are a few
// hundred elements (Cozystack's cozystack-values included); at these bounds
// a pool costs a report well within 250 ms and 64 MB, reading and rendering
// (BenchmarkTenantObjectCost in internal/report).
const (
	// MaxValuesElements bounds the elements (each map, list and scalar)
	// merged into one pool's values, every source counted each time it is
	// merged: spec.values, each valuesFrom document, each targetPath value
	// (which, with commas and list indexes, can spell many), the values a
	// targetPath is set over.
	MaxValuesElements = 1 << 14
	// MaxValuesBytes bounds the text those sources hold, counted likewise: a
	// values file the chart takes is at most 1 MiB.
	MaxValuesBytes = 1 << 20
)

// budget counts what computing one pool's values has merged so far.
type budget struct{ elements, bytes int }

// spend adds a source's size, failing once the total passes a bound.
func (b *budget) spend(elements, bytes int) error {
	b.elements += elements
	b.bytes += bytes
	switch {
	case b.elements > MaxValuesElements:
		return fmt.Errorf("computing its values as Flux does merges more than %d elements (maps, lists and values; each valuesFrom reference counts each time it is merged, a targetPath value counts each key and list index it spells), far more than a pool's values hold; not read", MaxValuesElements)
	case b.bytes > MaxValuesBytes:
		return fmt.Errorf("computing its values as Flux does merges more than %d MiB of text, more than a pool's values hold; not read", MaxValuesBytes>>20)
	}
	return nil
}

// checkJSONValues bounds a JSON document of values before it is decoded.
func checkJSONValues(text []byte) error {
	var b budget
	return b.spend(jsonElements(text), len(text))
}

// jsonElements counts the values (maps, lists, scalars) a JSON text holds
// without decoding it: each '{' and '[', each string that is not a key, and
// each other scalar where a value may start.
func jsonElements(text []byte) int {
	n := 0
	inString, escaped, pendingString := false, false, false
	valueStart := true
	for _, c := range text {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString, pendingString = false, true
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if pendingString {
			// A string followed by ':' is a key.
			if c != ':' {
				n++
			}
			pendingString = false
		}
		switch {
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			n++
		case valueStart && (c == '-' || c == 't' || c == 'f' || c == 'n' || (c >= '0' && c <= '9')):
			n++
		}
		valueStart = c == '[' || c == ',' || c == ':'
	}
	if pendingString {
		n++
	}
	return n
}

// yamlNodes is at least how many nodes a YAML text holds before its
// aliases are expanded, counted without parsing it: every node but the
// first follows a flow or mapping indicator, a block sequence entry, or a
// line break.
func yamlNodes(text string) int {
	n := 1
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case ',', ':', '[', '{', '\n':
			n++
		case '-', '?':
			if i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' || text[i+1] == '\t' {
				n++
			}
		}
	}
	return n
}

// yamlExpanded is how many nodes a YAML document holds once its aliases are
// expanded, counted over the parsed node tree (each anchor's size computed
// once), stopping past limit. The node tree itself is no larger than the text.
func yamlExpanded(text string, limit int) (int, error) {
	var doc yaml3.Node
	if err := yaml3.Unmarshal([]byte(text), &doc); err != nil {
		return 0, err
	}
	sizes := map[*yaml3.Node]int{}
	var size func(n *yaml3.Node) int
	size = func(n *yaml3.Node) int {
		if n == nil {
			return 0
		}
		if s, ok := sizes[n]; ok {
			return s
		}
		sizes[n] = limit + 1 // an alias of its own ancestor never ends
		s := 1
		if n.Kind == yaml3.AliasNode {
			s = size(n.Alias)
		} else {
			for _, c := range n.Content {
				if s += size(c); s > limit {
					break
				}
			}
		}
		sizes[n] = s
		return s
	}
	return size(&doc), nil
}

// strvalsElements is at least how many elements a --set expression sets:
// one per comma-separated assignment or list item, one per map or list a
// path or a {list} makes, and a list index i makes a list of i+1.
func strvalsElements(expr string) int {
	n := 1
	for i := 0; i < len(expr); i++ {
		switch expr[i] {
		case ',', '.', '{':
			n++
		case '[':
			j, index := i+1, 0
			for ; j < len(expr) && expr[j] >= '0' && expr[j] <= '9' && index <= MaxValuesElements; j++ {
				index = index*10 + int(expr[j]-'0')
			}
			if j > i+1 {
				n += index + 1
			}
		}
	}
	return n
}

// measure counts a decoded value's elements and the text of its keys and
// strings.
func measure(v any) (elements, bytes int) {
	switch v := v.(type) {
	case map[string]any:
		elements = 1
		for k, x := range v {
			e, b := measure(x)
			elements, bytes = elements+e, bytes+b+len(k)
		}
	case []any:
		elements = 1
		for _, x := range v {
			e, b := measure(x)
			elements, bytes = elements+e, bytes+b
		}
	case string:
		return 1, len(v)
	default:
		return 1, 8
	}
	return elements, bytes
}

// copyValues copies maps and lists (scalars are immutable), so that a
// targetPath set in place never writes into a document read once for every
// reference to it.
func copyValues(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = copyValues(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = copyValues(x)
		}
		return out
	}
	return v
}

// Values computes a HelmRelease's values as helm-controller does
// (github.com/fluxcd/pkg/chartutil ChartValuesFromReferences, whose results
// the tests compare with these on every case): each spec.valuesFrom in order,
// a Secret's or ConfigMap's key (valuesKey, default values.yaml) read as YAML
// and merged over what came before, or, with targetPath, set at that path
// over everything, spec.values included; then spec.values on top. A missing
// optional reference or key is skipped. A missing required one leaves the
// pool unresolved with Flux's reason (Flux fails the release the same way);
// so does values past the reader's bounds (MaxValuesElements,
// MaxValuesBytes, YAML aliases). err is a cluster that answered with an error.
//
// Flux's own function is not called here: it takes a controller-runtime
// client, whose package links client-go's test doubles into the binary.
func Values(ctx context.Context, p engine.ClientProvider, hr *unstructured.Unstructured) (values map[string]any, unresolved string, err error) {
	return newValuesReader(p).values(ctx, hr)
}

// valuesReader reads and parses each valuesFrom object once, however many
// references and HelmReleases of its namespace name it.
type valuesReader struct {
	p         engine.ClientProvider
	namespace string
	objects   map[string]fetched
	documents map[string]document
}

type fetched struct {
	obj *unstructured.Unstructured
	// missing is the API's answer when it does not exist.
	missing error
}

// document is one object's key read as values: parsed once, charged to
// every pool each time it is merged.
type document struct {
	values          map[string]any
	elements, bytes int
	// problem is why it cannot be read (Flux's reason, or a bound).
	problem string
}

func newValuesReader(p engine.ClientProvider) *valuesReader {
	return &valuesReader{p: p}
}

// in scopes the caches to one namespace: references never leave it, and
// HelmReleases are listed namespace by namespace.
func (r *valuesReader) in(namespace string) {
	if r.objects == nil || r.namespace != namespace {
		r.namespace, r.objects, r.documents = namespace, map[string]fetched{}, map[string]document{}
	}
}

func (r *valuesReader) values(ctx context.Context, hr *unstructured.Unstructured) (map[string]any, string, error) {
	ns := hr.GetNamespace()
	r.in(ns)
	var b budget
	own, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	ownElements, ownBytes := measure(own)
	if err := b.spend(ownElements, ownBytes); err != nil {
		return nil, err.Error(), nil
	}
	var refs []fluxmeta.ValuesReference
	if raw, ok, _ := unstructured.NestedFieldNoCopy(hr.Object, "spec", "valuesFrom"); ok && raw != nil {
		data, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(data, &refs)
		}
		if err != nil {
			return nil, fmt.Sprintf("spec.valuesFrom is not a list of values references: %v", err), nil
		}
	}
	result := map[string]any{}
	seen := map[string]bool{}
	for _, ref := range refs {
		key := ref.GetValuesKey()
		refErr := func(reason string) string {
			b := strings.Builder{}
			b.WriteString("could not resolve")
			if ref.Optional {
				b.WriteString(" optional")
			}
			if ref.Kind != "" {
				b.WriteString(" " + ref.Kind)
			}
			b.WriteString(fmt.Sprintf(" chart values reference '%s/%s' with key '%s': %s", ns, ref.Name, key, reason))
			return b.String()
		}
		if ref.Kind != "Secret" && ref.Kind != "ConfigMap" {
			return nil, refErr("unsupported values reference kind"), nil
		}
		f, err := r.fetch(ctx, ref.Kind, ns, ref.Name)
		if err != nil {
			return nil, "", err
		}
		// Flux reads an object once per HelmRelease: the API's answer that
		// it is missing is the reason the first reference gives.
		first := !seen[ref.Kind+"/"+ref.Name]
		seen[ref.Kind+"/"+ref.Name] = true
		if first && f.missing != nil && !ref.Optional {
			return nil, refErr(f.missing.Error()), nil
		}
		if f.obj == nil {
			if ref.Optional {
				continue
			}
			return nil, refErr("resource not found"), nil
		}
		data, found := dataOf(f.obj, ref.Kind, key)
		if !found {
			if ref.Optional {
				continue
			}
			return nil, refErr("key not found"), nil
		}
		if ref.TargetPath != "" {
			// Set in place, as Flux does: a path into a map spec.values
			// brought writes into that map too, so the value outlives the
			// final merge of spec.values; a path at the top does not.
			if err := b.spend(strvalsElements(ref.TargetPath+"="+data), len(data)); err != nil {
				return nil, err.Error(), nil
			}
			if result, err = b.merge(result, own); err != nil {
				return nil, err.Error(), nil
			}
			if err := setPath(result, ref.TargetPath, data, ref.Literal); err != nil {
				return nil, refErr(err.Error()), nil
			}
			continue
		}
		doc := r.parse(ref.Kind+"/"+ref.Name+"/"+key, data)
		if doc.problem != "" {
			return nil, refErr(doc.problem), nil
		}
		if err := b.spend(doc.elements, doc.bytes); err != nil {
			return nil, err.Error(), nil
		}
		// A copy per reference, as Flux parses one per reference: a later
		// targetPath writes into what it merged.
		if result, err = b.merge(result, copyValues(doc.values).(map[string]any)); err != nil {
			return nil, err.Error(), nil
		}
	}
	result, err := b.merge(result, own)
	if err != nil {
		return nil, err.Error(), nil
	}
	return result, "", nil
}

// fetch reads one object once per namespace.
func (r *valuesReader) fetch(ctx context.Context, kind, ns, name string) (fetched, error) {
	if f, ok := r.objects[kind+"/"+name]; ok {
		return f, nil
	}
	obj, missing, err := get(ctx, r.p, kind, ns, name)
	if err != nil {
		return fetched{}, err
	}
	f := fetched{obj: obj, missing: missing}
	r.objects[kind+"/"+name] = f
	return f, nil
}

// parse reads a document of values once, bounding what its text may cost
// before it is parsed: its size, its nodes, and its nodes once YAML's
// aliases are expanded (the YAML parser allows 400,000 of those).
func (r *valuesReader) parse(id, data string) document {
	if d, ok := r.documents[id]; ok {
		return d
	}
	d := document{elements: yamlNodes(data), bytes: len(data)}
	var check budget
	if err := check.spend(d.elements, d.bytes); err != nil {
		d.problem = err.Error()
	} else if strings.Contains(data, "*") {
		expanded, err := yamlExpanded(data, MaxValuesElements)
		switch {
		case err != nil:
			d.problem = err.Error()
		case expanded > MaxValuesElements:
			d.problem = fmt.Sprintf("its YAML aliases expand to more than %d values, far more than a pool's values hold; not read", MaxValuesElements)
		case expanded > d.elements:
			d.elements = expanded
		}
	}
	if d.problem == "" {
		vals := map[string]any{}
		if err := yaml.Unmarshal([]byte(data), &vals); err != nil {
			d.problem = err.Error()
		} else {
			d.values = vals
		}
	}
	r.documents[id] = d
	return d
}

// get reads one object; missing is the API's answer when it does not exist.
func get(ctx context.Context, p engine.ClientProvider, kind, ns, name string) (o *unstructured.Unstructured, missing, err error) {
	c, _, err := p.GetClientFor("v1", kind)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s %s/%s: %w", kind, ns, name, err)
	}
	o, err = c.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, err, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s %s/%s: %w", kind, ns, name, err)
	}
	return o, nil, nil
}

// dataOf reads a key of a Secret (base64 in data, as the API serves it) or
// a ConfigMap (data).
func dataOf(o *unstructured.Unstructured, kind, key string) (string, bool) {
	v, ok, _ := unstructured.NestedString(o.Object, "data", key)
	if !ok {
		return "", false
	}
	if kind == "Secret" {
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return "", false
		}
		return string(raw), true
	}
	return v, true
}

// setPath sets a value at a dotted path as Helm's --set does (strvals);
// a value in single or double quotes is set as a string without them; a
// literal one as written, as --set-literal does, with the path's "\." escapes
// still read.
func setPath(values map[string]any, path, value string, literal bool) error {
	if literal {
		escaped := strings.NewReplacer(`\`, `\\`, `,`, `\,`, `[`, `\[`, `]`, `\]`, `{`, `\{`, `}`, `\}`).Replace(value)
		return strvals.ParseIntoString(path+"="+escaped, values)
	}
	quoted := func(q string) bool { return strings.HasPrefix(value, q) && strings.HasSuffix(value, q) }
	if quoted("'") || quoted(`"`) {
		return strvals.ParseIntoString(path+"="+strings.Trim(value, `'"`), values)
	}
	return strvals.ParseInto(path+"="+value, values)
}

// mergeMaps returns a with b merged over it: maps merge key by key, any
// other value of b replaces a's. Neither a nor b is written to. work counts
// the entries copied.
func mergeMaps(a, b map[string]any, work *int) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	*work += len(a) + len(b)
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(am, bm, work)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// merge merges b over result, charging what the merge copied.
func (b *budget) merge(result, over map[string]any) (map[string]any, error) {
	work := 0
	out := mergeMaps(result, over, &work)
	return out, b.spend(work, 0)
}
