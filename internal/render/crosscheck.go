//go:build rendercrosscheck

// Built only with `-tags rendercrosscheck`: every Render of the test run
// also runs Helm v3's own engine over the same chart and values and stops
// the run at the first difference, so the whole suite (every golden, every
// refusal, every fuzz seed) checks the parsed-once engine against Helm's:
//
//	RENDER_CROSSCHECK_LOG=/tmp/crosscheck.log go test -tags rendercrosscheck ./tests/render ./cmd/... ./internal/...
//
// Helm's engine answers its lookups from what the cluster answered ours, so
// the cluster sees one render's requests, as tests that count them expect.

package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"text/template"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// EnginesPerRender: each Render runs the parsed-once engine and Helm's.
const EnginesPerRender = 2

func init() { templateEngine = crosschecked }

func crosschecked(chrt *chart.Chart, vals chartutil.Values, p engine.ClientProvider) (map[string]string, error) {
	// A template may change the values it is given (sprig's set): Helm's
	// engine gets them as they were.
	helmVals := copyValues(vals).(chartutil.Values)
	var rec *answers
	ours := p
	if p != nil {
		rec = &answers{inner: p, got: map[string]answer{}}
		ours = rec
	}
	files, err := executeTemplates(chrt, vals, ours)
	var theirs engine.ClientProvider
	if rec != nil {
		theirs = replay{rec}
	}
	helmFiles, helmErr := helmEngine(chrt, helmVals, theirs)
	if diff := difference(files, err, helmFiles, helmErr); diff != "" {
		name := "?"
		if chrt.Metadata != nil {
			name = chrt.Metadata.Name
		}
		panic(fmt.Sprintf("render crosscheck: chart %s renders otherwise than under Helm's engine: %s", name, diff))
	}
	logCrosscheck(chrt, files, err)
	return files, err
}

func difference(files map[string]string, err error, helmFiles map[string]string, helmErr error) string {
	switch {
	case (err == nil) != (helmErr == nil):
		return fmt.Sprintf("error %v, Helm's %v", err, helmErr)
	case err != nil && err.Error() != helmErr.Error():
		return fmt.Sprintf("error\n%s\nHelm's\n%s", err, helmErr)
	case err != nil && errors.As(err, new(template.ExecError)) != errors.As(helmErr, new(template.ExecError)):
		return fmt.Sprintf("error %T, Helm's %T", err, helmErr)
	case err != nil:
		return ""
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	for name := range helmFiles {
		if _, ok := files[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		a, inOurs := files[name]
		b, inHelms := helmFiles[name]
		if inOurs != inHelms || a != b {
			return fmt.Sprintf("%s (rendered %v, by Helm %v):\n%q\nHelm's\n%q", name, inOurs, inHelms, a, b)
		}
	}
	return ""
}

var crosscheckLog sync.Mutex

// logCrosscheck appends one line per render compared to $RENDER_CROSSCHECK_LOG.
func logCrosscheck(chrt *chart.Chart, files map[string]string, err error) {
	path := os.Getenv("RENDER_CROSSCHECK_LOG")
	if path == "" {
		return
	}
	outcome := fmt.Sprintf("%d files", len(files))
	if err != nil {
		outcome = "error: " + strings.Join(strings.Fields(err.Error()), " ")
	}
	crosscheckLog.Lock()
	defer crosscheckLog.Unlock()
	f, ferr := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if ferr != nil {
		panic(ferr)
	}
	defer f.Close()
	fmt.Fprintf(f, "%s\t%s\n", chrt.Name(), outcome)
}

func copyValues(v interface{}) interface{} {
	switch v := v.(type) {
	case chartutil.Values:
		out := make(chartutil.Values, len(v))
		for k, x := range v {
			out[k] = copyValues(x)
		}
		return out
	case map[string]interface{}:
		out := make(map[string]interface{}, len(v))
		for k, x := range v {
			out[k] = copyValues(x)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(v))
		for i, x := range v {
			out[i] = copyValues(x)
		}
		return out
	}
	return v
}

// answers passes lookups to inner and keeps every answer; replay gives them
// again without asking.
type answers struct {
	inner engine.ClientProvider
	mu    sync.Mutex
	got   map[string]answer
}

type answer struct {
	obj        *unstructured.Unstructured
	list       *unstructured.UnstructuredList
	client     dynamic.NamespaceableResourceInterface
	namespaced bool
	err        error
}

func (a *answers) keep(key string, ans answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got[key] = ans
}

func (a *answers) answer(key string) answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	ans, ok := a.got[key]
	if !ok {
		panic("render crosscheck: Helm's engine made a request the parsed-once engine did not: " + key)
	}
	return ans
}

func (a *answers) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	c, namespaced, err := a.inner.GetClientFor(apiVersion, kind)
	key := apiVersion + " " + kind
	a.keep(key, answer{client: c, namespaced: namespaced, err: err})
	if err != nil {
		return c, namespaced, err
	}
	return keeping{c, a, key, ""}, namespaced, nil
}

type keeping struct {
	dynamic.NamespaceableResourceInterface
	a       *answers
	kind    string
	inSpace string
}

func (k keeping) Namespace(ns string) dynamic.ResourceInterface {
	return keepingIn{k.NamespaceableResourceInterface.Namespace(ns), keeping{k.NamespaceableResourceInterface, k.a, k.kind, ns}}
}

func (k keeping) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	return k.get(k.NamespaceableResourceInterface, ctx, name, o, sub...)
}

func (k keeping) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return k.list(k.NamespaceableResourceInterface, ctx, o)
}

func (k keeping) get(r dynamic.ResourceInterface, ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	obj, err := r.Get(ctx, name, o, sub...)
	ans := answer{err: err}
	if obj != nil {
		ans.obj = obj.DeepCopy()
	}
	k.a.keep(k.kind+" get "+k.inSpace+"/"+name, ans)
	return obj, err
}

func (k keeping) list(r dynamic.ResourceInterface, ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := r.List(ctx, o)
	ans := answer{err: err}
	if l != nil {
		ans.list = l.DeepCopy()
	}
	k.a.keep(k.kind+" list "+k.inSpace, ans)
	return l, err
}

type keepingIn struct {
	dynamic.ResourceInterface
	k keeping
}

func (k keepingIn) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	return k.k.get(k.ResourceInterface, ctx, name, o, sub...)
}

func (k keepingIn) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return k.k.list(k.ResourceInterface, ctx, o)
}

type replay struct{ a *answers }

func (r replay) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	key := apiVersion + " " + kind
	ans := r.a.answer(key)
	if ans.err != nil {
		return ans.client, ans.namespaced, ans.err
	}
	return replaying{ans.client, r.a, key, ""}, ans.namespaced, nil
}

type replaying struct {
	dynamic.NamespaceableResourceInterface
	a       *answers
	kind    string
	inSpace string
}

func (r replaying) Namespace(ns string) dynamic.ResourceInterface {
	return replaying{r.NamespaceableResourceInterface, r.a, r.kind, ns}
}

func (r replaying) Get(_ context.Context, name string, _ metav1.GetOptions, _ ...string) (*unstructured.Unstructured, error) {
	ans := r.a.answer(r.kind + " get " + r.inSpace + "/" + name)
	if ans.obj != nil {
		return ans.obj.DeepCopy(), ans.err
	}
	return nil, ans.err
}

func (r replaying) List(_ context.Context, _ metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	ans := r.a.answer(r.kind + " list " + r.inSpace)
	if ans.list != nil {
		return ans.list.DeepCopy(), ans.err
	}
	return nil, ans.err
}
