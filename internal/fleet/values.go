package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Values computes a HelmRelease's values as helm-controller does
// (github.com/fluxcd/pkg/chartutil ChartValuesFromReferences, whose results
// the tests compare with these on every case): each spec.valuesFrom in order,
// a Secret's or ConfigMap's key (valuesKey, default values.yaml) read as YAML
// and merged over what came before, or, with targetPath, set at that path
// over everything, spec.values included; then spec.values on top. A missing
// optional reference or key is skipped. A missing required one leaves the
// pool unresolved with Flux's reason (Flux fails the release the same way);
// err is a cluster that answered with an error.
//
// Flux's own function is not called here: it takes a controller-runtime
// client, whose package links client-go's test doubles into the binary.
func Values(ctx context.Context, p engine.ClientProvider, hr *unstructured.Unstructured) (values map[string]interface{}, unresolved string, err error) {
	own, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	var refs []fluxmeta.ValuesReference
	if raw, ok, _ := unstructured.NestedFieldNoCopy(hr.Object, "spec", "valuesFrom"); ok && raw != nil {
		b, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(b, &refs)
		}
		if err != nil {
			return nil, fmt.Sprintf("spec.valuesFrom is not a list of values references: %v", err), nil
		}
	}
	ns := hr.GetNamespace()
	result := map[string]interface{}{}
	// Each object is read once, as Flux reads it, however often it is named.
	read := map[string]*unstructured.Unstructured{}
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
		obj, seen := read[ref.Kind+"/"+ref.Name]
		if !seen {
			var missing error
			obj, missing, err = get(ctx, p, ref.Kind, ns, ref.Name)
			if err != nil {
				return nil, "", err
			}
			read[ref.Kind+"/"+ref.Name] = obj
			if missing != nil && !ref.Optional {
				return nil, refErr(missing.Error()), nil
			}
		}
		if obj == nil {
			if ref.Optional {
				continue
			}
			return nil, refErr("resource not found"), nil
		}
		data, found := dataOf(obj, ref.Kind, key)
		if !found {
			if ref.Optional {
				continue
			}
			return nil, refErr("key not found"), nil
		}
		if ref.TargetPath != "" {
			result = mergeMaps(result, own)
			if err := setPath(result, ref.TargetPath, data, ref.Literal); err != nil {
				return nil, refErr(err.Error()), nil
			}
			continue
		}
		vals := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(data), &vals); err != nil {
			return nil, refErr(err.Error()), nil
		}
		result = mergeMaps(result, vals)
	}
	return mergeMaps(result, own), "", nil
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
		raw, err := decodeBase64(v)
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
func setPath(values map[string]interface{}, path, value string, literal bool) error {
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
// other value of b replaces a's.
func mergeMaps(a, b map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]interface{}); ok {
			if am, ok := out[k].(map[string]interface{}); ok {
				out[k] = mergeMaps(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}
