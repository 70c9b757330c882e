// adopt answers: which pools still import over HTTP, and what would moving
// each to osImage.builtin take? It reads what pins reads (ReadPins) and asks
// the chart about each such pool twice, with plan's renders (Plan): as it
// is, and with its osImage switched to builtin. The chart decides every
// outcome; adopt sorts the answers and adds them up.

package report

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
	"gopkg.in/inf.v0"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Adopt renders every HTTP pool as it is and switched, and assembles
// the report. pins' verdicts sort the pools: cloning, HTTP, not resolved.
func Adopt(chrt *chart.Chart, t Target, f *PinsFacts) (*AdoptReport, error) {
	// Each pool is planned twice; the goldens pins read are the catalog.
	t.Catalog = f.Stored
	pins := Pins(f, t.Desc, chrt.Metadata.Name)
	rep := &AdoptReport{Cluster: t.Desc, Chart: chrt.Metadata.Name, Flavors: []AdoptFlavor{}, Cloning: []PoolPin{}, RefusedToday: []PoolPin{}, Unresolved: pins.Unresolved, PoolChart: pins.PoolChart,
		UnreadNamespaces: pins.UnreadNamespaces, Ignored: pins.Ignored}
	for _, g := range pins.Goldens {
		rep.Cloning = append(rep.Cloning, g.Pools...)
	}
	sort.Slice(rep.Cloning, func(i, j int) bool { return rep.Cloning[i].HelmRelease < rep.Cloning[j].HelmRelease })
	// A pool is its release, in its namespace: no two pools share one.
	byRelease := map[string]ResolvedPool{}
	for _, rp := range f.Pools {
		byRelease[rp.Pin.Namespace+"/"+rp.Pin.Release] = rp
	}
	var pools []AdoptPool
	for i, p := range pins.HTTPPools {
		t.Progressf("rendering HTTP pool %d of %d as it is and switched: %s", i+1, len(pins.HTTPPools), p.HelmRelease)
		rp := byRelease[p.Namespace+"/"+p.Release]
		var md map[string]any
		if u := f.MachineDeployments[rp.Pin.Namespace+"/"+rp.Pin.Pool]; u != nil {
			md = u.Object
		}
		ap, refusal, err := adoptPoolOf(chrt, t, rp, md)
		if err != nil {
			return nil, err
		}
		if refusal != "" {
			p.Refusal = refusal
			rep.RefusedToday = append(rep.RefusedToday, p)
			continue
		}
		pools = append(pools, ap)
	}
	home, newEntry, err := CatalogChangeBase(t)
	if err != nil {
		return nil, err
	}
	catalogURL := newEntry.URL
	for i := range pools {
		p := &pools[i]
		p.GoldenImageFactoryURL = goldenFactoryURL(f.Stored, *p, catalogURL.Value)
		p.OtherImageFactoryURL = p.GoldenImageFactoryURL != "" && p.GoldenImageFactoryURL != p.ImageFactoryURL
	}
	rep.Flavors = groupAdoptPools(pools)
	if rep.Catalog, err = CatalogFor(home, f.Stored, pools, catalogURL); err != nil {
		return nil, err
	}
	if err := WithFactoryNotes(t, home, &rep.Catalog); err != nil {
		return nil, err
	}
	rep.Savings = savingsOf(pools, rep.Catalog, newEntry.storage)
	rep.Savings.HTTPPools = len(pins.HTTPPools)
	rep.Savings.RefusedToday = len(rep.RefusedToday)
	return rep, nil
}

// goldenFactoryURL is the factory URL the golden a switched pool clones is
// imported from: the golden's own source URL less the path the catalog
// appends, else its flavor's plain golden's (a per-class golden is imported
// as its entry's); for a flavor with no golden yet, the catalog's URL.
func goldenFactoryURL(stored map[string]fleet.Golden, p AdoptPool, catalogURL string) string {
	suffix := golden.ImagePath(p.SchematicID, p.Version)
	if p.Switched != nil && p.Switched.GoldenSourceURL != "" {
		return strings.TrimSuffix(p.Switched.GoldenSourceURL, suffix)
	}
	if g, ok := stored[golden.Name(p.SchematicID, p.Version)]; ok && g.URL != "" {
		return strings.TrimSuffix(g.URL, suffix)
	}
	if p.Outcome == OutcomeNeedsEntry {
		return catalogURL
	}
	return ""
}

// adoptPoolOf renders one HTTP pool as it is (refusal: the chart refuses it
// today) and switched to osImage.builtin with the flavor it boots.
func adoptPoolOf(chrt *chart.Chart, t Target, rp ResolvedPool, md map[string]any) (AdoptPool, string, error) {
	ap := AdoptPool{HelmRelease: rp.Pin.HelmRelease, Release: rp.Release.Name, Namespace: rp.Release.Namespace, Pool: rp.Pin.Pool, BytesPerImport: UnknownBytes}
	now, read, err := rp.PlanNow(chrt, t)
	if err != nil {
		return ap, "", err
	}
	if now.Result != "renders" {
		return ap, now.Refusal, nil
	}
	d := now.DiskSource
	ap.SchematicID, ap.Version = d.SchematicID.Value, d.Version.Value
	ap.ImageSources = ImageSources{SchematicID: d.SchematicID.Source, Version: d.Version.Source}
	if d.ImageFactoryURL != nil {
		ap.ImageFactoryURL, ap.ImageSources.ImageFactoryURL = d.ImageFactoryURL.Value, d.ImageFactoryURL.Source
	}
	ap.MachineTemplate.Current = now.MachineTemplate
	ap.MinReplicas, ap.MaxReplicas = read.minReplicas, read.maxReplicas
	if md != nil {
		ap.MachineDeployment = true
		ap.Workers = wholeNumber(fleet.Text(md, "status", "replicas"))
	}

	vals, change, replaces := switchToBuiltin(rp.Values, d)
	ap.ValuesChange, ap.Replaces = change, replaces
	sw, _, err := Plan(chrt, t, rp.Release, vals)
	if err != nil {
		return ap, "", err
	}
	ap.Switched = sw.DiskSource
	ap.MachineTemplate.New = sw.MachineTemplate
	ap.Outcome = SwitchOutcome(sw)
	if sw.Result != "renders" {
		ap.Refusal = sw.Refusal
	}
	if s := sw.DiskSource; s != nil {
		ap.Golden = s.Golden
		if s.GoldenSize != "" && (ap.Outcome == OutcomeReady || ap.Outcome == OutcomeImporting || ap.Outcome == OutcomeRefused) {
			ap.BytesPerImport = s.GoldenSize
		}
	}
	if ap.Outcome == OutcomeReady {
		ap.ImportsAvoidedNow = ap.Workers
	}
	return ap, "", nil
}

// switchToBuiltin is the pool's values with osImage: {builtin: {...}}
// booting the flavor it boots now (builtinFor). It replaces the pool's own
// osImage, since both paths at once are refused.
func switchToBuiltin(values map[string]any, d *DiskReport) (switched, change map[string]any, replaces string) {
	builtin := BuiltinFor(d)
	switched = make(map[string]any, len(values)+1)
	for k, v := range values {
		switched[k] = v
	}
	if old, ok := values["osImage"]; ok {
		replaces = "osImage"
		if m, ok := old.(map[string]any); ok {
			for _, k := range SortedKeys(m) {
				replaces = "osImage." + k
			}
		}
	}
	switched["osImage"] = map[string]any{"builtin": builtin}
	return switched, map[string]any{"osImage": map[string]any{"builtin": builtin}}, replaces
}

// BuiltinFor is osImage.builtin booting the flavor d resolves: its fields
// fall back to talos.* (the pool's own, else what it runs, else the chart's
// default: the chart words each such source starting with the field), so only a field the chart took from elsewhere (osImage.factory, a
// platform default recorded at creation) is written.
func BuiltinFor(d *DiskReport) map[string]any {
	builtin := map[string]any{}
	if !strings.HasPrefix(d.SchematicID.Source, "talos.schematicID") {
		builtin["schematicID"] = d.SchematicID.Value
	}
	if !strings.HasPrefix(d.Version.Source, "talos.version") {
		builtin["version"] = d.Version.Value
	}
	return builtin
}

// SwitchOutcome reads the chart's answer for a switched pool: whether it
// renders, and when not, which golden it lacks (the chart's golden choice
// "none": no golden of the flavor on the pool's class; the plain golden
// absent, or on another class), else its refusal.
func SwitchOutcome(sw *PlanReport) string {
	d := sw.DiskSource
	if sw.Result == "renders" {
		if d != nil && d.GoldenFoundAs == "DataVolume" && d.GoldenPhase != "Succeeded" {
			return OutcomeImporting
		}
		return OutcomeReady
	}
	if d != nil && d.GoldenChoice != nil && d.GoldenChoice.Choice == "none" {
		if d.GoldenFoundAs == "absent" {
			return OutcomeNeedsEntry
		}
		return OutcomeNeedsPerClass
	}
	return OutcomeRefused
}

// groupAdoptPools groups by flavor, then class (a class the chart resolves
// none for last), pools by HelmRelease.
func groupAdoptPools(pools []AdoptPool) []AdoptFlavor {
	type key struct{ schematicID, version, url string }
	byFlavor := map[key]map[string][]AdoptPool{}
	var keys []key
	for _, p := range pools {
		k := key{p.SchematicID, p.Version, p.ImageFactoryURL}
		if byFlavor[k] == nil {
			byFlavor[k] = map[string][]AdoptPool{}
			keys = append(keys, k)
		}
		byFlavor[k][p.Class()] = append(byFlavor[k][p.Class()], p)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.schematicID != b.schematicID {
			return a.schematicID < b.schematicID
		}
		if a.version != b.version {
			return a.version < b.version
		}
		return a.url < b.url
	})
	out := []AdoptFlavor{}
	for _, k := range keys {
		f := AdoptFlavor{SchematicID: k.schematicID, Version: k.version, ImageFactoryURL: k.url, Golden: golden.Name(k.schematicID, k.version)}
		classes := SortedKeys(byFlavor[k])
		if len(classes) > 0 && classes[0] == "" {
			classes = append(classes[1:], "")
		}
		for _, c := range classes {
			ps := byFlavor[k][c]
			sort.Slice(ps, func(i, j int) bool { return ps[i].HelmRelease < ps[j].HelmRelease })
			f.Classes = append(f.Classes, AdoptClass{Class: c, Pools: ps})
		}
		out = append(out, f)
	}
	return out
}

// savingsOf adds up what switching saves: each worker of a switched pool is
// one HTTP download of the image not made (counted in bytes at its golden's
// storage, the size CDI writes per import), less one download per golden the
// catalog values add.
func savingsOf(pools []AdoptPool, c AdoptCatalog, catalogStorage string) AdoptSavings {
	s := AdoptSavings{RenderToday: len(pools)}
	// Exact decimals: workers (up to 2^31 each) times a golden's size (up to
	// 8Ei) does not fit an int64.
	bytes := inf.NewDec(0, 0)
	for _, p := range pools {
		switch p.Outcome {
		case OutcomeImporting, OutcomeNeedsEntry, OutcomeNeedsPerClass:
			s.WaitingPools++
			s.ImportsAvoidedLater += p.Workers
			continue
		case OutcomeReady:
		default:
			continue
		}
		s.ReadyPools++
		s.ImportsAvoidedNow += p.Workers
		size, err := resource.ParseQuantity(p.BytesPerImport)
		if err != nil {
			s.ImportsOfUnknownSize += p.Workers
			continue
		}
		bytes.Add(bytes, new(inf.Dec).Mul(size.AsDec(), inf.NewDec(p.Workers, 0)))
	}
	s.BytesAvoidedNow = resource.NewDecimalQuantity(*bytes, resource.BinarySI).String()

	added := inf.NewDec(0, 0)
	for _, e := range c.Images {
		n := 0
		storage := e.Entry.Storage
		switch e.Change {
		case ChangeNew:
			n = 1 + len(e.Entry.AdditionalStorageClasses)
			if storage == "" {
				storage = catalogStorage
			}
		case ChangeClassesAdded:
			n = len(e.AddedClasses)
		}
		if n == 0 {
			continue
		}
		s.GoldensToAdd += n
		size, err := resource.ParseQuantity(storage)
		if err != nil {
			s.GoldensOfUnknownSize += n
			continue
		}
		added.Add(added, new(inf.Dec).Mul(size.AsDec(), inf.NewDec(int64(n), 0)))
	}
	s.GoldenBytesToAdd = resource.NewDecimalQuantity(*added, resource.BinarySI).String()
	s.NetImportsAvoided = s.ImportsAvoidedNow + s.ImportsAvoidedLater - int64(s.GoldensToAdd)
	return s
}

// wholeNumber reads a count the API wrote ("3", or 3 read back as 3.0); 0 when absent.
func wholeNumber(s string) int64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= 0 && f <= math.MaxInt32) { // NaN fails both
		return 0
	}
	return int64(f)
}
