package render

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// quantityProbe is the pool chart's helpers (the library's included) plus one
// template that runs worker-image-lib.parseQuantity on .Values.q and prints
// what it filled in, as base64 of JSON (the text may hold any byte).
func quantityProbe(t testing.TB) *chart.Chart {
	t.Helper()
	return render.WithTemplate(render.HelpersOnly(poolChart(t)), "templates/q.yaml",
		[]byte(`{{- $q := dict -}}{{- include "worker-image-lib.parseQuantity" (dict "value" .Values.q "out" $q) -}}q: {{ $q | toJson | b64enc }}`))
}

type parsedQuantity struct {
	Text   string   `json:"text"`
	Bytes  *float64 `json:"bytes"`
	Scalar string   `json:"scalar"`
	Error  string   `json:"error"`
}

func parseWithChart(t testing.TB, c *chart.Chart, value interface{}) parsedQuantity {
	t.Helper()
	m, err := render.Render(c, render.Options{
		Release: render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true},
		Values:  map[string]interface{}{"cluster": testCluster, "q": value},
	})
	require.NoError(t, err, "%#v: the parser never fails a render itself", value)
	require.Len(t, m.Docs, 1)
	var out parsedQuantity
	data, err := base64.StdEncoding.DecodeString(str(m.Docs[0].Object["q"]))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// exactQuantity is the value a quantity string means, computed with exact
// rationals (an oracle that shares nothing with the chart or apimachinery).
var quantityForm = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?$`)

func exactQuantity(s string) (*big.Rat, bool) {
	m := quantityForm.FindStringSubmatch(s)
	if m == nil {
		return nil, false
	}
	v, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return nil, false
	}
	suffix := m[2]
	pow := func(base int64, n int64) *big.Rat {
		r := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(base), big.NewInt(absInt(n)), nil))
		if n < 0 {
			r.Inv(r)
		}
		return r
	}
	binary := map[string]int64{"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
	decimal := map[string]int64{"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
	switch {
	case binary[suffix] > 0:
		v.Mul(v, pow(1024, binary[suffix]))
	case len(suffix) > 1 && strings.ContainsAny(suffix[:1], "eE"):
		var e int64
		if _, err := fmt.Sscanf(strings.TrimPrefix(suffix[1:], "+"), "%d", &e); err != nil || absInt(e) > 400 {
			return nil, false
		}
		v.Mul(v, pow(10, e))
	default:
		v.Mul(v, pow(10, decimal[suffix]))
	}
	return v, true
}

func absInt(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// apiReadsExactly: the API server (apimachinery's ParseQuantity) stores this
// text as exactly the value it means: not capped at 2^63-1, not rounded to 1n.
func apiReadsExactly(s string) bool {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return false
	}
	want, ok := exactQuantity(s)
	if !ok {
		return false
	}
	got, ok := new(big.Rat).SetString(q.AsDec().String())
	return ok && got.Cmp(want) == 0
}

// apiReadsScalar writes the scalar as the chart writes it into a manifest,
// reads it back the way Helm hands a manifest to the API server (YAML to
// JSON), and returns the quantity the API server would read from that JSON.
func apiReadsScalar(t testing.TB, scalar string) (*big.Rat, bool) {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte("storage: " + scalar))
	if err != nil {
		return nil, false
	}
	var holder struct {
		Storage resource.Quantity `json:"storage"`
	}
	if err := yaml.Unmarshal(js, &holder); err != nil {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(holder.Storage.AsDec().String())
	return r, ok
}

// roundsTo8Ei: the chart compares sizes as float64, which cannot tell a value
// within 512 of 2^63 from 2^63 itself; it refuses those as 8Ei or more.
func roundsTo8Ei(s string) bool {
	v, ok := exactQuantity(s)
	if !ok {
		return false
	}
	f, _ := v.Float64()
	return f >= math.Exp2(63)
}

// checkQuantity holds the parser to its contract for one input: it accepts
// exactly the texts the API server reads as written (within the chart's
// length and exponent bounds), its bytes are that value, and its scalar makes
// the API server read that value from a manifest.
func checkQuantity(t testing.TB, c *chart.Chart, s string) {
	t.Helper()
	got := parseWithChart(t, c, s)
	exponentBounded := true
	if m := quantityForm.FindStringSubmatch(s); m != nil && len(m[2]) > 1 && strings.ContainsAny(m[2][:1], "eE") {
		exponentBounded = len(strings.TrimLeft(m[2][1:], "+-")) <= 2
	}
	want := len(s) <= 32 && exponentBounded && apiReadsExactly(s) && !roundsTo8Ei(s)
	if (got.Error == "") != want {
		t.Fatalf("%q: the chart says error %q; the API server reads it exactly: %v (within 32 characters and a 2-digit exponent: %v)", s, got.Error, apiReadsExactly(s), len(s) <= 32 && exponentBounded)
	}
	if !want {
		return
	}
	exact, _ := exactQuantity(s)
	f, _ := exact.Float64()
	if got.Bytes == nil || math.Abs(*got.Bytes-f) > math.Abs(f)*1e-15 {
		t.Fatalf("%q: bytes %v, want %v", s, got.Bytes, f)
	}
	read, ok := apiReadsScalar(t, got.Scalar)
	if !ok || read.Cmp(exact) != 0 {
		t.Fatalf("%q written as %s: the API server reads %v, want %v", s, got.Scalar, read, exact.FloatString(9))
	}
}

var quantityCases = []string{
	"20Gi", "21474836480", "20G", "1.5Gi", "6Gi", "0", "00", "1", "0.5", ".5", "5.", "1e3", "1E3", "1e+3", "1e-9", "1e-10",
	"020000000000", "04000000000", "0123", "08", "0.000000001", "0.0000000001", "1000e-12", "100m", "1n", "1u", "1.5n",
	"8Ei", "7.99Ei", "7Ei", "9223372036854775807", "9223372036854775000", "9223372036854775808", "1e18", "1e19", "9e18", "9.3e18",
	"1e1000000000", "1e100", "1e99", "1E", "2E", "8E", "9E", "1P", "1.23456789012345678", "1.234567890123456", "123456789012345.6",
	"1234567890123456.7", "12345678901234567891", "1.50000000000000000", "0.1e1", "0.0001Ki", "0.0000000001Ki", "1.000000001Gi",
	strings.Repeat("9", 33), strings.Repeat("9", 400), "1e010", "2.147483648e+10", "1e+06", "3", "10.0000001Gi",
	"", "-1", "1 Gi", "20GB", "0x10", "1_000", "1e", "e3", ".", "Gi",
}

func TestQuantityParserAcceptsWhatTheAPIReadsExactly(t *testing.T) {
	c := quantityProbe(t)
	for _, s := range quantityCases {
		checkQuantity(t, c, s)
	}
	// A number from a values file is read as its text, as Helm prints it.
	got := parseWithChart(t, c, 21474836480.0)
	require.Equal(t, "2.147483648e+10", got.Scalar, "a float is written as Helm has always printed it")
	require.Equal(t, "not a string", parseWithChart(t, c, []interface{}{"20Gi"}).Error)
	require.Equal(t, "not a string", parseWithChart(t, c, nil).Error)
}

func FuzzQuantityParser(f *testing.F) {
	for _, s := range quantityCases {
		f.Add(s)
	}
	c := quantityProbe(f)
	f.Fuzz(func(t *testing.T, s string) {
		checkQuantity(t, c, s)
	})
}
