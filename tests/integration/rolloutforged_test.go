//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// tenantIdentity is a tenant's own credentials on the tier's API server.
type tenantIdentity struct {
	namespace, user string
	kubeconfig      string
	client          dynamic.Interface
}

var configMapResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// newTenantIdentity gives the tenant of namespace an identity as Cozystack's
// tenant chart does: a ServiceAccount named for the tenant, bound to the
// tenant's role by a RoleBinding in its own namespace and nowhere else. The
// role grants what a tenant writes there: ConfigMaps, Secrets, and
// HelmReleases (the tier runs no cozystack-api, which writes a
// KubernetesNodes' HelmRelease for its tenant and passes the tenant's field
// manager through: here the tenant writes it itself). Its token comes from
// the API server's TokenRequest, as `kubectl create token` asks for one.
func (e *env) newTenantIdentity(t *testing.T, namespace string) *tenantIdentity {
	t.Helper()
	role := "tier-tenant-" + namespace
	e.createYAML(t, fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata: {name: %[1]s, namespace: %[1]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[2]s}
rules:
- apiGroups: [""]
  resources: [configmaps, secrets]
  verbs: ["*"]
- apiGroups: [helm.toolkit.fluxcd.io]
  resources: [helmreleases]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: %[1]s, namespace: %[1]s}
subjects:
- {kind: ServiceAccount, name: %[1]s, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[2]s}
`, namespace, role))
	t.Cleanup(func() {
		e.remove(t, objectRef{"rbac.authorization.k8s.io/v1", "RoleBinding", namespace, namespace},
			objectRef{"rbac.authorization.k8s.io/v1", "ClusterRole", "", role},
			objectRef{"v1", "ServiceAccount", namespace, namespace})
	})
	req := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		"metadata": map[string]any{"name": namespace, "namespace": namespace},
		"spec":     map[string]any{"expirationSeconds": int64(3600)},
	}}
	got, err := e.dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}).Namespace(namespace).Create(t.Context(), req, metav1.CreateOptions{}, "token")
	if err != nil {
		t.Fatalf("a token for ServiceAccount %s/%s: %v", namespace, namespace, err)
	}
	token, _, _ := unstructured.NestedString(got.Object, "status", "token")
	if token == "" {
		t.Fatalf("TokenRequest for %s/%s returned no token: %v", namespace, namespace, got.Object["status"])
	}
	id := &tenantIdentity{namespace: namespace, user: "system:serviceaccount:" + namespace + ":" + namespace,
		kubeconfig: filepath.Join(e.dir, "kubeconfig-"+namespace)}
	writeFile(t, id.kubeconfig, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: tier
  cluster: {server: %s, certificate-authority: %s}
users:
- name: %s
  user: {token: %s}
contexts:
- name: tier
  context: {cluster: tier, user: %[3]s, namespace: %[5]s}
current-context: tier
`, e.config.Host, e.config.CAFile, namespace, token, namespace))
	if id.client, err = dynamic.NewForConfig(&rest.Config{Host: e.config.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: e.config.CAFile}}); err != nil {
		t.Fatal(err)
	}
	return id
}

// kubectl runs kubectl as the tenant, stdin given.
func (id *tenantIdentity) kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(kubectlPath(t), append([]string{"--kubeconfig", id.kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// testRolloutForgedFieldManager: a tenant, with its own identity, writes a
// pool on the rollout's target under the rollout's field manager
// (workerimage-rollout), as `kubectl create --field-manager` lets any client
// do; helm-controller releases it, and its workers never become ready. By
// managedFields the rollout wrote it, and a wave would wait for it until
// --timeout. The tenant cannot write the rollout's record (cozy-system:
// Forbidden), and the record is what counts: every selection leaves the
// pool out of the waves, one that selects it says it is on the target by
// its own values, so not waited on; --apply moves the pool that is behind
// and is done. With the tenant's release failed too, --strict starts: the
// pool is the tenant's, not a pool the rollout cannot move.
func testRolloutForgedFieldManager(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	const from, to, ns = "v1.13.6", "v1.13.7", "tenant-forge"
	behind := rolloutPool{ns, "kubernetes-nodes-fg-behind", "{cluster: fg}", 1}
	forged := rolloutPool{ns, "kubernetes-nodes-fg-forged", "{cluster: fg, talos: {version: " + to + "}}", 1}
	r := setUpRollout(t, e, "kubernetes-worker-image-forge", []rolloutPool{behind}, []string{from, to})
	tenant := e.newTenantIdentity(t, ns)
	ctx := t.Context()

	// 1. The tenant creates the pool under the rollout's field manager; its
	// VMs never boot.
	t.Cleanup(func() {
		e.removeReleased(t, forged.namespace, forged.release)
		// Helm uninstalls what its last release (the failed upgrade of step
		// 5) holds: the template of the release before it stays, and a pool
		// object without its pool would trouble the fleet subtests after.
		kmts, err := e.client(t, kmtAPIVersion, kmtKind, ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, kmt := range kmts.Items {
			if strings.HasPrefix(kmt.GetName(), forged.machineDeployment()+"-") {
				e.remove(t, objectRef{kmtAPIVersion, kmtKind, ns, kmt.GetName()})
			}
		}
	})
	e.capi.neverBoot(forged.namespace, forged.machineDeployment(), true)
	t.Cleanup(func() { e.capi.neverBoot(forged.namespace, forged.machineDeployment(), false) })
	manifest := cozystackHelmRelease(forged.namespace, strings.TrimPrefix(forged.release, "kubernetes-nodes-"), forged.values)
	if out, err := tenant.kubectl(t, manifest, "create", "--field-manager="+rollout.FieldManager, "-f", "-"); err != nil {
		t.Fatalf("the tenant's kubectl create of %s: %v\n%s", forged.id(), err, out)
	}
	waitFor(t, 60*time.Second, "helm-controller installed "+forged.id(), func() string {
		ready, failed, says := rollout.HelmReleaseStatus(e.mustGet(t, forged).Object, 1)
		if failed != "" {
			t.Fatalf("helm-controller's install of %s: %s", forged.id(), failed)
		}
		if !ready {
			return says
		}
		return ""
	})
	// The autoscaler's replicas, as setUpRollout sets them.
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": forged.workers}})
	if _, err := e.client(t, capiAPIVersion, "MachineDeployment", ns).Patch(ctx, forged.machineDeployment(), types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("replicas of %s: %v", forged.id(), err)
	}
	forgedWorkers := func() rollout.MachineDeploymentState {
		md, _ := e.get(t, capiAPIVersion, "MachineDeployment", ns, forged.machineDeployment())
		return rollout.MachineDeploymentRolledOut(md.Object, rollout.RunningTemplate(md.Object), forged.workers)
	}
	waitFor(t, 60*time.Second, "Cluster API created "+forged.id()+"'s worker", func() string {
		if st := forgedWorkers(); st.UpdatedReplicas != forged.workers || st.ReadyReplicas != 0 {
			return st.Says
		}
		return ""
	})
	hr := e.mustGet(t, forged)
	var byRollout string
	for _, f := range hr.GetManagedFields() {
		if f.Manager == rollout.FieldManager && f.FieldsV1 != nil {
			byRollout = f.FieldsV1.String()
		}
	}
	if !strings.Contains(byRollout, `"f:talos":{".":{},"f:version":{}}`) {
		t.Fatalf("%s's managedFields do not say %s wrote talos.version, as the forgery needs: %v", forged.id(), rollout.FieldManager, hr.GetManagedFields())
	}

	// 2. The record: the tenant cannot write it (here a record holding its
	// pool as the rollout's write), though it writes the same ConfigMap in
	// its own namespace.
	plan := rolloutPlan(t, e, 0, "-n", ns, "--to-talos", to)
	forgedRecord := rollout.NewRolloutRecord(plan.Target)
	if report.RecordNamespace+"/"+forgedRecord.Name != plan.Record {
		t.Fatalf("the plan names record %s, the target's is %s/%s", plan.Record, report.RecordNamespace, forgedRecord.Name)
	}
	forgedRecord.Add(report.WaveKey(time.Now(), 1), report.RecordedWrite{Namespace: ns, Name: forged.release, UID: string(hr.GetUID()), Generation: hr.GetGeneration()})
	cm, err := forgedRecord.ConfigMap()
	if err != nil {
		t.Fatal(err)
	}
	_, err = tenant.client.Resource(configMapResource).Namespace(report.RecordNamespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: rollout.FieldManager})
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s creating the rollout's record %s: %v, want Forbidden", tenant.user, plan.Record, err)
	}
	cm.SetNamespace(ns)
	if _, err := tenant.client.Resource(configMapResource).Namespace(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Errorf("%s creating the same ConfigMap in its own namespace: %v", tenant.user, err)
	} else {
		e.remove(t, objectRef{"v1", "ConfigMap", ns, cm.GetName()})
	}
	// The record of this target: earlier subtests' runs to it may have
	// written it (one record per target), and none holds the tenant's pool.
	stored := func() *report.RolloutRecord {
		t.Helper()
		cm, ok := e.get(t, "v1", "ConfigMap", report.RecordNamespace, forgedRecord.Name)
		if !ok {
			return rollout.NewRolloutRecord(plan.Target)
		}
		record, err := rollout.DecodeRolloutRecord(plan.Target, cm)
		if err != nil {
			t.Fatal(err)
		}
		return record
	}
	if w, ok := stored().Written(ns, forged.release); ok {
		t.Fatalf("the rollout's record %s holds the tenant's pool after its create was refused: %+v", plan.Record, w)
	}

	// 3. Every selection: the behind pool alone in wave 1; selected by where
	// it is, the tenant's pool is on the target by its own values.
	for _, sel := range [][]string{{"-n", ns}, {"-n", ns, "--flavor", schematicID + "/" + from}, {"-n", ns, "--behind"}} {
		plan := rolloutPlan(t, e, 0, append(sel, "--to-talos", to)...)
		assertForgedLeftOut(t, plan, forged, sel, len(sel) == 2)
		var wave []string
		for _, p := range plan.Pools() {
			wave = append(wave, p.HelmRelease+" "+p.State)
		}
		if want := []string{behind.id() + " " + rollout.StateMoves}; len(plan.Waves) != 1 || fmt.Sprint(wave) != fmt.Sprint(want) {
			t.Errorf("%v: waves %q (%d), want %q in one wave", sel, wave, len(plan.Waves), want)
		}
	}

	// 4. --apply moves the behind pool and is done; the tenant's pool, its
	// worker still not ready, is neither written nor waited on.
	events := e.applyRollout(t, 0, "beside a pool its tenant wrote under the rollout's field manager", "-n", ns, "--to-talos", to, "--timeout", "60s", "--poll", "200ms")
	assertForgedLeftOut(t, events[0].Plan, forged, []string{"--apply"}, true)
	if got, want := eventList(events[1:]), []string{"wave", "patched " + behind.id(), "ready " + behind.id(), "wave-done", "done"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events: %q, want %q", got, want)
	}
	for _, ev := range events[1:] {
		if ev.Pool == forged.id() || slices.Contains(ev.Pools, forged.id()) {
			t.Errorf("the rollout names the tenant's pool: %s %s: %s", ev.Event, ev.Pool, ev.Message)
		}
	}
	if st := forgedWorkers(); st.RolledOut || st.ReadyReplicas != 0 {
		t.Errorf("%s after the rollout: %s; want its worker never ready, as a wait for it would have run into --timeout", forged.id(), st.Says)
	}
	if n := e.mustGet(t, forged).GetGeneration(); n != 1 {
		t.Errorf("%s at generation %d after the rollout, want 1: not written", forged.id(), n)
	}
	// The record the operator's run wrote holds neither pool once the wave
	// is done (a pool on the target leaves it: the record follows the pools
	// still moving), and the tenant cannot add its own.
	if _, ok := e.get(t, "v1", "ConfigMap", report.RecordNamespace, forgedRecord.Name); !ok {
		t.Fatalf("no record %s after --apply", plan.Record)
	}
	patch, _ := json.Marshal(map[string]any{"data": cm.Object["data"]})
	_, err = tenant.client.Resource(configMapResource).Namespace(report.RecordNamespace).Patch(ctx, forgedRecord.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: rollout.FieldManager})
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s patching the rollout's record %s: %v, want Forbidden", tenant.user, plan.Record, err)
	}
	record := stored()
	if w, ok := record.Written(ns, behind.release); ok {
		t.Errorf("the record still holds %s after its wave: %+v, want it pruned once on the target", behind.id(), w)
	}
	if e.mustGet(t, behind).GetGeneration() != 2 {
		t.Errorf("%s at generation %d after the rollout, want 2: written once", behind.id(), e.mustGet(t, behind).GetGeneration())
	}
	if w, ok := record.Written(ns, forged.release); ok {
		t.Errorf("the record holds the tenant's pool: %+v", w)
	}

	// 5. The tenant's release fails too (a change freeze refuses its
	// MachineDeployment's move), written again under the rollout's field
	// manager: --strict starts, the pool on the target and not waited on.
	lift := r.freeze(t, forged)
	t.Cleanup(lift)
	body, _ = json.Marshal(map[string]any{"spec": map[string]any{"values": map[string]any{"instanceType": "u1.large"}}})
	if _, err := tenant.client.Resource(helmReleaseResource).Namespace(ns).Patch(ctx, forged.release, types.MergePatchType, body, metav1.PatchOptions{FieldManager: rollout.FieldManager}); err != nil {
		t.Fatalf("the tenant's patch of %s: %v", forged.id(), err)
	}
	waitFor(t, 60*time.Second, "helm-controller failed "+forged.id()+" at generation 2", func() string {
		if _, failed, says := rollout.HelmReleaseStatus(e.mustGet(t, forged).Object, 2); failed == "" {
			return says
		}
		return ""
	})
	strict := rolloutPlan(t, e, 0, "-n", ns, "--to-talos", to, "--strict")
	assertForgedLeftOut(t, strict, forged, []string{"--strict"}, true)
	if p := byHelmRelease(strict.OnTarget)[forged.id()]; !strings.Contains(p.Reason, "so not waited on: HelmRelease not Ready at generation 2: UpgradeFailed") {
		t.Errorf("--strict: %s is %s: %q, want on the target, not waited on, its failure named", forged.id(), p.State, p.Reason)
	}
	if !strict.CanStart || len(strict.Waves) != 0 || len(strict.CannotMove) != 0 {
		t.Errorf("--strict with the tenant's release failed: can start %v, %d waves, cannot move %v; want it to start with nothing to move", strict.CanStart, len(strict.Waves), strict.CannotMove)
	}
	events = e.applyRollout(t, 0, "--strict beside the tenant's failed release", "-n", ns, "--to-talos", to, "--strict", "--timeout", "60s", "--poll", "200ms")
	if got := eventList(events[1:]); fmt.Sprint(got) != fmt.Sprint([]string{"done"}) {
		t.Errorf("--strict --apply events: %q, want done alone", got)
	}
	out, problem, code := e.workerimage(t, "rollout", "--kubeconfig", e.kubeconfig, "-n", ns, "--to-talos", to, "--strict")
	for _, line := range []string{
		"  pool  " + forged.id() + "  on-target: on the target by its own values (the rollout's record, ConfigMap " + plan.Record + ", holds no write of it), so not waited on: HelmRelease not Ready at generation 2: UpgradeFailed",
		"result  nothing to do: every selected pool is on the target\n",
	} {
		if code != 0 || !strings.Contains(out, line) {
			t.Errorf("rollout --strict: exit %d, want 0 and %q in:\n%s%s", code, line, out, problem)
		}
	}
	hr = e.mustGet(t, forged)
	if v, _, _ := unstructured.NestedString(hr.Object, "spec", "values", "talos", "version"); v != to || hr.GetGeneration() != 2 {
		t.Errorf("%s: talos.version %q at generation %d, want %s at 2 as the tenant wrote it", forged.id(), v, hr.GetGeneration(), to)
	}
}

// rolloutPlan runs `workerimage rollout ARGS -o json` as the operator and
// reads its plan; the test stops unless it exits with want.
func rolloutPlan(t *testing.T, e *env, want int, args ...string) *rollout.RolloutPlan {
	t.Helper()
	out, problem, code := e.workerimage(t, append(append([]string{"rollout", "--kubeconfig", e.kubeconfig}, args...), "-o", "json")...)
	var plan rollout.RolloutPlan
	if err := json.Unmarshal([]byte(out), &plan); err != nil || code != want {
		t.Fatalf("rollout %v: exit %d, want %d and a plan (%v):\n%s%s", args, code, want, err, out, problem)
	}
	return &plan
}

// assertForgedLeftOut: the tenant's pool is in no wave and not listed apart
// (which would stop --strict); selected (by its namespace alone), it is on
// the target by its own values, not waited on.
func assertForgedLeftOut(t *testing.T, plan *rollout.RolloutPlan, forged rolloutPool, sel []string, selected bool) {
	t.Helper()
	for _, p := range plan.Pools() {
		if p.HelmRelease == forged.id() {
			t.Errorf("%v: %s is in a wave (%s: %s)", sel, forged.id(), p.State, p.Reason)
		}
	}
	for _, p := range append(append([]rollout.RolloutPool{}, plan.CannotMove...), plan.Blocked...) {
		if p.HelmRelease == forged.id() {
			t.Errorf("%v: %s is listed apart (%s: %s)", sel, forged.id(), p.State, p.Reason)
		}
	}
	if p, ok := byHelmRelease(plan.OnTarget)[forged.id()]; ok {
		prefix := "on the target by its own values (the rollout's record, ConfigMap " + plan.Record + ", holds no write of it), so not waited on: "
		if p.State != rollout.StateOnTarget || !strings.HasPrefix(p.Reason, prefix) {
			t.Errorf("%v: %s is %s: %q, want %s with %q", sel, forged.id(), p.State, p.Reason, rollout.StateOnTarget, prefix)
		}
	} else if selected {
		t.Errorf("%v: %s, selected by its namespace, is not listed on the target: %+v", sel, forged.id(), plan.OnTarget)
	}
}

// byHelmRelease indexes pools by HelmRelease.
func byHelmRelease(pools []rollout.RolloutPool) map[string]rollout.RolloutPool {
	out := map[string]rollout.RolloutPool{}
	for _, p := range pools {
		out[p.HelmRelease] = p
	}
	return out
}
