package main

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/util/validation"
)

type pinsReport struct {
	Cluster string `json:"cluster"`
	// Chart is the chart name a HelmRelease must install to count as a pool.
	Chart   string       `json:"chart"`
	Goldens []goldenPins `json:"goldens"`
	// Unused are the goldens safe to delete: no pool's values resolve to one
	// and the catalog chart counts no user (a disk, a KubevirtMachineTemplate).
	Unused []string `json:"unused"`
	// PoolsRead counts the pools found (resolved or not).
	PoolsRead    int       `json:"poolsRead"`
	HostAssisted []diskPin `json:"hostAssisted"`
	HTTPPools    []poolPin `json:"httpPools"`
	Unresolved   []poolPin `json:"unresolved"`
	// NoPoolDisks are the disks, of every golden, that belong to no pool:
	// their namespace holds no MachineDeployment named by their pool
	// annotation. Each still keeps its golden from being safe to delete.
	NoPoolDisks []diskPin `json:"noPoolDisks"`
	// Flavors group the goldens by (schematicID, version): the plain golden
	// and its per-class ones, and the classes whose pools have none.
	Flavors []flavorPins `json:"flavors"`
}

type flavorPins struct {
	// Flavor is the flavor's plain golden name, talos-worker-<schematicID>-<version>.
	Flavor      string `json:"flavor"`
	SchematicID string `json:"schematicID,omitempty"`
	Version     string `json:"version,omitempty"`
	// Goldens are the names in Goldens of this flavor, plain one first.
	Goldens []string `json:"goldens"`
	// ClassesWithoutGolden are classes with pools that find no golden of
	// this flavor on their class: the chart refuses them.
	ClassesWithoutGolden []classGap `json:"classesWithoutGolden"`
}

type classGap struct {
	Class string `json:"class"`
	// Golden is the per-class golden the class would get from the catalog
	// entry's additionalStorageClasses; "" when the class is not known.
	Golden string `json:"golden,omitempty"`
	// Pools are their HelmReleases.
	Pools []string `json:"pools"`
}

type goldenPins struct {
	Name string `json:"name"`
	// Flavor is the plain golden name of its flavor (its own name unless it
	// is a per-class golden); Class is a per-class golden's class.
	Flavor string `json:"flavor"`
	Class  string `json:"class,omitempty"`
	// FoundAs: DataVolume, PersistentVolumeClaim (its DataVolume was garbage
	// collected), or absent (named by a pool or a disk, not in cozy-public).
	FoundAs string `json:"foundAs"`
	Phase   string `json:"phase,omitempty"`
	// SourceURL is where it was imported from (its DataVolume's source URL,
	// or its PVC's CDI import endpoint); "" when absent or not recorded.
	SourceURL string    `json:"sourceURL,omitempty"`
	Pools     []poolPin `json:"pools"`
	// Disks are the disks naming it that belong to a pool (see diskPin.NoPool);
	// NoPoolDisks are those that belong to none.
	Disks       []diskPin `json:"disks"`
	NoPoolDisks []diskPin `json:"noPoolDisks"`
	// Templates are the KubevirtMachineTemplates cloning it, as
	// "<namespace>/KubevirtMachineTemplate/<name>": a pool at zero workers
	// holds its golden through its template alone.
	Templates    []string `json:"templates"`
	SafeToDelete bool     `json:"safeToDelete"`
	// Retiring: the catalog entry sets retire: true (its DataVolume is marked
	// retiring and has lost helm.sh/resource-policy: keep).
	Retiring bool `json:"retiring,omitempty"`
	// Blockers, for a retiring golden, are what the catalog refuses to let
	// Helm delete it for, as the catalog chart itself lists them: its disks
	// and the KubevirtMachineTemplates cloning it, as "<namespace>/<kind>/<name>".
	Blockers []string `json:"blockers,omitempty"`
	// BlockersWithoutPool are the Blockers that are disks belonging to no
	// pool: the catalog's refusal names them apart, to be deleted once
	// nothing needs them.
	BlockersWithoutPool []string `json:"blockersWithoutPool,omitempty"`
	// CertConfigMap and Checksum are what a live golden was imported with.
	// ImportedWithout lists "CA" when the catalog now holds a CA for it (its
	// ConfigMap is in cozy-public) that it was imported without, and
	// "checksum" when other goldens carry one and it does not: a DataVolume's
	// source cannot change, so only a new golden takes them.
	CertConfigMap   string   `json:"certConfigMap,omitempty"`
	Checksum        string   `json:"checksum,omitempty"`
	ImportedWithout []string `json:"importedWithout,omitempty"`
}

type poolPin struct {
	// HelmRelease is "<namespace>/<name>" of the pool's Flux HelmRelease, or
	// of its Helm release for one installed without a HelmRelease.
	HelmRelease string `json:"helmRelease"`
	// FoundBy says what made it a pool: its chart reference, or its Helm
	// release record (and whether a HelmRelease manages it).
	FoundBy string `json:"foundBy"`
	// Unresolved: its values could not be computed as Flux computes them (a
	// required valuesFrom reference is missing), so it is not rendered.
	Unresolved string `json:"unresolved,omitempty"`
	Release    string `json:"release"`
	Namespace  string `json:"namespace"`
	Pool       string `json:"pool,omitempty"`
	Golden     string `json:"golden,omitempty"`
	// Disks counts the pool's disks cloned from this golden: 0 for a pool at
	// zero workers, or one that has not rolled onto this golden yet.
	Disks int `json:"disks"`
	// Refusal: the pool's render is refused (the golden is absent, say); the
	// golden it declares is still known, from the chart's image resolution.
	Refusal string `json:"refusal,omitempty"`
	// Class and GoldenChoice are the pool's StorageClass and which golden
	// serves it (plain, per-class, or none), as the chart resolved them.
	Class        string `json:"class,omitempty"`
	GoldenChoice string `json:"goldenChoice,omitempty"`
	// perClassGolden is the flavor's golden for Class.
	perClassGolden string
}

type diskPin struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Golden    string `json:"golden"`
	// Pool is the disk's kubernetes-worker-image.cozystack.io/pool annotation.
	Pool string `json:"pool,omitempty"`
	// NoPool: the disk belongs to no pool, because its namespace holds no
	// MachineDeployment named by Pool (anyone who can create a DataVolume can
	// annotate one; a pool's disks can outlive it). It still keeps its golden.
	NoPool bool `json:"noPool,omitempty"`
	// PVC is the disk's PersistentVolumeClaim, "" when it has none yet.
	PVC            string `json:"pvc,omitempty"`
	CloneType      string `json:"cloneType,omitempty"`
	FallbackReason string `json:"fallbackReason,omitempty"`
	CSIClone       bool   `json:"csiClone"`
	HostAssisted   bool   `json:"hostAssisted"`
	Clone          string `json:"clone"`
	// kind: DataVolume, or PersistentVolumeClaim for a disk kept only as its PVC.
	kind string
}

func (a app) pins(args []string, out *bytes.Buffer) (int, error) {
	in, err := a.readFleet("pins", "resolved", args)
	if err != nil {
		return 0, err
	}
	rep := pinsFromFacts(in.facts, in.target.desc, in.chart.Metadata.Name)
	if in.output == "json" {
		writeJSON(out, rep)
	} else {
		writePinsText(out, &rep)
	}
	return exitOK, nil
}

// fleetRead is what pins and adopt read: the pool chart, the cluster and
// what it holds, and the output format asked for.
type fleetRead struct {
	chart  *chart.Chart
	target target
	facts  *pinsFacts
	output string
}

// readFleet parses the flags pins and adopt share and reads the cluster;
// poolsAre says what the chart does with the pools, for -chart's help.
func (a app) readFleet(verb, poolsAre string, args []string) (*fleetRead, error) {
	fs := newFlags(verb)
	state, kube := clusterFlags(fs, "kubeconfig of a live cluster (default: KUBECONFIG, ~/.kube/config, or in a pod its service account)")
	var artifacts stringList
	fs.Var(&artifacts, "artifact", "a chartRef name, NAME or NAMESPACE/NAME, that is the pool chart although it does not end in the chart's name (repeatable)")
	chartDir := fs.String("chart", "", "pool chart folder the pools are "+poolsAre+" with (default: the "+render.PoolChart+" built into this binary)")
	output := fs.String("o", "text", "output: text or json")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if err := oneOf("o", *output, "text", "json"); err != nil {
		return nil, err
	}
	chrt, err := loadPoolChart(*chartDir)
	if err != nil {
		return nil, err
	}
	t, err := a.connect(*state, *kube, true)
	if err != nil {
		return nil, err
	}
	facts, err := gatherPins(chrt, t, fleet.Options{Chart: chrt.Metadata.Name, Artifacts: artifacts})
	if err != nil {
		return nil, err
	}
	return &fleetRead{chart: chrt, target: t, facts: facts, output: *output}, nil
}

// pinsFromFacts decides, from what the cluster holds, which golden each pool
// and disk pins and which goldens nothing pins.
func pinsFromFacts(f *pinsFacts, cluster, chartName string) pinsReport {
	rep := pinsReport{Cluster: cluster, Chart: chartName}
	goldens := map[string]*goldenPins{}
	golden := func(name string) *goldenPins {
		if g, ok := goldens[name]; ok {
			return g
		}
		g := &goldenPins{Name: name, FoundAs: "absent", Pools: []poolPin{}, Disks: []diskPin{}, NoPoolDisks: []diskPin{}}
		goldens[name] = g
		return g
	}
	anyChecksum := false
	for _, s := range f.stored {
		anyChecksum = anyChecksum || s.checksum != ""
	}
	for name, s := range f.stored {
		g := golden(name)
		g.FoundAs, g.Phase, g.Retiring, g.SourceURL = s.foundAs, s.phase, s.retiring, s.url
		g.CertConfigMap, g.Checksum = s.certConfigMap, s.checksum
		if s.certConfigMap == "" && f.caFor(name) != "" {
			g.ImportedWithout = append(g.ImportedWithout, "CA")
		}
		if s.checksum == "" && anyChecksum {
			g.ImportedWithout = append(g.ImportedWithout, "checksum")
		}
	}
	for _, rp := range f.pools {
		p := rp.pin
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

	rep.Goldens = []goldenPins{}
	rep.Unused = []string{}
	rep.PoolsRead = len(f.pools)
	for _, n := range sortedKeys(goldens) {
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
	sortDisks(rep.HostAssisted)
	sortDisks(rep.NoPoolDisks)
	for _, l := range [][]poolPin{rep.HTTPPools, rep.Unresolved} {
		sort.Slice(l, func(i, j int) bool { return l[i].HelmRelease < l[j].HelmRelease })
	}
	if rep.HostAssisted == nil {
		rep.HostAssisted = []diskPin{}
	}
	if rep.HTTPPools == nil {
		rep.HTTPPools = []poolPin{}
	}
	if rep.Unresolved == nil {
		rep.Unresolved = []poolPin{}
	}
	if rep.NoPoolDisks == nil {
		rep.NoPoolDisks = []diskPin{}
	}
	return rep
}

// flavorsOf groups goldens by flavor. They come sorted by name, and a plain
// golden's name is a prefix of its per-class ones', so each flavor lists its
// plain golden first. Pools the chart finds no golden for on their class
// (golden choice none) are gaps of the flavor of the golden they name.
func flavorsOf(goldens []goldenPins) []flavorPins {
	byFlavor := map[string]*flavorPins{}
	gaps := map[string]map[string]*classGap{}
	for i := range goldens {
		g := &goldens[i]
		plain, schematicID, version, class, _ := goldenFlavor(g.Name)
		g.Flavor, g.Class = plain, class
		f, ok := byFlavor[plain]
		if !ok {
			f = &flavorPins{Flavor: plain, SchematicID: schematicID, Version: version, Goldens: []string{}}
			byFlavor[plain], gaps[plain] = f, map[string]*classGap{}
		}
		f.Goldens = append(f.Goldens, g.Name)
		for _, p := range g.Pools {
			if p.GoldenChoice != "none" {
				continue
			}
			gap, ok := gaps[plain][p.Class]
			if !ok {
				gap = &classGap{Class: p.Class, Golden: p.perClassGolden, Pools: []string{}}
				gaps[plain][p.Class] = gap
			}
			gap.Pools = append(gap.Pools, p.HelmRelease)
		}
	}
	out := []flavorPins{}
	for _, n := range sortedKeys(byFlavor) {
		f := byFlavor[n]
		f.ClassesWithoutGolden = []classGap{}
		for _, c := range sortedKeys(gaps[n]) {
			f.ClassesWithoutGolden = append(f.ClassesWithoutGolden, *gaps[n][c])
		}
		out = append(out, *f)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortDisks(d []diskPin) {
	sort.Slice(d, func(i, j int) bool {
		if d[i].Namespace != d[j].Namespace {
			return d[i].Namespace < d[j].Namespace
		}
		return d[i].Name < d[j].Name
	})
}

// writeGoldenPins writes one golden: its state and verdict, its pools and disks.
func writeGoldenPins(tb *table, g goldenPins) {
	state := g.FoundAs
	if g.Phase != "" {
		state += ", phase " + g.Phase
	}
	if g.FoundAs == "absent" {
		state = "absent from " + goldenNamespace
	}
	if g.Class != "" {
		state += ", per-class golden for class " + g.Class
	}
	if g.Retiring {
		state += ", retiring"
	}
	for _, what := range g.ImportedWithout {
		state += ", imported without " + map[string]string{"CA": "the CA the catalog now holds", "checksum": "a checksum"}[what]
	}
	verdict := fmt.Sprintf("in use: %s, %s", count(len(g.Pools), "pool"), count(len(g.Disks), "disk"))
	if len(g.NoPoolDisks) > 0 {
		verdict += fmt.Sprintf(", %s of no pool", count(len(g.NoPoolDisks), "disk"))
	}
	if len(g.Templates) > 0 {
		verdict += ", " + count(len(g.Templates), "KubevirtMachineTemplate")
	}
	if g.SafeToDelete {
		verdict = "safe to delete: no pool declares it, no disk or template uses it"
	}
	tb.raw(fmt.Sprintf("%s  (%s)  %s", printable(g.Name), state, verdict))
	if g.FoundAs != "absent" {
		// Raw, so the pool and disk rows keep their columns.
		tb.raw("  imported from " + orNotRecorded(g.SourceURL))
	}
	for _, p := range g.Pools {
		note := count(p.Disks, "disk")
		if p.Disks == 0 {
			note = "no disk cloned from it yet"
		}
		if p.Refusal != "" {
			note += "; its render is refused, see workerimage plan"
		}
		tb.row("  pool", p.HelmRelease, p.Pool, note)
	}
	for _, d := range g.Disks {
		tb.row("  disk", d.Namespace+"/"+d.Name, orNone(d.Pool), d.Clone)
	}
	for _, d := range g.NoPoolDisks {
		tb.row("  disk", d.Namespace+"/"+d.Name, "(no pool)", noPoolReason(d)+"; "+d.Clone)
	}
	for _, tpl := range g.Templates {
		ns, rest, _ := strings.Cut(tpl, "/")
		_, name, _ := strings.Cut(rest, "/")
		tb.row("  template", ns+"/"+name, "KubevirtMachineTemplate cloning it")
	}
	if g.Retiring {
		if len(g.Blockers) == 0 {
			tb.raw("  retiring: nothing blocks its deletion; drop its entry from the catalog's images and Helm deletes it")
		} else {
			tb.raw(fmt.Sprintf("  retiring: its entry cannot be dropped yet (the catalog refuses), still used by %s:", count(len(g.Blockers), "object")))
			noPool := map[string]bool{}
			for _, b := range g.BlockersWithoutPool {
				noPool[b] = true
			}
			for _, b := range g.Blockers {
				if noPool[b] {
					tb.row("  blocks", b, "belongs to no pool using the golden: delete it once nothing needs it")
				} else {
					tb.row("  blocks", b)
				}
			}
		}
	}
}

func writePinsText(out *bytes.Buffer, r *pinsReport) {
	var tb table
	tb.raw("cluster  " + r.Cluster)
	tb.raw(fmt.Sprintf("pools    %s of chart %s: Flux HelmReleases (%s) by chart reference or release record, and releases without one", count(r.PoolsRead, "pool"), r.Chart, helmReleaseAPI))
	tb.raw("")
	if len(r.Goldens) == 0 {
		tb.raw("no golden in " + goldenNamespace)
	}
	byName := map[string]goldenPins{}
	for _, g := range r.Goldens {
		byName[g.Name] = g
	}
	for i, f := range r.Flavors {
		if i > 0 {
			tb.raw("")
		}
		if f.SchematicID != "" {
			tb.raw(fmt.Sprintf("flavor schematicID %s, version %s", f.SchematicID, f.Version))
		} else {
			tb.raw("flavor " + printable(f.Flavor) + " (not a name the catalog builds)")
		}
		for _, n := range f.Goldens {
			writeGoldenPins(&tb, byName[n])
		}
		// The fix depends on whether the flavor has a catalog entry at all,
		// which its plain golden shows.
		entry := byName[f.Flavor].FoundAs != "absent" && byName[f.Flavor].Name != ""
		for _, c := range f.ClassesWithoutGolden {
			switch {
			case c.Class == "":
				tb.raw("pools whose class is not known (storageClass \"\" and no cluster default) have no golden of this flavor; their renders are refused:")
			case entry:
				tb.raw(fmt.Sprintf("class %s has no golden of this flavor: its pools' renders are refused until the catalog entry lists %q in additionalStorageClasses (golden %s):", c.Class, c.Class, c.Golden))
			default:
				tb.raw(fmt.Sprintf("class %s has no golden of this flavor, which has no plain golden either: its pools' renders are refused until the catalog holds an entry for the flavor on %s:", c.Class, c.Class))
			}
			for _, p := range c.Pools {
				tb.row("  pool", p)
			}
		}
	}
	tb.raw("")
	switch {
	case len(r.Unused) == 0:
		tb.raw("unused goldens (safe to delete): none")
	default:
		tb.raw("unused goldens (safe to delete):")
		for _, n := range r.Unused {
			tb.raw("  " + n)
		}
	}
	if len(r.HostAssisted) == 0 {
		tb.raw("disks that fell back to a host-assisted copy: none")
	} else {
		tb.raw("disks that fell back to a host-assisted copy:")
		for _, d := range r.HostAssisted {
			pool := orNone(d.Pool)
			if d.NoPool {
				pool = "(no pool)"
			}
			tb.row("  disk", d.Namespace+"/"+d.Name, pool, d.Clone)
		}
	}
	if len(r.NoPoolDisks) > 0 {
		tb.raw("disks that belong to no pool (they still keep their golden from being deleted; delete them once nothing needs them):")
		for _, d := range r.NoPoolDisks {
			tb.row("  disk", d.Namespace+"/"+d.Name, "(no pool)", "names golden "+printable(d.Golden)+"; "+noPoolReason(d))
		}
	}
	if len(r.HTTPPools) > 0 {
		tb.raw("pools that import over HTTP (no golden):")
		for _, p := range r.HTTPPools {
			tb.row("  pool", p.HelmRelease, p.Pool, "")
		}
	}
	if len(r.Unresolved) > 0 {
		tb.raw("pools not resolved (their values are missing or refused before a disk source resolves; check them before deleting):")
		for _, p := range r.Unresolved {
			if p.Unresolved != "" {
				tb.row("  pool", p.HelmRelease, "values not resolved: "+p.Unresolved)
			} else {
				tb.row("  pool", p.HelmRelease, "refused: "+p.Refusal)
			}
		}
	}
	tb.write(out)
}

// noPoolReason says why a disk belongs to no pool. The annotation is anyone's
// text, so it is quoted.
func noPoolReason(d diskPin) string {
	if d.Pool == "" {
		return "no pool annotation"
	}
	return fmt.Sprintf("its pool annotation names %q, which is no MachineDeployment in %s", d.Pool, d.Namespace)
}

// printable writes a name read from an annotation as it is when it is a plain
// object name, quoted otherwise, so no text can start a line of the report.
func printable(s string) string {
	if s != "" && len(validation.IsDNS1123Subdomain(s)) == 0 {
		return s
	}
	return strconv.Quote(s)
}

// caFor is the catalog CA ConfigMap that serves a golden's flavor now: the
// entry's own, else the chart-wide one; "" when there is none.
func (f *pinsFacts) caFor(golden string) string {
	if _, schematicID, version, _, ok := goldenFlavor(golden); ok && f.caConfigMaps[catalogCAConfigMap+"-"+schematicID+"-"+version] {
		return catalogCAConfigMap + "-" + schematicID + "-" + version
	}
	if f.caConfigMaps[catalogCAConfigMap] {
		return catalogCAConfigMap
	}
	return ""
}

// stringList is a repeatable flag; a comma also separates values.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// firstFive names at most five items, as the catalog's refusals do.
func firstFive(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:5], ", "), len(items)-5)
}
