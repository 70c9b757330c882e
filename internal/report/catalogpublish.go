// What catalog previews besides the goldens: the defaults the catalog
// publishes for new pools, beside what is published now, and the goldens
// that import from another Image Factory than the one new pools are given.

package report

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
)

// publishedFieldOrder is the order the published defaults are listed in:
// the ones a closed network sets first, then any other the ConfigMap holds.
var publishedFieldOrder = []string{"talos.imageFactoryURL", "talos.imageFactoryCA", "talos.installerRepository", "talos.registryMirrors", "osImage"}

// maxPublished bounds what is read of the cluster's ConfigMap: a ConfigMap
// holds at most 1 MiB.
const maxPublished = 1 << 20

// publishedDefaults is what the rendered ConfigMap publishes (text, its
// values.json; "" for {}), beside the cluster's ConfigMap of that name.
func publishedDefaults(t Target, text string) (*PublishedDefaults, error) {
	p := &PublishedDefaults{Publishes: map[string]any{}, Fields: []PublishedField{}}
	if text != "" {
		if err := json.Unmarshal([]byte(text), &p.Publishes); err != nil {
			return nil, fmt.Errorf("reading the tenant defaults the catalog renders: %v", err)
		}
	}
	where := "ConfigMap " + golden.Namespace + "/" + TenantDefaultsConfigMap
	switch {
	case t.Provider == nil:
		p.NowFrom = "no cluster read"
	default:
		cm, err := fleet.Get(context.Background(), t.Provider, "v1", "ConfigMap", golden.Namespace, TenantDefaultsConfigMap)
		if err != nil {
			return nil, err
		}
		now := ""
		if cm != nil {
			now = fleet.Text(cm.Object, "data", "values.json")
		}
		switch {
		case cm == nil:
			p.NowFrom = "the cluster has no " + where + ": nothing is published now"
			p.Now = map[string]any{}
		case len(now) > maxPublished:
			p.NowFrom = fmt.Sprintf("the cluster's %s holds %d bytes in values.json, more than a ConfigMap may: not read", where, len(now))
		default:
			p.Now = map[string]any{}
			if err := json.Unmarshal([]byte(now), &p.Now); err != nil {
				p.Now = nil
				p.NowFrom = fmt.Sprintf("the cluster's %s holds values.json that is not JSON (%v): not read", where, err)
			} else {
				p.NowFrom = "the cluster's " + where
			}
		}
	}
	fields := append([]string{}, publishedFieldOrder...)
	listed := set(fields)
	for _, m := range []map[string]any{p.Publishes, p.Now} {
		for _, f := range publishedPaths(m) {
			if !listed[f] {
				listed[f] = true
				fields = append(fields, f)
			}
		}
	}
	for _, f := range fields {
		pub, now := publishedAt(p.Publishes, f), publishedAt(p.Now, f)
		p.Fields = append(p.Fields, PublishedField{Field: f, Publishes: pub, Now: now, Changes: p.Now != nil && !reflect.DeepEqual(pub, now)})
	}
	return p, nil
}

// publishedPaths are the fields m holds: talos.* and kubernetesWorkerImage.*
// one level in (the pool chart reads each on its own), other keys whole.
func publishedPaths(m map[string]any) []string {
	var out []string
	for _, k := range SortedKeys(m) {
		sub, ok := m[k].(map[string]any)
		if !ok || (k != "talos" && k != "kubernetesWorkerImage") {
			out = append(out, k)
			continue
		}
		for _, s := range SortedKeys(sub) {
			out = append(out, k+"."+s)
		}
	}
	return out
}

// publishedAt is the value at a field's path; nil when not set.
func publishedAt(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// publishedFactoryKey is where the catalog chart says a golden's factory came
// from when neither the entry nor the catalog sets one: the factory it
// publishes for new pools.
const publishedFactoryKey = "tenantWorkers.talos.imageFactoryURL"

// builtinFactoryFrom begins what the catalog chart says of a golden's
// factory when nothing sets one: its built-in factory.
const builtinFactoryFrom = "the built-in default"

// factoryKeys name where the values of shape set the Image Factory the
// catalog imports from: its chart-wide imageFactoryURL, and the key a golden
// took its factory from (from, as the chart names it: imageFactoryURL,
// images[N].imageFactoryURL, ...).
func factoryKeys(shape, from string) (chartWide, own string) {
	switch shape {
	case ValuesPlatform:
		return "kubernetesWorkerImage.imageFactoryURL in the platform values", "kubernetesWorkerImage." + from
	case ValuesPackage:
		return "spec.components." + catalogComponent + ".values.imageFactoryURL of the Package", "spec.components." + catalogComponent + ".values." + from
	}
	return "the catalog's imageFactoryURL (spec.components." + catalogComponent + ".values.imageFactoryURL of Package " + catalogPackage + ")", from
}

// noteFactories says, of each golden the values create or keep, when it
// imports from another Image Factory than the one new pools are given
// (TenantFactory), naming the key of the values (read in shape) that sets
// it. The factory is the one the chart resolved for the golden's entry, so
// the note follows whatever rule the chart applies.
func (r *CatalogReport) noteFactories(shape string) {
	if r.TenantFactory == nil {
		return
	}
	want := strings.TrimRight(r.TenantFactory.Value, "/")
	for i := range r.Goldens {
		g := &r.Goldens[i]
		if g.factory == "" || strings.TrimRight(g.factory, "/") == want {
			continue
		}
		chartWide, own := factoryKeys(shape, g.factoryFrom)
		given := fmt.Sprintf("not from %s, the Image Factory new pools are given", r.TenantFactory.Value)
		switch g.Outcome {
		case GoldenCreates:
			switch {
			case g.factoryFrom == "imageFactoryURL":
				g.FactoryNote = fmt.Sprintf("imports from %s (the catalog's imageFactoryURL), %s; for it to import from there, set %s to %s, or remove it so the goldens import from the factory the catalog publishes", g.factory, given, chartWide, r.TenantFactory.Value)
			case strings.HasPrefix(g.factoryFrom, "images["):
				g.FactoryNote = fmt.Sprintf("imports from %s (its entry's own %s), %s; for it to import from there, set %s to %s, or remove it so %s applies", g.factory, own, given, own, r.TenantFactory.Value, chartWide)
			case g.factoryFrom == publishedFactoryKey:
				g.FactoryNote = fmt.Sprintf("imports from %s (the tenantWorkers.talos.imageFactoryURL these values publish), %s; for it to import from there, set %s to %s", g.factory, given, chartWide, r.TenantFactory.Value)
			case strings.HasPrefix(g.factoryFrom, builtinFactoryFrom):
				g.FactoryNote = fmt.Sprintf("imports from %s (the catalog chart's built-in factory: the values set neither imageFactoryURL nor tenantWorkers.talos.imageFactoryURL), %s; for it to import from there, set %s to %s", g.factory, given, chartWide, r.TenantFactory.Value)
			default:
				g.FactoryNote = fmt.Sprintf("imports from %s (%s), %s; for it to import from there, set %s to %s", g.factory, own, given, chartWide, r.TenantFactory.Value)
			}
		case GoldenKeeps:
			g.FactoryNote = fmt.Sprintf("imported from %s, %s; a golden's source never changes (its DataVolume cannot be edited) and pools clone it as it is", g.factory, given)
			switch {
			case g.factoryFrom == publishedFactoryKey:
				g.FactoryNote += ", while the goldens the catalog creates import from " + g.createsFrom + ", the factory it publishes for new pools"
			case strings.HasPrefix(g.factoryFrom, "images["):
				g.FactoryNote += " (its entry names it in " + own + ")"
			default:
				g.FactoryNote += ", while the goldens the catalog creates import from " + chartWide
			}
		}
	}
}
