//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
)

// helm is Helm's Go SDK bound to one namespace of the test API server, through
// a real RESTClientGetter (the kubeconfig the env wrote), as the CLI would be.
type helm struct {
	t         testing.TB
	namespace string
	cfg       *action.Configuration
}

func (e *env) helm(t testing.TB, namespace string) *helm {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &e.kubeconfig
	flags.Namespace = &namespace
	cache := filepath.Join(e.dir, "kube-cache")
	flags.CacheDir = &cache
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, namespace, "secret", func(format string, v ...interface{}) {}); err != nil {
		t.Fatal(err)
	}
	return &helm{t: t, namespace: namespace, cfg: cfg}
}

func (h *helm) install(name, chartPath string, values map[string]interface{}) (*release.Release, error) {
	return h.runInstall(name, chartPath, values, false)
}

// dryRunInstall is `helm install --dry-run=server`: the render's lookups and
// .Capabilities are the cluster's, and nothing is created or recorded.
func (h *helm) dryRunInstall(name, chartPath string, values map[string]interface{}) (*release.Release, error) {
	return h.runInstall(name, chartPath, values, true)
}

func (h *helm) runInstall(name, chartPath string, values map[string]interface{}, dryRun bool) (*release.Release, error) {
	chrt, err := support.LoadChart(chartPath)
	if err != nil {
		h.t.Fatal(err)
	}
	inst := action.NewInstall(h.cfg)
	inst.ReleaseName = name
	inst.Namespace = h.namespace
	inst.Timeout = time.Minute
	if dryRun {
		inst.DryRunOption = "server"
	}
	return inst.Run(chrt, values)
}

func (h *helm) upgrade(name, chartPath string, values map[string]interface{}) (*release.Release, error) {
	chrt, err := support.LoadChart(chartPath)
	if err != nil {
		h.t.Fatal(err)
	}
	up := action.NewUpgrade(h.cfg)
	up.Namespace = h.namespace
	up.Timeout = time.Minute
	return up.Run(name, chrt, values)
}

func (h *helm) uninstall(name string) error {
	_, err := action.NewUninstall(h.cfg).Run(name)
	return err
}

func (h *helm) mustInstall(name, chartPath string, values map[string]interface{}) *release.Release {
	h.t.Helper()
	rel, err := h.install(name, chartPath, values)
	if err != nil {
		h.t.Fatalf("helm install %s: %v", name, err)
	}
	return rel
}

func (h *helm) mustUpgrade(name, chartPath string, values map[string]interface{}) *release.Release {
	h.t.Helper()
	rel, err := h.upgrade(name, chartPath, values)
	if err != nil {
		h.t.Fatalf("helm upgrade %s: %v", name, err)
	}
	return rel
}

func (h *helm) mustUninstall(name string) {
	h.t.Helper()
	if err := h.uninstall(name); err != nil {
		h.t.Fatalf("helm uninstall %s: %v", name, err)
	}
}

// uninstallCatalog uninstalls a catalog release, checks that it kept its
// published tenant defaults (helm.sh/resource-policy: keep, so new pools do
// not fall back to the public factory) and deletes them, as an operator stops
// publishing: the next subtest's catalog, another release, could not take over
// an object Helm records as this release's.
func (e *env) uninstallCatalog(t *testing.T, h *helm, release string) {
	t.Helper()
	h.mustUninstall(release)
	if _, kept := e.get(t, "v1", "ConfigMap", catalogNamespace, tenantDefaultsName); !kept {
		t.Errorf("helm uninstall of the catalog %s deleted ConfigMap %s/%s, which the catalog keeps (helm.sh/resource-policy: keep)", release, catalogNamespace, tenantDefaultsName)
		return
	}
	e.remove(t, objectRef{"v1", "ConfigMap", catalogNamespace, tenantDefaultsName})
}

// Object access by apiVersion/kind, through the discovery-backed REST mapper.

func (e *env) client(t testing.TB, apiVersion, kind, namespace string) dynamic.ResourceInterface {
	t.Helper()
	mapping, err := e.resourceFor(apiVersion, kind)
	if err != nil {
		t.Fatalf("%s %s: %v", apiVersion, kind, err)
	}
	if mapping.Scope.Name() == "namespace" {
		return e.dynamic.Resource(mapping.Resource).Namespace(namespace)
	}
	return e.dynamic.Resource(mapping.Resource)
}

func (e *env) get(t testing.TB, apiVersion, kind, namespace, name string) (*unstructured.Unstructured, bool) {
	t.Helper()
	obj, err := e.client(t, apiVersion, kind, namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", kind, namespace, name, err)
	}
	return obj, true
}

// uids lists the objects of a kind in a namespace as name -> UID, so a test
// can tell an unchanged object from one deleted and created again.
func (e *env) uids(t *testing.T, apiVersion, kind, namespace string) map[string]types.UID {
	t.Helper()
	list, err := e.client(t, apiVersion, kind, namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list %s in %s: %v", kind, namespace, err)
	}
	out := map[string]types.UID{}
	for _, item := range list.Items {
		out[item.GetName()] = item.GetUID()
	}
	return out
}

func (e *env) create(t testing.TB, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objs {
		if _, err := e.client(t, obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace()).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

func (e *env) createYAML(t testing.TB, text string) {
	t.Helper()
	objs, err := render.ParseObjects([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	e.create(t, objs...)
}

// createNamespace creates a namespace unless it exists.
func (e *env) createNamespace(t testing.TB, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]interface{}{"name": name},
	}}
	_, err := e.client(t, "v1", "Namespace", "").Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// setPhase writes status.phase through the status subresource, as CDI does.
func (e *env) setPhase(t testing.TB, namespace, dataVolume, phase string) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"status":{"phase":%q}}`, phase))
	obj, err := e.client(t, "cdi.kubevirt.io/v1beta1", "DataVolume", namespace).
		Patch(context.Background(), dataVolume, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("patch status of DataVolume %s/%s: %v", namespace, dataVolume, err)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); got != phase {
		t.Fatalf("DataVolume %s/%s: status.phase %q after the patch, want %q", namespace, dataVolume, got, phase)
	}
}

// bindClaim writes the status the PV controller gives a bound PVC (phase
// Bound, status.capacity), through the status subresource.
func (e *env) bindClaim(t *testing.T, namespace, name, capacity string) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"status":{"phase":"Bound","capacity":{"storage":%q}}}`, capacity))
	if _, err := e.client(t, "v1", "PersistentVolumeClaim", namespace).
		Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("patch status of PersistentVolumeClaim %s/%s: %v", namespace, name, err)
	}
}

// waitGone polls until none of the named objects exist.
func (e *env) waitGone(t *testing.T, refs []objectRef) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		for _, r := range refs {
			if _, ok := e.get(t, r.apiVersion, r.kind, r.namespace, r.name); ok {
				left = append(left, r.String())
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still present after uninstall: %s", strings.Join(left, ", "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// objectRef names one object.
type objectRef struct{ apiVersion, kind, namespace, name string }

func (r objectRef) String() string {
	if r.namespace == "" {
		return r.kind + " " + r.name
	}
	return r.kind + " " + r.namespace + "/" + r.name
}

// refsOf lists the objects of a manifest; objects without a namespace get the
// release's, as Helm applies them.
func (e *env) refsOf(t *testing.T, m *render.Manifest, namespace string) []objectRef {
	t.Helper()
	var refs []objectRef
	for _, d := range m.Docs {
		ns := d.Namespace()
		mapping, err := e.resourceFor(render.Get(d.Object, "apiVersion").(string), d.Kind())
		if err != nil {
			t.Fatal(err)
		}
		if mapping.Scope.Name() != "namespace" {
			ns = ""
		} else if ns == "" {
			ns = namespace
		}
		refs = append(refs, objectRef{render.Get(d.Object, "apiVersion").(string), d.Kind(), ns, d.Name()})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
	return refs
}

// manifestOf parses the manifest Helm recorded for a release: exactly what it applied.
func manifestOf(t *testing.T, rel *release.Release) *render.Manifest {
	t.Helper()
	m := &render.Manifest{}
	for _, text := range render.SplitDocuments(rel.Manifest) {
		objs, err := render.ParseObjects([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			m.Docs = append(m.Docs, render.Doc{Text: text, Object: o.Object})
		}
	}
	return m
}

// dryRunApply sends every object of m as a server-side apply with
// dryRun=All and fieldValidation=Strict: the real CRD schemas (and the
// built-in types' validation) judge it, nothing is stored. It returns one
// line per object the server refused or warned about.
func (e *env) dryRunApply(t *testing.T, m *render.Manifest, namespace string) (validated int, problems []string) {
	t.Helper()
	e.takeWarnings()
	for _, d := range m.Docs {
		obj := &unstructured.Unstructured{Object: d.Object}
		ns := obj.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		ref := fmt.Sprintf("%s %s/%s", obj.GetKind(), ns, obj.GetName())
		if err := e.serverSideApply(t, obj, ns, true); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", ref, err))
		}
		for _, w := range e.takeWarnings() {
			problems = append(problems, fmt.Sprintf("%s: warning: %s", ref, w))
		}
		validated++
	}
	return validated, problems
}

// serverSideApply applies one object with fieldValidation=Strict, as the
// tier's field manager (so applying it again without a field removes that
// field); dryRun stores nothing.
func (e *env) serverSideApply(t *testing.T, obj *unstructured.Unstructured, namespace string, dryRun bool) error {
	t.Helper()
	body, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: "apiserver-tier", Force: &force, FieldValidation: metav1.FieldValidationStrict}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = e.client(t, obj.GetAPIVersion(), obj.GetKind(), namespace).Patch(context.Background(), obj.GetName(), types.ApplyPatchType, body, opts)
	return err
}

// applyStatus applies an object's status through its status subresource, as
// the tier's field manager, as a controller writes it.
func (e *env) applyStatus(t *testing.T, obj *unstructured.Unstructured) error {
	t.Helper()
	body, err := json.Marshal(map[string]interface{}{
		"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(),
		"metadata": map[string]interface{}{"name": obj.GetName(), "namespace": obj.GetNamespace()},
		"status":   obj.Object["status"],
	})
	if err != nil {
		t.Fatal(err)
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: "apiserver-tier", Force: &force, FieldValidation: metav1.FieldValidationStrict}
	_, err = e.client(t, obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace()).Patch(context.Background(), obj.GetName(), types.ApplyPatchType, body, opts, "status")
	return err
}

// stockCozystackValues is cozystackValues as a stock Cozystack's platform
// writes them for a tenant: no _cluster key for tenant workers.
func stockCozystackValues(namespace string) string {
	return cozystackValues(namespace, stockClusterValues+`
_namespace: {etcd: tenant-root, ingress: tenant-root, monitoring: tenant-root, host: `+namespace+`.example.org, seaweedfs: tenant-root}`)
}

// stockClusterValues is _cluster as a stock Cozystack's platform writes it
// (some of its keys; none for tenant workers).
const stockClusterValues = `
_cluster:
  root-host: example.org
  bundle-name: paas-full
  cluster-domain: cozy.local
  api-server-endpoint: https://api.example.org:443`

// cozystackValues is a namespace's Secret cozystack-values as Cozystack
// writes it: one key, values.yaml, holding _cluster and _namespace (given as
// YAML), which every application's HelmRelease reads through valuesFrom.
func cozystackValues(namespace, valuesYAML string) string {
	body := "    " + strings.ReplaceAll(strings.TrimSpace(valuesYAML), "\n", "\n    ")
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: cozystack-values, namespace: " + namespace + "}\nstringData:\n  values.yaml: |\n" + body + "\n"
}
