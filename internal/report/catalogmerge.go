// A catalog change is a change to what is there: catalog -f merges the
// files over the catalog values the cluster holds, as `helm upgrade
// --reuse-values -f FILE` merges them (--reset-values: the files alone, as
// Helm's flag), and says, each on its own line, every default the catalog
// publishes for new pools and every images[] entry the result removes, so a
// partial file never unpublishes a mirror unseen.

package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Kinds of a CatalogRemoval.
const (
	RemovesDefault = "published-default" // a default the catalog publishes for new pools
	RemovesImage   = "image"             // an images[] entry
)

// CatalogRemoval is one thing the previewed values remove from the values
// the cluster holds.
type CatalogRemoval struct {
	// Kind is RemovesDefault or RemovesImage.
	Kind string `json:"kind"`
	// Key is where the values held it: tenantWorkers.talos.installerRepository,
	// registries.mirrors.docker.io, registries.config.HOST.tls.ca,
	// monitoring.enabled, or images[] {schematicID, version} (under
	// kubernetesWorkerImage. in platform values).
	Key string `json:"key"`
	// Was is what it held, as the text shows it (a CA by whether there is
	// one, never its PEM).
	Was string `json:"was"`
}

// reuseValues are file merged over held as `helm upgrade --reuse-values -f`
// merges a release's values with Helm's own chartutil.CoalesceTables: file
// wins, maps merge key by key, a list replaces whole, a null deletes the key
// held. Neither map is written to.
func reuseValues(file, held map[string]any) map[string]any {
	// CoalesceTables writes into both maps: merge copies.
	return chartutil.CoalesceTables(CopyMap(file), CopyMap(held))
}

// mergeWords say how the -f files met the values held, for where the
// preview says its values came from.
func mergeWords(reset bool, held string) string {
	if reset {
		return "the -f files alone (--reset-values, as Helm's flag): nothing of " + held + " is kept unless the files write it"
	}
	return "the -f files merged over " + held + " as helm upgrade --reuse-values -f merges them (a map key by key, a list whole, null deletes a key; --reset-values previews the files alone)"
}

// catalogRemovals are the published defaults and images[] entries that now
// holds and then does not: values of the catalog's shape (at "") or platform
// values (at "kubernetesWorkerImage.", where images and monitoring are; the
// platform's tenantWorkers and registries stay at the top). A values map
// without images takes the catalog chart's default list (the platform
// forwards only the keys set).
func catalogRemovals(now, then map[string]any, at string) ([]CatalogRemoval, error) {
	out := []CatalogRemoval{}
	for _, k := range []string{"installerRepository", "imageFactoryURL", "imageFactoryCA"} {
		key := "tenantWorkers.talos." + k
		was, _ := render.Get(now, key).(string)
		if is, _ := render.Get(then, key).(string); was != "" && is == "" {
			if k == "imageFactoryCA" {
				was = "set (PEM certificates)"
			}
			out = append(out, CatalogRemoval{Kind: RemovesDefault, Key: key, Was: was})
		}
	}
	for _, k := range SortedKeys(asMap(render.Get(now, "tenantWorkers.talos"))) {
		// Any other default the catalog publishes under talos (a version, a
		// schematic) is a default too.
		if k == "installerRepository" || k == "imageFactoryURL" || k == "imageFactoryCA" {
			continue
		}
		key := "tenantWorkers.talos." + k
		if was := render.Get(now, key); !emptyValue(was) && emptyValue(render.Get(then, key)) {
			out = append(out, CatalogRemoval{Kind: RemovesDefault, Key: key, Was: removedText(was)})
		}
	}
	if was := render.Get(now, "tenantWorkers.osImage"); !emptyValue(was) && emptyValue(render.Get(then, "tenantWorkers.osImage")) {
		out = append(out, CatalogRemoval{Kind: RemovesDefault, Key: "tenantWorkers.osImage", Was: removedText(was)})
	}
	nowMirrors, thenMirrors := asMap(render.Get(now, "registries.mirrors")), asMap(render.Get(then, "registries.mirrors"))
	for _, host := range SortedKeys(nowMirrors) {
		if emptyValue(thenMirrors[host]) && !emptyValue(nowMirrors[host]) {
			var endpoints []string
			for _, e := range asList(asMap(nowMirrors[host])["endpoints"]) {
				if s, ok := e.(string); ok {
					endpoints = append(endpoints, s)
				}
			}
			was := strings.Join(endpoints, ", ")
			if was == "" {
				was = removedText(nowMirrors[host])
			}
			out = append(out, CatalogRemoval{Kind: RemovesDefault, Key: "registries.mirrors." + host, Was: was})
		}
	}
	nowConfig, thenConfig := asMap(render.Get(now, "registries.config")), asMap(render.Get(then, "registries.config"))
	for _, host := range SortedKeys(nowConfig) {
		was, _ := render.Get(asMap(nowConfig[host]), "tls.ca").(string)
		is, _ := render.Get(asMap(thenConfig[host]), "tls.ca").(string)
		if was != "" && is == "" {
			out = append(out, CatalogRemoval{Kind: RemovesDefault, Key: "registries.config." + host + ".tls.ca", Was: "set (PEM certificates)"})
		}
	}
	switches := []string{"monitoring.enabled"}
	if at != "" {
		// The platform's own switch of the metrics pools export.
		switches = append(switches, "metrics.enabled")
	}
	for _, s := range switches {
		if on(render.Get(now, at+s)) && !on(render.Get(then, at+s)) {
			out = append(out, CatalogRemoval{Kind: RemovesDefault, Key: at + s, Was: "true"})
		}
	}
	nowImages, err := imagesOf(now, at)
	if err != nil {
		return nil, err
	}
	thenImages, err := imagesOf(then, at)
	if err != nil {
		return nil, err
	}
	kept := map[string]bool{}
	for _, e := range thenImages {
		kept[imageKey(e)] = true
	}
	for _, e := range nowImages {
		if k := imageKey(e); !kept[k] {
			id, _ := e["schematicID"].(string)
			v, _ := e["version"].(string)
			out = append(out, CatalogRemoval{Kind: RemovesImage, Key: at + "images[] " + k, Was: "golden " + golden.Name(id, v)})
		}
	}
	return out, nil
}

// imagesOf is the images list the values give the catalog: theirs where they
// hold the key, else the catalog chart's default list.
func imagesOf(vals map[string]any, at string) ([]map[string]any, error) {
	holder := vals
	if at != "" {
		holder = asMap(vals[strings.TrimSuffix(at, ".")])
	}
	list, has := holder["images"]
	if !has {
		chrt, err := fleet.CatalogChart()
		if err != nil {
			return nil, fmt.Errorf("built-in chart %s: %v", render.CatalogChart, err)
		}
		list = chrt.Values["images"]
	}
	var out []map[string]any
	for _, e := range asList(list) {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// imageKey names an images[] entry by its flavor, as the catalog names its
// golden.
func imageKey(e map[string]any) string {
	return fmt.Sprintf("{schematicID: %v, version: %v}", e["schematicID"], e["version"])
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// emptyValue: nothing set (nil, "", an empty map or list), as the catalog
// publishes nothing for it.
func emptyValue(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// on: a switch the chart reads as true (it compares toString with "true").
func on(v any) bool { return fmt.Sprint(v) == "true" }

// removedText is a removed value as one line.
func removedText(v any) string {
	if s, ok := v.(string); ok {
		return OneLine(s)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(raw) > 200 {
		return fmt.Sprintf("set (%d bytes of JSON)", len(raw))
	}
	return string(raw)
}

// CopyMap is a copy of m, every map in it copied too (lists shared).
func CopyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = CopyMap(sub)
		}
		out[k] = v
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// SetIn sets a value at a path of nested maps, making the maps it lacks.
func SetIn(m map[string]any, path []string, value any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
}
