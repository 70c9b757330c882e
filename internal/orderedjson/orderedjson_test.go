package orderedjson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decodeString(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := Decode(dec)
	require.NoError(t, err)
	return v
}

// A file read and written back keeps its members' order, its numbers' text
// and its <, > and &, where encoding/json would sort, reformat and escape them.
func TestRoundTripKeepsOrderNumbersAndText(t *testing.T) {
	in := `{"z":1,"a":[{"y":1.50,"b":"<&>"}],"m":{}}`
	out, err := Marshal(decodeString(t, in))
	require.NoError(t, err)
	assert.Equal(t, in, string(out))
}

func TestSetReplacesInPlaceAndDeleteRemoves(t *testing.T) {
	o := decodeString(t, `{"a":1,"b":2,"c":3}`).(*Object)
	o.Set("b", "two")
	o.Set("d", 4)
	o.Delete("a")
	o.Delete("missing")
	_, ok := o.Lookup("a")
	assert.False(t, ok)
	assert.Nil(t, o.Get("missing"))
	out, err := Marshal(o)
	require.NoError(t, err)
	assert.Equal(t, `{"b":"two","c":3,"d":4}`, string(out))
}

func TestDecodeRefusesBrokenJSON(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(`{"a":`))
	_, err := Decode(dec)
	assert.Error(t, err)
}
