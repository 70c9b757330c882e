package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// KeySuggestion is an unknown key of the values and the known key it is
// nearest to: the chart refuses the key, and its message lists every key
// the map takes; this names the one meant.
type KeySuggestion struct {
	// Path is where the key is, as the chart's messages write it
	// ("osimage", "talos.schematicId", "images[0].retier").
	Path    string `json:"path"`
	Key     string `json:"key"`
	Nearest string `json:"nearest"`
}

// SuggestKeys walks values along a chart's values.schema.json and, for every
// key of a map the schema closes (additionalProperties: false) that it does
// not list, suggests the listed key nearest to it, when one is near enough to
// be a misspelling: the same but for case, or within a third of its length in
// edits (Levenshtein distance). The schema is the chart's own list of keys.
func SuggestKeys(schema []byte, values map[string]any) []KeySuggestion {
	var out []KeySuggestion
	walkUnknownKeys(schema, values, false, func(at, key string, known []string) bool {
		if near := NearestWord(key, known); near != "" {
			out = append(out, KeySuggestion{Path: at, Key: key, Nearest: near})
		}
		// The walk is bounded: values are a tenant's, and a report needs
		// only the first few misspellings.
		return len(out) < maxSuggestions
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// UnknownKey is a key of values that a map of the schema closes does not
// list: Path is where it is ("tenantWorkers.talos.imageFactoryUrl"), Known
// the keys that map takes.
type UnknownKey struct {
	Path, Key string
	Known     []string
}

// FirstUnknownKey is the first key of values, in key order, that a map the
// schema closes does not take, at any depth; the walk follows the schema's
// $ref to its definitions, an if/then's then, and the schema of a map's
// other keys (additionalProperties), so a typo under images[N] or a
// registry host is found too. nil when every key is taken.
func FirstUnknownKey(schema []byte, values map[string]any) *UnknownKey {
	var found *UnknownKey
	walkUnknownKeys(schema, values, true, func(at, key string, known []string) bool {
		found = &UnknownKey{Path: at, Key: key, Known: known}
		return false
	})
	return found
}

// schemaNode is the part of a JSON schema the walk reads.
type schemaNode struct {
	Properties map[string]*schemaNode `json:"properties"`
	// AdditionalProperties is false for a closed map; a schema or true opens it.
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
	Items                *schemaNode            `json:"items"`
	Ref                  string                 `json:"$ref"`
	Then                 *schemaNode            `json:"then"`
	Definitions          map[string]*schemaNode `json:"definitions"`
}

// maxSuggestions bounds the walk: values are a tenant's, and a report needs
// only the first few misspellings.
const maxSuggestions = 16

// walkUnknownKeys calls visit with each key of values a closed map of the
// schema does not list (its path, the key, the keys the map takes), until
// visit says stop; deep also follows $ref, then and additionalProperties
// schemas.
func walkUnknownKeys(schema []byte, values map[string]any, deep bool, visit func(at, key string, known []string) bool) {
	if len(schema) == 0 {
		return
	}
	var root schemaNode
	if err := json.Unmarshal(schema, &root); err != nil {
		return
	}
	w := schemaWalk{root: &root, deep: deep, visit: visit}
	w.walk(&root, values, "")
}

type schemaWalk struct {
	root  *schemaNode
	deep  bool
	visit func(at, key string, known []string) bool
}

// resolve is n with its $ref followed (to the root's definitions) and its
// then's properties, items and additionalProperties where it has none.
func (w schemaWalk) resolve(n *schemaNode) *schemaNode {
	if !w.deep {
		return n
	}
	// References chain only as deep as the schema writes them: bounded.
	for i := 0; n != nil && n.Ref != "" && i < 8; i++ {
		n = w.root.Definitions[strings.TrimPrefix(n.Ref, "#/definitions/")]
	}
	if n == nil || n.Then == nil {
		return n
	}
	then, merged := w.resolve(n.Then), *n
	if then == nil {
		return n
	}
	if merged.Properties == nil {
		merged.Properties = then.Properties
	}
	if merged.Items == nil {
		merged.Items = then.Items
	}
	if len(merged.AdditionalProperties) == 0 {
		merged.AdditionalProperties = then.AdditionalProperties
	}
	return &merged
}

// others is the schema of a map's keys it does not list, when deep and the
// schema gives one.
func (w schemaWalk) others(n *schemaNode) *schemaNode {
	if !w.deep || len(n.AdditionalProperties) == 0 || n.AdditionalProperties[0] != '{' {
		return nil
	}
	var s schemaNode
	if json.Unmarshal(n.AdditionalProperties, &s) != nil {
		return nil
	}
	return &s
}

// walk returns false once visit said stop.
func (w schemaWalk) walk(n *schemaNode, v any, path string) bool {
	n = w.resolve(n)
	if n == nil {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		others := w.others(n)
		if n.Properties == nil && others == nil {
			return true
		}
		known := SortedKeys(n.Properties)
		for _, k := range SortedKeys(v) {
			at := k
			if path != "" {
				at = path + "." + k
			}
			if child, ok := n.Properties[k]; ok {
				if !w.walk(child, v[k], at) {
					return false
				}
				continue
			}
			if others != nil {
				if !w.walk(others, v[k], at) {
					return false
				}
				continue
			}
			if string(n.AdditionalProperties) != "false" {
				continue
			}
			if !w.visit(at, k, known) {
				return false
			}
		}
	case []any:
		if n.Items == nil {
			return true
		}
		for i, item := range v {
			if !w.walk(n.Items, item, fmt.Sprintf("%s[%d]", path, i)) {
				return false
			}
		}
	}
	return true
}

// NearestWord is the word of known nearest to word, when it is near enough
// to be a misspelling of it; "" when none is. Ties go to the first in order.
func NearestWord(word string, known []string) string {
	// Words are names (keys, goldens): bounded so a long one costs nothing.
	if len(word) > 256 {
		return ""
	}
	best, bestDist := "", -1
	for _, k := range known {
		if strings.EqualFold(k, word) {
			return k
		}
		if len(k) > 256 {
			continue
		}
		d := levenshtein.ComputeDistance(strings.ToLower(word), strings.ToLower(k))
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	// A third of the word in edits, at least two (a swap of two letters is
	// two), but one for a word of two letters or fewer.
	limit := max(2, len(word)/3)
	if len(word) <= 2 {
		limit = 1
	}
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}
