package main

import (
	"math"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/inf.v0"
	"k8s.io/apimachinery/pkg/api/resource"
)

// adopt adds up workers times golden sizes without overflow: the API's
// largest replica count, with a size beside the largest quantity the chart
// accepts, is still the exact product, and its neighbour a plain sum.
func TestAdoptSavingsDoNotOverflow(t *testing.T) {
	ready := func(workers int64, size string) adoptPool {
		return adoptPool{Outcome: outcomeReady, Workers: workers, BytesPerImport: size}
	}
	s := savingsOf([]adoptPool{ready(3, "6Gi"), ready(2, "6Gi")})
	assert.Equal(t, "30Gi", s.BytesAvoidedNow)
	assert.Equal(t, int64(5), s.ImportsAvoidedNow)

	s = savingsOf([]adoptPool{ready(math.MaxInt32, "6Gi"), ready(math.MaxInt32, "6Gi")})
	assert.Equal(t, int64(2*math.MaxInt32), s.ImportsAvoidedNow)
	want := resource.MustParse("6Gi")
	got := resource.MustParse(s.BytesAvoidedNow)
	assert.Equal(t, 1, got.Sign(), "positive: %s", s.BytesAvoidedNow)
	// 2 * (2^31-1) * 6 * 2^30 bytes.
	assert.Equal(t, "25769803764Gi", s.BytesAvoidedNow)
	assert.Equal(t, int64(6<<30), want.Value())

	s = savingsOf([]adoptPool{ready(math.MaxInt32, "7Ei"), ready(math.MaxInt32, "7Ei"), ready(1, unknownBytes)})
	got = resource.MustParse(s.BytesAvoidedNow)
	assert.Equal(t, 1, got.Sign(), "past 2^63 and still positive: %s", s.BytesAvoidedNow)
	assert.Equal(t, "30064771058Ei", s.BytesAvoidedNow)
	assert.Equal(t, int64(1), s.ImportsOfUnknownSize)
}

// wholeNumber reads the API's counts up to its int32 maximum, nothing else.
func TestWholeNumberReadsTheAPIsCounts(t *testing.T) {
	for in, want := range map[string]int64{"3": 3, "3.0": 3, "2147483647": math.MaxInt32, "2147483648": 0, "-1": 0, "": 0, "1e400": 0, "NaN": 0} {
		assert.Equal(t, want, wholeNumber(in), in)
	}
}

// End to end: every ready pool of the example fleet at the API's largest
// replica count.
func TestAdoptSavingsAtTheLargestReplicaCount(t *testing.T) {
	text, err := os.ReadFile(td("adopt", "fleet.yaml"))
	require.NoError(t, err)
	huge := regexp.MustCompile(`(?m)^  replicas: [0-9]+$`).ReplaceAllString(string(text), "  replicas: 2147483647")
	r := adoptOf(t, "-cluster", writeTemp(t, "fleet.yaml", huge))
	require.Positive(t, r.Savings.ReadyPools)
	assert.Equal(t, int64(r.Savings.ReadyPools)*math.MaxInt32, r.Savings.ImportsAvoidedNow)
	got := resource.MustParse(r.Savings.BytesAvoidedNow)
	assert.Equal(t, 1, got.Sign(), r.Savings.BytesAvoidedNow)
	base := adoptOf(t, "-cluster", td("adopt", "fleet.yaml"))
	perWorker := resource.MustParse(base.Savings.BytesAvoidedNow)
	// Each ready pool's golden is the same size in the example fleet.
	want := new(inf.Dec).Mul(perWorker.AsDec(), inf.NewDec(int64(r.Savings.ReadyPools)*math.MaxInt32, 0))
	want.QuoRound(want, inf.NewDec(base.Savings.ImportsAvoidedNow, 0), 0, inf.RoundExact)
	// (ParseQuantity caps what it reads at 2^63-1, so the exact text is compared.)
	assert.Equal(t, resource.NewDecimalQuantity(*want, resource.BinarySI).String(), r.Savings.BytesAvoidedNow, "%s bytes", want)
}
