package report

import (
	"sort"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
)

// Pins decides, from what the cluster holds, which golden each pool
// and disk pins and which goldens nothing pins.
func Pins(f *PinsFacts, cluster, chartName string) PinsReport {
	rep := PinsReport{Cluster: cluster, Chart: chartName, PoolChart: f.PoolChart, UnreadNamespaces: f.Unread, Ignored: f.Ignored}
	goldens := map[string]*GoldenPins{}
	golden := func(name string) *GoldenPins {
		if g, ok := goldens[name]; ok {
			return g
		}
		g := &GoldenPins{Name: name, FoundAs: "absent", Pools: []PoolPin{}, Disks: []DiskPin{}, NoPoolDisks: []DiskPin{}}
		goldens[name] = g
		return g
	}
	anyChecksum := false
	for _, s := range f.Stored {
		anyChecksum = anyChecksum || s.Checksum != ""
	}
	for name, s := range f.Stored {
		g := golden(name)
		g.FoundAs, g.Phase, g.Retiring, g.SourceURL = s.FoundAs, s.Phase, s.Retiring, s.URL
		g.CertConfigMap, g.Checksum = s.CertConfigMap, s.Checksum
		if s.CertConfigMap == "" && f.caFor(name) != "" {
			g.ImportedWithout = append(g.ImportedWithout, "CA")
		}
		if s.Checksum == "" && anyChecksum {
			g.ImportedWithout = append(g.ImportedWithout, "checksum")
		}
	}
	rep.PoolsBehind = []PoolBehind{}
	for _, rp := range f.Pools {
		p := rp.Pin
		if rp.Facts != nil {
			running := RunningFromFacts(rp.Facts)
			if behind := Behind(running, f.Stored); len(behind) > 0 {
				rep.PoolsBehind = append(rep.PoolsBehind, PoolBehind{HelmRelease: p.HelmRelease, Release: p.Release, Namespace: p.Namespace, Refusal: p.Refusal, Running: &running, Behind: behind})
			}
		}
		switch {
		case p.Unresolved != "" || (p.Golden == "" && p.Refusal != ""):
			rep.Unresolved = append(rep.Unresolved, p)
		case !rp.clone:
			rep.HTTPPools = append(rep.HTTPPools, p)
		default:
			for _, d := range f.disks {
				if d.Golden == p.Golden && d.Pool == p.Pool && d.Namespace == p.Namespace && !d.NoPool {
					p.Disks++
				}
			}
			g := golden(p.Golden)
			g.Pools = append(g.Pools, p)
		}
	}
	for _, d := range f.disks {
		g := golden(d.Golden)
		if d.NoPool {
			g.NoPoolDisks = append(g.NoPoolDisks, d)
			rep.NoPoolDisks = append(rep.NoPoolDisks, d)
		} else {
			g.Disks = append(g.Disks, d)
		}
		if d.HostAssisted {
			rep.HostAssisted = append(rep.HostAssisted, d)
		}
	}

	rep.Goldens = []GoldenPins{}
	rep.Unused = []string{}
	rep.PoolsRead = len(f.Pools)
	for _, n := range SortedKeys(goldens) {
		g := goldens[n]
		sort.Slice(g.Pools, func(i, j int) bool { return g.Pools[i].HelmRelease < g.Pools[j].HelmRelease })
		sortDisks(g.Disks)
		sortDisks(g.NoPoolDisks)
		// In use: a pool's values resolve to it, or the catalog chart's own
		// retirement rule counts a user (a disk, a KubevirtMachineTemplate).
		users := f.users.Users[n]
		g.Templates = []string{}
		for _, u := range users {
			if strings.Contains(u, "/KubevirtMachineTemplate/") {
				g.Templates = append(g.Templates, u)
			}
		}
		g.SafeToDelete = len(g.Pools) == 0 && len(users) == 0
		// Needed though nothing uses it yet: what new pools take, what a
		// rollout moves pools to, a patch newer than every pool of its line.
		// Said only where nothing uses it (else in use already, by what uses it).
		if fl, parsed := parseGolden(n); parsed && g.SafeToDelete {
			if d, ok := f.users.Defaults[fl.Plain]; ok {
				g.NewPoolsDefault = d.From
			}
			g.RolloutTargets = f.rolloutTargetsOf(fl.SchematicID, fl.Version)
			g.NewerThanEveryPool = f.newerThanEveryPool(fl.SchematicID, fl.Version)
			g.SafeToDelete = g.NewPoolsDefault == "" && len(g.RolloutTargets) == 0 && !g.NewerThanEveryPool
		}
		if g.SafeToDelete && len(f.Unread) > 0 {
			g.SafeToDelete, g.NotConcluded = false, true
		}
		if g.Retiring {
			g.Blockers = append([]string{}, users...)
			g.BlockersWithoutPool = append([]string(nil), f.users.NoPool[n]...)
		}
		if g.SafeToDelete && g.FoundAs != "absent" {
			rep.Unused = append(rep.Unused, n)
		}
		rep.Goldens = append(rep.Goldens, *g)
	}
	rep.Flavors = flavorsOf(rep.Goldens)
	rep.CAProblems = f.caProblems()
	sortDisks(rep.HostAssisted)
	sortDisks(rep.NoPoolDisks)
	sort.Slice(rep.PoolsBehind, func(i, j int) bool { return rep.PoolsBehind[i].HelmRelease < rep.PoolsBehind[j].HelmRelease })
	for _, l := range [][]PoolPin{rep.HTTPPools, rep.Unresolved} {
		sort.Slice(l, func(i, j int) bool { return l[i].HelmRelease < l[j].HelmRelease })
	}
	if rep.HostAssisted == nil {
		rep.HostAssisted = []DiskPin{}
	}
	if rep.HTTPPools == nil {
		rep.HTTPPools = []PoolPin{}
	}
	if rep.Unresolved == nil {
		rep.Unresolved = []PoolPin{}
	}
	if rep.NoPoolDisks == nil {
		rep.NoPoolDisks = []DiskPin{}
	}
	return rep
}

// flavorsOf groups goldens by flavor. They come sorted by name, and a plain
// golden's name is a prefix of its per-class ones', so each flavor lists its
// plain golden first. Pools the chart finds no golden for on their class
// (golden choice none) are gaps of the flavor of the golden they name.
func flavorsOf(goldens []GoldenPins) []FlavorPins {
	byFlavor := map[string]*FlavorPins{}
	gaps := map[string]map[string]*ClassGap{}
	for i := range goldens {
		g := &goldens[i]
		fl, _ := golden.Parse(g.Name)
		plain, schematicID, version, class := fl.Plain, fl.SchematicID, fl.Version, fl.Class
		g.Flavor, g.Class = plain, class
		f, ok := byFlavor[plain]
		if !ok {
			f = &FlavorPins{Flavor: plain, SchematicID: schematicID, Version: version, Goldens: []string{}}
			byFlavor[plain], gaps[plain] = f, map[string]*ClassGap{}
		}
		f.Goldens = append(f.Goldens, g.Name)
		for _, p := range g.Pools {
			if p.GoldenChoice != "none" {
				continue
			}
			gap, ok := gaps[plain][p.Class]
			if !ok {
				gap = &ClassGap{Class: p.Class, Golden: p.perClassGolden, Pools: []string{}}
				gaps[plain][p.Class] = gap
			}
			gap.Pools = append(gap.Pools, p.HelmRelease)
		}
	}
	out := []FlavorPins{}
	for _, n := range SortedKeys(byFlavor) {
		f := byFlavor[n]
		f.ClassesWithoutGolden = []ClassGap{}
		for _, c := range SortedKeys(gaps[n]) {
			f.ClassesWithoutGolden = append(f.ClassesWithoutGolden, *gaps[n][c])
		}
		out = append(out, *f)
	}
	return out
}

func sortDisks(d []DiskPin) {
	sort.Slice(d, func(i, j int) bool {
		if d[i].Namespace != d[j].Namespace {
			return d[i].Namespace < d[j].Namespace
		}
		return d[i].Name < d[j].Name
	})
}

// caFor is the catalog CA ConfigMap that serves a golden's flavor now: the
// entry's own, else the chart-wide one; "" when there is none.
func (f *PinsFacts) caFor(name string) string {
	if fl, ok := golden.Parse(name); ok {
		if _, own := f.caConfigMaps[fleet.CatalogCAConfigMap+"-"+fl.SchematicID+"-"+fl.Version]; own {
			return fleet.CatalogCAConfigMap + "-" + fl.SchematicID + "-" + fl.Version
		}
	}
	if _, ok := f.caConfigMaps[fleet.CatalogCAConfigMap]; ok {
		return fleet.CatalogCAConfigMap
	}
	return ""
}

// caProblems reads each catalog CA ConfigMap as X.509 (CAProblems).
func (f *PinsFacts) caProblems() []CAConfigMapProblems {
	var out []CAConfigMapProblems
	for _, name := range SortedKeys(f.caConfigMaps) {
		if problems := CAProblems(f.caConfigMaps[name], f.now); len(problems) > 0 {
			out = append(out, CAConfigMapProblems{ConfigMap: golden.Namespace + "/" + name, Problems: problems})
		}
	}
	return out
}

// rolloutTargetsOf are the rollout records whose target is this flavor.
func (f *PinsFacts) rolloutTargetsOf(schematicID, version string) []string {
	var out []string
	for _, r := range f.rolloutTargets {
		if r.version == version && (r.schematicID == "" || r.schematicID == schematicID) {
			out = append(out, r.record)
		}
	}
	sort.Strings(out)
	return out
}

// newerThanEveryPool: some pool runs this schematic and Talos minor, and
// every such pool runs an older patch than version.
func (f *PinsFacts) newerThanEveryPool(schematicID, version string) bool {
	v, err := TalosVersion(version)
	if err != nil {
		return false
	}
	seen := false
	for _, rp := range f.Pools {
		if rp.Facts == nil {
			continue
		}
		r := RunningFromFacts(rp.Facts)
		running, err := TalosVersion(r.Version)
		if err != nil || r.SchematicID != schematicID || running.Major() != v.Major() || running.Minor() != v.Minor() {
			continue
		}
		if !v.GreaterThan(running) {
			return false
		}
		seen = true
	}
	return seen
}

// parseGolden is golden.Parse, for where a local name shadows the package.
func parseGolden(name string) (golden.Flavor, bool) { return golden.Parse(name) }
