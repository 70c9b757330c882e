package main

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/inf.v0"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// adopt answers: which pools still import over HTTP, and what would moving
// each to osImage.builtin take? It reads what pins reads (gatherPins) and asks
// the chart about each such pool twice, with plan's renders (planPool): as it
// is, and with its osImage switched to builtin. The chart decides every
// outcome; adopt sorts the answers and adds them up.

// Outcomes of switching a pool to osImage.builtin, from the chart's answer.
const (
	outcomeReady          = "ready"                  // renders, and its golden is populated
	outcomeImporting      = "golden-importing"       // renders; CDI holds the disks until the golden populates
	outcomeNeedsEntry     = "needs-catalog-entry"    // no golden of the flavor at all
	outcomeNeedsPerClass  = "needs-per-class-golden" // the flavor's golden is on another class
	outcomeRefused        = "refused"                // the chart refuses it for another reason
	annAutoscalerMin      = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	annAutoscalerMax      = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
	unknownBytes          = "unknown"
	publicImageFactoryURL = "https://factory.talos.dev"
	// The platform renders the catalog's values into this Package, with
	// kubernetesWorkerImage.imageFactoryURL as the catalog's imageFactoryURL.
	packageAPI     = "cozystack.io/v1alpha1"
	catalogPackage = "cozystack.kubernetes-worker-image"
)

type adoptReport struct {
	Cluster string `json:"cluster"`
	// Chart is the chart name a HelmRelease must install to count as a pool.
	Chart string `json:"chart"`
	// Flavors are the pools that import over HTTP, by the flavor they boot
	// and then by class.
	Flavors []adoptFlavor `json:"flavors"`
	// Catalog is the catalog's images list the switches need.
	Catalog adoptCatalog `json:"catalog"`
	Savings adoptSavings `json:"savings"`
	// Cloning are the pools that already clone a golden.
	Cloning []poolPin `json:"cloning"`
	// RefusedToday are HTTP pools the chart refuses as they are: fix them first.
	RefusedToday []poolPin `json:"refusedToday"`
	// Unresolved are pools whose values are refused before a disk source resolves.
	Unresolved []poolPin `json:"unresolved"`
}

type adoptFlavor struct {
	SchematicID     string `json:"schematicID"`
	Version         string `json:"version"`
	ImageFactoryURL string `json:"imageFactoryURL"`
	// Golden is the flavor's plain golden, talos-worker-<schematicID>-<version>.
	Golden  string       `json:"golden"`
	Classes []adoptClass `json:"classes"`
}

type adoptClass struct {
	// Class is the pool's StorageClass as the chart resolves it on the clone
	// path; "" when it resolves none.
	Class string      `json:"class"`
	Pools []adoptPool `json:"pools"`
}

type adoptPool struct {
	HelmRelease string `json:"helmRelease"`
	Release     string `json:"release"`
	Namespace   string `json:"namespace"`
	Pool        string `json:"pool"`
	// Workers is its MachineDeployment's status.replicas; MachineDeployment
	// is false when the pool has none yet.
	Workers           int64 `json:"workers"`
	MachineDeployment bool  `json:"machineDeployment"`
	// MinReplicas and MaxReplicas are the autoscaler bounds the chart renders.
	MinReplicas string `json:"minReplicas"`
	MaxReplicas string `json:"maxReplicas"`
	// ImageSources say where the flavor came from (talos.*, osImage.factory,
	// a platform default recorded at creation), as the chart resolved them.
	ImageSources imageSources `json:"imageSources"`
	// Outcome of the switch: ready, golden-importing, needs-catalog-entry,
	// needs-per-class-golden or refused.
	Outcome string `json:"outcome"`
	// Golden is the golden the switched pool would clone, per the chart.
	Golden string `json:"golden,omitempty"`
	// GoldenImageFactoryURL is the factory URL that golden is (or, for a new
	// catalog entry, would be) imported from; OtherImageFactoryURL: the pool
	// boots its flavor from another URL today (imageSources says which), so
	// the switch changes where its image comes from.
	GoldenImageFactoryURL string `json:"goldenImageFactoryURL,omitempty"`
	OtherImageFactoryURL  bool   `json:"otherImageFactoryURL"`
	// Refusal is the chart's refusal of the switched pool, word for word.
	Refusal string `json:"refusal,omitempty"`
	// ValuesChange is what to set in the pool's values; it replaces the
	// pool's own osImage (Replaces says which) when it has one.
	ValuesChange map[string]interface{} `json:"valuesChange"`
	Replaces     string                 `json:"replaces,omitempty"`
	// MachineTemplate: a switch re-images the pool, so its template is
	// renamed and the pool rolls once; New is "" until the switched pool renders.
	MachineTemplate adoptTemplates `json:"machineTemplate"`
	// Switched is the chart's report on the switched pool's disk source, as
	// plan -o json reports it (diskSource): golden, classes, clone strategy,
	// every check the chart made.
	Switched *diskReport `json:"switched,omitempty"`
	// ImportsAvoidedNow is Workers when the pool is ready: its roll replaces
	// each worker with a clone instead of an HTTP import.
	ImportsAvoidedNow int64 `json:"importsAvoidedNow"`
	// BytesPerImport is what one avoided import would have written: the size
	// of the golden the switched pool clones, or "unknown".
	BytesPerImport string `json:"bytesPerImport"`

	// Flavor, for grouping.
	schematicID, version, imageFactoryURL string
}

type imageSources struct {
	SchematicID     string `json:"schematicID"`
	Version         string `json:"version"`
	ImageFactoryURL string `json:"imageFactoryURL"`
}

type adoptTemplates struct {
	Current string `json:"current"`
	New     string `json:"new,omitempty"`
}

type adoptSavings struct {
	// HTTPPools counts the pools that import over HTTP and render today;
	// ReadyPools those of them that are ready.
	HTTPPools  int `json:"httpPools"`
	ReadyPools int `json:"readyPools"`
	// ImportsAvoidedNow is the workers of ready pools.
	ImportsAvoidedNow int64 `json:"importsAvoidedNow"`
	// BytesAvoidedNow is the sum of workers times golden size over the ready
	// pools whose golden has a known size; ImportsOfUnknownSize counts the
	// avoided imports whose size is not known (left out of the sum).
	BytesAvoidedNow      string `json:"bytesAvoidedNow"`
	ImportsOfUnknownSize int64  `json:"importsOfUnknownSize"`
}

func (a app) adopt(args []string, out *bytes.Buffer) (int, error) {
	in, err := a.readFleet("adopt", "rendered", args)
	if err != nil {
		return 0, err
	}
	rep, err := adoptFromFacts(in.chart, in.target, in.facts)
	if err != nil {
		return 0, err
	}
	if in.output == "json" {
		writeJSON(out, rep)
	} else {
		writeAdoptText(out, rep)
	}
	return exitOK, nil
}

// adoptFromFacts renders every HTTP pool as it is and switched, and assembles
// the report. pins' verdicts sort the pools: cloning, HTTP, not resolved.
func adoptFromFacts(chrt *chart.Chart, t target, f *pinsFacts) (*adoptReport, error) {
	pins := pinsFromFacts(f, t.desc, chrt.Metadata.Name)
	rep := &adoptReport{Cluster: t.desc, Chart: chrt.Metadata.Name, Flavors: []adoptFlavor{}, Cloning: []poolPin{}, RefusedToday: []poolPin{}, Unresolved: pins.Unresolved}
	for _, g := range pins.Goldens {
		rep.Cloning = append(rep.Cloning, g.Pools...)
	}
	sort.Slice(rep.Cloning, func(i, j int) bool { return rep.Cloning[i].HelmRelease < rep.Cloning[j].HelmRelease })
	byRelease := map[string]resolvedPool{}
	for _, rp := range f.pools {
		byRelease[rp.pin.HelmRelease] = rp
	}
	var pools []adoptPool
	for _, p := range pins.HTTPPools {
		rp := byRelease[p.HelmRelease]
		var md map[string]interface{}
		if u := f.machineDeployments[rp.pin.Namespace+"/"+rp.pin.Pool]; u != nil {
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
	catalogURL, err := platformCatalogURL(t)
	if err != nil {
		return nil, err
	}
	for i := range pools {
		p := &pools[i]
		p.GoldenImageFactoryURL = goldenFactoryURL(f.stored, *p, catalogURL.Value)
		p.OtherImageFactoryURL = p.GoldenImageFactoryURL != "" && p.GoldenImageFactoryURL != p.imageFactoryURL
	}
	rep.Flavors = groupAdoptPools(pools)
	rep.Catalog = catalogFor(f.stored, pools, catalogURL)
	rep.Savings = savingsOf(pools)
	return rep, nil
}

// platformCatalogURL is the factory URL the catalog imports a new entry
// from: the platform's kubernetesWorkerImage.imageFactoryURL, as the
// platform forwards it into the catalog's Package, else the catalog's
// built-in one.
func platformCatalogURL(t target) (sourced, error) {
	const field = "spec.components.kubernetes-worker-image.values.imageFactoryURL"
	pkg, err := t.get(packageAPI, "Package", "", catalogPackage)
	if err != nil {
		return sourced{}, err
	}
	if pkg == nil {
		return sourced{publicImageFactoryURL, "the catalog's built-in imageFactoryURL (no Package " + catalogPackage + ")"}, nil
	}
	v, found, _ := unstructured.NestedFieldNoCopy(pkg.Object, strings.Split(field, ".")...)
	if !found || v == nil || v == "" {
		return sourced{publicImageFactoryURL, "the catalog's built-in imageFactoryURL (Package " + catalogPackage + " sets no kubernetesWorkerImage.imageFactoryURL)"}, nil
	}
	url, ok := v.(string)
	if !ok {
		return sourced{}, problemf("Package %s: %s is %v, not a URL; fix kubernetesWorkerImage.imageFactoryURL in the platform's values", catalogPackage, field, v)
	}
	return sourced{url, "the platform's kubernetesWorkerImage.imageFactoryURL (" + field + " of Package " + catalogPackage + ")"}, nil
}

// goldenFactoryURL is the factory URL the golden a switched pool clones is
// imported from: the golden's own source URL less the path the catalog
// appends, else its flavor's plain golden's (a per-class golden is imported
// as its entry's); for a flavor with no golden yet, the catalog's URL.
func goldenFactoryURL(stored map[string]storedGolden, p adoptPool, catalogURL string) string {
	suffix := "/image/" + p.schematicID + "/" + p.version + "/openstack-amd64.raw.xz"
	if p.Switched != nil && p.Switched.GoldenSourceURL != "" {
		return strings.TrimSuffix(p.Switched.GoldenSourceURL, suffix)
	}
	if g, ok := stored[goldenPrefix+p.schematicID+"-"+p.version]; ok && g.url != "" {
		return strings.TrimSuffix(g.url, suffix)
	}
	if p.Outcome == outcomeNeedsEntry {
		return catalogURL
	}
	return ""
}

// adoptPoolOf renders one HTTP pool as it is (refusal: the chart refuses it
// today) and switched to osImage.builtin with the flavor it boots.
func adoptPoolOf(chrt *chart.Chart, t target, rp resolvedPool, md map[string]interface{}) (adoptPool, string, error) {
	ap := adoptPool{HelmRelease: rp.pin.HelmRelease, Release: rp.release.Name, Namespace: rp.release.Namespace, Pool: rp.pin.Pool, BytesPerImport: unknownBytes}
	now, manifest, err := planPool(chrt, t, rp.release, rp.values)
	if err != nil {
		return ap, "", err
	}
	if now.Result != "renders" {
		return ap, now.Refusal, nil
	}
	d := now.DiskSource
	ap.schematicID, ap.version = d.SchematicID.Value, d.Version.Value
	ap.ImageSources = imageSources{SchematicID: d.SchematicID.Source, Version: d.Version.Source}
	if d.ImageFactoryURL != nil {
		ap.imageFactoryURL, ap.ImageSources.ImageFactoryURL = d.ImageFactoryURL.Value, d.ImageFactoryURL.Source
	}
	ap.MachineTemplate.Current = now.MachineTemplate
	if mdDoc, err := manifest.One("MachineDeployment"); err == nil {
		ap.MinReplicas = text(mdDoc.Object, "metadata", "annotations", annAutoscalerMin)
		ap.MaxReplicas = text(mdDoc.Object, "metadata", "annotations", annAutoscalerMax)
	}
	if md != nil {
		ap.MachineDeployment = true
		ap.Workers = wholeNumber(text(md, "status", "replicas"))
	}

	vals, change, replaces := switchToBuiltin(rp.values, d)
	ap.ValuesChange, ap.Replaces = change, replaces
	sw, _, err := planPool(chrt, t, rp.release, vals)
	if err != nil {
		return ap, "", err
	}
	ap.Switched = sw.DiskSource
	ap.MachineTemplate.New = sw.MachineTemplate
	ap.Outcome = switchOutcome(sw)
	if sw.Result != "renders" {
		ap.Refusal = sw.Refusal
	}
	if s := sw.DiskSource; s != nil {
		ap.Golden = s.Golden
		if s.GoldenSize != "" && (ap.Outcome == outcomeReady || ap.Outcome == outcomeImporting || ap.Outcome == outcomeRefused) {
			ap.BytesPerImport = s.GoldenSize
		}
	}
	if ap.Outcome == outcomeReady {
		ap.ImportsAvoidedNow = ap.Workers
	}
	return ap, "", nil
}

// switchToBuiltin is the pool's values with osImage: {builtin: {...}}
// booting the flavor it boots now: builtin's fields fall back to talos.*, so
// only a field the chart took from elsewhere (osImage.factory, a platform
// default recorded at creation) is written. It replaces the pool's own
// osImage, since both paths at once are refused.
func switchToBuiltin(values map[string]interface{}, d *diskReport) (switched, change map[string]interface{}, replaces string) {
	builtin := map[string]interface{}{}
	if d.SchematicID.Source != "talos.schematicID" {
		builtin["schematicID"] = d.SchematicID.Value
	}
	if d.Version.Source != "talos.version" {
		builtin["version"] = d.Version.Value
	}
	switched = make(map[string]interface{}, len(values)+1)
	for k, v := range values {
		switched[k] = v
	}
	if old, ok := values["osImage"]; ok {
		replaces = "osImage"
		if m, ok := old.(map[string]interface{}); ok {
			for _, k := range sortedKeys(m) {
				replaces = "osImage." + k
			}
		}
	}
	switched["osImage"] = map[string]interface{}{"builtin": builtin}
	return switched, map[string]interface{}{"osImage": map[string]interface{}{"builtin": builtin}}, replaces
}

// switchOutcome reads the chart's answer for a switched pool: whether it
// renders, and when not, which golden it lacks (the chart's golden choice
// "none": no golden of the flavor on the pool's class; the plain golden
// absent, or on another class), else its refusal.
func switchOutcome(sw *planReport) string {
	d := sw.DiskSource
	if sw.Result == "renders" {
		if d != nil && d.GoldenFoundAs == "DataVolume" && d.GoldenPhase != "Succeeded" {
			return outcomeImporting
		}
		return outcomeReady
	}
	if d != nil && d.GoldenChoice != nil && d.GoldenChoice.Choice == "none" {
		if d.GoldenFoundAs == "absent" {
			return outcomeNeedsEntry
		}
		return outcomeNeedsPerClass
	}
	return outcomeRefused
}

func (p adoptPool) class() string {
	if p.Switched != nil && p.Switched.PoolClass != nil {
		return p.Switched.PoolClass.Value
	}
	return ""
}

// groupAdoptPools groups by flavor, then class (a class the chart resolves
// none for last), pools by HelmRelease.
func groupAdoptPools(pools []adoptPool) []adoptFlavor {
	type key struct{ schematicID, version, url string }
	byFlavor := map[key]map[string][]adoptPool{}
	var keys []key
	for _, p := range pools {
		k := key{p.schematicID, p.version, p.imageFactoryURL}
		if byFlavor[k] == nil {
			byFlavor[k] = map[string][]adoptPool{}
			keys = append(keys, k)
		}
		byFlavor[k][p.class()] = append(byFlavor[k][p.class()], p)
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
	out := []adoptFlavor{}
	for _, k := range keys {
		f := adoptFlavor{SchematicID: k.schematicID, Version: k.version, ImageFactoryURL: k.url, Golden: goldenPrefix + k.schematicID + "-" + k.version}
		classes := sortedKeys(byFlavor[k])
		if len(classes) > 0 && classes[0] == "" {
			classes = append(classes[1:], "")
		}
		for _, c := range classes {
			ps := byFlavor[k][c]
			sort.Slice(ps, func(i, j int) bool { return ps[i].HelmRelease < ps[j].HelmRelease })
			f.Classes = append(f.Classes, adoptClass{Class: c, Pools: ps})
		}
		out = append(out, f)
	}
	return out
}

func savingsOf(pools []adoptPool) adoptSavings {
	s := adoptSavings{HTTPPools: len(pools)}
	// Exact decimals: workers (up to 2^31 each) times a golden's size (up to
	// 8Ei) does not fit an int64.
	bytes := inf.NewDec(0, 0)
	for _, p := range pools {
		if p.Outcome != outcomeReady {
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

// outcomeText is how the text report names an outcome, with what to do.
func outcomeText(p adoptPool) string {
	d := p.Switched
	switch p.Outcome {
	case outcomeReady:
		return "ready: the switched pool renders and clones " + p.Golden
	case outcomeImporting:
		return fmt.Sprintf("golden importing: the switched pool renders; CDI holds its disks until %s (phase %s) has imported", p.Golden, orNone(d.GoldenPhase))
	case outcomeNeedsEntry:
		return fmt.Sprintf("needs a catalog entry: add {schematicID: %s, version: %s} to the catalog's images (below), wait for its golden to import", p.schematicID, p.version)
	case outcomeNeedsPerClass:
		return fmt.Sprintf("needs a per-class golden: add %q to the additionalStorageClasses of the catalog entry {schematicID: %s, version: %s} (golden %s, below)", p.class(), p.schematicID, p.version, d.GoldenChoice.PerClassGolden)
	}
	return "refused: the chart refuses the switched pool"
}

// valuesText writes a values change on one line, as YAML from the YAML
// library, every string reading back as itself (yamlString).
func valuesText(change map[string]interface{}) string {
	builtin := change["osImage"].(map[string]interface{})["builtin"].(map[string]interface{})
	fields := yamlMap(true)
	for _, k := range sortedKeys(builtin) {
		fields.Content = append(fields.Content, yamlString(k), yamlString(fmt.Sprint(builtin[k])))
	}
	return strings.TrimSuffix(yamlText(yamlMap(false, "osImage", yamlMap(true, "builtin", fields))), "\n")
}

func writeAdoptText(out *bytes.Buffer, r *adoptReport) {
	var head table
	head.raw("cluster  " + r.Cluster)
	head.raw(fmt.Sprintf("pools    of chart %s: Flux HelmReleases (%s) by chart reference or release record, and releases without one", r.Chart, helmReleaseAPI))
	head.raw("switch   each pool that imports over HTTP, rendered by the chart against this cluster with osImage.builtin booting the flavor it boots now;")
	head.raw("         a switch re-images (rolls) that pool once, and every other pool keeps its KubevirtMachineTemplate")
	head.raw("catalog  a new entry imports from " + r.Catalog.URL.Value + "  (" + r.Catalog.URL.Source + "), never from a URL a pool chose")
	head.write(out)
	// Each section is a table of its own, so its columns align only with its own rows.
	var flavors table
	if len(r.Flavors) == 0 {
		flavors.raw("")
		flavors.raw("no pool imports over HTTP")
	}
	for _, f := range r.Flavors {
		flavors.raw("")
		flavors.raw(fmt.Sprintf("flavor schematicID %s, version %s, image factory %s  (golden %s)", f.SchematicID, f.Version, f.ImageFactoryURL, f.Golden))
		for _, c := range f.Classes {
			workers := int64(0)
			for _, p := range c.Pools {
				workers += p.Workers
			}
			name := "class " + c.Class
			if c.Class == "" {
				name = "class not known (storageClass \"\" and no cluster default)"
			}
			flavors.raw(fmt.Sprintf("%s: %s, %s", name, count(len(c.Pools), "pool"), count(int(workers), "worker")))
			for _, p := range c.Pools {
				writeAdoptPool(&flavors, p)
			}
		}
	}
	flavors.raw("")
	writeCatalogText(&flavors, r.Catalog)
	flavors.raw("")
	flavors.write(out)

	s := r.Savings
	var savings table
	savings.row("savings", fmt.Sprintf("ready now: %d of %s that import over HTTP and render today", s.ReadyPools, count(s.HTTPPools, "pool")))
	savings.row("", fmt.Sprintf("switching the ready pools avoids %s now (their workers) and %s of image writes (each worker times its golden's size)%s",
		count(int(s.ImportsAvoidedNow), "HTTP import"), bytesText(s.BytesAvoidedNow), unknownNote(s.ImportsOfUnknownSize)))
	savings.row("", "every worker that later joins a switched pool is one more HTTP import avoided (its pool's size per import above)")
	savings.raw("")
	savings.write(out)

	var lists table
	writePoolList(&lists, "pools already cloning a golden", r.Cloning, func(p poolPin) []string {
		note := "golden " + p.Golden
		if p.Refusal != "" {
			note += "; its render is refused, see workerimage plan"
		}
		return []string{"  pool", p.HelmRelease, p.Pool, note}
	})
	writePoolList(&lists, "pools that import over HTTP and are refused today (fix them first; workerimage plan shows why)", r.RefusedToday, func(p poolPin) []string {
		return []string{"  pool", p.HelmRelease, p.Pool, "refused: " + p.Refusal}
	})
	writePoolList(&lists, "pools not resolved (their values are refused before a disk source resolves)", r.Unresolved, func(p poolPin) []string {
		return []string{"  pool", p.HelmRelease, "refused: " + p.Refusal}
	})
	lists.write(out)
}

// bytesText spells a quantity of bytes; 0 has no unit to say so.
func bytesText(q string) string {
	if q == "0" {
		return "0 bytes"
	}
	return q
}

func unknownNote(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", plus %s of unknown size", count(int(n), "import"))
}

func writePoolList(tb *table, title string, pools []poolPin, row func(poolPin) []string) {
	if len(pools) == 0 {
		tb.raw(title + ": none")
		return
	}
	tb.raw(title + ":")
	for _, p := range pools {
		tb.row(row(p)...)
	}
}

func writeAdoptPool(tb *table, p adoptPool) {
	workers := count(int(p.Workers), "worker")
	if !p.MachineDeployment {
		workers = "no MachineDeployment yet"
	}
	tb.raw(fmt.Sprintf("  pool %s (%s): %s, autoscaler %s to %s", p.HelmRelease, p.Pool, workers, p.MinReplicas, p.MaxReplicas))
	tb.row("    outcome", outcomeText(p))
	if p.Refusal != "" {
		tb.row("    refusal", p.Refusal)
	}
	// A pool waiting for its golden has no golden to check against yet.
	if d := p.Switched; d != nil && p.Outcome != outcomeNeedsEntry && p.Outcome != outcomeNeedsPerClass {
		for _, c := range d.FallbackChecks {
			if c.Outcome != "refused" && c.Outcome != "skipped" {
				continue
			}
			detail := c.Detail
			if c.Outcome == "refused" && detail == p.Refusal {
				detail = "the refusal above"
			}
			tb.row("    check", fmt.Sprintf("%d %s", c.Refusal, c.Check), c.Outcome, detail)
		}
	}
	change := valuesText(p.ValuesChange)
	if p.Replaces != "" {
		change += "  (replaces its " + p.Replaces + ")"
	}
	if p.OtherImageFactoryURL {
		tb.row("    source", fmt.Sprintf("its golden imports from %s; the pool boots from %s today (%s): the switch changes where its image comes from, decide before switching", p.GoldenImageFactoryURL, p.imageFactoryURL, p.ImageSources.ImageFactoryURL))
	}
	tb.row("    values", change)
	next := p.MachineTemplate.New
	if next == "" {
		next = "(renamed once the switched pool renders)"
	}
	tb.row("    template", p.MachineTemplate.Current+" -> "+next+"  (the switch rolls this pool once)")
	size := p.BytesPerImport
	if size != unknownBytes {
		size += " each (the golden's size)"
	} else {
		size = "bytes per import unknown (no golden to read a size from yet)"
	}
	when := "once it can switch"
	switch p.Outcome {
	case outcomeReady:
		when = "now"
	case outcomeImporting:
		when = "once its golden has imported"
	}
	tb.row("    saves", fmt.Sprintf("%s %s (its workers), then 1 per worker that joins; %s", count(int(p.Workers), "HTTP import"), when, size))
}
