//go:build integration

package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
)

// fleetStateResources are the kinds the fleet verbs read (the pool chart's
// and the catalog chart's lookups, the fleet's HelmReleases, Helm's release
// records and the values they come from), and the CRDs that say which APIs
// the cluster serves (a chart asks .Capabilities), as docs/cli.md's kubectl
// command names them to make a state file of a live cluster.
var fleetStateResources = []string{
	"customresourcedefinitions.apiextensions.k8s.io",
	"helmreleases.helm.toolkit.fluxcd.io", "applicationdefinitions.cozystack.io", "packages.cozystack.io",
	"machinedeployments.cluster.x-k8s.io", "machinesets.cluster.x-k8s.io", "kubevirtmachinetemplates.infrastructure.cluster.x-k8s.io",
	"datavolumes.cdi.kubevirt.io", "storageprofiles.cdi.kubevirt.io", "cdis.cdi.kubevirt.io", "cdiconfigs.cdi.kubevirt.io",
	"virtualmachineclusterinstancetypes.instancetype.kubevirt.io", "volumesnapshotclasses.snapshot.storage.k8s.io",
	"storageclasses.storage.k8s.io", "csidrivers.storage.k8s.io",
	"persistentvolumeclaims", "persistentvolumes", "configmaps", "secrets",
}

// testFleetToolsOnRealControllers: `pins`, `adopt` and `rollcheck` read a
// fleet Flux's helm-controller released and Cluster API rolled (a clone
// pool, released twice, its second release rolled onto another Talos; an
// HTTP pool; a pool at zero workers), once live (--kubeconfig) and once from
// the state file `kubectl get ... -A -o yaml` makes of the same cluster (as
// docs/cli.md tells an operator to make one), and answer the same, field for
// field and line for line, but the line naming where they read. Each answer
// also says what the fleet is, so the two cannot agree on nothing.
func testFleetToolsOnRealControllers(t *testing.T, e *env) {
	// docs/cli.md gives an operator this very command.
	doc, err := os.ReadFile(support.Path("docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	if cmd := "kubectl get " + strings.Join(fleetStateResources, ",") + " -A -o yaml > STATE.yaml"; !strings.Contains(string(doc), cmd) {
		t.Errorf("docs/cli.md does not give the command the test makes its state file with:\n%s", cmd)
	}
	schematicID, _ := poolDefaults(t)
	const from, to = "v1.13.6", "v1.13.7"
	golden := rolloutPool{"tenant-fleet-a", "kubernetes-nodes-fa-golden", "{cluster: fa, osImage: {builtin: {}}}", 2}
	web := rolloutPool{"tenant-fleet-a", "kubernetes-nodes-fa-web", "{cluster: fa, osImage: {}}", 1}
	idle := rolloutPool{"tenant-fleet-b", "kubernetes-nodes-fb-idle", "{cluster: fb, minReplicas: 0, osImage: {builtin: {}}}", 0}
	moved := golden // released twice: its second release boots the next Talos
	pools := []rolloutPool{golden, web, idle}
	start := time.Now()
	r := setUpRollout(t, e, "kubernetes-worker-image-fleet", pools, []string{from, to})

	// The clone pool's application edited to the next Talos, as a tenant
	// does: helm-controller releases v2, Cluster API rolls it.
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"values": map[string]any{"talos": map[string]any{"version": to}}}})
	if _, err := e.client(t, fleet.HelmReleaseAPI, "HelmRelease", moved.namespace).Patch(t.Context(), moved.release, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch %s: %v", moved.id(), err)
	}
	waitFor(t, 90*time.Second, moved.id()+" released again and rolled", func() string {
		hr := e.mustGet(t, moved)
		if ready, failed, says := rollout.HelmReleaseStatus(hr.Object, 2); !ready {
			if failed != "" {
				t.Fatalf("helm-controller's upgrade of %s: %s", moved.id(), failed)
			}
			return says
		}
		md, _ := e.get(t, capiAPIVersion, "MachineDeployment", moved.namespace, moved.machineDeployment())
		tpl := rollout.RunningTemplate(md.Object)
		if st := rollout.MachineDeploymentRolledOut(md.Object, tpl, moved.workers); tpl == r.templates[moved.id()] || !st.RolledOut {
			return st.Says
		}
		r.templates[moved.id()] = tpl
		return ""
	})
	settled := time.Since(start)

	// What helm-controller wrote: the chart version carrying the
	// artifact's digest, one history entry a release.
	chrt, err := support.LoadChart(render.PoolChart)
	if err != nil {
		t.Fatal(err)
	}
	artifact, _ := e.get(t, "source.toolkit.fluxcd.io/v1", "ExternalArtifact", "cozy-system", cozystackArtifact)
	digest := strings.TrimPrefix(fmt.Sprint(render.Get(artifact.Object, "status.artifact.digest")), "sha256:")
	if len(digest) != 64 {
		t.Fatalf("ExternalArtifact %s: status.artifact.digest %q is no sha256 digest", cozystackArtifact, digest)
	}
	chartVersion := chrt.Metadata.Version + "+" + digest[:12]
	for _, p := range pools {
		hr := e.mustGet(t, p)
		_, history := releases(hr)
		want := 1
		if p == moved {
			want = 2
		}
		entries, _ := render.Get(hr.Object, "status.history").([]any)
		charts := map[string]bool{}
		for _, h := range entries {
			h, _ := h.(map[string]any)
			charts[fmt.Sprint(h["chartVersion"])] = true
		}
		if len(entries) != want || len(charts) != 1 || !charts[chartVersion] {
			t.Errorf("%s: helm-controller's history %v (%v), want %d entries of chart %s", p.id(), history, entries, want, chartVersion)
		}
	}

	// The state file, as an operator makes one: kubectl get of the kinds
	// the verbs read that this cluster serves, in every namespace, as YAML.
	kubectl := kubectlPath(t)
	out, err := exec.Command(kubectl, "--kubeconfig", e.kubeconfig, "api-resources", "-o", "name").Output()
	if err != nil {
		t.Fatalf("kubectl api-resources: %v", err)
	}
	servedNames := strings.Fields(string(out))
	var served []string
	for _, r := range fleetStateResources {
		if slices.Contains(servedNames, r) {
			served = append(served, r)
		}
	}
	// A kind the cluster does not serve fails the whole command, writing
	// nothing: docs/cli.md says to leave it out.
	if out, err := exec.Command(kubectl, "--kubeconfig", e.kubeconfig, "get", "nosuchkinds.example.org,secrets", "-A", "-o", "yaml").Output(); err == nil || len(out) != 0 {
		t.Errorf("kubectl get of a kind the cluster does not serve: %v, %d bytes written; want it to fail with nothing written", err, len(out))
	}
	takeState := func() string {
		t.Helper()
		start := time.Now()
		out, err := exec.Command(kubectl, "--kubeconfig", e.kubeconfig, "get", strings.Join(served, ","), "-A", "-o", "yaml").Output()
		if err != nil {
			t.Fatalf("kubectl get %s -A -o yaml: %v", strings.Join(served, ","), err)
		}
		state := filepath.Join(t.TempDir(), "STATE.yaml")
		if err := os.WriteFile(state, out, 0o600); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "\nkind: List\n") {
			t.Fatalf("kubectl get -o yaml of several kinds wrote no kind: List:\n%.400s", out)
		}
		t.Logf("state file of %d of the %d kinds the verbs read (not served here: %v): %d KiB in %s", len(served), len(fleetStateResources), notIn(fleetStateResources, served), len(out)/1024, time.Since(start).Round(time.Millisecond))
		return state
	}
	state := takeState()

	// The file serves what the cluster serves, as discovery says it: every
	// kind of every group version the API server lists, and no other.
	st, err := render.LoadState(state)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(e.config)
	if err != nil {
		t.Fatal(err)
	}
	_, lists, err := disc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	kinds := 0
	for _, l := range lists {
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			kinds++
			if _, _, err := st.GetClientFor(l.GroupVersion, r.Kind); err != nil {
				t.Errorf("the cluster serves %s %s, its state file does not: %v", l.GroupVersion, r.Kind, err)
			}
		}
	}
	if _, _, err := st.GetClientFor("example.org/v1", "NoSuchKind"); !errors.Is(err, render.ErrKindNotServed) {
		t.Errorf("the state file serves a kind the cluster does not: %v", err)
	}
	t.Logf("the state file serves the %d kinds discovery lists", kinds)

	// Each verb live and on the file: the same exit, the same JSON but
	// "cluster", the same text but its cluster line.
	both := func(args ...string) (live, file map[string]any) {
		t.Helper()
		liveJSON, liveErr, liveCode := e.workerimage(t, append(append([]string{}, args...), "--kubeconfig", e.kubeconfig, "-o", "json")...)
		fileJSON, fileErr, fileCode := e.workerimage(t, append(append([]string{}, args...), "--cluster", state, "-o", "json")...)
		what := strings.Join(args, " ")
		if liveCode != fileCode {
			t.Errorf("%s: exit %d live, %d on the state file:\n%s\n%s", what, liveCode, fileCode, liveErr, fileErr)
		}
		if err := json.Unmarshal([]byte(liveJSON), &live); err != nil {
			t.Fatalf("%s --kubeconfig -o json: %v\n%s%s", what, err, liveJSON, liveErr)
		}
		if err := json.Unmarshal([]byte(fileJSON), &file); err != nil {
			t.Fatalf("%s --cluster -o json: %v\n%s%s", what, err, fileJSON, fileErr)
		}
		if !strings.HasPrefix(fmt.Sprint(live["cluster"]), "kubeconfig ") && !strings.Contains(fmt.Sprint(live["cluster"]), e.kubeconfig) {
			t.Errorf("%s --kubeconfig: cluster %q does not name the kubeconfig", what, live["cluster"])
		}
		if file["cluster"] != "state file "+state {
			t.Errorf("%s --cluster: cluster %q, want %q", what, file["cluster"], "state file "+state)
		}
		l, f := withoutKey(live, "cluster"), withoutKey(file, "cluster")
		if !reflect.DeepEqual(l, f) {
			t.Errorf("%s -o json: live and the state file differ (beyond cluster):\n%s", what, jsonDiff(l, f))
		}
		liveText, _, _ := e.workerimage(t, append(append([]string{}, args...), "--kubeconfig", e.kubeconfig)...)
		fileText, _, _ := e.workerimage(t, append(append([]string{}, args...), "--cluster", state)...)
		lt, ft := withoutClusterLine(liveText), withoutClusterLine(fileText)
		if lt != ft {
			t.Errorf("%s: the text live and on the state file differ (beyond its cluster line):\n%s", what, linesDiff(lt, ft))
		}
		if lt == liveText {
			t.Errorf("%s: the text names no cluster line:\n%s", what, liveText)
		}
		return live, file
	}
	type poolPin struct {
		HelmRelease, FoundBy, Golden string
		Disks                        int
	}
	pinsOf := func(rep map[string]any) (pinned map[string]poolPin, http []string, templates map[string][]string) {
		var r struct {
			Goldens []struct {
				Name      string
				Pools     []poolPin
				Templates []string
			}
			HTTPPools []poolPin
		}
		raw, _ := json.Marshal(rep)
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		pinned, templates = map[string]poolPin{}, map[string][]string{}
		for _, g := range r.Goldens {
			for _, p := range g.Pools {
				p.Golden = g.Name
				pinned[p.HelmRelease] = p
			}
			templates[g.Name] = g.Templates
		}
		for _, p := range r.HTTPPools {
			http = append(http, p.HelmRelease+" "+p.FoundBy)
		}
		return pinned, http, templates
	}
	foundBy := "spec.chartRef " + fleet.DefaultPoolArtifact.String()
	verbsStart := time.Now()

	// pins, per namespace: each pool found by its chartRef, under the golden
	// its values resolve to; the HTTP pool apart.
	pinsA, _ := both("pins", "-n", golden.namespace)
	pinned, http, templates := pinsOf(pinsA)
	if want := (poolPin{golden.id(), foundBy, support.GoldenName(schematicID, to), 0}); pinned[golden.id()] != want {
		t.Errorf("pins -n %s: %s is %+v, want %+v", golden.namespace, golden.id(), pinned[golden.id()], want)
	}
	if !slices.Contains(templates[support.GoldenName(schematicID, to)], golden.namespace+"/KubevirtMachineTemplate/"+r.templates[golden.id()]) {
		t.Errorf("pins -n %s: the %s golden's templates %v do not hold %s, which the pool runs", golden.namespace, to, templates[support.GoldenName(schematicID, to)], r.templates[golden.id()])
	}
	if want := []string{web.id() + " " + foundBy}; fmt.Sprint(http) != fmt.Sprint(want) {
		t.Errorf("pins -n %s: HTTP pools %q, want %q", golden.namespace, http, want)
	}
	pinsB, _ := both("pins", "-n", idle.namespace)
	pinned, _, templates = pinsOf(pinsB)
	if want := (poolPin{idle.id(), foundBy, support.GoldenName(schematicID, from), 0}); pinned[idle.id()] != want {
		t.Errorf("pins -n %s: %s is %+v, want %+v", idle.namespace, idle.id(), pinned[idle.id()], want)
	}
	if !slices.Contains(templates[support.GoldenName(schematicID, from)], idle.namespace+"/KubevirtMachineTemplate/"+r.templates[idle.id()]) {
		t.Errorf("pins -n %s: the %s golden's templates %v do not hold %s, which the idle pool holds it by", idle.namespace, from, templates[support.GoldenName(schematicID, from)], r.templates[idle.id()])
	}
	// The whole cluster: whether a golden is safe to delete is its answer.
	both("pins")

	// adopt: the HTTP pool can switch now (its flavor's golden is
	// Succeeded), the clone pools already clone.
	type adoptReport struct {
		Flavors []struct {
			Golden  string
			Classes []struct {
				Pools []struct{ HelmRelease, Outcome string }
			}
		}
		Cloning []poolPin
	}
	adoptOf := func(rep map[string]any) (outcomes map[string]string, cloning []string) {
		var r adoptReport
		raw, _ := json.Marshal(rep)
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		outcomes = map[string]string{}
		for _, f := range r.Flavors {
			for _, c := range f.Classes {
				for _, p := range c.Pools {
					outcomes[p.HelmRelease] = p.Outcome + " " + f.Golden
				}
			}
		}
		for _, p := range r.Cloning {
			cloning = append(cloning, p.HelmRelease)
		}
		return outcomes, cloning
	}
	adoptA, _ := both("adopt", "-n", golden.namespace)
	outcomes, cloning := adoptOf(adoptA)
	if want := map[string]string{web.id(): report.OutcomeReady + " " + support.GoldenName(schematicID, from)}; fmt.Sprint(outcomes) != fmt.Sprint(want) {
		t.Errorf("adopt -n %s: %v, want %v", golden.namespace, outcomes, want)
	}
	if want := []string{golden.id()}; fmt.Sprint(cloning) != fmt.Sprint(want) {
		t.Errorf("adopt -n %s: cloning %v, want %v", golden.namespace, cloning, want)
	}
	adoptB, _ := both("adopt", "-n", idle.namespace)
	if outcomes, cloning := adoptOf(adoptB); len(outcomes) != 0 || fmt.Sprint(cloning) != fmt.Sprint([]string{idle.id()}) {
		t.Errorf("adopt -n %s: HTTP pools %v, cloning %v; want none, and %s", idle.namespace, outcomes, cloning, idle.id())
	}

	// rollcheck of the chart helm-controller released: no pool rolls, each
	// runs the template Cluster API rolled it onto.
	chartDir := support.Path(render.PoolChart)
	for _, ns := range []string{golden.namespace, idle.namespace} {
		rep, _ := both("rollcheck", chartDir, "-n", ns)
		var rc report.RollReport
		raw, _ := json.Marshal(rep)
		if err := json.Unmarshal(raw, &rc); err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, p := range rc.Pools {
			got = append(got, fmt.Sprintf("%s %s %s %s", p.Values, p.Base.MachineTemplate, p.Head.MachineTemplate, p.Status))
		}
		for _, p := range pools {
			if p.namespace == ns {
				want = append(want, fmt.Sprintf("helmrelease %s %s %s no roll", p.id(), r.templates[p.id()], r.templates[p.id()]))
			}
		}
		if !rc.Deployed || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rollcheck %s -n %s: deployed %v, %q; want %q", chartDir, ns, rc.Deployed, got, want)
		}
	}
	// A CDI resource appears (CDI's default clone strategy, snapshot) on a
	// cluster that serves VolumeSnapshotClasses and holds none: CDI would
	// copy the clone pool's disks, and the chart refuses it, alike live and
	// on the file.
	e.createYAML(t, "apiVersion: cdi.kubevirt.io/v1beta1\nkind: CDI\nmetadata: {name: cdi}\nspec: {}\n")
	t.Cleanup(func() { e.deleteOne(t, "cdi.kubevirt.io/v1beta1", "CDI", "", "cdi") })
	state = takeState()
	refused, _ := both("pins", "-n", golden.namespace)
	var rp struct {
		Goldens []struct {
			Pools []struct{ HelmRelease, Refusal string }
		}
	}
	raw, _ := json.Marshal(refused)
	_ = json.Unmarshal(raw, &rp)
	refusal := ""
	for _, g := range rp.Goldens {
		for _, p := range g.Pools {
			if p.HelmRelease == golden.id() {
				refusal = p.Refusal
			}
		}
	}
	if !strings.Contains(refusal, "no VolumeSnapshotClass has driver linstor.csi.linbit.com") {
		t.Errorf("pins -n %s with a CDI resource and no VolumeSnapshotClass: %s refused with %q, want the chart's check 8 naming the missing VolumeSnapshotClass", golden.namespace, golden.id(), refusal)
	}

	t.Logf("fleet of %d pools released by helm-controller, one released again and rolled by Cluster API, in %s; pins, adopt and rollcheck live and on the state file (-o json and text) agree, in %s",
		len(pools), settled.Round(100*time.Millisecond), time.Since(verbsStart).Round(100*time.Millisecond))
}

func notIn(all, some []string) []string {
	var out []string
	for _, a := range all {
		if !slices.Contains(some, a) {
			out = append(out, a)
		}
	}
	return out
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// withoutClusterLine drops the report's line naming where it read.
func withoutClusterLine(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "cluster ") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func jsonDiff(a, b any) string {
	ja, _ := json.MarshalIndent(a, "", "  ")
	jb, _ := json.MarshalIndent(b, "", "  ")
	return linesDiff(string(ja), string(jb))
}

// linesDiff shows the lines of a (live) and b (the state file) that differ,
// in order, a dozen at most.
func linesDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(la), len(lb)) && len(out) < 24; i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d live: %s", i+1, x), fmt.Sprintf("line %d file: %s", i+1, y))
		}
	}
	return strings.Join(out, "\n")
}
