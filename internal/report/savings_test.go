package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/resource"
)

// adopt adds up workers times golden sizes without overflow: the API's
// largest replica count, with a size beside the largest quantity the chart
// accepts, is still the exact product, and its neighbour a plain sum.
func TestAdoptSavingsDoNotOverflow(t *testing.T) {
	ready := func(workers int64, size string) AdoptPool {
		return AdoptPool{Outcome: OutcomeReady, Workers: workers, BytesPerImport: size}
	}
	s := savingsOf([]AdoptPool{ready(3, "6Gi"), ready(2, "6Gi")})
	assert.Equal(t, "30Gi", s.BytesAvoidedNow)
	assert.Equal(t, int64(5), s.ImportsAvoidedNow)

	s = savingsOf([]AdoptPool{ready(math.MaxInt32, "6Gi"), ready(math.MaxInt32, "6Gi")})
	assert.Equal(t, int64(2*math.MaxInt32), s.ImportsAvoidedNow)
	want := resource.MustParse("6Gi")
	got := resource.MustParse(s.BytesAvoidedNow)
	assert.Equal(t, 1, got.Sign(), "positive: %s", s.BytesAvoidedNow)
	// 2 * (2^31-1) * 6 * 2^30 bytes.
	assert.Equal(t, "25769803764Gi", s.BytesAvoidedNow)
	assert.Equal(t, int64(6<<30), want.Value())

	s = savingsOf([]AdoptPool{ready(math.MaxInt32, "7Ei"), ready(math.MaxInt32, "7Ei"), ready(1, UnknownBytes)})
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
