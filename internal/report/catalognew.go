// Where a catalog entry adopt or rollout adds imports from, as the catalog
// chart resolves it with the cluster's catalog values, and the entries that
// import from another Image Factory than the one new pools are given.

package report

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/render"
)

// probeEntry is an images[] entry no golden has: what the chart gives it
// is what it gives any new entry that sets nothing of its own.
var probeEntry = map[string]any{"schematicID": "workerimage-new-entry", "version": "v0.0.0"}

// NewEntry is what the catalog gives a new entry: the factory it imports
// from (and where the chart took it), and its storage.
type NewEntry struct {
	URL     Sourced
	storage string
}

// CatalogChangeBase is what a catalog change adopt or rollout prints starts
// from: where the cluster's catalog values are written (ReadCatalogHome),
// and what the catalog gives a new entry with them (newEntryOf).
func CatalogChangeBase(t Target) (CatalogHome, NewEntry, error) {
	home, err := ReadCatalogHome(t)
	if err != nil {
		return CatalogHome{}, NewEntry{}, err
	}
	e, err := newEntryOf(t, home)
	return home, e, err
}

// newEntryOf asks the catalog chart built into this binary what a new entry
// gets with the cluster's catalog values (home): its factory URL and
// storage, as it resolves them (so whatever rule the chart applies, a
// default or a fallback, is the one reported). Where the chart refuses those
// values, the values' own imageFactoryURL, else the chart's default, and
// the report says the chart refused.
func newEntryOf(t Target, home CatalogHome) (NewEntry, error) {
	vals, err := homeCatalogValues(home)
	if err != nil {
		return NewEntry{}, err
	}
	chrt, err := fleet.CatalogChart()
	if err != nil {
		return NewEntry{}, fmt.Errorf("built-in chart %s: %v", render.CatalogChart, err)
	}
	set, _ := vals["imageFactoryURL"].(string)
	probe := jsonCopy(vals)
	probe["images"] = []any{probeEntry}
	entries, err := catalogGoldens(chrt, t.Options(render.Release{Name: catalogRelease, Namespace: golden.Namespace, Upgrade: true}, probe))
	if err != nil {
		return NewEntry{}, err
	}
	if len(entries) == 0 {
		url, _ := chrt.Values["imageFactoryURL"].(string)
		storage, _ := chrt.Values["storage"].(string)
		if set != "" {
			url = set
		}
		if s, _ := vals["storage"].(string); s != "" {
			storage = s
		}
		return NewEntry{URL: Sourced{url, "the cluster's catalog values' imageFactoryURL, else the catalog chart's default: the chart refuses those values (workerimage catalog shows why)"}, storage: storage}, nil
	}
	e := entries[0]
	var source string
	switch {
	case e.From.Factory == "imageFactoryURL" && set != "" && home.Shape == ShapePlatform:
		source = "the platform's kubernetesWorkerImage.imageFactoryURL, which it forwards into the Package " + catalogPackage
	case e.From.Factory == "imageFactoryURL" && set != "":
		source = "the catalog's imageFactoryURL, " + home.PackageKey("imageFactoryURL")
	case e.From.Factory == publishedFactoryKey:
		source = "the factory the catalog publishes for new pools (its tenantWorkers.talos.imageFactoryURL): the cluster's catalog values set no imageFactoryURL of their own"
	default:
		source = "the catalog chart's built-in factory: the cluster's catalog values set neither imageFactoryURL nor tenantWorkers.talos.imageFactoryURL"
	}
	return NewEntry{URL: Sourced{e.Factory, source}, storage: e.Storage}, nil
}

// tenantFactoryNow is the Image Factory new pools are given now: where the
// platform's values hold the catalog's, the one their _cluster gives;
// else the one the catalog publishes (its ConfigMap in cozy-public); nil
// for none.
func tenantFactoryNow(t Target, home CatalogHome) (*Sourced, error) {
	if home.Shape == ShapePlatform {
		fwd, err := forwardPlatform(home.Platform)
		if err != nil {
			return nil, err
		}
		if fwd.clusterFactory != "" {
			return &Sourced{fwd.clusterFactory, "the platform's release gives it to new pools in _cluster.talos.imageFactoryURL (its tenantWorkers.talos.imageFactoryURL), before the catalog's published defaults"}, nil
		}
	}
	if t.Provider == nil {
		return nil, nil
	}
	cm, err := fleet.Get(context.Background(), t.Provider, "v1", "ConfigMap", golden.Namespace, TenantDefaultsConfigMap)
	if err != nil || cm == nil {
		return nil, err
	}
	text := fleet.Text(cm.Object, "data", "values.json")
	var published map[string]any
	if len(text) > maxPublished || json.Unmarshal([]byte(text), &published) != nil {
		return nil, nil
	}
	u, _ := render.Get(published, "talos.imageFactoryURL").(string)
	if u == "" {
		return nil, nil
	}
	return &Sourced{u, "the catalog publishes it for new pools: talos.imageFactoryURL of ConfigMap " + golden.Namespace + "/" + TenantDefaultsConfigMap}, nil
}

// WithFactoryNotes says of each entry of the catalog change whose goldens
// import from another Image Factory than the one new pools are given: a new
// entry or added class (goldens the change creates), the key to set; a kept
// one, that its goldens stay as they were imported.
func WithFactoryNotes(t Target, home CatalogHome, c *AdoptCatalog) error {
	if !c.Changed {
		return nil
	}
	tf, err := tenantFactoryNow(t, home)
	if err != nil || tf == nil {
		return err
	}
	c.TenantFactory = tf
	want := strings.TrimRight(tf.Value, "/")
	for i := range c.Images {
		e := &c.Images[i]
		if e.ImportsFrom == "" || e.Change == ChangeListed || strings.TrimRight(e.ImportsFrom, "/") == want {
			continue
		}
		given := fmt.Sprintf("not from %s, the Image Factory new pools are given", tf.Value)
		switch e.Change {
		case ChangeNew:
			e.FactoryNote = fmt.Sprintf("its goldens import from %s (%s), %s: for them to import from there, set %s to %s before applying", e.ImportsFrom, c.URL.Source, given, home.PackageKey("imageFactoryURL"), tf.Value)
		case ChangeClassesAdded:
			e.FactoryNote = fmt.Sprintf("its goldens import from %s, as its golden %s was, %s; the goldens added for %s import from %s too (one flavor has one source)", e.ImportsFrom, e.Plain, given, strings.Join(e.AddedClasses, ", "), e.ImportsFrom)
		default:
			e.FactoryNote = fmt.Sprintf("its goldens were imported from %s, %s; a golden's source never changes, and pools clone it as it is", e.ImportsFrom, given)
		}
	}
	return nil
}
