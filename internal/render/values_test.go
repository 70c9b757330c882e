package render

import (
	"errors"
	"strings"
	"testing"
)

func nestedList(depth int) interface{} {
	var v interface{} = "x"
	for i := 0; i < depth; i++ {
		v = []interface{}{v}
	}
	return v
}

// Values as deep as MaxValuesDepth pass; one level more is refused, with the
// path that goes there, before Helm copies anything.
func TestCheckValuesRefusesOnlyPastTheDepthLimit(t *testing.T) {
	// The top map is level 0 and scheduling's map level 1: a list chain of
	// MaxValuesDepth-1 puts its innermost list at MaxValuesDepth.
	at := map[string]interface{}{"_cluster": map[string]interface{}{"scheduling": nestedList(MaxValuesDepth - 1)}}
	if err := CheckValues(at); err != nil {
		t.Fatalf("values at the limit: %v", err)
	}
	past := map[string]interface{}{"_cluster": map[string]interface{}{"b": "x", "scheduling": nestedList(MaxValuesDepth)}}
	err := CheckValues(past)
	if !errors.Is(err, ErrValuesTooDeep) {
		t.Fatalf("values past the limit: %v", err)
	}
	if !strings.Contains(err.Error(), "._cluster.scheduling[0][0]") {
		t.Fatalf("the message names the path: %v", err)
	}
	// The top map is level 0: a chain of MaxValuesDepth lists right under it
	// passes, one more list is refused, and so is an empty one in its place.
	if err := CheckValues(map[string]interface{}{"a": nestedList(MaxValuesDepth)}); err != nil {
		t.Fatalf("a chain of %d lists: %v", MaxValuesDepth, err)
	}
	if err := CheckValues(map[string]interface{}{"a": nestedList(MaxValuesDepth + 1)}); !errors.Is(err, ErrValuesTooDeep) {
		t.Fatalf("a chain of %d lists: %v", MaxValuesDepth+1, err)
	}
	emptyInside := nestedList(MaxValuesDepth)
	innermost := emptyInside.([]interface{})
	for {
		next, ok := innermost[0].([]interface{})
		if !ok {
			break
		}
		innermost = next
	}
	innermost[0] = map[string]interface{}{}
	if err := CheckValues(map[string]interface{}{"a": emptyInside}); !errors.Is(err, ErrValuesTooDeep) {
		t.Fatalf("an empty map one level past: %v", err)
	}
	if err := CheckValues(map[string]interface{}{}); err != nil {
		t.Fatal(err)
	}
}
