// rollout plans moving chosen pools to a target (a Talos flavor, the chart's
// defaults, osImage.builtin, a factory URL) in waves. It reads what pins
// reads (ReadPins), asks the chart about each selected pool twice with
// plan's renders (Plan): as it is, and with its HelmRelease's spec.values
// changed at the field its flavor came from. The chart decides every
// render; the plan says what changes, what rolls, and what keeps the
// rollout from starting. It writes nothing: internal/apply does.

package report

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RolloutOptions are what a rollout is asked: which pools, where to, and
// how many at once.
type RolloutOptions struct {
	Selection RolloutSelection
	Target    RolloutTarget
	WaveSize  int
}

// Check refuses a target or a selection that says nothing, or contradicts
// itself, before anything is read.
func (o RolloutOptions) Check() error {
	t := o.Target
	switch {
	case t.TalosVersion == "" && t.SchematicID == "" && !t.Defaults && !t.Builtin && t.FactoryURL == "":
		return fmt.Errorf("give a target: --to-talos VERSION (with --to-schematic ID), --to-defaults, --to-builtin or --to-factory URL")
	case t.Defaults && (t.TalosVersion != "" || t.SchematicID != ""):
		return fmt.Errorf("--to-defaults is the chart's Talos version and schematic for new pools: leave out --to-talos and --to-schematic, or give them instead")
	case t.SchematicID != "" && t.TalosVersion == "":
		return fmt.Errorf("--to-schematic %s moves the schematic of a flavor: give its Talos version too (--to-talos VERSION)", t.SchematicID)
	case t.Builtin && t.FactoryURL != "":
		return fmt.Errorf("--to-builtin clones a golden, which imports from the catalog's factory, not the pool's: --to-factory applies to pools that import over HTTP; give one of them")
	case o.WaveSize < 1:
		return fmt.Errorf("--wave %d: a wave holds at least 1 pool", o.WaveSize)
	}
	if f := o.Selection.Flavor; f != "" {
		if _, _, err := parseFlavor(f); err != nil {
			return err
		}
	}
	return nil
}

// parseFlavor reads --flavor SCHEMATIC/VERSION.
func parseFlavor(f string) (schematicID, version string, err error) {
	schematicID, version, ok := strings.Cut(f, "/")
	if !ok || schematicID == "" || version == "" || strings.Contains(version, "/") {
		return "", "", fmt.Errorf("--flavor %q: want SCHEMATIC/VERSION, as in ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.6", f)
	}
	return schematicID, version, nil
}

// probe is the release a target is checked with, as a new pool.
var probe = render.Release{Name: "kubernetes-nodes-rollout-target", Namespace: "tenant-rollout"}

// ResolveTarget asks the chart about the target as it asks about a new
// pool's values, without a cluster: it refuses a malformed version,
// schematic or URL in its own words, and says what the chart's defaults for
// a new pool are (Defaults resolved into TalosVersion and SchematicID).
func ResolveTarget(chrt *chart.Chart, target RolloutTarget) (RolloutTarget, string, error) {
	talos := map[string]any{}
	for k, v := range map[string]string{"version": target.TalosVersion, "schematicID": target.SchematicID, "imageFactoryURL": target.FactoryURL} {
		if v != "" {
			talos[k] = v
		}
	}
	rep, _, err := Plan(chrt, Target{Desc: "none"}, probe, map[string]any{"cluster": "rollout", "talos": talos})
	if err != nil {
		return target, "", err
	}
	if rep.Result != "renders" || rep.DiskSource == nil {
		return target, "", fmt.Errorf("the target is refused by the chart, as a new pool's values would be: %s", rep.Refusal)
	}
	if !target.Defaults {
		return target, "", nil
	}
	d := rep.DiskSource
	target.TalosVersion, target.SchematicID = d.Version.Value, d.SchematicID.Value
	from := fmt.Sprintf("the chart's defaults for a new pool (%s %s): schematicID from %s, version from %s", chrt.Metadata.Name, chrt.Metadata.Version, d.SchematicID.Source, d.Version.Source)
	return target, from, nil
}

// Rollout plans moving the selected pools to the target, wave by wave.
// An error is bad input (a target the chart refuses, a --pool that names
// no pool) or a cluster problem; a pool the rollout cannot move is in the
// plan, and keeps it from starting.
func Rollout(chrt *chart.Chart, t Target, f *PinsFacts, o RolloutOptions) (*RolloutPlan, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	t.Provider = render.Snapshot(t.Provider) // a plan's reads: each object once
	target, from, err := ResolveTarget(chrt, o.Target)
	if err != nil {
		return nil, err
	}
	plan := &RolloutPlan{Cluster: t.Desc, Chart: chrt.Metadata.Name, Selection: o.Selection, Target: target, TargetFrom: from, WaveSize: o.WaveSize,
		Waves: []RolloutWave{}, OnTarget: []RolloutPool{}, Blocked: []RolloutPool{}, Unknown: []RolloutPool{}, UnreadNamespaces: f.unread, Ignored: f.ignored}
	selected, unknown, onTheWay, err := selectPools(f, o, target)
	if err != nil {
		return nil, err
	}
	for _, rp := range unknown {
		why := "its values cannot be computed as Flux computes them: " + rp.pin.Unresolved
		if rp.pin.Unresolved == "" {
			why = "the chart refuses it before its image resolves: " + rp.pin.Refusal
		}
		plan.Unknown = append(plan.Unknown, RolloutPool{HelmRelease: rp.pin.HelmRelease, Release: rp.pin.Release, Namespace: rp.pin.Namespace, Pool: rp.pin.Pool, State: StateUnresolved,
			Reason: "whether it is selected is not known, and rollout cannot move it: " + why})
	}
	var moving []RolloutPool
	all := append(append([]resolvedPool(nil), selected...), onTheWay...)
	for i, rp := range all {
		t.progress("planning pool %d of %d: %s", i+1, len(all), rp.pin.HelmRelease)
		p, err := planPool(chrt, t, f, rp, target)
		if err != nil {
			return nil, err
		}
		if i >= len(selected) && p.State != StateRolling && p.State != StateReleaseFailed {
			// On the target, or there by its own values: not this rollout's.
			continue
		}
		plan.Selected++
		switch p.State {
		case StateMoves, StateRolling:
			moving = append(moving, p)
		case StateOnTarget:
			plan.OnTarget = append(plan.OnTarget, p)
		default:
			plan.Blocked = append(plan.Blocked, p)
		}
	}
	plan.Waves = waves(moving, o.WaveSize)
	plan.CanStart = len(plan.Blocked) == 0
	if plan.Catalog, err = rolloutCatalog(t, f, plan.Blocked); err != nil {
		return nil, err
	}
	return plan, nil
}

// selectPools keeps the pools every given criterion keeps. A pool whose
// flavor cannot be read (its values are not resolved, or do not resolve an
// image) cannot be judged by --flavor or --behind: it is unknown, listed
// apart, and does not keep the rollout from starting; selected by where it
// is alone, it is selected, and does. A pool --flavor or --behind leaves
// out that resolves to the target already may be on its way there (an
// earlier run moved it, its workers have not all rolled): onTheWay, for the
// plan to keep if it is.
func selectPools(f *PinsFacts, o RolloutOptions, target RolloutTarget) (selected, unknown, onTheWay []resolvedPool, err error) {
	s := o.Selection
	named := map[string]bool{}
	for _, rp := range f.pools {
		if s.Namespace != "" && rp.pin.Namespace != s.Namespace {
			continue
		}
		if len(s.Pools) > 0 {
			hit := false
			for _, name := range s.Pools {
				if poolNamed(rp, name) {
					named[name], hit = true, true
				}
			}
			if !hit {
				continue
			}
		}
		judged := rp.facts != nil && rp.pin.Unresolved == ""
		if (s.Flavor != "" || s.Behind) && !judged {
			unknown = append(unknown, rp)
			continue
		}
		keep := true
		if s.Flavor != "" {
			schematicID, version, _ := parseFlavor(s.Flavor)
			ds := rp.facts.DiskSource
			keep = string(ds.SchematicID) == schematicID && string(ds.Version) == version
		}
		if keep && s.Behind {
			keep = len(Behind(runningFromFacts(rp.facts), f.stored)) > 0
		}
		switch {
		case keep:
			selected = append(selected, rp)
		case resolvesTo(rp.facts, target):
			onTheWay = append(onTheWay, rp)
		}
	}
	for _, name := range s.Pools {
		if !named[name] {
			return nil, nil, nil, fmt.Errorf("--pool %s names no pool%s: give a HelmRelease's name, its release, the pool's objects' name (kubernetes-<cluster>-<pool>), or NAMESPACE/any of those%s", name, inNamespace(s.Namespace), nearestPool(f, name))
		}
	}
	sort.Slice(selected, func(i, j int) bool { return selected[i].pin.HelmRelease < selected[j].pin.HelmRelease })
	return selected, unknown, onTheWay, nil
}

// resolvesTo: the chart resolves the pool's flavor to the target's already
// (what a run that moved it leaves), as far as the target says.
func resolvesTo(f *chartFacts, t RolloutTarget) bool {
	ds := f.DiskSource
	return (t.TalosVersion == "" || string(ds.Version) == t.TalosVersion) &&
		(t.SchematicID == "" || string(ds.SchematicID) == t.SchematicID) &&
		(!t.Builtin || ds.Clone) &&
		(t.FactoryURL == "" || (!ds.Clone && string(ds.ImageFactoryURL) == t.FactoryURL))
}

func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + ns
}

// poolNamed: name is one of the pool's names, or <namespace>/<one of them>.
func poolNamed(rp resolvedPool, name string) bool {
	_, hrName, _ := strings.Cut(rp.pin.HelmRelease, "/")
	for _, n := range []string{hrName, rp.pin.Release, rp.pin.Pool} {
		if n != "" && (name == n || name == rp.pin.Namespace+"/"+n) {
			return true
		}
	}
	return false
}

// nearestPool suggests, for a --pool that names none, the pool names that
// end in it (acme-golden: kubernetes-acme-golden), else the nearest one.
func nearestPool(f *PinsFacts, name string) string {
	var names, ending []string
	for _, rp := range f.pools {
		_, hrName, _ := strings.Cut(rp.pin.HelmRelease, "/")
		for _, n := range []string{hrName, rp.pin.Pool} {
			names = append(names, n)
			if strings.HasSuffix(n, "-"+name) {
				ending = append(ending, n)
			}
		}
	}
	if len(ending) > 0 {
		return "; did you mean " + FirstFive(ending) + "?"
	}
	if near := NearestWord(name, names); near != "" {
		return "; did you mean " + near + "?"
	}
	return ""
}

// planPool renders one pool as it is and at the target, and says what
// moving it takes.
func planPool(chrt *chart.Chart, t Target, f *PinsFacts, rp resolvedPool, target RolloutTarget) (RolloutPool, error) {
	p := RolloutPool{HelmRelease: rp.pin.HelmRelease, Release: rp.pin.Release, Namespace: rp.pin.Namespace, Pool: rp.pin.Pool}
	if rp.pin.Unresolved != "" {
		p.State, p.Reason = StateUnresolved, "its values cannot be computed as Flux computes them: "+rp.pin.Unresolved
		return p, nil
	}
	var md map[string]any
	if u := f.machineDeployments[p.Namespace+"/"+p.Pool]; u != nil && p.Pool != "" {
		md = u.Object
		p.MachineDeployment = true
		p.Workers, _ = Workers(md)
		p.ToReplace = p.Workers
		p.MachineTemplate.Running = RunningTemplate(md)
	}
	now, nowManifest, err := Plan(chrt, t, rp.release, rp.values)
	if err != nil {
		return p, err
	}
	d := now.DiskSource
	if d == nil {
		p.State, p.Reason = StateRefused, "the chart refuses it before its disk source resolves, today and so at any target: "+now.Refusal
		return p, nil
	}
	p.Pool = now.Pool
	p.From = flavorOf(d)
	p.MachineTemplate.Current = now.MachineTemplate
	var running *Running
	if rp.facts != nil {
		r := runningFromFacts(rp.facts)
		running = &r
		p.Behind = Behind(r, f.stored)
	}

	e := newValuesEdit(now.CreatedWith)
	schematicID, version, path := d.SchematicID, d.Version, d.Path
	if target.Builtin && d.Path != "clone" {
		schematicID, version = e.switchToBuiltin(d, rp.values)
		path = "clone"
	}
	if target.SchematicID != "" {
		e.set("schematicID", schematicID, target.SchematicID)
	}
	if target.TalosVersion != "" {
		e.set("version", version, target.TalosVersion)
	}
	if target.FactoryURL != "" && path == "http" && d.ImageFactoryURL != nil {
		e.set("imageFactoryURL", *d.ImageFactoryURL, target.FactoryURL)
	}
	kubernetes := ""
	if target.Defaults && running != nil {
		if from, to, ok := kubernetesPatch(*running); ok {
			kubernetes = to
			e.patch["version"] = to
			e.changes = append(e.changes, ValueChange{Field: "version", From: from, Source: running.KubernetesSource, To: to})
		}
	}
	p.Changes = e.changes

	var hr *unstructured.Unstructured
	if rp.helmRelease != "" {
		ns, name, _ := strings.Cut(rp.helmRelease, "/")
		if hr, err = fleet.Get(context.Background(), t.Provider, fleet.HelmReleaseAPI, "HelmRelease", ns, name); err != nil {
			return p, err
		}
		if hr != nil {
			p.Generation, p.UID = Generation(hr.Object), string(hr.GetUID())
		}
	}

	if len(e.patch) == 0 {
		p = onTargetOrRolling(p, now, md, hr, target, path)
		if p.State == StateRolling {
			p.cloning(d, nowManifest, md)
		}
		return p, nil
	}
	p.ValuesChange = e.patch

	// The values the pool renders with once its spec.values change, as Flux
	// computes them (valuesFrom first, spec.values on top); for a pool
	// without a HelmRelease, its values with the change merged on top.
	next := MergePatch(rp.values, e.patch)
	if hr != nil {
		own, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
		p.SpecValues = MergePatch(own, e.patch)
		patched := hr.DeepCopy()
		if err := unstructured.SetNestedMap(patched.Object, p.SpecValues, "spec", "values"); err != nil {
			return p, err
		}
		vals, unresolved, err := fleet.Values(context.Background(), t.Provider, patched)
		if err != nil {
			return p, err
		}
		if unresolved != "" {
			p.State, p.Reason = StateRefused, "its values, changed, cannot be computed as Flux computes them: "+unresolved
			return p, nil
		}
		next = vals
	}
	at, manifest, err := Plan(chrt, t, rp.release, next)
	if err != nil {
		return p, err
	}
	p.MachineTemplate.Target = at.MachineTemplate
	if at.DiskSource != nil {
		p.To = flavorOf(at.DiskSource)
		p.switched = at.DiskSource
	}
	p.toSchematicID, p.toVersion = orKeep(target.SchematicID, schematicID.Value), orKeep(target.TalosVersion, version.Value)
	p.toURL = target.FactoryURL
	if p.toURL == "" && d.ImageFactoryURL != nil && path == "http" {
		p.toURL = d.ImageFactoryURL.Value
	}
	missed := missedTarget(at.DiskSource, path, p.toSchematicID, p.toVersion, target.FactoryURL)
	if got := kubernetesOf(manifest); missed == "" && kubernetes != "" && at.Result == "renders" && got != kubernetes {
		missed = fmt.Sprintf("its MachineDeployment would run Kubernetes %s, not %s", OrNone(got), kubernetes)
	}
	if missed != "" && at.DiskSource != nil {
		p.State, p.Reason = StateRefused, "its values change does not reach its render: "+missed+"; whatever sets it there (a valuesFrom targetPath, say) wins over spec.values: change it there, or leave the pool out"
		return p, nil
	}
	switch {
	case at.Result != "renders":
		p.State, p.Reason = StateRefused, at.Refusal
		switch switchOutcome(at) {
		case OutcomeNeedsEntry:
			p.State = StateNeedsEntry
		case OutcomeNeedsPerClass:
			p.State = StateNeedsPerClass
		}
		return p, nil
	case at.DiskSource.Path == "clone" && at.DiskSource.GoldenFoundAs == "DataVolume" && at.DiskSource.GoldenPhase != "Succeeded":
		p.State = StateGoldenNotReady
		p.Reason = fmt.Sprintf("golden %s is %s, not Succeeded: the pool's new workers would wait for it; wait for its import to succeed (workerimage pins %s), or, if it failed, see the runbook for a Failed golden", at.DiskSource.Golden, phaseText(at.DiskSource.GoldenPhase), at.DiskSource.Golden)
		return p, nil
	}
	p.State = StateMoves
	switch {
	case hr == nil:
		p.State = StateNoHelmRelease
		p.Reason = "installed with helm install, without a HelmRelease: rollout patches a HelmRelease's spec.values only; move it with helm upgrade --reuse-values setting the values change below, or manage it with a HelmRelease"
	case kustomization(hr) != "":
		p.State = StateKustomized
		p.Reason = fmt.Sprintf("HelmRelease %s is applied by the Flux Kustomization %s (its kustomize.toolkit.fluxcd.io labels), which would put its spec.values back at its next reconcile, and the pool would roll back: change the values in that Kustomization's source instead, or leave the pool out", rp.helmRelease, kustomization(hr))
	case suspended(hr):
		p.State = StateSuspended
		p.Reason = fmt.Sprintf("HelmRelease %s is suspended (spec.suspend: true): helm-controller would not apply the change; resume it (flux resume helmrelease %s -n %s), or leave the pool out", rp.helmRelease, hr.GetName(), hr.GetNamespace())
	}
	p.cloning(at.DiskSource, manifest, md)
	p.Note = caNote(d, at.DiskSource, next)
	return p, nil
}

// cloning fills in what a pool clones as it rolls onto the render m, whose
// disk source is d: its golden, and on the clone path its disk's size, CDI's
// strategy and how many disks it clones at once.
func (p *RolloutPool) cloning(d *DiskReport, m *render.Manifest, md map[string]any) {
	p.Golden = d.Golden
	if d.Path != "clone" {
		return
	}
	p.DiskSize = diskSize(m)
	if cs := d.CloneStrategy; cs != nil {
		p.CloneStrategy = cs.Value
	}
	p.ClonesInFlight = min(clonesAtOnce(md, p.Workers), p.ToReplace)
}

// onTargetOrRolling: a pool whose values are on the target already is on
// it when its HelmRelease is Ready at its generation and its
// MachineDeployment runs the template it renders, every worker updated;
// else it is rolling there (an earlier run patched it), and the rollout
// waits for it.
func onTargetOrRolling(p RolloutPool, now *PlanReport, md map[string]any, hr *unstructured.Unstructured, target RolloutTarget, path string) RolloutPool {
	p.To = p.From
	p.MachineTemplate.Target = now.MachineTemplate
	if target.FactoryURL != "" && path == "clone" && !target.Builtin && target.TalosVersion == "" {
		p.State, p.Reason = StateOnTarget, "clones a golden: --to-factory moves pools that import over HTTP"
		return p
	}
	if now.Result != "renders" {
		p.State, p.Reason = StateRefused, "its values are on the target, and the chart refuses them: "+now.Refusal
		return p
	}
	if hr == nil {
		p.State, p.Reason = StateOnTarget, "on the target (a Helm release without a HelmRelease: what its MachineDeployment runs is not checked)"
		return p
	}
	hrReady, failed, hrSays := HelmReleaseStatus(hr.Object, Generation(hr.Object))
	mdState := MachineDeploymentRolledOut(md, now.MachineTemplate, p.Workers)
	if mdState.Template == now.MachineTemplate && mdState.Observed {
		p.ToReplace = max(0, p.Workers-mdState.UpdatedReplicas)
	}
	if hrReady && mdState.RolledOut {
		p.State, p.Reason = StateOnTarget, mdState.Says
		return p
	}
	if failed != "" {
		// Waiting would only see the failure again: helm-controller retries
		// a failed release on its own terms.
		ns, name, _ := strings.Cut(p.HelmRelease, "/")
		p.State = StateReleaseFailed
		p.Reason = fmt.Sprintf("its values are on the target and %s; fix the cause, have helm-controller release it again (flux reconcile helmrelease %s -n %s --force), then run again", failed, name, ns)
		return p
	}
	p.State = StateRolling
	p.Reason = hrSays + "; " + mdState.Says
	return p
}

// missedTarget says which part of the target a render does not resolve to.
func missedTarget(d *DiskReport, path, schematicID, version, url string) string {
	if d == nil {
		return ""
	}
	switch {
	case d.Path != path:
		return fmt.Sprintf("the chart resolves the %s path, not %s", d.Path, path)
	case d.SchematicID.Value != schematicID:
		return fmt.Sprintf("the chart resolves schematicID %s from %s", d.SchematicID.Value, d.SchematicID.Source)
	case d.Version.Value != version:
		return fmt.Sprintf("the chart resolves version %s from %s", d.Version.Value, d.Version.Source)
	case url != "" && d.Path == "http" && d.ImageFactoryURL != nil && d.ImageFactoryURL.Value != url:
		return fmt.Sprintf("the chart resolves imageFactoryURL %s from %s", d.ImageFactoryURL.Value, d.ImageFactoryURL.Source)
	}
	return ""
}

// kubernetesPatch is the chart's release of the minor a pool runs, when
// it is newer than the release the pool runs (as Behind says it).
func kubernetesPatch(r Running) (from, to string, ok bool) {
	for _, b := range Behind(r, nil) {
		if b.Kind == BehindKubernetesPatch {
			return b.From, b.To, true
		}
	}
	return "", "", false
}

// kubernetesOf is the Kubernetes release a render's MachineDeployment runs.
func kubernetesOf(m *render.Manifest) string {
	if m == nil {
		return ""
	}
	md, err := m.One("MachineDeployment")
	if err != nil {
		return ""
	}
	return fleet.Text(md.Object, "spec", "template", "spec", "version")
}

func orKeep(target, now string) string {
	if target != "" {
		return target
	}
	return now
}

func phaseText(phase string) string {
	if phase == "" {
		return "without a phase yet"
	}
	return "in phase " + phase
}

// kustomization is the Flux Kustomization that applies hr,
// "<namespace>/<name>" from the labels kustomize-controller sets; "" when none.
func kustomization(hr *unstructured.Unstructured) string {
	l := hr.GetLabels()
	name, ns := l["kustomize.toolkit.fluxcd.io/name"], l["kustomize.toolkit.fluxcd.io/namespace"]
	if name == "" {
		return ""
	}
	return ns + "/" + name
}

func suspended(hr *unstructured.Unstructured) bool {
	s, _, _ := unstructured.NestedBool(hr.Object, "spec", "suspend")
	return s
}

// flavorOf is the disk source a pool resolves, as the chart reports it.
func flavorOf(d *DiskReport) *RolloutFlavor {
	return &RolloutFlavor{Path: d.Path, SchematicID: d.SchematicID, Version: d.Version, ImageFactoryURL: d.ImageFactoryURL, Golden: d.Golden}
}

// diskSize is the worker disk's storage request in the rendered template:
// what CDI's temporary claim in cozy-public asks for while it clones.
func diskSize(m *render.Manifest) string {
	kmt, err := m.One("KubevirtMachineTemplate")
	if err != nil {
		return ""
	}
	dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
	if len(dvts) == 0 {
		return ""
	}
	dv, _ := dvts[0].(map[string]any)
	return fleet.Text(dv, "spec", "storage", "resources", "requests", "storage")
}

// clonesAtOnce is how many new workers Cluster API creates at once as the
// pool rolls, each a disk cloned at once: its rolling update's maxSurge
// (rounded up) and maxUnavailable (rounded down), Cluster API's defaults 1
// and 0, at most its workers.
func clonesAtOnce(md map[string]any, workers int64) int64 {
	if workers <= 0 {
		return 0
	}
	scaled := func(field string, def intstr.IntOrString, roundUp bool) int64 {
		v := def
		path := []string{"spec", "strategy", "rollingUpdate", field}
		switch raw, _, _ := unstructured.NestedFieldNoCopy(md, path...); raw := raw.(type) {
		case string:
			v = intstr.FromString(raw)
		case int64, float64, int:
			n, _ := fleet.Int64(md, path...)
			v = intstr.FromInt32(int32(n))
		}
		n, err := intstr.GetScaledValueFromIntOrPercent(&v, int(workers), roundUp)
		if err != nil || n < 0 {
			return 0
		}
		return int64(n)
	}
	n := scaled("maxSurge", intstr.FromInt32(1), true) + scaled("maxUnavailable", intstr.FromInt32(0), false)
	return max(1, min(n, workers))
}

// caNote: a pool that moves to a factory URL of its own takes no CA of the
// platform's (a CA belongs to the URL it came with), and imports trusting
// CDI's system store alone unless it sets talos.imageFactoryCA.
func caNote(now, at *DiskReport, values map[string]any) string {
	if at == nil || at.Path != "http" || at.ImageFactoryCA != nil {
		return ""
	}
	platformCA := fleet.Text(values, "_cluster", "talos", "imageFactoryCA") != ""
	if now.ImageFactoryCA == nil && !platformCA {
		return ""
	}
	return "it will import from a factory URL of its own, which takes no CA of the platform's (_cluster.talos.imageFactoryCA applies only to the platform's URL): its disks trust CDI's system store alone; if the mirror is served by your own CA, set talos.imageFactoryCA in its values too"
}

// waves splits the pools to move into waves of size, the pools an earlier
// run left rolling first (they are waited for, not patched), then in the
// order pins lists them.
func waves(pools []RolloutPool, size int) []RolloutWave {
	sort.SliceStable(pools, func(i, j int) bool {
		return pools[i].State == StateRolling && pools[j].State != StateRolling
	})
	out := []RolloutWave{}
	for start := 0; start < len(pools); start += size {
		w := RolloutWave{Wave: len(out) + 1, Pools: pools[start:min(start+size, len(pools))]}
		storage := resource.MustParse("0")
		known := true
		for _, p := range w.Pools {
			w.WorkersToReplace += p.ToReplace
			w.ClonesInFlight += p.ClonesInFlight
			if p.To != nil && p.To.Path == "http" {
				w.HTTPImports += p.ToReplace
			}
			if p.ClonesInFlight == 0 {
				continue
			}
			size, err := resource.ParseQuantity(p.DiskSize)
			if err != nil {
				known = false
				continue
			}
			for range p.ClonesInFlight {
				storage.Add(size)
			}
		}
		w.TransientStorage = storage.String()
		if !known {
			w.TransientStorage += " and more (a disk size the template does not state)"
		}
		out = append(out, w)
	}
	return out
}

// rolloutCatalog is the catalog's images list with what the blocked pools
// wait for, as adopt writes it: a new entry for a flavor with no golden, a
// class added to an entry for a pool on another class.
func rolloutCatalog(t Target, f *PinsFacts, blocked []RolloutPool) (*AdoptCatalog, error) {
	var waiting []AdoptPool
	for _, p := range blocked {
		if p.State != StateNeedsEntry && p.State != StateNeedsPerClass {
			continue
		}
		outcome := OutcomeNeedsEntry
		if p.State == StateNeedsPerClass {
			outcome = OutcomeNeedsPerClass
		}
		waiting = append(waiting, AdoptPool{HelmRelease: p.HelmRelease, Outcome: outcome, Switched: p.switched, schematicID: p.toSchematicID, version: p.toVersion, imageFactoryURL: p.toURL})
	}
	if len(waiting) == 0 {
		return nil, nil
	}
	url, _, err := platformCatalog(t)
	if err != nil {
		return nil, err
	}
	for i := range waiting {
		// A pool that clones already boots from no factory of its own.
		if waiting[i].imageFactoryURL == "" {
			waiting[i].imageFactoryURL = url.Value
		}
	}
	c := catalogFor(f.stored, waiting, url)
	return &c, nil
}
