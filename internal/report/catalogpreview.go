// catalog answers: what will the catalog chart do against my cluster with
// these values? The values are the catalog's own (as its Package holds
// them, or a whole Package), the platform's (its kubernetesWorkerImage
// section, forwarded by the platform chart itself), the ones the cluster's
// catalog Package holds, or the catalog's own defaults (catalogshape.go says
// which). The catalog chart decides every outcome, rendered against the
// cluster: the whole chart, as `helm upgrade` would render it, and each
// golden's own check, so a refusal of one entry does not hide what the
// others do.

package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	charts "github.com/cozystack/golden-worker-images"
	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// platformForward is what the platform chart built into this binary does
// with platform values for the catalog, rendered by the chart itself with
// its own checks: the catalog's values it forwards (its
// kubernetesWorkerImage section, only the keys set), whether they enable the
// catalog, and the Image Factory its _cluster gives new pools
// (tenantWorkers.talos.imageFactoryURL). A refusal of the platform chart is
// refusal, a report; err is a problem.
type platformForward struct {
	catalog        map[string]any
	enabled        bool
	clusterFactory string
	refusal        *CatalogReport
}

func forwardPlatform(vals map[string]any) (platformForward, error) {
	chrt, err := render.LoadChartFS(charts.FS, render.PlatformChart)
	if err != nil {
		return platformForward{}, fmt.Errorf("built-in chart %s: %v", render.PlatformChart, err)
	}
	const body = `{{- $out := dict }}
{{- include "platform.kubernetesWorkerImage.values" (dict "root" . "out" $out) }}
{{- $cluster := dict }}
{{- include "platform.clusterValues" (dict "root" . "out" $cluster) }}
kind: ` + catalogValuesKind + `
values: {{ $out | toJson }}
clusterFactory: {{ dig "talos" "imageFactoryURL" "" $cluster | toJson }}
`
	rel := render.Release{Name: "cozystack", Namespace: "cozy-system", Upgrade: true}
	m, err := render.Render(render.WithTemplate(chrt, "templates/0-workerimage-catalog-values.yaml", []byte(body)), render.Options{Release: rel, Values: vals})
	if err != nil {
		rep := &CatalogReport{Result: "refused"}
		if err := explainRefusal(chrt, render.Options{Release: rel, Values: vals}, err, &rep.Refusal, &rep.SchemaRefusal, &rep.SchemaOnly); err != nil {
			return platformForward{}, err
		}
		rep.Refusal = "the platform chart refuses these values: " + rep.Refusal
		rep.Suggestions = SuggestKeys(chrt.Schema, vals)
		return platformForward{refusal: rep}, nil
	}
	var out platformForward
	for _, d := range m.Docs {
		switch {
		case d.Kind() == catalogValuesKind:
			var doc struct {
				Values         map[string]any `json:"values"`
				ClusterFactory string         `json:"clusterFactory"`
			}
			if err := yaml.Unmarshal([]byte(d.Text), &doc); err != nil {
				return platformForward{}, fmt.Errorf("reading the platform's catalog values: %w", err)
			}
			out.catalog, out.clusterFactory = doc.Values, doc.ClusterFactory
		case d.Kind() == "Package" && d.Name() == catalogPackage:
			out.enabled = true
		}
	}
	if out.catalog == nil {
		out.catalog = map[string]any{}
	}
	return out, nil
}

// clusterFactorySource says where a platform's _cluster factory comes from.
const clusterFactorySource = "the platform values give it to new pools in _cluster.talos.imageFactoryURL (their tenantWorkers.talos.imageFactoryURL), before the catalog's published defaults"

// CatalogFromFiles previews the catalog with the values of -f files (vals,
// layered; names as given), read in their shape (ReadCatalogInput: a bad
// shape or a key no shape takes is an error, bad input), merged over the
// catalog values the cluster holds as helm upgrade --reuse-values -f merges
// them (reset: the files alone, as --reset-values), and, when the catalog
// renders them, says what to apply, where the cluster's catalog values are
// written (ReadCatalogHome): the platform's values whole, or the catalog's
// Package whole holding the values previewed; and what the result removes
// of what the cluster holds (catalogRemovals). A whole Package is applied as
// it is: it merges over nothing.
func CatalogFromFiles(t Target, vals map[string]any, names []string, reset bool) (*CatalogReport, error) {
	home, err := ReadCatalogHome(t)
	if err != nil {
		return nil, err
	}
	in, err := ReadCatalogInput(vals, home)
	if err != nil {
		return nil, err
	}
	held, err := homeCatalogValues(home)
	if err != nil {
		return nil, err
	}
	heldWords := heldValuesWords(home)
	files := strings.Join(names, ", ")
	var rep *CatalogReport
	// before and after are what the removals compare: the values the
	// cluster holds and the ones the change leaves, in the shape at says.
	before, after, at := held, map[string]any(nil), ""
	switch in.Shape {
	case ValuesPlatform:
		platform := vals
		if home.Shape == ShapePlatform && !reset {
			platform = reuseValues(vals, home.Platform)
		}
		// Before the platform chart renders them: a key it refuses is
		// refused here as every CA the CLI writes is (exit 2).
		platformFrom := files
		if home.Shape == ShapePlatform && !reset {
			platformFrom += mergedWords(false)
		}
		if err := checkPlatformCAs(platform, platformFrom, time.Now()); err != nil {
			return nil, err
		}
		fwd, err := forwardPlatform(platform)
		if err != nil {
			return nil, err
		}
		if fwd.refusal != nil {
			rep = fwd.refusal
			rep.Cluster, rep.ValuesFrom = t.Desc, "platform values "+files
			rep.Goldens, rep.CloneRole, rep.CAConfigMaps = []CatalogGolden{}, []string{}, []string{}
			break
		}
		catalog := fwd.catalog
		if home.Shape != ShapePlatform && !reset {
			catalog = reuseValues(fwd.catalog, held)
		}
		if err := checkCatalogCAs(catalog, "as platform values "+files+" forward them"+mergedWords(reset), time.Now()); err != nil {
			return nil, err
		}
		if rep, err = CatalogPreview(t, catalog, "platform values "+files+" (their kubernetesWorkerImage, as the platform chart forwards it to the catalog)"); err != nil {
			return nil, err
		}
		rep.Enabled = &fwd.enabled
		if fwd.clusterFactory != "" {
			rep.TenantFactory = &Sourced{Value: fwd.clusterFactory, Source: clusterFactorySource}
		}
		if home.Shape == ShapePlatform {
			rep.ChangeShape, rep.Platform = ShapePlatform, platform
			rep.PlatformFrom = home.From + "; " + mergeWords(reset, "them")
			before, after, at = home.Platform, platform, "kubernetesWorkerImage."
			break
		}
		after = catalog
		rep.ChangeShape, rep.Package = ShapePackage, home.WithCatalogValues(catalog)
		rep.PackageFrom = home.From + "; its values are the catalog's values these platform values forward (no platform release forwards them here), " + mergeWords(reset, "the values it holds")
		var unforwarded []string
		for _, k := range []string{"tenantWorkers", "registries"} {
			if _, ok := vals[k]; ok {
				unforwarded = append(unforwarded, k)
			}
		}
		if len(unforwarded) > 0 {
			rep.ChangeNote = "these platform values also set " + strings.Join(unforwarded, " and ") + ", which reach pools through _cluster only where the platform chart carries them, and no release of such a platform chart is readable here: on a stock Cozystack, give them in the Package's values instead, and the catalog publishes them (catalog -f of that Package previews what it publishes)"
		}
	case ValuesCatalog:
		catalog := in.Values
		if !reset {
			catalog = reuseValues(in.Values, held)
		}
		after = catalog
		if err := checkCatalogCAs(catalog, "from "+files+mergedWords(reset), time.Now()); err != nil {
			return nil, err
		}
		if rep, err = CatalogPreview(t, catalog, "the catalog's own values "+files+" (what its Package holds under spec.components.kubernetes-worker-image.values)"); err != nil {
			return nil, err
		}
		if home.Shape == ShapePlatform {
			rep.ChangeNote = platformOwnsNote(home)
			break
		}
		rep.ChangeShape, rep.Package = ShapePackage, home.WithCatalogValues(catalog)
		rep.PackageFrom = home.From + "; its values are " + mergeWords(reset, "the values it holds")
	case ValuesPackage:
		after = in.Values
		if err := checkCatalogCAs(in.Values, "in the Package "+catalogPackage+" in "+files, time.Now()); err != nil {
			return nil, err
		}
		if rep, err = CatalogPreview(t, in.Values, "the Package "+catalogPackage+" in "+files+" (its spec.components.kubernetes-worker-image.values)"); err != nil {
			return nil, err
		}
		rep.Enabled = in.Enabled
		switch {
		case home.Shape == ShapePlatform:
			rep.ChangeNote = platformOwnsNote(home)
		case len(names) == 1 && names[0] != Stdin:
			rep.ChangeNote = "the Package is the file whole: apply it as it is, kubectl apply -f " + names[0]
		default:
			rep.ChangeShape, rep.Package = ShapePackage, in.Package
			rep.PackageFrom = "the -f files, layered as Helm layers -f files"
		}
	}
	rep.ValuesShape, rep.ValuesShapeWhy = in.Shape, in.Why
	if in.Shape != ValuesPackage {
		rep.MergedOver = mergeWords(reset, heldWords)
	} else {
		rep.MergedOver = "none: a whole Package is applied as it is (kubectl apply), its values replacing " + heldWords
	}
	if rep.Refused() {
		// Nothing to apply: the upgrade would fail.
		rep.ChangeShape, rep.Platform, rep.PlatformFrom, rep.Package, rep.PackageFrom = "", nil, "", nil, ""
		if in.Shape == ValuesPackage {
			rep.ChangeNote = ""
		}
	} else {
		if at != "" {
			heldWords = "the platform release's values (" + home.From + ")"
		}
		if rep.Removes, err = catalogRemovals(before, after, at); err != nil {
			return nil, err
		}
		rep.RemovesFrom = heldWords
	}
	rep.noteFactories(in.Shape)
	return rep, nil
}

// homeCatalogValues are the catalog's values where the cluster's are
// written (home): the Package's, or what the platform's values forward.
func homeCatalogValues(home CatalogHome) (map[string]any, error) {
	if home.Shape != ShapePlatform {
		return jsonCopy(home.CatalogValues()), nil
	}
	fwd, err := forwardPlatform(home.Platform)
	if err != nil {
		return nil, err
	}
	if fwd.refusal != nil {
		return nil, fmt.Errorf("the platform chart refuses the values of its release %s/%s: %s", platformNamespace, platformRelease, fwd.refusal.Refusal)
	}
	return fwd.catalog, nil
}

// heldValuesWords name the catalog values the cluster holds (home).
func heldValuesWords(home CatalogHome) string {
	switch {
	case home.Shape == ShapePlatform:
		return "the catalog's values the platform's release forwards (its kubernetesWorkerImage)"
	case home.PackageFound:
		return "the values of the cluster's Package " + catalogPackage + " (spec.components." + catalogComponent + ".values)"
	}
	return "the values of the Package a stock Cozystack installs the catalog with (none: the cluster holds no Package " + catalogPackage + ")"
}

// platformOwnsNote says that a platform release writes the cluster's
// catalog Package, so the catalog's values go into the platform's.
func platformOwnsNote(home CatalogHome) string {
	return "the cluster's catalog values are the platform's (" + home.From + "): the platform renders the Package " + catalogPackage + " from its kubernetesWorkerImage, and its next upgrade would overwrite one applied by hand; give these values under kubernetesWorkerImage in the platform's values (it forwards imageFactoryURL, imageFactoryCA, storageClass, storage, images and monitoring) and preview those"
}

// CatalogFromCluster previews the catalog with the values the cluster's
// Package holds (CatalogValuesFromCluster): what is deployed, against the
// cluster as it is.
func CatalogFromCluster(t Target) (*CatalogReport, error) {
	vals, from, found, err := catalogValuesFromCluster(t)
	if err != nil {
		return nil, err
	}
	rep, err := CatalogPreview(t, vals, from)
	if err != nil {
		return nil, err
	}
	rep.ValuesShape = ValuesCatalog
	if found {
		rep.ValuesShape = ValuesPackage
	}
	home, err := ReadCatalogHome(t)
	if err != nil {
		return nil, err
	}
	keys := ValuesCatalog
	if home.Shape == ShapePlatform {
		keys = ValuesPlatform
		fwd, err := forwardPlatform(home.Platform)
		if err != nil {
			return nil, err
		}
		if fwd.clusterFactory != "" {
			rep.TenantFactory = &Sourced{Value: fwd.clusterFactory, Source: "the platform's release gives it to new pools in _cluster.talos.imageFactoryURL (its tenantWorkers.talos.imageFactoryURL), before the catalog's published defaults"}
		}
	}
	rep.noteFactories(keys)
	return rep, nil
}

// CatalogValuesFromCluster are the values the cluster's catalog Package
// holds (the operator's, or what the platform forwarded at its last
// upgrade); with no Package, none: the catalog's defaults.
func CatalogValuesFromCluster(t Target) (map[string]any, string, error) {
	vals, from, _, err := catalogValuesFromCluster(t)
	return vals, from, err
}

// catalogValuesFromCluster is CatalogValuesFromCluster, and whether the
// cluster holds the Package.
func catalogValuesFromCluster(t Target) (map[string]any, string, bool, error) {
	pkg, err := fleet.Get(context.Background(), t.Provider, packageAPI, "Package", "", catalogPackage)
	if err != nil {
		return nil, "", false, err
	}
	if pkg == nil {
		return map[string]any{}, "the catalog's built-in values (the cluster has no Package " + catalogPackage + ")", false, nil
	}
	raw, _, _ := unstructured.NestedFieldNoCopy(pkg.Object, "spec", "components", catalogComponent, "values")
	vals, _ := raw.(map[string]any)
	if vals == nil {
		vals = map[string]any{}
	}
	return vals, "the cluster's Package " + catalogPackage + " (spec.components.kubernetes-worker-image.values)", true, nil
}

const (
	catalogValuesKind  = "WorkerImageCatalogValues"
	catalogGoldensKind = "WorkerImageCatalogGoldens"
	catalogCheckKind   = "WorkerImageCatalogCheck"
	catalogNamesFile   = "workerimage-golden-name.json"
	catalogRelease     = "kubernetes-worker-image"
)

// CatalogPreview renders the catalog chart built into this binary with
// values against t and says what it does to each golden.
func CatalogPreview(t Target, values map[string]any, valuesFrom string) (*CatalogReport, error) {
	chrt, err := fleet.CatalogChart()
	if err != nil {
		return nil, fmt.Errorf("built-in chart %s: %v", render.CatalogChart, err)
	}
	rep := &CatalogReport{Cluster: t.Desc, ValuesFrom: valuesFrom, Values: values, Goldens: []CatalogGolden{}, CloneRole: []string{}, CAConfigMaps: []string{}}
	opts := t.Options(render.Release{Name: catalogRelease, Namespace: golden.Namespace, Upgrade: true}, values)

	t.Progressf("rendering the catalog chart")
	m, err := render.Render(chrt, opts)
	if err != nil {
		rep.Result = "refused"
		if err := explainRefusal(chrt, opts, err, &rep.Refusal, &rep.SchemaRefusal, &rep.SchemaOnly); err != nil {
			return nil, err
		}
		rep.Suggestions = SuggestKeys(chrt.Schema, values)
	} else {
		rep.Result = "renders"
		for _, d := range m.Docs {
			switch d.Kind() {
			case "Role":
				if d.Name() != "kubernetes-worker-image-clone" {
					continue
				}
				for _, rule := range asList(render.Get(d.Object, "rules")) {
					for _, n := range asList(render.Get(rule, "resourceNames")) {
						if s, ok := n.(string); ok {
							rep.CloneRole = append(rep.CloneRole, s)
						}
					}
				}
			case "ConfigMap":
				if d.Name() != TenantDefaultsConfigMap {
					rep.CAConfigMaps = append(rep.CAConfigMaps, d.Name())
				} else if text, _ := render.Get(d.Object, "data[values.json]").(string); text != "{}" {
					rep.TenantDefaults = text
				}
			}
		}
		if rep.Publishes, err = publishedDefaults(t, rep.TenantDefaults); err != nil {
			return nil, err
		}
		if u, _ := render.Get(rep.Publishes.Publishes, "talos.imageFactoryURL").(string); u != "" {
			rep.TenantFactory = &Sourced{Value: u, Source: "the catalog publishes it for new pools: its tenantWorkers.talos.imageFactoryURL, in ConfigMap " + golden.Namespace + "/" + TenantDefaultsConfigMap}
		}
	}

	// The values' goldens as the chart resolves them; values it refuses
	// before any golden resolves leave only the live goldens to show.
	entries, err := catalogGoldens(chrt, opts)
	if err != nil {
		return nil, err
	}
	var live map[string]fleet.Golden
	if t.Provider != nil {
		t.Progressf("reading the goldens in %s", golden.Namespace)
		g, err := fleet.ReadGoldens(context.Background(), t.Provider)
		if err != nil {
			return nil, err
		}
		live = g.Stored
	}
	inRole := map[string]bool{}
	for _, n := range rep.CloneRole {
		inRole[n] = true
	}
	var retiring []string
	listed := map[string]bool{}
	for i, e := range entries {
		t.Progressf("checking golden %d of %d: %s", i+1, len(entries), e.Name)
		listed[e.Name] = true
		g := CatalogGolden{Name: e.Name, Entry: e.Label, SourceURL: e.URL, Storage: e.Storage, StorageClass: e.StorageClass, InCloneRole: inRole[e.Name], factory: e.Factory, factoryFrom: e.From.Factory, createsFrom: e.Factory}
		if s, ok := live[e.Name]; ok {
			g.Live = liveState(s)
		}
		refusal, stored, storedURL, err := checkUnchanged(chrt, opts, e.Name)
		if err != nil {
			return nil, err
		}
		if stored && storedURL != "" && storedURL != g.SourceURL {
			// A URL nobody set: the golden keeps the source it was imported
			// from, as the chart renders it.
			g.SourceURL = storedURL
			if f, ok := golden.Parse(e.Name); ok {
				g.factory = strings.TrimSuffix(storedURL, golden.ImagePath(f.SchematicID, f.Version))
			}
		}
		switch {
		case refusal != "":
			g.Outcome, g.Detail = GoldenRefusesEdit, refusal
		case e.Retire:
			g.Outcome = GoldenRetires
			retiring = append(retiring, e.Name)
		case stored:
			g.Outcome, g.Detail = GoldenKeeps, "exists as the entry says; the upgrade leaves it untouched"
		default:
			g.Outcome, g.Detail = GoldenCreates, "no golden of that name yet: CDI imports it once the release is applied"
			g.CAConfigMap, g.Checksum = e.CAConfigMap, e.Checksum
		}
		rep.Goldens = append(rep.Goldens, g)
	}
	for _, name := range SortedKeys(live) {
		s := live[name]
		if listed[name] || s.FoundAs != "DataVolume" {
			continue
		}
		g := CatalogGolden{Name: name, SourceURL: s.URL, Storage: s.Storage, StorageClass: s.Class, Live: liveState(s), InCloneRole: inRole[name]}
		if s.Retiring {
			g.Outcome = GoldenDeletes
			retiring = append(retiring, name)
		} else {
			g.Outcome, g.Detail = GoldenDropped, "in cozy-public, in no entry of these values: Helm keeps it (helm.sh/resource-policy: keep) but the catalog no longer manages it"
			if g.InCloneRole {
				g.Detail += "; it stays in the clone Role while it lives, so pools still on it keep cloning new workers (an entry with retire: true takes it out, once nothing uses it)"
			}
		}
		rep.Goldens = append(rep.Goldens, g)
	}

	// Retirement: the catalog's own rule of who uses a golden, and of which
	// flavors new pools take by default (in use with no cluster read too).
	if len(retiring) > 0 {
		if t.Provider != nil {
			t.Progressf("asking the catalog chart who uses %s", Count(len(retiring), "retiring golden"))
		}
		users, err := fleet.GoldenUsers(chrt, t.Provider, retiring, values["tenantWorkers"])
		if err != nil {
			if _, prob := RenderFailure(err); prob != nil {
				return nil, prob
			}
			return nil, fmt.Errorf("asking the catalog chart who uses the goldens: %v", err)
		}
		for i := range rep.Goldens {
			g := &rep.Goldens[i]
			if g.Outcome != GoldenRetires && g.Outcome != GoldenDeletes {
				continue
			}
			d, isDefault := users.Defaults[strings.SplitN(g.Name, "--", 2)[0]]
			defaultNote := ""
			if isDefault {
				defaultNote = "new pools' default (" + d.From + "): in use before any pool runs it; publish another default first (tenantWorkers.talos.schematicID and version, with its entry)"
			}
			if u := users.Users[g.Name]; t.Provider != nil && len(u) > 0 {
				g.Outcome = GoldenRetireRefused
				g.Detail = fmt.Sprintf("still used by %s: %s; move those pools off it first (workerimage pins %s lists them)", Count(len(u), "object"), FirstFive(u), g.Name)
				if isDefault {
					g.Detail += "; and " + defaultNote
				}
			} else if isDefault {
				g.Outcome, g.Detail = GoldenRetireRefused, defaultNote
			} else if t.Provider == nil {
				continue
			} else if g.Outcome == GoldenRetires {
				g.Detail = "nothing uses it: rendered without helm.sh/resource-policy: keep, marked retiring and out of the clone Role; a later upgrade without the entry lets Helm delete it"
			} else {
				g.Detail = "marked retiring, its entry dropped and nothing uses it: Helm deletes its DataVolume at this upgrade (CDI its PersistentVolumeClaim)"
			}
		}
	}
	for i := range rep.Goldens {
		g := &rep.Goldens[i]
		if t.Provider == nil && (g.Outcome == GoldenRetires) {
			g.Detail = "retire: true; with no cluster read, who uses it was not checked"
		}
	}
	sort.SliceStable(rep.Goldens, func(i, j int) bool { return rep.Goldens[i].Name < rep.Goldens[j].Name })
	return rep, nil
}

// liveState says how cozy-public holds a golden.
func liveState(s fleet.Golden) string {
	out := s.FoundAs
	if s.Phase != "" {
		out += ", phase " + s.Phase
	}
	if s.Retiring {
		out += ", marked retiring"
	}
	return out
}

// catalogEntry is one golden as kubernetes-worker-image.entries resolves it.
type catalogEntry struct {
	Name    string `json:"name"`
	Label   string `json:"label"`
	URL     string `json:"url"`
	Factory string `json:"imageFactoryURL"`
	From    struct {
		Factory string `json:"imageFactoryURL"`
	} `json:"from"`
	Storage      string `json:"storage"`
	StorageClass string `json:"storageClass"`
	Retire       bool   `json:"retire"`
	CAConfigMap  string `json:"caConfigMap"`
	Checksum     string `json:"checksum"`
}

// catalogGoldens asks the chart for the goldens its values resolve to
// (._kubernetesWorkerImageGoldens, each entry's own then its per-class
// ones); none when it refuses the values before they resolve.
func catalogGoldens(chrt *chart.Chart, opts render.Options) ([]catalogEntry, error) {
	const body = `{{- include "kubernetes-worker-image.entries" . }}
kind: ` + catalogGoldensKind + `
goldens: {{ $._kubernetesWorkerImageGoldens | toJson }}
`
	opts.Release.SkipSchemaValidation = true
	m, err := render.Render(render.WithTemplate(render.HelpersOnly(chrt), "templates/0-workerimage-goldens.yaml", []byte(body)), opts)
	if err != nil {
		if _, prob := RenderFailure(err); prob != nil {
			return nil, prob
		}
		return nil, nil
	}
	for _, d := range m.Docs {
		if d.Kind() != catalogGoldensKind {
			continue
		}
		var doc struct {
			Goldens []catalogEntry `json:"goldens"`
		}
		if err := yaml.Unmarshal([]byte(d.Text), &doc); err != nil {
			return nil, fmt.Errorf("reading the catalog's goldens: %w", err)
		}
		return doc.Goldens, nil
	}
	return nil, fmt.Errorf("the catalog render has no %s document", catalogGoldensKind)
}

// checkUnchanged runs the chart's own edit check
// (kubernetes-worker-image.assertUnchanged) on the one golden name: its
// refusal, word for word, or whether the golden exists and the source URL
// it renders with (an existing golden whose URL nobody set keeps its own).
func checkUnchanged(chrt *chart.Chart, opts render.Options, name string) (refusal string, exists bool, url string, err error) {
	const body = `{{- include "kubernetes-worker-image.entries" . }}
{{- $want := fromJson (.Files.Get "` + catalogNamesFile + `") }}
{{- range $._kubernetesWorkerImageGoldens }}
{{- if eq .name $want.name }}
{{- include "kubernetes-worker-image.assertUnchanged" . }}
kind: ` + catalogCheckKind + `
exists: {{ not (empty .stored) }}
url: {{ .url | toJson }}
{{- end }}
{{- end }}
`
	want, _ := json.Marshal(map[string]string{"name": name})
	c := render.WithTemplate(render.HelpersOnly(chrt), "templates/0-workerimage-check.yaml", []byte(body))
	c.Files = append(append([]*chart.File{}, c.Files...), &chart.File{Name: catalogNamesFile, Data: want})
	opts.Release.SkipSchemaValidation = true
	m, err := render.Render(c, opts)
	if err != nil {
		refusal, prob := RenderFailure(err)
		return refusal, false, "", prob
	}
	for _, d := range m.Docs {
		if d.Kind() == catalogCheckKind {
			exists, _ := d.Object["exists"].(bool)
			url, _ := d.Object["url"].(string)
			return "", exists, url, nil
		}
	}
	return "", false, "", nil
}

// explainRefusal fills in a refused render as plan does: the chart's own
// words first (rendered again with the schema off, only to explain, when the
// schema refused), the schema's message after.
func explainRefusal(chrt *chart.Chart, opts render.Options, err error, refusal, schemaRefusal *string, schemaOnly *bool) error {
	msg, prob := RenderFailure(err)
	if prob != nil {
		return prob
	}
	*refusal = msg
	var schema *render.SchemaError
	if !errors.As(err, &schema) {
		return nil
	}
	*schemaRefusal = strings.ReplaceAll(msg, `\\`, `\`)
	*refusal = *schemaRefusal
	opts.Release.SkipSchemaValidation = true
	if _, err := render.Render(chrt, opts); err != nil {
		chartSays, prob := RenderFailure(err)
		if prob != nil {
			return prob
		}
		*refusal = chartSays
	} else {
		*schemaOnly = true
	}
	return nil
}
