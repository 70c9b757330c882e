package report

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ReadPins reads the goldens, the worker disks and the pools (found and
// valued as Flux deploys them, internal/fleet), and asks the catalog chart who
// uses each golden. Any error is a cluster problem, and so is a cluster that
// runs pools none of which could be read: no verdict is safe there. A
// cluster where only some namespaces' pools could not be read is reported,
// those namespaces named (Pins then calls no golden safe to delete).
func ReadPins(chrt *chart.Chart, t Target, o fleet.Options) (*PinsFacts, error) {
	return readPins(chrt, t, o, false)
}

// ReadPinsToPlan is ReadPins for a report that then plans most pools as
// they are (rollout): each pool is rendered whole, as Plan renders it, and
// planned as it is from that render at once (its report kept, the render
// let go), so planning it renders it no more. Where the whole chart
// refuses, the pool is read as ReadPins reads it, and planned from that.
func ReadPinsToPlan(chrt *chart.Chart, t Target, o fleet.Options) (*PinsFacts, error) {
	defer WithPlanGC()()
	return readPins(chrt, t, o, true)
}

func readPins(chrt *chart.Chart, t Target, o fleet.Options, whole bool) (*PinsFacts, error) {
	ctx := context.Background()
	t.Progressf("reading the pools (HelmReleases and Helm release records)")
	fl, err := fleet.Read(ctx, t.Provider, o)
	if err != nil {
		return nil, fmt.Errorf("%v", err)
	}
	if fl.Resolved() == 0 && len(fl.PoolObjects) > 0 {
		why := "no HelmRelease of the pool chart " + fl.PoolChart.String() + " or Helm release record of chart " + o.Chart + " was found"
		switch {
		case !fl.HelmReleasesServed:
			why = fmt.Sprintf("the cluster serves no HelmRelease (%s) and no Helm release record of chart %s was found", fleet.HelmReleaseAPI, o.Chart)
		case len(fl.Pools) > 0:
			why = fmt.Sprintf("none of the %s found has values that resolve (first: %s: %s)", Count(len(fl.Pools), "pool"), fl.Pools[0].ID(), fl.Pools[0].Unresolved)
		}
		return nil, fmt.Errorf("could not read the pools: %s, yet the cluster runs %s (%s); without the pools no golden can be called unused. Run it where the pools' HelmReleases (or Helm release Secrets) are readable, or name their chart source with --artifact KIND/NAMESPACE/NAME", why, Count(len(fl.PoolObjects), "pool object"), FirstFive(fl.PoolObjects))
	}
	t.Progressf("reading the goldens and worker disks")
	g, err := fleet.ReadGoldens(ctx, t.Provider)
	if err != nil {
		return nil, err
	}
	f := &PinsFacts{Stored: g.Stored, MachineDeployments: g.MachineDeployments, poolObjects: fl.PoolObjects, Unread: fl.Unread(), Ignored: fl.Ignored, PoolChart: fl.PoolChart.String()}
	for _, d := range g.Disks {
		f.addDisk(diskOf(d))
	}

	// Pools: resolved by the chart itself, each object the renders look up
	// read once for them all, each pool planned against the goldens just read.
	rt := t
	rt.Provider = FleetSnapshot(t.Provider)
	rt.Catalog = f.Stored
	if f.Pools, err = resolvePools(chrt, rt, fl.Pools, whole); err != nil {
		return nil, err
	}

	// Who uses each golden the report names: the catalog chart's answer.
	names := map[string]bool{}
	for n := range f.Stored {
		names[n] = true
	}
	for _, d := range f.disks {
		names[d.Golden] = true
	}
	for _, rp := range f.Pools {
		if rp.Pin.Golden != "" {
			names[rp.Pin.Golden] = true
		}
	}
	catalog, err := fleet.CatalogChart()
	if err != nil {
		return nil, fmt.Errorf("built-in chart %s: %v", render.CatalogChart, err)
	}
	// The flavors new pools take by default are the catalog's answer too, from
	// what the cluster's catalog Package publishes (its tenantWorkers).
	catalogValues, _, err := CatalogValuesFromCluster(t)
	if err != nil {
		return nil, err
	}
	t.Progressf("asking the catalog chart who uses %s", Count(len(names), "golden"))
	if f.users, err = fleet.GoldenUsers(catalog, t.Provider, SortedKeys(names), catalogValues["tenantWorkers"]); err != nil {
		if _, prob := RenderFailure(err); prob != nil {
			return nil, prob
		}
		return nil, fmt.Errorf("asking the catalog chart who uses the goldens: %v", err)
	}

	// The targets of the rollouts recorded in the platform's namespace: a
	// golden one moves pools to is needed, whatever uses it yet.
	pools := map[string]bool{}
	for _, p := range fl.Pools {
		pools[p.HelmRelease] = true
	}
	if f.rolloutTargets, err = readRolloutTargets(ctx, t, pools); err != nil {
		return nil, err
	}

	// The catalog's CA ConfigMaps, to tell the goldens imported without the CA
	// it holds now (after the pools, whose renders read the cluster first).
	if f.caConfigMaps, err = fleet.CAConfigMaps(ctx, t.Provider); err != nil {
		return nil, err
	}
	f.now = time.Now()
	return f, nil
}

// resolvePools resolves the pools, in their order, one render per core at
// once: each render is CPU alone (a lookup is an API request at most), and
// a fleet's pools are independent. The first error in the pools' order wins.
func resolvePools(chrt *chart.Chart, t Target, pools []fleet.Pool, whole bool) ([]ResolvedPool, error) {
	out := make([]ResolvedPool, len(pools))
	errs := make([]error, len(pools))
	var (
		mu   sync.Mutex
		next int
		done int
		wg   sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), len(pools)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(pools) {
					return
				}
				out[i], errs[i] = resolvePool(chrt, t, pools[i], whole)
				Retune()
				mu.Lock()
				done++
				t.Progressf("rendering pool %d of %d: %s", done, len(pools), pools[i].ID())
				mu.Unlock()
			}
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

// addDisk records a worker disk, and whether it belongs to a pool: the pool
// chart annotates each disk with its pool's MachineDeployment name
// (kubernetes-<cluster>-<pool>), but anyone who can create a DataVolume can
// write that annotation, so it counts only where the disk's own namespace
// holds that MachineDeployment.
func (f *PinsFacts) addDisk(d DiskPin) {
	d.NoPool = d.Pool == "" || f.MachineDeployments[d.Namespace+"/"+d.Pool] == nil
	f.disks = append(f.disks, d)
}

// diskOf says how a disk was cloned, from what CDI recorded on its PVC: the
// clone strategy it used (cloneType) and why it fell back from a CSI clone,
// if it did.
func diskOf(disk fleet.Disk) DiskPin {
	d := DiskPin{Namespace: disk.Namespace, Name: disk.Name, Golden: disk.Golden, Pool: disk.Pool, kind: disk.Kind,
		PVC: disk.PVC, CloneType: disk.CloneType, FallbackReason: disk.FallbackReason}
	if disk.PVC == "" {
		d.Clone = "no PVC yet"
		return d
	}
	// The report's line keeps annotation text on one line: whoever can edit
	// the PVC writes it.
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	switch {
	case d.FallbackReason != "":
		d.HostAssisted = true
		d.Clone = fmt.Sprintf("host-assisted copy (cloneType %s, fallback: %s)", OrNone(flat(d.CloneType)), flat(d.FallbackReason))
	case d.CloneType == "csi-clone":
		d.CSIClone = true
		d.Clone = "csi-clone"
	case d.CloneType == "copy":
		d.HostAssisted = true
		d.Clone = "host-assisted copy (cloneType copy)"
	case d.CloneType == "":
		d.Clone = "clone type not recorded yet"
	default:
		d.Clone = flat(d.CloneType) + " (not a CSI clone)"
	}
	return d
}

// resolvePool asks the chart which golden a pool clones: its values, as
// Flux computes them, rendered through the chart's own diskSource against the
// same cluster, with only the chart's helpers, so a pool whose objects would
// be refused for another reason (an unknown instancetype, a golden gone)
// still resolves. A pool whose values do not resolve is not rendered.
//
// whole renders the whole chart first, as Plan does, and plans the pool as
// it is from that render (planWhole): when it renders, its facts are those
// the helpers give, the guards having passed; when it refuses, the pool is
// resolved as above and planned with those facts.
func resolvePool(chrt *chart.Chart, t Target, pool fleet.Pool, whole bool) (ResolvedPool, error) {
	p := PoolPin{HelmRelease: pool.ID(), Release: pool.Release, Namespace: pool.Namespace, FoundBy: pool.FoundBy, Unresolved: pool.Unresolved}
	rel := render.Release{Name: pool.Release, Namespace: pool.Namespace, Upgrade: true}
	if pool.Unresolved != "" {
		return ResolvedPool{Pin: p, Release: rel, HelmRelease: pool.HelmRelease}, nil
	}
	vals := pool.Values
	var (
		facts   *ChartFacts
		m       *render.Rendered
		refused error // the whole render's refusal
		refusal string
		now     *plannedNow
		err     error
	)
	if whole {
		m, facts, refused = renderWithFacts(chrt, t.Options(rel, vals))
	}
	if !whole || refused != nil {
		if facts, refusal, err = HelperFacts(chrt, t.Options(rel, vals)); err != nil {
			return ResolvedPool{}, err
		}
	}
	if whole {
		if now, err = planWhole(chrt, t, rel, vals, m, facts, refused); err != nil {
			return ResolvedPool{}, err
		}
	}
	p.Refusal = refusal
	if facts == nil {
		return ResolvedPool{Pin: p, Release: rel, Values: vals, HelmRelease: pool.HelmRelease, Now: now}, nil
	}
	p.Pool = string(facts.Pool)
	if facts.DiskSource.Clone {
		p.Golden = string(facts.DiskSource.Golden)
	}
	if r := facts.DiskSource.Report; r != nil {
		p.Class = string(facts.DiskSource.StorageClassName)
		p.GoldenChoice = string(r.GoldenChoice)
		p.perClassGolden = string(r.PerClassGolden)
	}
	return ResolvedPool{Pin: p, clone: facts.DiskSource.Clone, Release: rel, Values: vals, Facts: facts, Now: now, HelmRelease: pool.HelmRelease}, nil
}

// PlanNow is Plan of the pool as it is: as ReadPinsToPlan planned it (what
// the rollout's plan reads of it, forPlanning), else rendered now.
func (rp ResolvedPool) PlanNow(chrt *chart.Chart, t Target) (*PlanReport, RenderRead, error) {
	if rp.Now != nil {
		return rp.Now.report, rp.Now.read, nil
	}
	rep, m, err := Plan(chrt, t, rp.Release, rp.Values)
	if err != nil {
		return nil, RenderRead{}, err
	}
	return rep, ReadRender(m), nil
}

// readRolloutTargets reads the target of each rollout record in
// RecordNamespace (read only: internal/apply writes them) that still holds
// a pool on its way, one of pools (namespace/name of the HelmReleases
// read), skipping a ConfigMap that is not one, whose target names no Talos
// version, or that holds no such pool: a pool leaves the record once its
// wave is on the target, so a record holding its target alone is a rollout
// done, and one holding only HelmReleases that are gone moves nothing; the
// golden of either is in use, or not, by the pools that run it.
func readRolloutTargets(ctx context.Context, t Target, pools map[string]bool) ([]rolloutTarget, error) {
	if t.Provider == nil {
		return nil, nil
	}
	cms, err := fleet.List(ctx, t.Provider, "v1", "ConfigMap", RecordNamespace)
	if err != nil {
		return nil, fmt.Errorf("reading the rollouts' records in %s: %v", RecordNamespace, err)
	}
	var out []rolloutTarget
	for _, cm := range cms {
		if !strings.HasPrefix(cm.GetName(), RecordPrefix) || cm.GetNamespace() != RecordNamespace {
			continue
		}
		record, err := readStoredRecord(&cm)
		if err != nil {
			continue
		}
		moving := false
		for _, w := range record.Writes() {
			moving = moving || pools[w.id()]
		}
		if !moving {
			continue
		}
		text, _, _ := unstructured.NestedString(cm.Object, "data", recordTargetKey)
		var target struct {
			TalosVersion string `json:"talosVersion"`
			SchematicID  string `json:"schematicID"`
		}
		if json.Unmarshal([]byte(text), &target) != nil || target.TalosVersion == "" {
			continue
		}
		out = append(out, rolloutTarget{record: RecordNamespace + "/" + cm.GetName(), schematicID: target.SchematicID, version: target.TalosVersion})
	}
	return out, nil
}
