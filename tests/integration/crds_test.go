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
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdModules ship the CRD YAML the charts' objects are validated against. They
// are read from the Go module cache at test time, never copied into the repo.
// Cluster API's own (capiModule) is the version tools/cluster-api builds the
// manager from: v1.10, because the chart emits cluster.x-k8s.io/v1beta1, which
// later releases no longer store (v1beta2, converted by their webhook).
// CABPT's is the release tools/cluster-api-bootstrap-provider-talos builds the
// manager TestPlatformControllers runs from (its go.sum holds the same hash).
// sum is the module zip's hash, as go.sum would hold it: these modules are in
// no go.sum, and the checksum database has answered 404 for one of them on a
// fresh cache, so the download skips it and the test checks the hash itself.
var crdModules = []struct{ path, version, sum, dir string }{
	{"sigs.k8s.io/cluster-api-provider-kubevirt", "v0.1.10", "h1:QcB6QqzLl8AqlHTl898eKkiP4hSelPxxCLD2tQy4rIU=", "config/crd/bases"},
	{"github.com/siderolabs/cluster-api-bootstrap-provider-talos", "v0.6.12", "h1:c4BNooloe7dVyE2lE08kkUkyggCU7oy5z++PCv78mfw=", "config/crd/bases"},
}

// cozystackAPI is Cozystack's API group version, whose CRDs tools/crds
// generates from Go types written from Cozystack's API.
const cozystackAPI = "cozystack.io/v1alpha1"

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// moduleDir downloads (or finds in the cache) a module, checks its hash and
// returns its folder. It runs outside the project module so the project's
// go.mod and go.sum are never touched.
func moduleDir(t testing.TB, workDir, path, version, sum string) string {
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

// generatedCRDs are the CRDs tools/crds generates with controller-tools'
// controller-gen from the upstream Go API types in the module cache.
var generatedCRDs = []string{
	"cdi.kubevirt.io_cdiconfigs.yaml",
	"cdi.kubevirt.io_cdis.yaml",
	"cdi.kubevirt.io_dataimportcrons.yaml",
	"cdi.kubevirt.io_datasources.yaml",
	"cdi.kubevirt.io_datavolumes.yaml",
	"cdi.kubevirt.io_objecttransfers.yaml",
	"cdi.kubevirt.io_storageprofiles.yaml",
	"cdi.kubevirt.io_volumeclonesources.yaml",
	"cdi.kubevirt.io_volumeimportsources.yaml",
	"cdi.kubevirt.io_volumeuploadsources.yaml",
	"cilium.io_ciliumnetworkpolicies.yaml",
	"controlplane.cluster.x-k8s.io_kamajicontrolplanes.yaml",
	"cozystack.io_applicationdefinitions.yaml",
	"cozystack.io_packages.yaml",
	"cozystack.io_packagesources.yaml",
	"cozystack.io_workloadmonitors.yaml",
	"forklift.cdi.kubevirt.io_openstackvolumepopulators.yaml",
	"forklift.cdi.kubevirt.io_ovirtvolumepopulators.yaml",
	"helm.toolkit.fluxcd.io_helmreleases.yaml",
	"instancetype.kubevirt.io_virtualmachineclusterinstancetypes.yaml",
	"kubevirt.io_virtualmachineinstances.yaml",
	"kubevirt.io_virtualmachines.yaml",
	"monitoring.coreos.com_prometheusrules.yaml",
	"operator.victoriametrics.com_vmrules.yaml",
	"snapshot.storage.k8s.io_volumesnapshotclasses.yaml",
	"snapshot.storage.k8s.io_volumesnapshotcontents.yaml",
	"snapshot.storage.k8s.io_volumesnapshots.yaml",
	"source.toolkit.fluxcd.io_externalartifacts.yaml",
	"source.toolkit.fluxcd.io_helmcharts.yaml",
	"source.toolkit.fluxcd.io_ocirepositories.yaml",
}

// helmReleaseCRDFile is Flux's HelmRelease CRD: installCRDs leaves it out,
// so the CLI's pins test can first show a cluster that serves no HelmRelease,
// then install it (crdFile).
const helmReleaseCRDFile = "helm.toolkit.fluxcd.io_helmreleases.yaml"

// cozystackChartCRDFiles are the opaque kinds only Cozystack's own pool chart
// renders beside this one's (WorkloadMonitor, and CiliumNetworkPolicy, which
// this chart renders too where it is served): installCRDs leaves them out, so
// the tier runs on a cluster without Cilium; BenchmarkUpgradeCost installs
// them to measure both charts on one cluster.
var cozystackChartCRDFiles = []string{"cilium.io_ciliumnetworkpolicies.yaml", "cozystack.io_workloadmonitors.yaml"}

// cdiControllerCRDFiles are the kinds only CDI's controller needs (it
// watches them): installCRDs leaves them out, so the other tiers' clusters
// serve what a chart reads and no more (NoSnapshotAPI deletes the only
// snapshot.storage.k8s.io kind there); TestCDIClone installs them.
var cdiControllerCRDFiles = []string{
	"cdi.kubevirt.io_dataimportcrons.yaml",
	"cdi.kubevirt.io_datasources.yaml",
	"cdi.kubevirt.io_objecttransfers.yaml",
	"cdi.kubevirt.io_volumeclonesources.yaml",
	"cdi.kubevirt.io_volumeimportsources.yaml",
	"cdi.kubevirt.io_volumeuploadsources.yaml",
	"forklift.cdi.kubevirt.io_openstackvolumepopulators.yaml",
	"forklift.cdi.kubevirt.io_ovirtvolumepopulators.yaml",
	"snapshot.storage.k8s.io_volumesnapshotcontents.yaml",
	"snapshot.storage.k8s.io_volumesnapshots.yaml",
}

// generateCRDs runs tools/crds (controller-gen's CRD generator) into out.
func generateCRDs(t testing.TB, out string) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("go", "run", ".", "-out", out)
	cmd.Dir = filepath.Join(support.RepoRoot(), "tools", "crds")
	if raw, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tools/crds: %v\n%s", err, raw)
	}
	found, _ := filepath.Glob(filepath.Join(out, "*.yaml"))
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = filepath.Base(f)
	}
	if want := slices.Sorted(slices.Values(append([]string{grafanaDashboardCRDFile}, generatedCRDs...))); !slices.Equal(names, want) {
		t.Fatalf("tools/crds wrote %v, want %v", names, want)
	}
	t.Logf("tools/crds generated %d CRDs with controller-gen in %s", len(names), time.Since(start).Round(time.Second))
}

// crdFile is the path of one generated CRD.
func (e *env) crdFile(name string) string { return filepath.Join(e.dir, "crds", name) }

// crdFiles lists every CRD file the tier installs at start.
func (e *env) crdFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	capiVersion, capiSum := capiModule(t)
	modules := append([]struct{ path, version, sum, dir string }{{capiModulePath, capiVersion, capiSum, "config/crd/bases"}}, crdModules...)
	for _, m := range modules {
		dir := filepath.Join(moduleDir(t, e.dir, m.path, m.version, m.sum), m.dir)
		found, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(found) == 0 {
			t.Fatalf("no CRD YAML in %s (%v)", dir, err)
		}
		files = append(files, found...)
	}
	generateCRDs(t, filepath.Join(e.dir, "crds"))
	for _, name := range generatedCRDs {
		if name != helmReleaseCRDFile && !slices.Contains(cozystackChartCRDFiles, name) && !slices.Contains(cdiControllerCRDFiles, name) {
			files = append(files, e.crdFile(name))
		}
	}
	return files
}

// installCRDs creates every CRD and waits until each is established.
func (e *env) installCRDs(t testing.TB) []string {
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

// installCRDFile creates the CRDs of one generated file (crdFile) after the
// tier has started, and waits until they are served.
func (e *env) installCRDFile(t testing.TB, file string) {
	t.Helper()
	raw, err := os.ReadFile(e.crdFile(file))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := render.ParseObjects(raw)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	e.create(t, objs...)
	for _, obj := range objs {
		e.waitEstablished(t, obj.GetName())
	}
	e.resetMapper()
}

func (e *env) waitEstablished(t testing.TB, name string) {
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

// testGeneratedCRDs: the CRDs tools/crds generates carry the real schemas and
// scopes. Objects of the shapes the pool render reads (the CDI resource and
// its clone strategy override, a StorageProfile's status, a
// VolumeSnapshotClass) pass strict server-side dry-run apply, and a wrong
// value or an undeclared field in each is refused, as an open schema would not.
func testGeneratedCRDs(t *testing.T, e *env) {
	for _, c := range []struct {
		apiVersion, kind string
		namespaced       bool
	}{
		{dataVolumeVersion, "DataVolume", true},
		{dataVolumeVersion, "CDI", false},
		{dataVolumeVersion, "StorageProfile", false},
		{dataVolumeVersion, "CDIConfig", false},
		{"instancetype.kubevirt.io/v1beta1", "VirtualMachineClusterInstancetype", false},
		{"kubevirt.io/v1", "VirtualMachine", true},
		{"kubevirt.io/v1", "VirtualMachineInstance", true},
		{"snapshot.storage.k8s.io/v1", "VolumeSnapshotClass", false},
		{"operator.victoriametrics.com/v1beta1", "VMRule", true},
		{"monitoring.coreos.com/v1", "PrometheusRule", true},
		{cozystackAPI, "PackageSource", false},
		{cozystackAPI, "Package", false},
		{cozystackAPI, "ApplicationDefinition", false},
	} {
		m, err := e.resourceFor(c.apiVersion, c.kind)
		if err != nil {
			t.Fatalf("%s %s is not served: %v", c.apiVersion, c.kind, err)
		}
		if got := m.Scope.Name() == meta.RESTScopeNameNamespace; got != c.namespaced {
			t.Errorf("%s is served with scope %s, want namespaced=%v", c.kind, m.Scope.Name(), c.namespaced)
		}
	}

	valid := `
apiVersion: cdi.kubevirt.io/v1beta1
kind: CDI
metadata: {name: cdi}
spec: {cloneStrategyOverride: csi-clone}
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: StorageProfile
metadata: {name: replicated}
spec: {cloneStrategy: snapshot}
status:
  storageClass: replicated
  provisioner: linstor.csi.linbit.com
  cloneStrategy: snapshot
  claimPropertySets: [{accessModes: [ReadWriteMany], volumeMode: Block}]
` + support.SnapshotClass("linstor", "linstor.csi.linbit.com") + support.CDIConfig("0.06", "replicated=0.1")
	objs, err := render.ParseObjects([]byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	m := &render.Manifest{}
	for _, o := range objs {
		m.Docs = append(m.Docs, render.Doc{Object: o.Object})
	}
	n, problems := e.dryRunApply(t, m, "")
	for _, p := range problems {
		t.Errorf("generated CRDs: %s", p)
	}

	for _, c := range []struct {
		doc        int
		path       []string
		key        string
		value      interface{}
		wantInText string
	}{
		{0, []string{"spec"}, "cloneStrategyOverride", "teleport", "cloneStrategyOverride"},
		{1, []string{"status", "claimPropertySets"}, "", "Block", "claimPropertySets"},
		{1, []string{"spec"}, "notAField", "x", "notAField"},
		{2, nil, "deletionPolicy", "Sometimes", "deletionPolicy"},
		{2, nil, "notAField", "x", "notAField"},
		{3, []string{"status", "filesystemOverhead"}, "global", "6%", "global"},
	} {
		obj := runtime.DeepCopyJSON(objs[c.doc].Object)
		if c.key == "" {
			// Replace the value at path itself (a list by a string).
			parent := obj
			for _, p := range c.path[:len(c.path)-1] {
				parent = parent[p].(map[string]interface{})
			}
			parent[c.path[len(c.path)-1]] = c.value
		} else {
			parent := obj
			for _, p := range c.path {
				parent = parent[p].(map[string]interface{})
			}
			parent[c.key] = c.value
		}
		_, problems := e.dryRunApply(t, &render.Manifest{Docs: []render.Doc{{Object: obj}}}, "")
		if len(problems) != 1 || !strings.Contains(problems[0], c.wantInText) {
			t.Errorf("%s with %v %s = %v: want the dry-run to refuse it, got %q", objs[c.doc].GetKind(), c.path, c.key, c.value, problems)
		} else {
			t.Logf("refused as it should be: %s", problems[0])
		}
	}
	t.Logf("%d objects of the generated CDI, StorageProfile, VolumeSnapshotClass and CDIConfig CRDs passed strict server-side dry-run apply; 6 bad ones were refused", n)
}
