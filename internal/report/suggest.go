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
	if len(schema) == 0 {
		return nil
	}
	var root schemaNode
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil
	}
	var out []KeySuggestion
	walkSchema(&root, values, "", &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// schemaNode is the part of a JSON schema the walk reads.
type schemaNode struct {
	Properties map[string]*schemaNode `json:"properties"`
	// AdditionalProperties is false for a closed map; a schema or true opens it.
	AdditionalProperties json.RawMessage `json:"additionalProperties"`
	Items                *schemaNode     `json:"items"`
}

// maxSuggestions bounds the walk: values are a tenant's, and a report needs
// only the first few misspellings.
const maxSuggestions = 16

func walkSchema(n *schemaNode, v any, path string, out *[]KeySuggestion) {
	if n == nil || len(*out) >= maxSuggestions {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		if n.Properties == nil {
			return
		}
		known := SortedKeys(n.Properties)
		for _, k := range SortedKeys(v) {
			at := k
			if path != "" {
				at = path + "." + k
			}
			if child, ok := n.Properties[k]; ok {
				walkSchema(child, v[k], at, out)
				continue
			}
			if string(n.AdditionalProperties) != "false" {
				continue
			}
			if near := NearestWord(k, known); near != "" && len(*out) < maxSuggestions {
				*out = append(*out, KeySuggestion{Path: at, Key: k, Nearest: near})
			}
		}
	case []any:
		if n.Items == nil {
			return
		}
		for i, item := range v {
			if len(*out) >= maxSuggestions {
				return
			}
			walkSchema(n.Items, item, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
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
