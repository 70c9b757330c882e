package render

import (
	"encoding/json"
	"fmt"

	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
)

// The schema's share of a render (docs/design.md): a 1 MiB values file costs
// at most 1.5x with schema validation on what it costs with it off. Lists and
// maps filled past their limits are the worst: a validator that walks every
// item of a list already too long pays for each item, and most for an item of
// the wrong type (an error per item). Reported by BenchmarkSchemaOnAgainstOff.

// numbers is a list of n zeros: two bytes an item, each item of the wrong type
// wherever a list of strings or objects is expected.
func numbers(n int) []interface{} {
	out := make([]interface{}, n)
	for i := range out {
		out[i] = 0
	}
	return out
}

// numberMap is n keys of host names, each a number where an object is expected.
func numberMap(n int) map[string]interface{} {
	out := map[string]interface{}{}
	for i := 0; i < n; i++ {
		out[fmt.Sprintf("h%06d.internal", i)] = 0
	}
	return out
}

// schemaCostCases are each chart schema's lists and maps past their limits,
// filled to a 1 MiB values file, as valid items and as items of the wrong type.
func schemaCostCases() []costCase {
	listOf := func(item func(int) interface{}) func(int) []interface{} {
		return func(n int) []interface{} {
			out := make([]interface{}, n)
			for i := range out {
				out[i] = item(i)
			}
			return out
		}
	}
	roleNames := listOf(func(i int) interface{} { return fmt.Sprintf("r%06d", i) })
	entries := listOf(func(i int) interface{} {
		return map[string]interface{}{"schematicID": fmt.Sprintf("s%05d", i), "version": "v1.13.6"}
	})
	subjects := listOf(func(i int) interface{} {
		return map[string]interface{}{"kind": "Group", "name": fmt.Sprintf("g%06d", i)}
	})
	entryWith := func(key string, v interface{}) []interface{} {
		return []interface{}{map[string]interface{}{"schematicID": "abc", "version": "v1.13.6", key: v}}
	}
	mirrorsOf := func(eps interface{}) map[string]interface{} {
		return map[string]interface{}{"docker.io": map[string]interface{}{"endpoints": eps}}
	}
	return []costCase{
		{"pool roles: 524,000 numbers", "pool", func() map[string]interface{} { return pool(map[string]interface{}{"roles": numbers(524000)})() }, false, false},
		{"pool roles: names", "pool", fit(func(n int) map[string]interface{} { return pool(map[string]interface{}{"roles": roleNames(n)})() }), false, false},
		{"pool unknown top-level keys", "pool", fit(func(n int) map[string]interface{} { return pool(junkMap(n))() }), false, false},
		{"pool unknown keys under osImage.builtin", "pool", fit(func(n int) map[string]interface{} {
			return pool(map[string]interface{}{"osImage": map[string]interface{}{"builtin": junkMap(n)}})()
		}), false, false},
		{"pool registry mirrors: hosts of numbers", "pool", fit(func(n int) map[string]interface{} {
			return pool(map[string]interface{}{"talos": map[string]interface{}{"registryMirrors": numberMap(n)}})()
		}), false, false},
		{"pool registry mirror endpoints: numbers", "pool", fit(func(n int) map[string]interface{} {
			return pool(map[string]interface{}{"talos": map[string]interface{}{"registryMirrors": mirrorsOf(numbers(n))}})()
		}), false, false},
		{"pool platform mirrors: hosts of numbers", "pool", fit(func(n int) map[string]interface{} {
			return pool(map[string]interface{}{"_cluster": map[string]interface{}{"talos": map[string]interface{}{"registryMirrors": numberMap(n)}}})()
		}), false, false},
		{"catalog images: numbers", "catalog", fit(func(n int) map[string]interface{} { return map[string]interface{}{"images": numbers(n)} }), false, false},
		{"catalog images: entries", "catalog", fit(func(n int) map[string]interface{} { return map[string]interface{}{"images": entries(n)} }), false, false},
		{"catalog additionalStorageClasses: numbers", "catalog", fit(func(n int) map[string]interface{} {
			return map[string]interface{}{"images": entryWith("additionalStorageClasses", numbers(n))}
		}), false, false},
		{"catalog cloneSubjects: numbers", "catalog", fit(func(n int) map[string]interface{} { return map[string]interface{}{"cloneSubjects": numbers(n)} }), false, false},
		{"catalog cloneSubjects: subjects", "catalog", fit(func(n int) map[string]interface{} { return map[string]interface{}{"cloneSubjects": subjects(n)} }), false, false},
		{"platform enabledPackages: numbers", "platform", fit(func(n int) map[string]interface{} {
			return map[string]interface{}{"bundles": map[string]interface{}{"enabledPackages": numbers(n)}}
		}), false, false},
		{"platform images: numbers", "platform", fit(func(n int) map[string]interface{} {
			return map[string]interface{}{"kubernetesWorkerImage": map[string]interface{}{"images": numbers(n)}}
		}), false, false},
		{"platform mirrors: hosts of numbers", "platform", fit(func(n int) map[string]interface{} {
			return map[string]interface{}{"registries": map[string]interface{}{"mirrors": numberMap(n)}}
		}), false, false},
		{"platform mirror endpoints: numbers", "platform", fit(func(n int) map[string]interface{} {
			return map[string]interface{}{"registries": map[string]interface{}{"mirrors": mirrorsOf(numbers(n))}}
		}), false, false},
	}
}

// BenchmarkSchemaOnAgainstOff renders each case with schema validation on and
// off, alternately, and reports on's time over off's (goal: at most 1.5).
func BenchmarkSchemaOnAgainstOff(b *testing.B) {
	for _, cc := range schemaCostCases() {
		values := cc.values()
		data, err := json.Marshal(values)
		require.NoError(b, err)
		require.LessOrEqual(b, len(data), valuesFileBytes, "%s: the case fits a 1 MiB values file", cc.name)
		c, rel, cluster := costChart(b, cc.chart)
		b.Run(cc.name, func(b *testing.B) {
			b.ReportAllocs()
			var on, off time.Duration
			for i := 0; i < b.N; i++ {
				for _, skip := range []bool{false, true} {
					r := rel
					r.SkipSchemaValidation = skip
					start := time.Now()
					_, err := render.Render(c, render.Options{Release: r, Values: values, Cluster: cluster})
					took := time.Since(start)
					if err == nil {
						b.Fatalf("%s rendered with the schema off: %v; every case is past a limit", cc.name, skip)
					}
					if skip {
						off += took
					} else {
						on += took
					}
				}
			}
			b.ReportMetric(float64(on.Nanoseconds())/float64(b.N), "on-ns/op")
			b.ReportMetric(float64(off.Nanoseconds())/float64(b.N), "off-ns/op")
			b.ReportMetric(float64(on)/float64(off), "x-schema")
		})
	}
}
