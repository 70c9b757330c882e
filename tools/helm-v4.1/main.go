// Command helm-v4.1 renders charts with Helm v4.1's loader, values, schema
// check and engine (the Helm that Cozystack's helm-controller v1.5.0 links),
// so tests compare its bytes with Helm v3's (the CLI's SDK) and the newest
// v4's. One module holds one Helm v4, hence a module of its own.
//
// It reads gob-encoded requests on standard input, one render each, and
// answers each with the rendered files or Helm's error. A render with a
// cluster asks its lookups back over the same pipe (a lookup message,
// answered before the render goes on), so the caller's cluster answers them,
// whatever it is: a fixture, one that fails, or a live API server.
package main

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// The protocol: tests/support/helmv41.go holds the same types.

// Request is one render.
type Request struct {
	// Files is the chart as the files it is made of, dependencies under charts/<name>/.
	Files                []File
	Values               map[string]interface{}
	Name, Namespace      string
	Upgrade              bool
	SkipSchemaValidation bool
	// APIVersions are served on top of Helm's defaults.
	APIVersions []string
	// Cluster: lookups are asked back; without it Helm renders with no cluster.
	Cluster bool
}

// File is one file of a chart.
type File struct {
	Name string
	Data []byte
}

// Message is what the command writes: a lookup to answer, or a result.
type Message struct {
	Lookup *Lookup
	Result *Result
}

// Lookup is one call Helm's lookup makes of its client provider: Op is
// "client" (GetClientFor), "get" or "list".
type Lookup struct {
	Op, APIVersion, Kind, Namespace, Name string
}

// Answer is the caller's answer to a Lookup.
type Answer struct {
	Namespaced bool
	// Object is what a get or a list answered (a list as its content, items included).
	Object map[string]interface{}
	Err    *Error
}

// Error is an error as the cluster gave it: its text, and the API status it
// holds, if any (so NotFound is still NotFound to Helm's lookup).
type Error struct {
	Message string
	Status  *metav1.Status
}

func (e *Error) err() error {
	if e == nil {
		return nil
	}
	if e.Status == nil {
		return errors.New(e.Message)
	}
	status := &apierrors.StatusError{ErrStatus: *e.Status}
	if status.Error() == e.Message {
		return status
	}
	return wrapped{e.Message, status}
}

// wrapped is an API status inside an error of more words.
type wrapped struct {
	msg    string
	status error
}

func (w wrapped) Error() string { return w.msg }
func (w wrapped) Unwrap() error { return w.status }

// Result is a render's files, or Helm's error.
type Result struct {
	Files map[string]string
	Err   string
}

func init() {
	gob.Register(map[string]interface{}{})
	gob.Register([]interface{}{})
}

func main() {
	in, out := gob.NewDecoder(os.Stdin), gob.NewEncoder(os.Stdout)
	for {
		var req Request
		if err := in.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return
			}
			fmt.Fprintln(os.Stderr, "helm-v4.1: reading a request:", err)
			os.Exit(2)
		}
		var p engine.ClientProvider
		if req.Cluster {
			p = &asker{in: in, out: out}
		}
		files, err := render(req, p)
		res := &Result{Files: files}
		if err != nil {
			res.Err = err.Error()
		}
		if err := out.Encode(Message{Result: res}); err != nil {
			fmt.Fprintln(os.Stderr, "helm-v4.1: writing a result:", err)
			os.Exit(2)
		}
	}
}

// render is what Helm's install (or upgrade, or template) does to render:
// load, coalesce and check the values, then Helm's engine.
func render(req Request, p engine.ClientProvider) (map[string]string, error) {
	files := make([]*archive.BufferedFile, len(req.Files))
	for i, f := range req.Files {
		files[i] = &archive.BufferedFile{Name: f.Name, Data: f.Data}
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, err
	}
	caps := *common.DefaultCapabilities
	caps.APIVersions = append(append(common.VersionSet{}, caps.APIVersions...), req.APIVersions...)
	vals, err := util.ToRenderValuesWithSchemaValidation(c, req.Values, common.ReleaseOptions{
		Name: req.Name, Namespace: req.Namespace, Revision: revision(req.Upgrade), IsInstall: !req.Upgrade, IsUpgrade: req.Upgrade,
	}, &caps, req.SkipSchemaValidation)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return engine.Render(c, vals)
	}
	return engine.RenderWithClientProvider(c, vals, p)
}

func revision(upgrade bool) int {
	if upgrade {
		return 2
	}
	return 1
}

// asker is Helm's client provider asking the caller: Helm's engine renders
// one template at a time, so one question is open at a time.
type asker struct {
	in  *gob.Decoder
	out *gob.Encoder
}

func (a *asker) ask(l Lookup) Answer {
	var ans Answer
	if err := a.out.Encode(Message{Lookup: &l}); err != nil {
		fmt.Fprintln(os.Stderr, "helm-v4.1: asking a lookup:", err)
		os.Exit(2)
	}
	if err := a.in.Decode(&ans); err != nil {
		fmt.Fprintln(os.Stderr, "helm-v4.1: reading a lookup's answer:", err)
		os.Exit(2)
	}
	return ans
}

func (a *asker) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	ans := a.ask(Lookup{Op: "client", APIVersion: apiVersion, Kind: kind})
	if err := ans.Err.err(); err != nil {
		return nil, false, err
	}
	return resource{a: a, apiVersion: apiVersion, kind: kind}, ans.Namespaced, nil
}

// resource answers the two calls Helm's lookup makes, get and list; it
// holds a nil interface for every other call, which Helm never makes.
type resource struct {
	dynamic.NamespaceableResourceInterface
	a                *asker
	apiVersion, kind string
	namespace        string
}

func (r resource) Namespace(ns string) dynamic.ResourceInterface {
	r.namespace = ns
	return r
}

func (r resource) Get(_ context.Context, name string, _ metav1.GetOptions, _ ...string) (*unstructured.Unstructured, error) {
	ans := r.a.ask(Lookup{Op: "get", APIVersion: r.apiVersion, Kind: r.kind, Namespace: r.namespace, Name: name})
	if err := ans.Err.err(); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: ans.Object}, nil
}

func (r resource) List(_ context.Context, _ metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	ans := r.a.ask(Lookup{Op: "list", APIVersion: r.apiVersion, Kind: r.kind, Namespace: r.namespace})
	if err := ans.Err.err(); err != nil {
		return nil, err
	}
	l := &unstructured.UnstructuredList{}
	l.SetUnstructuredContent(ans.Object)
	return l, nil
}
