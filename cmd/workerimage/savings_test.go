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
