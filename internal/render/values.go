package render

import (
	"errors"
	"fmt"
	"sort"
)

// MaxValuesDepth is how deeply values may nest before a render refuses them.
// Helm v3 deep-copies values before any template runs (chartutil's
// CoalesceValues, through copystructure) in time that grows with the square
// of their nesting: a 200 KB file of lists nested 2,000 deep takes seconds,
// and no chart can refuse it first. Real values nest a few levels.
const MaxValuesDepth = 64

// ErrValuesTooDeep: the values nest deeper than MaxValuesDepth.
var ErrValuesTooDeep = errors.New("values nest too deeply")

// CheckValues refuses values with a map or list nested deeper than
// MaxValuesDepth, walking them once (holding only the containers still to
// visit), before Helm copies them. The error names where the nesting goes.
func CheckValues(values map[string]any) error {
	type node struct {
		value any
		depth int
	}
	stack := []node{{values, 0}}
	// visit pushes a child that holds more values; only containers can nest.
	visit := func(child any, depth int) bool {
		switch c := child.(type) {
		case map[string]any:
			if depth > MaxValuesDepth {
				return false
			}
			if len(c) > 0 {
				stack = append(stack, node{c, depth})
			}
		case []any:
			if depth > MaxValuesDepth {
				return false
			}
			if len(c) > 0 {
				stack = append(stack, node{c, depth})
			}
		}
		return true
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ok := true
		switch v := n.value.(type) {
		case map[string]any:
			for _, child := range v {
				ok = ok && visit(child, n.depth+1)
			}
		case []any:
			for _, child := range v {
				ok = ok && visit(child, n.depth+1)
			}
		}
		if !ok {
			return fmt.Errorf("%w: %s is nested more than %d levels deep, deeper than a values file may nest (Helm v3 copies values in time that grows with the square of their depth, so a render refuses them before Helm does); flatten it", ErrValuesTooDeep, deepPath(values, MaxValuesDepth), MaxValuesDepth)
		}
	}
	return nil
}

// deepPath is the path (keys in sorted order, so the message is stable) to
// the first value nested past max levels, cut short for the message.
func deepPath(v any, max int) string {
	var walk func(v any, left int) (string, bool)
	walk = func(v any, left int) (string, bool) {
		if left < 0 {
			return "", true
		}
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if rest, ok := walk(v[k], left-1); ok {
					return "." + k + rest, true
				}
			}
		case []any:
			for i, child := range v {
				if rest, ok := walk(child, left-1); ok {
					return fmt.Sprintf("[%d]", i) + rest, true
				}
			}
		}
		return "", false
	}
	path, _ := walk(v, max)
	if len(path) > 120 {
		path = path[:120] + "..."
	}
	return path
}
