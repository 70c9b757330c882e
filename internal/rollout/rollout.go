// rollout plans moving chosen pools to a target (a Talos flavor, the chart's
// defaults, osImage.builtin, a factory URL) in waves. It reads what pins
// reads (ReadPinsToPlan), asks the chart about each selected pool twice with
// plan's renders (Plan): as it is (the render the fleet was read with), and
// with its HelmRelease's spec.values changed at the field its flavor came
// from. The chart decides every
// render; the plan says what changes, what rolls, and what keeps the
// rollout from starting. It writes nothing: internal/apply does.

package rollout

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cozystack/golden-worker-images/internal/report"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RolloutOptions are what a rollout is asked: which pools, where to, and
// how many at once.
type RolloutOptions struct {
	Selection RolloutSelection
	Target    RolloutTarget
	// WaveSize bounds the pools of a wave; MaxWorkers the workers a wave
	// replaces at once and MaxClones the clones of one golden a wave has in
	// flight (0: no bound).
	WaveSize, MaxWorkers, MaxClones int
	// Strict: a pool that cannot move keeps the rollout from starting.
	Strict bool
	// Factory reads the Image Factory's version list when nothing of the
	// platform knows --to-talos (checkTargetKnown); nil: FactoryReader{}.
	Factory *FactoryReader
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
	case (t.FactoryCA != "" || t.FactoryCAFrom != "") && t.FactoryURL == "":
		return fmt.Errorf("--factory-ca %s is the CA of the factory a pool moves to: give --to-factory URL with it (one change, one re-image); to trust a CA at the URL a pool has now, set talos.imageFactoryCA in its values", report.OrNone(t.FactoryCAFrom))
	case o.WaveSize < 1:
		return fmt.Errorf("--wave %d: a wave holds at least 1 pool", o.WaveSize)
	case o.MaxWorkers < 0:
		return fmt.Errorf("--max-workers %d: give the most workers a wave replaces at once, or 0 for no bound", o.MaxWorkers)
	case o.MaxClones < 0:
		// 0 is no bound to the report; the CLI refuses it (it reads as no clones).
		return fmt.Errorf("--max-clones %d: give the most clones of one golden a wave has in flight", o.MaxClones)
	}
	for _, name := range o.Selection.Exclude {
		if name == "" {
			return fmt.Errorf("--exclude \"\": give a pool as --pool takes it: a HelmRelease's name, its release, kubernetes-<cluster>-<pool>, or NAMESPACE/any of those")
		}
	}
	if f := o.Selection.Flavor; f != "" {
		if _, err := parseFlavor(f); err != nil {
			return err
		}
	}
	return nil
}

// flavorSelector is --flavor read: a schematic and a Talos version, or a
// minor (vMAJOR.MINOR) whose every patch it takes.
type flavorSelector struct {
	schematicID, version string
	minor                bool
}

// minorForm is the flag's own form for every patch of a minor (no chart
// value takes it); a schematic and a full version are the chart's to judge.
var minorForm = regexp.MustCompile(`^v[0-9]+\.[0-9]+$`)

func flavorForm(f string) error {
	return fmt.Errorf("--flavor %q: want SCHEMATIC/VERSION: SCHEMATIC a schematic ID as the chart takes one in talos.schematicID (an Image Factory schematic ID, 64 hex digits, or a name such as my-schematic: a DNS label of at most 64 characters), VERSION vMAJOR.MINOR.PATCH for that Talos release or vMAJOR.MINOR for every patch of that minor, as in ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.6 or my-schematic/v1.13", f)
}

// parseFlavor reads --flavor SCHEMATIC/vX.Y.Z (that flavor) or
// SCHEMATIC/vX.Y (every patch of that minor: a fix must reach each) as to
// its shape; checkFlavor holds its parts to the chart's rule.
func parseFlavor(f string) (flavorSelector, error) {
	schematicID, version, ok := strings.Cut(f, "/")
	if !ok || schematicID == "" || !strings.HasPrefix(version, "v") || strings.Contains(version, "/") {
		return flavorSelector{}, flavorForm(f)
	}
	return flavorSelector{schematicID: schematicID, version: version, minor: minorForm.MatchString(version)}, nil
}

// flavorKind is the document checkFlavor's template renders.
const flavorKind = "WorkerimageFlavorCheck"

// checkFlavor holds --flavor's schematic and version to the rule the chart
// takes talos.schematicID and talos.version by (the library's
// worker-image-lib.isImageField: its pattern and its longest), in a render
// of the chart's own helpers: one rule for a schematic, the chart's. A minor
// is checked as its .0 patch.
func checkFlavor(chrt *chart.Chart, f string) error {
	sel, err := parseFlavor(f)
	if err != nil {
		return err
	}
	version := sel.version
	if sel.minor {
		version += ".0"
	}
	const body = `kind: ` + flavorKind + `
schematicID: {{ include "worker-image-lib.isImageField" (dict "field" "schematicID" "value" .Values.schematicID) | quote }}
version: {{ include "worker-image-lib.isImageField" (dict "field" "version" "value" .Values.version) | quote }}
`
	c := render.WithTemplate(render.HelpersOnly(chrt), "templates/0-workerimage-flavor.yaml", []byte(body))
	m, err := render.Render(c, render.Options{Release: render.Release{Name: probe.Name, Namespace: probe.Namespace, SkipSchemaValidation: true},
		Values: map[string]any{"schematicID": sel.schematicID, "version": version}})
	if err != nil {
		return fmt.Errorf("--flavor %q: the chart %s cannot judge it (its worker-image-lib.isImageField): %v", f, chrt.Metadata.Name, err)
	}
	d, ok := m.Find(flavorKind, "")
	if !ok {
		return fmt.Errorf("--flavor %q: the chart %s cannot judge it (its worker-image-lib.isImageField rendered nothing)", f, chrt.Metadata.Name)
	}
	if d.Object["schematicID"] != "true" || d.Object["version"] != "true" {
		return flavorForm(f)
	}
	return nil
}

// boots: a pool booting schematicID/version is of the flavor.
func (s flavorSelector) boots(schematicID, version string) bool {
	if schematicID != s.schematicID {
		return false
	}
	if s.minor {
		return strings.HasPrefix(version, s.version+".") || strings.HasPrefix(version, s.version+"-")
	}
	return version == s.version
}

// probe is the release a target is checked with, as a new pool.
var probe = render.Release{Name: "kubernetes-nodes-rollout-target", Namespace: "tenant-rollout"}

// ResolveTarget asks the chart about the target as it asks about a new
// pool's values, without a cluster: it refuses a malformed version,
// schematic, URL or CA in its own words, and says what the chart's
// defaults for a new pool are (Defaults resolved into TalosVersion and
// SchematicID).
func ResolveTarget(chrt *chart.Chart, target RolloutTarget) (RolloutTarget, string, error) {
	talos := map[string]any{}
	for k, v := range map[string]string{"version": target.TalosVersion, "schematicID": target.SchematicID, "imageFactoryURL": target.FactoryURL, "imageFactoryCA": target.FactoryCA} {
		if v != "" {
			talos[k] = v
		}
	}
	rep, _, err := report.Plan(chrt, report.Target{Desc: "none"}, probe, map[string]any{"cluster": "rollout", "talos": talos})
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
// An error is bad input (a target the chart refuses, a selection that
// matches nothing) or a cluster problem. A pool the rollout cannot move is
// listed apart and the rest moves; only what the target itself lacks (its
// golden) keeps the plan from starting, or with Strict any pool listed apart.
func Rollout(chrt *chart.Chart, t report.Target, f *report.PinsFacts, o RolloutOptions) (*RolloutPlan, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if f := o.Selection.Flavor; f != "" {
		if err := checkFlavor(chrt, f); err != nil {
			return nil, err
		}
	}
	defer report.WithPlanGC()()
	t.Provider = report.FleetSnapshot(t.Provider) // a plan's shared reads: each object once
	target, from, err := ResolveTarget(chrt, o.Target)
	if err != nil {
		return nil, err
	}
	record, err := readRolloutRecord(t, target)
	if err != nil {
		return nil, err
	}
	if f.Stored != nil {
		// Every render judges its pool against the same goldens: read once.
		t.Catalog = f.Stored
	}
	plan := &RolloutPlan{Cluster: t.Desc, Chart: chrt.Metadata.Name, PoolChart: f.PoolChart, Selection: o.Selection, Target: target, TargetFrom: from,
		WaveSize: o.WaveSize, MaxWorkers: o.MaxWorkers, MaxClones: o.MaxClones, Strict: o.Strict,
		Waves: []RolloutWave{}, OnTarget: []RolloutPool{}, Blocked: []RolloutPool{}, CannotMove: []RolloutPool{}, Unknown: []RolloutPool{}, UnreadNamespaces: f.Unread, Ignored: f.Ignored,
		Record: report.RecordNamespace + "/" + record.Name, RecordIgnored: record.Ignored()}
	sel, err := selectPools(t, f, o, target, record)
	if err != nil {
		return nil, err
	}
	for _, rp := range sel.unknown {
		why := "its values cannot be computed as Flux computes them: " + rp.Pin.Unresolved
		if rp.Pin.Unresolved == "" {
			why = "the chart refuses it before its image resolves: " + rp.Pin.Refusal
		}
		plan.Unknown = append(plan.Unknown, RolloutPool{HelmRelease: rp.Pin.HelmRelease, Release: rp.Pin.Release, Namespace: rp.Pin.Namespace, Pool: rp.Pin.Pool, State: StateUnresolved,
			Reason: "whether it is selected is not known, and rollout cannot move it: " + why})
	}
	all := append(append([]*report.ResolvedPool(nil), sel.selected...), sel.onTheWay...)
	// Before any pool is planned: a release no one serves would only plan
	// a fleet of workers that never boot.
	if plan.TargetKnown, err = checkTargetKnown(context.Background(), chrt, t, f, all, o.Target, o.Factory); err != nil {
		return nil, err
	}
	planning := make(map[*report.ResolvedPool]bool, len(all))
	for _, rp := range all {
		planning[rp] = true
	}
	for i := range f.Pools {
		if !planning[&f.Pools[i]] {
			f.Pools[i].Now = nil // what the read planned of a pool not selected: not needed
		}
	}
	pc := planContext{bounds: bounds{maxWorkers: int64(o.MaxWorkers), maxClones: int64(o.MaxClones)}, takesMaxSurge: takesMaxSurge(chrt), record: record}
	if pc.catalogCA, err = publishedCatalogCA(t); err != nil {
		return nil, err
	}
	planned, err := planPools(chrt, t, f, all, target, pc)
	if err != nil {
		return nil, err
	}
	var moving []RolloutPool
	for i, p := range planned {
		if p.State == StateOnTarget && p.SurgeRestore != nil {
			plan.Restore = append(plan.Restore, p)
		}
		if i >= len(sel.selected) && p.State == StateOnTarget {
			// An earlier run's pool, there now: not this rollout's.
			continue
		}
		plan.Selected++
		switch {
		case p.State == StateMoves || p.State == StateRolling:
			moving = append(moving, p)
		case p.State == StateOnTarget:
			plan.OnTarget = append(plan.OnTarget, p)
		case Blocking(p.State):
			plan.Blocked = append(plan.Blocked, p)
		default:
			plan.CannotMove = append(plan.CannotMove, p)
		}
	}
	plan.Waves = waves(moving, o)
	factoryCommands(plan)
	plan.CanStart = len(plan.Blocked) == 0 && (!o.Strict || len(plan.CannotMove) == 0)
	if plan.Catalog, err = rolloutCatalog(t, f, plan.Blocked, newPoolsMove(target, all)); err != nil {
		return nil, err
	}
	return plan, nil
}

// planPools plans each pool, GOMAXPROCS at a time (each is a render of the
// chart at the target, and as it is when the fleet's read did not plan it;
// they share nothing but what they read), the answers in the pools' order;
// the first error in that order is the answer. Once a pool is planned, its
// report is all that is kept of it: its plan as it is is let go.
func planPools(chrt *chart.Chart, t report.Target, f *report.PinsFacts, pools []*report.ResolvedPool, target RolloutTarget, pc planContext) ([]RolloutPool, error) {
	out := make([]RolloutPool, len(pools))
	errs := make([]error, len(pools))
	if say := t.Progress; say != nil {
		var mu sync.Mutex
		t.Progress = func(step string) {
			mu.Lock()
			defer mu.Unlock()
			say(step)
		}
	}
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, rp := range pools {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			t.Progressf("planning pool %d of %d: %s", i+1, len(pools), rp.Pin.HelmRelease)
			out[i], errs[i] = planPool(chrt, t, f, *rp, target, pc)
			rp.Now = nil
			if !Blocking(out[i].State) {
				out[i].switched = nil // read for the catalog's entries only
			}
			report.Retune()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// selection is what the selection flags chose: the pools to plan, those
// whose flavor cannot be judged, and those an earlier run of this tool
// moved to the target (onTheWay: planned, kept while not on the target).
type selection struct {
	selected, unknown, onTheWay []*report.ResolvedPool
}

// selectPools keeps the pools every given criterion keeps, less those
// --exclude names. A pool whose flavor cannot be read (its values are not
// resolved, or do not resolve an image) cannot be judged by --flavor or
// --behind: it is unknown, listed apart; selected by where it is alone, it
// is selected. A pool --flavor or --behind leaves out that resolves to the
// target is on its way there only if the rollout's record holds this
// tool's write of its HelmRelease as it is now (same UID, same
// generation): one a tenant moved, or wrote since, is not this rollout's.
// A selection that matches nothing is an error naming what it may have
// meant.
func selectPools(t report.Target, f *report.PinsFacts, o RolloutOptions, target RolloutTarget, record *report.RolloutRecord) (selection, error) {
	s := o.Selection
	var sel selection
	var flavor flavorSelector
	if s.Flavor != "" {
		flavor, _ = parseFlavor(s.Flavor)
	}
	if err := checkNamesAPool(f, s); err != nil {
		return sel, err
	}
	named := map[string]bool{}
	inScope, flavorHits, excluded := 0, 0, 0
	for i := range f.Pools {
		rp := &f.Pools[i]
		if s.Namespace != "" && rp.Pin.Namespace != s.Namespace {
			continue
		}
		if len(s.Pools) > 0 {
			hit := false
			for _, name := range s.Pools {
				if poolNamed(*rp, name) {
					named[name], hit = true, true
				}
			}
			if !hit {
				continue
			}
		}
		inScope++
		if excludedBy(*rp, s.Exclude) {
			excluded++
			continue
		}
		judged := rp.Facts != nil && rp.Pin.Unresolved == ""
		if (s.Flavor != "" || s.Behind) && !judged {
			sel.unknown = append(sel.unknown, rp)
			continue
		}
		keep := true
		if s.Flavor != "" {
			ds := rp.Facts.DiskSource
			keep = flavor.boots(string(ds.SchematicID), string(ds.Version))
			if keep {
				flavorHits++
			}
		}
		if keep && s.Behind {
			keep = len(report.Behind(report.RunningFromFacts(rp.Facts), f.Stored)) > 0 || olderOnMinor(string(rp.Facts.DiskSource.Version), target.TalosVersion)
		}
		switch {
		case keep:
			sel.selected = append(sel.selected, rp)
		case resolvesTo(rp.Facts, target):
			hr, err := helmReleaseOf(t, *rp)
			if err != nil {
				return sel, err
			}
			if hr != nil {
				if ours, _ := record.Wrote(hr); ours {
					sel.onTheWay = append(sel.onTheWay, rp)
				}
			}
		}
	}
	for _, name := range s.Pools {
		if !named[name] {
			return sel, fmt.Errorf("--pool %s names no pool%s: give a HelmRelease's name, its release, the pool's objects' name (kubernetes-<cluster>-<pool>), or NAMESPACE/any of those%s", name, inNamespace(s.Namespace), nearestPool(f, name))
		}
	}
	if inScope > 0 && excluded == inScope {
		// Not "every selected pool is on the target": none was selected.
		return sel, fmt.Errorf("--exclude %s leaves out every pool the rest of the selection keeps (%s%s): nothing is selected; exclude fewer, or select others", strings.Join(s.Exclude, ","), report.Count(inScope, "pool"), inNamespace(s.Namespace))
	}
	if s.Flavor != "" && inScope > 0 && flavorHits == 0 && len(sel.unknown) == 0 && len(sel.onTheWay) == 0 {
		return sel, fmt.Errorf("--flavor %s: no pool%s boots it%s", s.Flavor, inNamespace(s.Namespace), nearestFlavor(f, s, flavor))
	}
	sort.Slice(sel.selected, func(i, j int) bool { return sel.selected[i].Pin.HelmRelease < sel.selected[j].Pin.HelmRelease })
	return sel, nil
}

// checkNamesAPool refuses a -n that holds no pool and an --exclude that
// names none, with the names they may have meant, as --pool is refused.
func checkNamesAPool(f *report.PinsFacts, s RolloutSelection) error {
	if ns := s.Namespace; ns != "" {
		namespaces := map[string]bool{}
		for _, rp := range f.Pools {
			namespaces[rp.Pin.Namespace] = true
		}
		for _, u := range f.Unread {
			namespaces[u.Namespace] = true
		}
		if !namespaces[ns] {
			known := report.SortedKeys(namespaces)
			hint := "; the pools are in " + report.OrNone(report.FirstFive(known))
			if near := report.NearestWord(ns, known); near != "" {
				hint = "; did you mean " + near + "?"
			}
			return fmt.Errorf("-n %s: no pool is in namespace %s%s", ns, ns, hint)
		}
	}
	for _, name := range s.Exclude {
		hit := false
		for _, rp := range f.Pools {
			hit = hit || poolNamed(rp, name)
		}
		if !hit {
			return fmt.Errorf("--exclude %s names no pool: give a HelmRelease's name, its release, the pool's objects' name (kubernetes-<cluster>-<pool>), or NAMESPACE/any of those%s", name, nearestPool(f, name))
		}
	}
	return nil
}

func excludedBy(rp report.ResolvedPool, names []string) bool {
	for _, name := range names {
		if poolNamed(rp, name) {
			return true
		}
	}
	return false
}

// nearestFlavor suggests, for a --flavor no pool boots, the flavor of the
// selection's pools nearest to it, else the flavors they boot.
func nearestFlavor(f *report.PinsFacts, s RolloutSelection, want flavorSelector) string {
	seen := map[string]bool{}
	for _, rp := range f.Pools {
		if rp.Facts == nil || (s.Namespace != "" && rp.Pin.Namespace != s.Namespace) {
			continue
		}
		ds := rp.Facts.DiskSource
		seen[string(ds.SchematicID)+"/"+string(ds.Version)] = true
	}
	booted := report.SortedKeys(seen)
	if want.minor {
		minors := map[string]bool{}
		for _, b := range booted {
			if i := strings.LastIndex(b, "."); i > 0 {
				minors[b[:i]] = true
			}
		}
		if near := report.NearestWord(s.Flavor, report.SortedKeys(minors)); near != "" {
			return "; did you mean " + near + "?"
		}
	}
	if near := report.NearestWord(s.Flavor, booted); near != "" {
		return "; did you mean " + near + "?"
	}
	if want.minor {
		return "; the pools boot " + report.OrNone(report.FirstFive(booted))
	}
	return "; the pools boot " + report.OrNone(report.FirstFive(booted)) + " (SCHEMATIC/vMAJOR.MINOR takes every patch of a minor)"
}

// olderOnMinor: a pool running version is older than the target Talos
// release on its minor. With --to-talos, --behind takes it whatever else
// makes it behind: a fix with no golden yet is what no other way of being
// behind names (golden pools among them), and the plan then ends with the
// catalog change it needs.
func olderOnMinor(version, target string) bool {
	if target == "" {
		return false
	}
	have, errHave := report.TalosVersion(version)
	want, errWant := report.TalosVersion(target)
	return errHave == nil && errWant == nil && have.Major() == want.Major() && have.Minor() == want.Minor() && want.GreaterThan(have)
}

// resolvesTo: the chart resolves the pool's flavor to the target's already
// (what a run that moved it leaves), as far as the target says.
func resolvesTo(f *report.ChartFacts, t RolloutTarget) bool {
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
func poolNamed(rp report.ResolvedPool, name string) bool {
	_, hrName, _ := strings.Cut(rp.Pin.HelmRelease, "/")
	for _, n := range []string{hrName, rp.Pin.Release, rp.Pin.Pool} {
		if n != "" && (name == n || name == rp.Pin.Namespace+"/"+n) {
			return true
		}
	}
	return false
}

// nearestPool suggests, for a --pool that names none, the pool names that
// end in it (acme-golden: kubernetes-acme-golden), else the nearest one.
func nearestPool(f *report.PinsFacts, name string) string {
	var names, ending []string
	for _, rp := range f.Pools {
		_, hrName, _ := strings.Cut(rp.Pin.HelmRelease, "/")
		for _, n := range []string{hrName, rp.Pin.Pool} {
			names = append(names, n)
			if strings.HasSuffix(n, "-"+name) {
				ending = append(ending, n)
			}
		}
	}
	if len(ending) > 0 {
		return "; did you mean " + report.FirstFive(ending) + "?"
	}
	if near := report.NearestWord(name, names); near != "" {
		return "; did you mean " + near + "?"
	}
	return ""
}

// helmReleaseOf reads the pool's HelmRelease as it is now; nil for a pool
// installed without one (or gone since it was read).
func helmReleaseOf(t report.Target, rp report.ResolvedPool) (*unstructured.Unstructured, error) {
	if rp.HelmRelease == "" {
		return nil, nil
	}
	ns, name, _ := strings.Cut(rp.HelmRelease, "/")
	return fleet.Get(context.Background(), t.Provider, fleet.HelmReleaseAPI, "HelmRelease", ns, name)
}

// targetEdit is how a pool's values move to the target: the values edit,
// the path (clone, http) and flavor it resolves once moved, and the
// Kubernetes release --to-defaults moves it to ("" when none).
type targetEdit struct {
	*valuesEdit
	path                 string
	schematicID, version report.Sourced
	kubernetes           string
}

// planContext is what planning each pool reads of the whole plan: the
// bounds on what one pool replaces at once, whether the pool chart takes
// maxSurge, whether the catalog's published defaults carry a CA
// (publishedCatalogCA), and the rollout's record of what earlier runs wrote.
type planContext struct {
	bounds        bounds
	takesMaxSurge bool
	catalogCA     bool
	record        *report.RolloutRecord
}

// planPool plans one pool, in steps: what it runs, its render as it is,
// the values edit the target takes (with the maxSurge that keeps its roll
// within the bounds, where it needs one), its render at the target, and
// what keeps it from moving.
func planPool(chrt *chart.Chart, t report.Target, f *report.PinsFacts, rp report.ResolvedPool, target RolloutTarget, pc planContext) (RolloutPool, error) {
	p := RolloutPool{HelmRelease: rp.Pin.HelmRelease, Release: rp.Pin.Release, Namespace: rp.Pin.Namespace, Pool: rp.Pin.Pool}
	if rp.Pin.Unresolved != "" {
		p.State, p.Reason = StateUnresolved, "its values cannot be computed as Flux computes them: "+rp.Pin.Unresolved+"; make what it names exist, then run again"
		return p, nil
	}
	md := p.readRunning(f)
	now, nowRead, err := rp.PlanNow(chrt, t)
	if err != nil {
		return p, err
	}
	d := now.DiskSource
	if d == nil {
		p.State, p.Reason = StateRefused, "the chart refuses it before its disk source resolves, today and so at any target: "+now.Refusal
		return p, nil
	}
	p.readNow(now, rp, f)
	e := editFor(d, now.CreatedWith, rp, target, nowRead.CADigest)
	p.Changes = e.changes
	hr, err := helmReleaseOf(t, rp)
	if err != nil {
		return p, err
	}
	if hr != nil {
		p.Generation, p.UID = report.Generation(hr.Object), string(hr.GetUID())
	}
	if len(e.patch) == 0 {
		p = onTargetOrRolling(p, now, md, hr, target, e.path, pc.record)
		if p.State == StateRolling {
			// Rolling already: by what its MachineDeployment holds.
			p.rolling(report.ReadRollingUpdate(md))
			p.cloning(d, nowRead)
		}
		return p, nil
	}
	p.ValuesChange = e.patch
	if md == nil && hr != nil {
		// Judged before the target's render: what a pool that never
		// deployed would need there (a golden on its class, say) holds
		// nobody.
		p.notDeployed(hr, now)
		return p, nil
	}
	// The rolling update the pool renders now is the one it renders at the
	// target: the move changes none of the values it comes from.
	if now.Result == "renders" && p.boundRoll(e, nowRead.RollingUpdate, rp, pc) {
		return p, nil
	}
	at, atRead, next, err := p.renderTarget(chrt, t, rp, hr, e)
	if err != nil || at == nil {
		return p, err
	}
	if now.Result != "renders" && at.Result == "renders" && e.surge == nil {
		// Known only now; the bound, if it takes a maxSurge, takes
		// another render.
		if p.boundRoll(e, atRead.RollingUpdate, rp, pc) {
			return p, nil
		}
		if e.surge != nil {
			if at, atRead, next, err = p.renderTarget(chrt, t, rp, hr, e); err != nil || at == nil {
				return p, err
			}
		}
	}
	p.readTarget(at, d, e, target)
	if ds := at.DiskSource; ds != nil && ds.Path == "http" {
		p.ImageURL, p.imageCA = ds.URL, atRead.CAPEM
	}
	if p.judgeTarget(at, atRead, e, target) {
		return p, nil
	}
	p.State = StateMoves
	p.judgeObjects(hr, rp)
	p.rolling(atRead.RollingUpdate)
	p.cloning(at.DiskSource, atRead)
	p.Note = joinNotes(e.surgeNote, caNote(d, at.DiskSource, next))
	if p.State == StateMoves && target.FactoryURL == "" {
		// With --to-factory the target names the factory itself.
		p.OtherFactory = otherFactory(p.To, rp, pc.catalogCA)
		p.blockOtherFactory()
	}
	return p, nil
}

// renderTarget renders the pool with its values changed by e: nil, with no
// error, when Flux could not compute them (the pool's state says why).
func (p *RolloutPool) renderTarget(chrt *chart.Chart, t report.Target, rp report.ResolvedPool, hr *unstructured.Unstructured, e targetEdit) (*report.PlanReport, report.RenderRead, map[string]any, error) {
	next, unresolved, err := p.changedValues(t, rp, hr, e.patch)
	if err != nil {
		return nil, report.RenderRead{}, nil, err
	}
	if unresolved != "" {
		p.State, p.Reason = StateRefused, "its values, changed, cannot be computed as Flux computes them: "+unresolved
		return nil, report.RenderRead{}, nil, nil
	}
	at, manifest, err := report.Plan(chrt, t, rp.Release, next)
	if err != nil {
		return nil, report.RenderRead{}, nil, err
	}
	return at, report.ReadRender(manifest), next, nil
}

// boundRoll keeps what the pool's roll replaces at once (by its rolling
// update r) within the bound of its path: where it is above it, the values
// change takes the maxSurge that keeps it within. It says true, the pool
// listed apart (StateAboveBound), where no maxSurge can: the chart takes
// none, or the pool's maxUnavailable alone is above the bound.
func (p *RolloutPool) boundRoll(e targetEdit, r report.RollingStrategy, rp report.ResolvedPool, pc planContext) bool {
	bound, flag := pc.bounds.of(e.path)
	n := atOnce(r, p.Workers, p.ToReplace)
	if bound == 0 || n <= bound {
		return false
	}
	surge, unavailable := resolve(r, p.Workers)
	above := fmt.Sprintf("it %s (its rolling update: maxSurge %d and maxUnavailable %d for %s), more than %s on its own", atOnceText(n, e.path), surge, unavailable, report.Count(int(p.Workers), "worker"), flagValue(flag, bound))
	keep, ok := boundSurge(r, p.Workers, bound)
	switch {
	case !ok:
		p.State, p.Reason = StateAboveBound, above+", and maxUnavailable alone is above it: no maxSurge keeps it within; give "+flagValue(flag, unavailable)+" or more, or leave the pool out (--exclude "+p.HelmRelease+")"
		return true
	case !pc.takesMaxSurge:
		p.State, p.Reason = StateAboveBound, above+", and this pool chart has no maxSurge value to bound its roll (a chart before it refuses the key): upgrade the platform to a pool chart that has it, give "+flagValue(flag, n)+", or leave the pool out (--exclude "+p.HelmRelease+")"
		return true
	}
	e.setSurge(r.MaxSurge, rp.Values, keep)
	e.surgeNote = fmt.Sprintf("maxSurge %d keeps its roll within %s: %s, not %d; the rolling update is not part of the machine template, so it rolls nothing the move does not", keep, flagValue(flag, bound), atOnceText(min(keep+unavailable, p.ToReplace), e.path), n)
	p.Changes = e.changes
	return false
}

// rolling records the pool's rolling update at the target and what it
// replaces at once by it.
func (p *RolloutPool) rolling(r report.RollingStrategy) {
	surge, unavailable := resolve(r, p.Workers)
	p.RollingUpdate = &RollingUpdate{MaxSurge: surge, MaxUnavailable: unavailable}
	p.WorkersAtOnce = atOnce(r, p.Workers, p.ToReplace)
}

// joinNotes joins what else a pool's plan says, in order, skipping none said.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// readRunning reads what the pool's MachineDeployment runs: its workers
// and template. It returns the MachineDeployment, nil when it has none.
func (p *RolloutPool) readRunning(f *report.PinsFacts) map[string]any {
	u := f.MachineDeployments[p.Namespace+"/"+p.Pool]
	if u == nil || p.Pool == "" {
		return nil
	}
	p.MachineDeployment = true
	p.Workers, _ = Workers(u.Object)
	p.ToReplace = p.Workers
	p.MachineTemplate.Running = RunningTemplate(u.Object)
	return u.Object
}

// readNow records what the chart renders for the pool as it is, and how it
// is behind what a new pool gets.
func (p *RolloutPool) readNow(now *report.PlanReport, rp report.ResolvedPool, f *report.PinsFacts) {
	p.Pool = now.Pool
	p.From = flavorOf(now.DiskSource)
	p.MachineTemplate.Current = now.MachineTemplate
	if rp.Facts != nil {
		p.Behind = report.Behind(report.RunningFromFacts(rp.Facts), f.Stored)
	}
}

// editFor is the values edit that moves a pool resolving d to the target:
// each part of its flavor at the field the chart took it from.
//
// caDigest names the CA its import trusts now (renderRead): a pool that
// imports from the target's factory already, trusting the target's CA (the
// platform's, published with that URL, say), takes no CA of its own: its
// import would not change, and it would stop following the platform's CA.
func editFor(d *report.DiskReport, createdWith *report.CreatedWith, rp report.ResolvedPool, target RolloutTarget, caDigest string) targetEdit {
	e := targetEdit{valuesEdit: newValuesEdit(createdWith), path: d.Path, schematicID: d.SchematicID, version: d.Version}
	if target.Builtin && d.Path != "clone" {
		e.schematicID, e.version = e.switchToBuiltin(d, rp.Values)
		e.path = "clone"
	}
	if target.SchematicID != "" {
		e.set("schematicID", e.schematicID, target.SchematicID)
	}
	if target.TalosVersion != "" {
		e.set("version", e.version, target.TalosVersion)
	}
	if target.FactoryURL != "" && e.path == "http" && d.ImageFactoryURL != nil {
		e.set("imageFactoryURL", *d.ImageFactoryURL, target.FactoryURL)
		trustedAlready := d.ImageFactoryURL.Value == target.FactoryURL && caDigest != "" && caDigest == report.CertificatesDigest(target.FactoryCA)
		if target.FactoryCA != "" && !trustedAlready {
			e.setCA(d.ImageFactoryCA, fleet.Text(rp.Values, "talos", "imageFactoryCA"), target)
		}
	}
	if target.Defaults && rp.Facts != nil {
		running := report.RunningFromFacts(rp.Facts)
		if from, to, ok := kubernetesPatch(running); ok {
			e.kubernetes = to
			e.patch["version"] = to
			e.changes = append(e.changes, ValueChange{Field: "version", From: from, Source: running.KubernetesSource, To: to})
		}
	}
	return e
}

// changedValues are the values the pool renders with once its spec.values
// change, as Flux computes them (valuesFrom first, spec.values on top),
// with SpecValues what the patch writes; for a pool without a HelmRelease,
// its values with the change merged on top. unresolved says why Flux could
// not compute them.
func (p *RolloutPool) changedValues(t report.Target, rp report.ResolvedPool, hr *unstructured.Unstructured, patch map[string]any) (map[string]any, string, error) {
	if hr == nil {
		return MergePatch(rp.Values, patch), "", nil
	}
	own, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	p.SpecValues = MergePatch(own, patch)
	if surge, ok := patch["maxSurge"].(int64); ok {
		was, had := own["maxSurge"]
		p.SurgeRestore = &report.SurgeRestore{Wrote: surge, Had: had, Own: was}
	}
	patched := hr.DeepCopy()
	if err := unstructured.SetNestedMap(patched.Object, p.SpecValues, "spec", "values"); err != nil {
		return nil, "", err
	}
	return fleet.Values(context.Background(), t.Provider, patched)
}

// readTarget records what the chart renders for the pool at the target.
func (p *RolloutPool) readTarget(at *report.PlanReport, now *report.DiskReport, e targetEdit, target RolloutTarget) {
	p.MachineTemplate.Target = at.MachineTemplate
	if at.DiskSource != nil {
		p.To = flavorOf(at.DiskSource)
		p.switched = at.DiskSource
	}
	p.toSchematicID, p.toVersion = orKeep(target.SchematicID, e.schematicID.Value), orKeep(target.TalosVersion, e.version.Value)
	p.toURL = target.FactoryURL
	if p.toURL == "" && now.ImageFactoryURL != nil && e.path == "http" {
		p.toURL = now.ImageFactoryURL.Value
	}
}

// judgeTarget says whether the render at the target keeps the pool from
// moving: the change does not reach it, the chart refuses it, or its
// golden is not there to clone. It sets the state and reason when it does.
func (p *RolloutPool) judgeTarget(at *report.PlanReport, read report.RenderRead, e targetEdit, target RolloutTarget) bool {
	missed := missedTarget(at.DiskSource, read.CADigest, e.path, p.toSchematicID, p.toVersion, target)
	if got := read.Kubernetes; missed == "" && e.kubernetes != "" && at.Result == "renders" && got != e.kubernetes {
		missed = fmt.Sprintf("its MachineDeployment would run Kubernetes %s, not %s", report.OrNone(got), e.kubernetes)
	}
	if got := surgeText(read.RollingUpdate.MaxSurge); missed == "" && e.surge != nil && at.Result == "renders" && got != strconv.FormatInt(*e.surge, 10) {
		missed = fmt.Sprintf("its MachineDeployment's rolling update would surge %s, not maxSurge %d", got, *e.surge)
	}
	d := at.DiskSource
	goldenNotReady := d != nil && d.Path == "clone" && d.GoldenFoundAs == "DataVolume" && d.GoldenPhase != "Succeeded"
	switch {
	case missed != "" && d != nil:
		p.State, p.Reason = StateRefused, "its values change does not reach its render: "+missed+"; whatever sets it there (a valuesFrom targetPath, say) wins over spec.values: change it there, or leave the pool out (--exclude "+p.HelmRelease+")"
	case at.Result != "renders" && goldenNotReady:
		// The chart refuses a golden that failed: the target's to fix.
		p.State, p.Reason = StateGoldenNotReady, at.Refusal
	case at.Result != "renders":
		p.State, p.Reason = StateRefused, at.Refusal
		switch report.SwitchOutcome(at) {
		case report.OutcomeNeedsEntry:
			p.State = StateNeedsEntry
		case report.OutcomeNeedsPerClass:
			p.State = StateNeedsPerClass
		}
	case goldenNotReady:
		p.State = StateGoldenNotReady
		p.Reason = fmt.Sprintf("golden %s is %s, not Succeeded: the pool's new workers would wait for it; wait for its import to succeed (workerimage pins %s), or, if it failed, see the runbook for a Failed golden", d.Golden, phaseText(d.GoldenPhase), d.Golden)
	default:
		return false
	}
	return true
}

// notDeployed: the pool has a HelmRelease and no MachineDeployment, so a
// wave would wait for workers that do not exist; the chart's refusal of it
// as it is, if it refuses it, is why.
func (p *RolloutPool) notDeployed(hr *unstructured.Unstructured, now *report.PlanReport) {
	why := ""
	if now.Result != "renders" {
		why = " (the chart refuses it as it is: " + now.Refusal + ")"
	}
	p.State = StateNotDeployed
	p.Reason = fmt.Sprintf("no MachineDeployment %s/%s: the pool never deployed%s, and a wave would wait for workers that do not exist; fix what keeps its release from deploying (flux get helmrelease %s -n %s), then run again", p.Namespace, report.OrNone(p.Pool), why, hr.GetName(), hr.GetNamespace())
}

// judgeObjects says what, in the pool's own objects, keeps a pool whose
// render moves from moving: no HelmRelease to patch, one Flux would not
// apply as the chart renders it, or one whose last release failed. Each is
// left where it is, with the fix.
func (p *RolloutPool) judgeObjects(hr *unstructured.Unstructured, rp report.ResolvedPool) {
	if hr == nil {
		p.State = StateNoHelmRelease
		p.Reason = "installed with helm install, without a HelmRelease: rollout patches a HelmRelease's spec.values only; move it with helm upgrade --reuse-values setting the values change below, or manage it with a HelmRelease"
		return
	}
	flux := hr.GetName() + " -n " + hr.GetNamespace()
	_, failed, _ := HelmReleaseStatus(hr.Object, report.Generation(hr.Object))
	switch {
	case kustomization(hr) != "":
		p.State = StateKustomized
		p.Reason = fmt.Sprintf("HelmRelease %s is applied by the Flux Kustomization %s (its kustomize.toolkit.fluxcd.io labels), which would put its spec.values back at its next reconcile, and the pool would roll back: change the values in that Kustomization's source instead, or leave the pool out", rp.HelmRelease, kustomization(hr))
	case suspended(hr):
		p.State = StateSuspended
		p.Reason = fmt.Sprintf("HelmRelease %s is suspended (spec.suspend: true): helm-controller would not apply the change; resume it (flux resume helmrelease %s -n %s), or leave the pool out", rp.HelmRelease, hr.GetName(), hr.GetNamespace())
	case postRendered(hr):
		p.State = StatePostRendered
		p.Reason = fmt.Sprintf("HelmRelease %s has spec.postRenderers: what helm-controller applies is not what the chart renders, so neither the template it would run nor its workers' disks can be planned; move it by hand (its values change is below), or drop its postRenderers", rp.HelmRelease)
	case failed != "":
		p.State = StateReleaseFailed
		p.Reason = fmt.Sprintf("its last release failed before this rollout (%s): a wave would wait for what does not come; fix the cause, have helm-controller release it again (flux reconcile helmrelease %s --force), then run again", failed, flux)
	}
}

// cloning fills in what a pool clones as it rolls onto a render (read),
// whose disk source is d: its golden, and on the clone path its disk's
// size, CDI's strategy and how many disks it clones at once (each worker
// it replaces at once, rolling).
func (p *RolloutPool) cloning(d *report.DiskReport, read report.RenderRead) {
	p.Golden = d.Golden
	if d.Path != "clone" {
		return
	}
	p.DiskSize = read.DiskSize
	if cs := d.CloneStrategy; cs != nil {
		p.CloneStrategy = cs.Value
	}
	p.ClonesInFlight = p.WorkersAtOnce
}

// onTargetOrRolling: a pool whose values are on the target already is on
// it when its HelmRelease is Ready at its generation and its
// MachineDeployment runs the template it renders, every worker updated.
// Else, if the rollout's record holds this tool's write of its HelmRelease
// as it is now (an earlier run's), it is rolling there and the rollout
// waits for it, or its release failed; a pool on the target by values its
// tenant wrote, or written since, is not waited on.
func onTargetOrRolling(p RolloutPool, now *report.PlanReport, md map[string]any, hr *unstructured.Unstructured, target RolloutTarget, path string, record *report.RolloutRecord) RolloutPool {
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
	hrReady, failed, hrSays := HelmReleaseStatus(hr.Object, report.Generation(hr.Object))
	mdState := MachineDeploymentRolledOut(md, now.MachineTemplate, p.Workers)
	if mdState.Template == now.MachineTemplate && mdState.Observed {
		p.ToReplace = max(0, p.Workers-mdState.UpdatedReplicas)
	}
	ours, notOurs := record.Wrote(hr)
	// The maxSurge an earlier run wrote to bound the roll, and the pool's
	// own, kept by the record until put back: this run puts it back.
	p.SurgeRestore = surgeToRestore(record, hr)
	switch {
	case hrReady && mdState.RolledOut:
		p.State, p.Reason = StateOnTarget, mdState.Says
	case !ours:
		// A failed release's says is a word ("failed"): the failure says why.
		says := hrSays
		if failed != "" {
			says = failed
		}
		p.State = StateOnTarget
		p.Reason = fmt.Sprintf("%s, so not waited on: %s; %s", notOurs, says, mdState.Says)
	case failed != "":
		// Waiting would only see the failure again: helm-controller retries
		// a failed release on its own terms.
		p.State = StateReleaseFailed
		p.Reason = fmt.Sprintf("its values are on the target and %s; fix the cause, have helm-controller release it again (flux reconcile helmrelease %s -n %s --force), then run again", failed, hr.GetName(), hr.GetNamespace())
	default:
		p.State = StateRolling
		p.Reason = hrSays + "; " + mdState.Says
	}
	return p
}

// missedTarget says which part of the target a render does not resolve to;
// caDigest names the CA its disk's import trusts (renderRead).
func missedTarget(d *report.DiskReport, caDigest, path, schematicID, version string, target RolloutTarget) string {
	if d == nil {
		return ""
	}
	url := target.FactoryURL
	switch {
	case d.Path != path:
		return fmt.Sprintf("the chart resolves the %s path, not %s", d.Path, path)
	case d.SchematicID.Value != schematicID:
		return fmt.Sprintf("the chart resolves schematicID %s from %s", d.SchematicID.Value, d.SchematicID.Source)
	case d.Version.Value != version:
		return fmt.Sprintf("the chart resolves version %s from %s", d.Version.Value, d.Version.Source)
	case url != "" && d.Path == "http" && d.ImageFactoryURL != nil && d.ImageFactoryURL.Value != url:
		return fmt.Sprintf("the chart resolves imageFactoryURL %s from %s", d.ImageFactoryURL.Value, d.ImageFactoryURL.Source)
	case target.FactoryCA != "" && d.Path == "http" && d.ImageFactoryCA == nil:
		return "the chart's import trusts no CA of its own, not the CA of --factory-ca"
	case target.FactoryCA != "" && d.Path == "http" && caDigest != report.CertificatesDigest(target.FactoryCA):
		return fmt.Sprintf("the chart's import trusts another CA than --factory-ca's (%s, from %s)", d.ImageFactoryCA.Value, d.ImageFactoryCA.Source)
	}
	return ""
}

// kubernetesPatch is the chart's release of the minor a pool runs, when
// it is newer than the release the pool runs (as Behind says it).
func kubernetesPatch(r report.Running) (from, to string, ok bool) {
	for _, b := range report.Behind(r, nil) {
		if b.Kind == report.BehindKubernetesPatch {
			return b.From, b.To, true
		}
	}
	return "", "", false
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
func flavorOf(d *report.DiskReport) *RolloutFlavor {
	return &RolloutFlavor{Path: d.Path, SchematicID: d.SchematicID, Version: d.Version, ImageFactoryURL: d.ImageFactoryURL, Golden: d.Golden}
}

// caNote: a pool that moves to a factory URL of its own takes no CA of the
// platform's (a CA belongs to the URL it came with), and imports trusting
// CDI's system store alone unless it sets talos.imageFactoryCA.
func caNote(now, at *report.DiskReport, values map[string]any) string {
	if at == nil || at.Path != "http" || at.ImageFactoryCA != nil {
		return ""
	}
	platformCA := fleet.Text(values, "_cluster", "talos", "imageFactoryCA") != ""
	if now.ImageFactoryCA == nil && !platformCA {
		return ""
	}
	return "it will import from a factory URL of its own, which takes no CA of the platform's (_cluster.talos.imageFactoryCA applies only to the platform's URL): its disks trust CDI's system store alone; if the mirror is served by your own CA, set talos.imageFactoryCA in its values too"
}

// postRendered: Flux post-renders what the chart renders before applying it.
func postRendered(hr *unstructured.Unstructured) bool {
	prs, _, _ := unstructured.NestedSlice(hr.Object, "spec", "postRenderers")
	return len(prs) > 0
}

// waves splits the pools to move into waves, the pools an earlier run left
// rolling first (they are waited for, not patched), then in the order pins
// lists them. A wave takes the next pool while it holds fewer than
// WaveSize pools and the pool keeps it within MaxWorkers workers replaced
// at once and MaxClones clones in flight of each golden. A pool to move is
// within each bound on its own (its maxSurge sees to it, boundRoll); one
// rolling already and above a bound has a wave to itself, which says so.
func waves(pools []RolloutPool, o RolloutOptions) []RolloutWave {
	sort.SliceStable(pools, func(i, j int) bool {
		return pools[i].State == StateRolling && pools[j].State != StateRolling
	})
	out := []RolloutWave{}
	var cur []RolloutPool
	workers, clones := int64(0), map[string]int64{}
	flush := func(alone string) {
		if len(cur) > 0 {
			out = append(out, newWave(len(out)+1, cur, alone))
		}
		cur, workers, clones = nil, 0, map[string]int64{}
	}
	for _, p := range pools {
		if alone := aboveBound(p, o); alone != "" {
			flush("")
			cur = []RolloutPool{p}
			flush(alone)
			continue
		}
		fits := len(cur) < o.WaveSize &&
			(o.MaxWorkers == 0 || workers+p.WorkersAtOnce <= int64(o.MaxWorkers)) &&
			(o.MaxClones == 0 || p.ClonesInFlight == 0 || clones[p.Golden]+p.ClonesInFlight <= int64(o.MaxClones))
		if !fits {
			flush("")
		}
		cur = append(cur, p)
		workers += p.WorkersAtOnce
		if p.ClonesInFlight > 0 {
			clones[p.Golden] += p.ClonesInFlight
		}
	}
	flush("")
	return out
}

// aboveBound says why a pool alone is above --max-workers or --max-clones
// (only one rolling already can be: this run writes nothing to it); ""
// when it is not.
func aboveBound(p RolloutPool, o RolloutOptions) string {
	rolling := "rolling already (an earlier run moved it, and this one writes nothing to it): a wave of its own"
	switch {
	case o.MaxWorkers > 0 && p.WorkersAtOnce > int64(o.MaxWorkers):
		return fmt.Sprintf("%s replaces %d workers at once, more than --max-workers %d on its own, %s", p.HelmRelease, p.WorkersAtOnce, o.MaxWorkers, rolling)
	case o.MaxClones > 0 && p.ClonesInFlight > int64(o.MaxClones):
		return fmt.Sprintf("%s clones %d disks of %s at once, more than --max-clones %d on its own, %s", p.HelmRelease, p.ClonesInFlight, p.Golden, o.MaxClones, rolling)
	}
	return ""
}

// newWave adds up what a wave's pools replace, clone and download.
func newWave(n int, pools []RolloutPool, alone string) RolloutWave {
	w := RolloutWave{Wave: n, Pools: pools, Alone: alone}
	storage := resource.MustParse("0")
	known := true
	for _, p := range pools {
		w.WorkersToReplace += p.ToReplace
		w.WorkersAtOnce += p.WorkersAtOnce
		w.ClonesInFlight += p.ClonesInFlight
		if p.To != nil && p.To.Path == "http" {
			w.HTTPImports += p.ToReplace
		}
		if p.ClonesInFlight == 0 {
			continue
		}
		if w.ClonesPerGolden == nil {
			w.ClonesPerGolden = map[string]int64{}
		}
		w.ClonesPerGolden[p.Golden] += p.ClonesInFlight
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
	return w
}

// rolloutCatalog is the catalog's images list with what the blocked pools
// wait for, as adopt writes it: a new entry for a flavor with no golden, a
// class added to an entry for a pool on another class; and the Talos
// release new pools take moved to the target (nd), also when no pool waits.
func rolloutCatalog(t report.Target, f *report.PinsFacts, blocked []RolloutPool, nd newPoolsDefault) (*report.AdoptCatalog, error) {
	var waiting []report.AdoptPool
	for _, p := range blocked {
		if p.State != StateNeedsEntry && p.State != StateNeedsPerClass {
			continue
		}
		outcome := report.OutcomeNeedsEntry
		if p.State == StateNeedsPerClass {
			outcome = report.OutcomeNeedsPerClass
		}
		waiting = append(waiting, report.AdoptPool{HelmRelease: p.HelmRelease, Outcome: outcome, Switched: p.switched, SchematicID: p.toSchematicID, Version: p.toVersion, ImageFactoryURL: p.toURL})
	}
	if len(waiting) == 0 && len(nd.moves) == 0 {
		return nil, nil
	}
	home, newEntry, err := report.CatalogChangeBase(t)
	if err != nil {
		return nil, err
	}
	url := newEntry.URL
	for i := range waiting {
		// A pool that clones already boots from no factory of its own.
		if waiting[i].ImageFactoryURL == "" {
			waiting[i].ImageFactoryURL = url.Value
		}
	}
	c, err := report.CatalogFor(home, f.Stored, waiting, url)
	if err != nil {
		return nil, err
	}
	if err := withNewPoolsMove(&c, home, nd, url); err != nil {
		return nil, err
	}
	if err := report.WithFactoryNotes(t, home, &c); err != nil {
		return nil, err
	}
	return &c, nil
}
