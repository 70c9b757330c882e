//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdModules ship the CRD YAML the charts' objects are validated against. They
// are read from the Go module cache at test time, never copied into the repo.
// Cluster API stays on v1.10: the chart emits cluster.x-k8s.io/v1beta1, which
// later releases no longer store (v1beta2, converted by a webhook we lack).
// sum is the module zip's hash, as go.sum would hold it: these modules are in
// no go.sum, and the checksum database has answered 404 for one of them on a
// fresh cache, so the download skips it and the test checks the hash itself.
var crdModules = []struct{ path, version, sum, dir string }{
	{"sigs.k8s.io/cluster-api", "v1.10.4", "h1:5mdyWLGbbwOowWrjqM/J9N600QnxTohu5J1/1YR6g7c=", "config/crd/bases"},
	{"sigs.k8s.io/cluster-api-provider-kubevirt", "v0.1.10", "h1:QcB6QqzLl8AqlHTl898eKkiP4hSelPxxCLD2tQy4rIU=", "config/crd/bases"},
	{"github.com/siderolabs/cluster-api-bootstrap-provider-talos", "v0.6.9", "h1:RYnSK3WqgALwby0K/osntU5Y/nIvo7ZGRGRTMB+kXgs=", "config/crd/bases"},
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// moduleDir downloads (or finds in the cache) a module, checks its hash and
// returns its folder. It runs outside the project module so the project's
// go.mod and go.sum are never touched.
func moduleDir(t *testing.T, workDir, path, version, sum string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", path+"@"+version)
	cmd.Dir = workDir
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod", "GONOSUMDB="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct{ Dir, Sum, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || err != nil || info.Error != "" || info.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v %s %s", path, version, err, info.Error, stderr.String())
	}
	if info.Sum != sum {
		t.Fatalf("module %s@%s has hash %s, want %s", path, version, info.Sum, sum)
	}
	return info.Dir
}

// generateCRDs runs tools/crdgen, which builds the DataVolume and
// VirtualMachineClusterInstancetype CRDs from their Go API types.
func generateCRDs(t *testing.T, out string) {
	t.Helper()
	cmd := exec.Command("go", "run", ".", "-out", out)
	cmd.Dir = filepath.Join(support.RepoRoot(), "tools", "crdgen")
	if raw, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tools/crdgen: %v\n%s", err, raw)
	}
}

// crdFiles lists every CRD file the tier installs.
func (e *env) crdFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, m := range crdModules {
		dir := filepath.Join(moduleDir(t, e.dir, m.path, m.version, m.sum), m.dir)
		found, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(found) == 0 {
			t.Fatalf("no CRD YAML in %s (%v)", dir, err)
		}
		files = append(files, found...)
	}
	gen := filepath.Join(e.dir, "crds")
	generateCRDs(t, gen)
	found, _ := filepath.Glob(filepath.Join(gen, "*.yaml"))
	if len(found) != 2 {
		t.Fatalf("tools/crdgen wrote %d CRDs, want 2", len(found))
	}
	return append(files, found...)
}

// installCRDs creates every CRD and waits until each is established.
func (e *env) installCRDs(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	for _, path := range e.crdFiles(t) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := render.ParseObjects(raw)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, obj := range objs {
			if obj.GetKind() != "CustomResourceDefinition" {
				continue
			}
			if _, err := e.dynamic.Resource(crdGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating CRD %s from %s: %v", obj.GetName(), path, err)
			}
			names = append(names, obj.GetName())
		}
	}
	for _, name := range names {
		e.waitEstablished(t, name)
	}
	e.resetMapper()
	sort.Strings(names)
	return names
}

func (e *env) waitEstablished(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		crd, err := e.dynamic.Resource(crdGVR).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && condition(crd, "Established") == "True" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s not established: %v %v", name, err, crd)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func condition(obj *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]interface{})
		if m["type"] == typ {
			return fmt.Sprint(m["status"])
		}
	}
	return ""
}

func parseGroupVersion(apiVersion string) (schema.GroupVersion, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return gv, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	if strings.TrimSpace(gv.Version) == "" {
		return gv, fmt.Errorf("apiVersion %q has no version", apiVersion)
	}
	return gv, nil
}
