// Reading one object or one kind, and a field's text: what every reader of
// the package shares.

package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// List reads every object of a kind, in every namespace or in one.
func List(ctx context.Context, p engine.ClientProvider, apiVersion, kind, namespace string) ([]unstructured.Unstructured, error) {
	c, namespaced, err := p.GetClientFor(apiVersion, kind)
	if err != nil {
		return nil, fmt.Errorf("listing %s %s: %v", kind, apiVersion, err)
	}
	var r dynamic.ResourceInterface = c
	if namespaced && namespace != "" {
		r = c.Namespace(namespace)
	}
	l, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s %s: %v", kind, apiVersion, err)
	}
	return l.Items, nil
}

// Get reads one object; nil, without error, when the kind is not served or
// the object does not exist.
func Get(ctx context.Context, p engine.ClientProvider, apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	c, namespaced, err := p.GetClientFor(apiVersion, kind)
	if errors.Is(err, render.ErrKindNotServed) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %v", kind, apiVersion, err)
	}
	var r dynamic.ResourceInterface = c
	if namespaced {
		r = c.Namespace(namespace)
	}
	obj, err := r.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %v", kind, name, err)
	}
	return obj, nil
}

// Text reads a scalar field as its text: a quantity may be a YAML number,
// written out in full.
func Text(obj map[string]any, fields ...string) string {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	if !ok || v == nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		return v
	case float64:
		// A state file's number reads back as a float; 21474836480 is not
		// 2.147483648e+10 to the catalog, which compares the text.
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// Int64 reads a count the API wrote: an int64, or a whole float64 as a
// state file's JSON reads back (apimachinery's NestedInt64 takes the first
// only). set is false when the field is absent or null; n is 0 when it
// holds anything but such a number.
func Int64(obj map[string]any, fields ...string) (n int64, set bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	if !ok || v == nil {
		return 0, false
	}
	switch v := v.(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case float64:
		if v >= 0 && v <= math.MaxInt64/2 && v == math.Trunc(v) {
			return int64(v), true
		}
	}
	return 0, true
}

func firstText(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
