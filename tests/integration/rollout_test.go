//go:build integration

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// rolloutPool is one pool of the rollout tier's fleet.
type rolloutPool struct {
	namespace, release, values string
	workers                    int64
}

func (p rolloutPool) id() string { return p.namespace + "/" + p.release }

// machineDeployment is the pool's MachineDeployment's name.
func (p rolloutPool) machineDeployment() string {
	return "kubernetes-" + strings.TrimPrefix(p.release, "kubernetes-nodes-")
}

// The rollout tier's fleet: pools of three tenants as Cozystack creates
// them (a HelmRelease with a chartRef to the application's artifact, values
// from the namespace's cozystack-values Secret, then its own), booting the
// example fleet's flavor: clones of its golden, one from the platform's
// default osImage, HTTP imports, one pool at zero workers. Sorted by
// HelmRelease, as the plan orders them: waves of 3 put the first three in
// wave 1.
var rolloutFleet = []rolloutPool{
	{"tenant-roll-a", "kubernetes-nodes-ra-golden", "{cluster: ra, osImage: {builtin: {}}}", 2},
	{"tenant-roll-a", "kubernetes-nodes-ra-spot", "{cluster: ra}", 1},
	{"tenant-roll-b", "kubernetes-nodes-rb-batch", "{cluster: rb, minReplicas: 0, osImage: {builtin: {}}}", 0},
	{"tenant-roll-b", "kubernetes-nodes-rb-web", "{cluster: rb, osImage: {}}", 3},
	{"tenant-roll-c", "kubernetes-nodes-rc-edge", "{cluster: rc, osImage: {}}", 1},
}

// standIns play helm-controller and Cluster API for the rollout tier, on the
// fleet's namespaces, every tick: helm-controller releases each HelmRelease
// whose generation it has not released (or that is not Ready): its values
// as Flux computes them, a helm upgrade with Helm's SDK, then its status
// (observedGeneration, the Ready condition, history) as helm-controller
// writes it; or, for a HelmRelease told to fail, Ready False with
// UpgradeFailed and nothing released. Cluster API writes a
// MachineDeployment's status once its spec moves: the first tick a
// surge worker on the new template, the next every worker updated and ready.
type standIns struct {
	e      *env
	chart  *chart.Chart
	live   *render.Live
	helm   map[string]*action.Configuration
	mu     sync.Mutex
	failed map[string]bool
	errs   []string
	// released counts the helm upgrades made, by HelmRelease.
	released map[string]int
	// holdCAPI: Cluster API leaves a pool's MachineDeployment as it is
	// until another pool's HelmRelease is patched (its generation past 1).
	holdCAPI map[string]rolloutPool
	// capiGate: Cluster API leaves a pool's MachineDeployment as it is while
	// its gate says false (the gate runs on the stand-ins' goroutine, between
	// ticks: what it changes, no stand-in reads half-done).
	capiGate map[string]func(context.Context) bool
	// realFlux: Flux's own helm-controller releases the HelmReleases; only
	// Cluster API is played.
	realFlux bool
}

func (s *standIns) fail(id string, fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed[id] = fail
}

func (s *standIns) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

func (s *standIns) run(ctx context.Context, pools []rolloutPool) {
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, p := range pools {
			if !s.realFlux {
				s.flux(ctx, p)
			}
			s.capi(ctx, p)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *standIns) flux(ctx context.Context, p rolloutPool) {
	c, _, err := s.live.GetClientFor(fleet.HelmReleaseAPI, "HelmRelease")
	if err != nil {
		s.problem("HelmRelease client: %v", err)
		return
	}
	hr, err := c.Namespace(p.namespace).Get(ctx, p.release, metav1.GetOptions{})
	if err != nil {
		if ctx.Err() == nil {
			s.problem("get HelmRelease %s: %v", p.id(), err)
		}
		return
	}
	gen := hr.GetGeneration()
	ready, _, _ := report.HelmReleaseStatus(hr.Object, gen)
	if ready {
		return
	}
	now := metav1.Now().UTC().Format(time.RFC3339)
	condition := func(status, reason, message string) map[string]any {
		return map[string]any{"type": "Ready", "status": status, "reason": reason, "message": message, "observedGeneration": gen, "lastTransitionTime": now}
	}
	s.mu.Lock()
	failing := s.failed[p.id()]
	s.mu.Unlock()
	status := map[string]any{"observedGeneration": gen, "lastAttemptedGeneration": gen}
	if failing {
		status["conditions"] = []any{condition("False", "UpgradeFailed", "Helm upgrade failed for release "+p.id()+": the stand-in fails it")}
	} else {
		vals, unresolved, err := fleet.Values(ctx, s.live, hr)
		if err != nil || unresolved != "" {
			s.problem("values of %s: %v %s", p.id(), err, unresolved)
			return
		}
		up := action.NewUpgrade(s.helm[p.namespace])
		up.Namespace = p.namespace
		up.Timeout = time.Minute
		rel, err := up.Run(p.release, s.chart, vals)
		if err != nil {
			status["conditions"] = []any{condition("False", "UpgradeFailed", report.OneLine(err.Error()))}
		} else {
			s.mu.Lock()
			s.released[p.id()]++
			s.mu.Unlock()
			status["conditions"] = []any{condition("True", "UpgradeSucceeded", fmt.Sprintf("Helm upgrade succeeded for release %s with chart %s@%s", p.id(), s.chart.Metadata.Name, s.chart.Metadata.Version))}
			status["history"] = []any{map[string]any{
				"name": p.release, "namespace": p.namespace, "version": rel.Version, "status": string(rel.Info.Status),
				"chartName": s.chart.Metadata.Name, "chartVersion": s.chart.Metadata.Version,
				"digest": "sha256:" + strings.Repeat("0", 64), "configDigest": "sha256:" + strings.Repeat("1", 64),
				"firstDeployed": rel.Info.FirstDeployed.UTC().Format(time.RFC3339), "lastDeployed": rel.Info.LastDeployed.UTC().Format(time.RFC3339),
			}}
		}
	}
	body, _ := json.Marshal(map[string]any{"status": status})
	if _, err := c.Namespace(p.namespace).Patch(ctx, p.release, types.MergePatchType, body, metav1.PatchOptions{}, "status"); err != nil && ctx.Err() == nil {
		s.problem("status of HelmRelease %s: %v", p.id(), err)
	}
}

func (s *standIns) capi(ctx context.Context, p rolloutPool) {
	s.mu.Lock()
	until, held := s.holdCAPI[p.id()]
	gate := s.capiGate[p.id()]
	s.mu.Unlock()
	if gate != nil && !gate(ctx) {
		return
	}
	if held {
		hr, err := s.e.dynamic.Resource(helmReleaseResource).Namespace(until.namespace).Get(ctx, until.release, metav1.GetOptions{})
		if err != nil || hr.GetGeneration() < 2 {
			return
		}
		s.mu.Lock()
		delete(s.holdCAPI, p.id())
		s.mu.Unlock()
	}
	c, _, err := s.live.GetClientFor(capiAPIVersion, "MachineDeployment")
	if err != nil {
		s.problem("MachineDeployment client: %v", err)
		return
	}
	md, err := c.Namespace(p.namespace).Get(ctx, p.machineDeployment(), metav1.GetOptions{})
	if err != nil {
		// helm-controller uninstalls the release of a deleted HelmRelease
		// and installs it again once it is created again: Cluster API has
		// nothing to do meanwhile.
		if s.realFlux && apierrors.IsNotFound(err) {
			return
		}
		if ctx.Err() == nil {
			s.problem("get MachineDeployment of %s: %v", p.id(), err)
		}
		return
	}
	n, _, _ := unstructured.NestedInt64(md.Object, "spec", "replicas")
	observed, _, _ := unstructured.NestedInt64(md.Object, "status", "observedGeneration")
	updated, _, _ := unstructured.NestedInt64(md.Object, "status", "updatedReplicas")
	replicas, _, _ := unstructured.NestedInt64(md.Object, "status", "replicas")
	var status map[string]any
	switch {
	case observed < md.GetGeneration():
		// The new template observed: one surge worker on it, the old ones left.
		status = map[string]any{"observedGeneration": md.GetGeneration(), "replicas": n + min(n, 1), "updatedReplicas": min(n, 1), "readyReplicas": n, "availableReplicas": n}
	case updated != n || replicas != n:
		status = map[string]any{"observedGeneration": observed, "replicas": n, "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n}
	default:
		return
	}
	body, _ := json.Marshal(map[string]any{"status": status})
	if _, err := c.Namespace(p.namespace).Patch(ctx, p.machineDeployment(), types.MergePatchType, body, metav1.PatchOptions{}, "status"); err != nil && ctx.Err() == nil {
		s.problem("status of MachineDeployment of %s: %v", p.id(), err)
	}
}

// rolloutEvents reads rollout -o json's output: the plan event, then one
// event a line.
func rolloutEvents(t *testing.T, out string) []report.RolloutEvent {
	t.Helper()
	var events []report.RolloutEvent
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev report.RolloutEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("rollout -o json: a line that is not one JSON event: %v\n%s\nwhole output:\n%s", err, sc.Text(), out)
		}
		events = append(events, ev)
	}
	return events
}

// eventList is "<event> <pool>" per event but progress, as a reader scans them.
func eventList(events []report.RolloutEvent) []string {
	var out []string
	for _, e := range events {
		if e.Event != report.EventProgress {
			out = append(out, strings.TrimSpace(e.Event+" "+e.Pool))
		}
	}
	return out
}

// rolloutTier is a rollout subtest's fleet, installed as helm-controller
// installs it (or by helm-controller itself) and settled as the autoscaler
// and Cluster API leave it, with its stand-ins running until the subtest ends.
type rolloutTier struct {
	s     *standIns
	live  *render.Live
	cat   *helm
	entry func(version string) map[string]any
	// templates: the KubevirtMachineTemplate each pool runs once settled.
	templates map[string]string
}

// setUpRollout installs catalog with an entry of the pool chart's default
// schematic for each of installed (their goldens Succeeded, as CDI marks
// them), and pools, each in a namespace with its cozystack-values Secret.
// Goldens of installed and later that other subtests kept (resource-policy
// keep) belong to their catalog releases: this catalog makes its own, and
// removes them when the subtest ends. With realFlux, Flux's own
// helm-controller installs and upgrades the pools (startHelmController) and
// uninstalls them when their HelmReleases go; else the stand-in does, the
// first release installed here with Helm's SDK.
func setUpRollout(t *testing.T, e *env, catalog string, pools []rolloutPool, installed []string, realFlux bool, later ...string) *rolloutTier {
	t.Helper()
	schematicID, _ := poolDefaults(t)
	ctx := t.Context()
	var goldens []string
	for _, v := range append(append([]string{}, installed...), later...) {
		goldens = append(goldens, support.GoldenName(schematicID, v))
	}
	namespaces := []string{catalogNamespace, "cozy-system"}
	for _, p := range pools {
		if !slices.Contains(namespaces, p.namespace) {
			namespaces = append(namespaces, p.namespace)
		}
	}
	if _, served := e.get(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "helmreleases.helm.toolkit.fluxcd.io"); !served {
		e.installCRDFile(t, helmReleaseCRDFile)
	}
	for _, ns := range namespaces {
		e.createNamespace(t, ns)
	}
	for _, g := range goldens {
		if _, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, g); ok {
			e.deleteOne(t, dataVolumeVersion, "DataVolume", catalogNamespace, g)
		}
	}
	cat := e.helm(t, catalogNamespace)
	entry := func(v string) map[string]any { return map[string]any{"schematicID": schematicID, "version": v} }
	var images []any
	for _, v := range installed {
		images = append(images, entry(v))
	}
	cat.mustInstall(catalog, render.CatalogChart, map[string]any{"images": images})
	t.Cleanup(func() {
		e.uninstallCatalog(t, cat, catalog)
		for _, g := range goldens {
			e.remove(t, objectRef{dataVolumeVersion, "DataVolume", catalogNamespace, g})
		}
	})
	for _, g := range goldens[:len(installed)] {
		e.setPhase(t, catalogNamespace, g, "Succeeded")
	}

	// The fleet, installed as helm-controller installs it, then settled as
	// the autoscaler and Cluster API leave it.
	if realFlux {
		e.startHelmController(t)
	}
	if _, ok := e.get(t, "source.toolkit.fluxcd.io/v1", "ExternalArtifact", "cozy-system", cozystackArtifact); !ok {
		e.createYAML(t, "apiVersion: source.toolkit.fluxcd.io/v1\nkind: ExternalArtifact\nmetadata: {name: "+cozystackArtifact+", namespace: cozy-system}\nspec: {}\n")
	}
	chrt, err := support.LoadChart(render.PoolChart)
	if err != nil {
		t.Fatal(err)
	}
	live, err := render.NewLive(e.config)
	if err != nil {
		t.Fatal(err)
	}
	s := &standIns{e: e, chart: chrt, live: live, helm: map[string]*action.Configuration{}, failed: map[string]bool{}, released: map[string]int{}, holdCAPI: map[string]rolloutPool{}, capiGate: map[string]func(context.Context) bool{}, realFlux: realFlux}
	for _, ns := range namespaces[2:] {
		s.helm[ns] = e.helm(t, ns).cfg
		e.createYAML(t, cozystackValues(ns, `
_cluster:
  osImage: {builtin: {}}
_namespace: {host: `+ns+`.example.org}`))
	}
	for _, p := range pools {
		e.createYAML(t, cozystackHelmRelease(p.namespace, strings.TrimPrefix(p.release, "kubernetes-nodes-"), p.values))
		if realFlux {
			t.Cleanup(func() { e.removeReleased(t, p.namespace, p.release) })
			waitFor(t, 60*time.Second, "helm-controller installed "+p.id(), func() string {
				hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release)
				if ready, failed, says := report.HelmReleaseStatus(hr.Object, 1); !ready {
					if failed != "" {
						t.Fatalf("helm-controller's install of %s: %s", p.id(), failed)
					}
					return says
				}
				return ""
			})
		} else {
			hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release)
			vals, unresolved, err := fleet.Values(ctx, live, hr)
			if err != nil || unresolved != "" {
				t.Fatalf("values of %s: %v %s", p.id(), err, unresolved)
			}
			inst := action.NewInstall(s.helm[p.namespace])
			inst.ReleaseName, inst.Namespace, inst.Timeout = p.release, p.namespace, time.Minute
			if _, err := inst.Run(chrt, vals); err != nil {
				t.Fatalf("helm install %s: %v", p.id(), err)
			}
			t.Cleanup(func() {
				if _, err := action.NewUninstall(s.helm[p.namespace]).Run(p.release); err != nil {
					t.Errorf("helm uninstall %s: %v", p.id(), err)
				}
				e.remove(t, objectRef{fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release})
			})
		}
		// The autoscaler's replicas: the chart leaves spec.replicas out.
		body, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": p.workers}})
		if _, err := e.client(t, capiAPIVersion, "MachineDeployment", p.namespace).Patch(ctx, p.machineDeployment(), types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			t.Fatalf("replicas of %s: %v", p.id(), err)
		}
	}
	standCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.run(standCtx, pools) }()
	t.Cleanup(func() {
		stop()
		wg.Wait()
		for _, p := range s.errs {
			t.Errorf("stand-in: %s", p)
		}
	})
	// Settled: each HelmRelease Ready at generation 1, each MachineDeployment rolled out.
	templates := map[string]string{}
	waitFor(t, 30*time.Second, "the fleet settled", func() string {
		for _, p := range pools {
			hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release)
			if ready, _, says := report.HelmReleaseStatus(hr.Object, 1); !ready {
				return p.id() + ": " + says
			}
			md, _ := e.get(t, capiAPIVersion, "MachineDeployment", p.namespace, p.machineDeployment())
			tpl := report.RunningTemplate(md.Object)
			if st := report.MachineDeploymentRolledOut(md.Object, tpl, p.workers); !st.RolledOut {
				return p.id() + ": " + st.Says
			}
			templates[p.id()] = tpl
		}
		return ""
	})
	return &rolloutTier{s: s, live: live, cat: cat, entry: entry, templates: templates}
}

// testRollout: `workerimage rollout --apply` moves the example fleet's
// flavor, v1.13.6, to v1.13.7 on the real API server, pools of three tenants
// in two waves, with stand-ins for helm-controller (Helm's SDK upgrades
// each release with the values Flux computes) and Cluster API. Without the
// v1.13.7 golden the plan will not start and names the catalog entry; with
// it added and Succeeded, a pool whose release fails stops the rollout in
// its wave, the next wave untouched; run again once it is fixed, the
// rollout skips the pools on the target, waits for the one left, moves the
// rest; run a third time, there is nothing to do. The zero-worker pool
// is done as soon as its MachineDeployment names the new template.
func testRollout(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	const from, to = "v1.13.6", "v1.13.7"
	const catalog = "kubernetes-worker-image-rollout"
	goldens := []string{support.GoldenName(schematicID, from), support.GoldenName(schematicID, to)}

	r := setUpRollout(t, e, catalog, rolloutFleet, []string{from}, false, to)
	s, cat, entry, templates := r.s, r.cat, r.entry, r.templates
	before := map[string]int{}
	for id, n := range s.released {
		before[id] = n
	}

	// The fleet's pools, by name, booting v1.13.6: other subtests leave
	// pools of that flavor (a plain helm install among them, which would
	// keep a fleet-wide rollout from starting).
	var names []string
	for _, p := range rolloutFleet {
		names = append(names, p.id())
	}
	args := []string{"rollout", "--kubeconfig", e.kubeconfig, "--to-talos", to, "--flavor", schematicID + "/" + from, "--pool", strings.Join(names, ","), "--wave", "3"}
	selected := func(plan *report.RolloutPlan) map[string]string {
		out := map[string]string{}
		for _, list := range [][]report.RolloutPool{plan.Pools(), plan.OnTarget, plan.Blocked} {
			for _, p := range list {
				if strings.HasPrefix(p.Namespace, "tenant-roll-") {
					out[p.HelmRelease] = p.State
				}
			}
		}
		return out
	}

	// 1. No golden of v1.13.7 yet: the plan names the entry to add, and
	// will not start.
	start := time.Now()
	out, _, code := e.workerimage(t, append(args, "-o", "json")...)
	planRun := time.Since(start)
	var plan report.RolloutPlan
	if err := json.Unmarshal([]byte(out), &plan); err != nil || code != 1 {
		t.Fatalf("rollout plan without the v1.13.7 golden: exit %d, want 1 and a plan: %v\n%s", code, err, out)
	}
	want := map[string]string{
		"tenant-roll-a/kubernetes-nodes-ra-golden": report.StateNeedsEntry, "tenant-roll-a/kubernetes-nodes-ra-spot": report.StateNeedsEntry,
		"tenant-roll-b/kubernetes-nodes-rb-batch": report.StateNeedsEntry, "tenant-roll-b/kubernetes-nodes-rb-web": report.StateMoves, "tenant-roll-c/kubernetes-nodes-rc-edge": report.StateMoves,
	}
	if got := selected(&plan); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pools before the entry: %v, want %v", got, want)
	}
	if plan.Catalog == nil || !strings.Contains(plan.Catalog.Values, "version: "+to) {
		t.Errorf("the plan names no catalog entry for %s: %+v", to, plan.Catalog)
	}

	// 2. The entry added, its golden imported as CDI marks it.
	cat.mustUpgrade(catalog, render.CatalogChart, map[string]any{"images": []any{entry(from), entry(to)}})
	e.setPhase(t, catalogNamespace, goldens[1], "Succeeded")

	// 3. ra-spot's release fails: wave 1 stops there, wave 2 is not patched.
	failing := "tenant-roll-a/kubernetes-nodes-ra-spot"
	s.fail(failing, true)
	start = time.Now()
	out, problem, code := e.workerimage(t, append(args, "--apply", "--timeout", "60s", "--poll", "200ms", "-o", "json")...)
	firstRun := time.Since(start)
	events := rolloutEvents(t, out)
	if code != 1 || len(events) == 0 || events[0].Event != report.EventPlan {
		t.Fatalf("rollout --apply with a failing pool: exit %d, want 1 after the plan event:\n%s%s", code, out, problem)
	}
	if !events[0].Plan.CanStart {
		var blocked []string
		for _, p := range events[0].Plan.Blocked {
			blocked = append(blocked, p.HelmRelease+": "+p.State+": "+p.Reason)
		}
		t.Fatalf("the plan does not start: %s", strings.Join(blocked, "\n"))
	}
	if got := selected(events[0].Plan); len(got) != 5 || got[failing] != report.StateMoves {
		t.Errorf("the plan that starts: %v, want the 5 pools moving", got)
	}
	wantEvents := []string{
		"wave", "patched tenant-roll-a/kubernetes-nodes-ra-golden", "patched " + failing, "patched tenant-roll-b/kubernetes-nodes-rb-batch",
	}
	got := eventList(events[1:])
	if len(got) < len(wantEvents) || fmt.Sprint(got[:len(wantEvents)]) != fmt.Sprint(wantEvents) || got[len(got)-2] != "failed "+failing || got[len(got)-1] != "stopped "+failing {
		t.Errorf("events: %q, want %q first, then the failure of %s and the stop", got, wantEvents, failing)
	}
	for _, ev := range events {
		if ev.Event == report.EventFailed && !strings.Contains(ev.Message, "HelmRelease not Ready at generation 2: UpgradeFailed: Helm upgrade failed for release "+failing) {
			t.Errorf("the failure says %q, want helm-controller's reason", ev.Message)
		}
		if ev.Event == report.EventReady && ev.Pool == "tenant-roll-b/kubernetes-nodes-rb-batch" && !strings.Contains(ev.Status.MachineDeployment, "at zero workers") {
			t.Errorf("the zero-worker pool is ready with %q, want its template named at zero workers", ev.Status.MachineDeployment)
		}
	}
	for _, p := range rolloutFleet[3:] {
		if hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release); hr.GetGeneration() != 1 {
			t.Errorf("%s of wave 2 was patched (generation %d) after wave 1 stopped", p.id(), hr.GetGeneration())
		}
	}
	if hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", "tenant-roll-a", "kubernetes-nodes-ra-spot"); render.Get(hr.Object, "spec.values.talos.version") != to ||
		len(hr.Object["spec"].(map[string]any)["valuesFrom"].([]any)) != 1 {
		t.Errorf("the failing pool's HelmRelease: spec %v, want talos.version %s in spec.values and valuesFrom untouched", hr.Object["spec"], to)
	}

	// 4. Run again as it is: the pool whose release failed cannot move and
	// is listed apart, saying how to release it again, while the rest can
	// start; with --strict it blocks the start.
	out, _, code = e.workerimage(t, args...)
	if code != 0 || !strings.Contains(out, "cannot move (left where they are, each with its fix; the rest moves):\n  pool  "+failing+"  release-failed: ") {
		t.Errorf("rollout with the failed release not fixed: exit %d, want 0 listing it apart:\n%s", code, out)
	}
	out, _, code = e.workerimage(t, append(args, "--strict")...)
	if code != 1 || !strings.Contains(out, "  pool  "+failing+"  release-failed: its values are on the target and HelmRelease not Ready at generation 2: UpgradeFailed") ||
		!strings.Contains(out, "(flux reconcile helmrelease kubernetes-nodes-ra-spot -n tenant-roll-a --force)") {
		t.Errorf("rollout --strict with the failed release not fixed: exit %d, want 1 naming it and the fix:\n%s", code, out)
	}

	// 5. Fixed: helm-controller releases it again, Cluster API rolls it only
	// once the next run has started (so that run finds it rolling); run
	// again: the pools on the target no longer boot v1.13.6 nor are on their
	// way, so are not selected; ra-spot, on its way, is waited for, not
	// patched again; wave 2's pools move with it. Text, one line per event.
	s.mu.Lock()
	s.holdCAPI[failing] = rolloutFleet[3]
	s.mu.Unlock()
	s.fail(failing, false)
	waitFor(t, 30*time.Second, failing+" released again", func() string {
		hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", "tenant-roll-a", "kubernetes-nodes-ra-spot")
		_, _, says := report.HelmReleaseStatus(hr.Object, 2)
		if !strings.Contains(says, "Ready at") {
			return says
		}
		return ""
	})
	start = time.Now()
	out, problem, code = e.workerimage(t, append(args, "--apply", "--timeout", "60s", "--poll", "200ms")...)
	secondRun := time.Since(start)
	if code != 0 {
		t.Fatalf("rollout --apply resumed: exit %d, want 0:\n%s%s", code, out, problem)
	}
	for _, line := range []string{
		"\nselected  3 pools: pools " + strings.Join(names, ", ") + ", booting " + schematicID + "/" + from + "\n",
		"  pool tenant-roll-a/kubernetes-nodes-ra-spot (kubernetes-ra-spot): 1 worker, rolling\n",
		"\nwave 1 of 1: 3 pools: tenant-roll-a/kubernetes-nodes-ra-spot, tenant-roll-b/kubernetes-nodes-rb-web, tenant-roll-c/kubernetes-nodes-rc-edge\n",
		"\nready tenant-roll-a/kubernetes-nodes-ra-spot: HelmRelease Ready at generation 2;",
		"\ndone: 3 pools on the target, in 1 wave\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("the resumed rollout does not say %q:\n%s", line, out)
		}
	}
	if strings.Contains(out, "patched tenant-roll-a/kubernetes-nodes-ra-spot") {
		t.Errorf("the resumed rollout patched the pool left rolling again:\n%s", out)
	}

	// Every pool runs v1.13.7 now, each released once more and on the
	// template the chart renders for it.
	for _, p := range rolloutFleet {
		hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", p.namespace, p.release)
		md, _ := e.get(t, capiAPIVersion, "MachineDeployment", p.namespace, p.machineDeployment())
		tpl := report.RunningTemplate(md.Object)
		if ready, _, says := report.HelmReleaseStatus(hr.Object, 2); !ready || tpl == templates[p.id()] || !report.MachineDeploymentRolledOut(md.Object, tpl, p.workers).RolledOut {
			t.Errorf("%s after the rollout: %s, MachineDeployment on %s (was %s)", p.id(), says, tpl, templates[p.id()])
		}
		kmt, ok := e.get(t, kmtAPIVersion, kmtKind, p.namespace, tpl)
		disk := fmt.Sprint(render.Get(kmt.Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates"))
		if !ok || !strings.Contains(disk, to) || strings.Contains(disk, from) {
			t.Errorf("%s runs %s, whose disk is not v1.13.7: %s", p.id(), tpl, disk)
		}
		if n := s.released[p.id()] - before[p.id()]; n != 1 {
			t.Errorf("%s was released %d times by the rollout, want once", p.id(), n)
		}
		if n, _, _ := unstructured.NestedInt64(hr.Object, "metadata", "generation"); n != 2 {
			t.Errorf("%s: HelmRelease at generation %d, want 2: patched once", p.id(), n)
		}
	}

	// 6. Nothing left to do.
	start = time.Now()
	out, _, code = e.workerimage(t, args...)
	lastRun := time.Since(start)
	if code != 0 || !strings.Contains(out, "selected  0 pools") || !strings.Contains(out, "result  nothing to do: every selected pool is on the target") {
		t.Errorf("rollout once done: exit %d, want 0 and nothing to do:\n%s", code, out)
	}
	t.Logf("rollout of %d pools of 3 tenants, waves of 3 (polling every 200ms, the stand-ins every 150ms): the plan without the golden %s; --apply stopped at the failing pool after %s; resumed, 3 pools in 1 wave, done after %s; nothing to do %s",
		len(rolloutFleet), planRun.Round(time.Millisecond), firstRun.Round(time.Millisecond), secondRun.Round(time.Millisecond), lastRun.Round(time.Millisecond))
}

// waitFor polls until check says nothing is left ("").
func waitFor(t *testing.T, timeout time.Duration, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := check()
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s: %s", what, timeout, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var helmReleaseResource = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
