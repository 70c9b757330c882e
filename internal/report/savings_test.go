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
	s := savingsOf([]AdoptPool{ready(3, "6Gi"), ready(2, "6Gi")}, AdoptCatalog{}, "6Gi")
	assert.Equal(t, "30Gi", s.BytesAvoidedNow)
	assert.Equal(t, int64(5), s.ImportsAvoidedNow)

	s = savingsOf([]AdoptPool{ready(math.MaxInt32, "6Gi"), ready(math.MaxInt32, "6Gi")}, AdoptCatalog{}, "6Gi")
	assert.Equal(t, int64(2*math.MaxInt32), s.ImportsAvoidedNow)
	want := resource.MustParse("6Gi")
	got := resource.MustParse(s.BytesAvoidedNow)
	assert.Equal(t, 1, got.Sign(), "positive: %s", s.BytesAvoidedNow)
	// 2 * (2^31-1) * 6 * 2^30 bytes.
	assert.Equal(t, "25769803764Gi", s.BytesAvoidedNow)
	assert.Equal(t, int64(6<<30), want.Value())

	s = savingsOf([]AdoptPool{ready(math.MaxInt32, "7Ei"), ready(math.MaxInt32, "7Ei"), ready(1, UnknownBytes)}, AdoptCatalog{}, "6Gi")
	got = resource.MustParse(s.BytesAvoidedNow)
	assert.Equal(t, 1, got.Sign(), "past 2^63 and still positive: %s", s.BytesAvoidedNow)
	assert.Equal(t, "30064771058Ei", s.BytesAvoidedNow)
	assert.Equal(t, int64(1), s.ImportsOfUnknownSize)
}

// The savings say what they count: downloads avoided now and once the
// waiting pools' goldens exist, less one download per golden the catalog
// values add (a new entry's own and per-class goldens, an added class),
// each of its storage (a new entry's: the catalog's).
func TestAdoptSavingsSubtractTheGoldensToAdd(t *testing.T) {
	class := "replicated"
	pools := []AdoptPool{
		{Outcome: OutcomeReady, Workers: 3, BytesPerImport: "6Gi"},
		{Outcome: OutcomeNeedsEntry, Workers: 4, BytesPerImport: UnknownBytes},
		{Outcome: OutcomeNeedsPerClass, Workers: 2, BytesPerImport: UnknownBytes},
		{Outcome: OutcomeImporting, Workers: 1, BytesPerImport: "6Gi"},
		{Outcome: OutcomeRefused, Workers: 7, BytesPerImport: "6Gi"},
	}
	catalog := AdoptCatalog{Images: []CatalogEntry{
		{Change: ChangeKept, Entry: CatalogImage{Storage: "6Gi"}},
		{Change: ChangeClassesAdded, AddedClasses: []string{"ceph-rbd"}, Entry: CatalogImage{Storage: "8Gi", AdditionalStorageClasses: []string{"ceph-rbd", "fast"}}},
		{Change: ChangeNew, Entry: CatalogImage{StorageClass: &class, AdditionalStorageClasses: []string{"ceph-rbd"}}},
	}}
	s := savingsOf(pools, catalog, "6Gi")
	assert.Equal(t, 5, s.RenderToday)
	assert.Equal(t, 1, s.ReadyPools)
	assert.Equal(t, int64(3), s.ImportsAvoidedNow)
	assert.Equal(t, "18Gi", s.BytesAvoidedNow)
	assert.Equal(t, 3, s.WaitingPools)
	assert.Equal(t, int64(7), s.ImportsAvoidedLater)
	assert.Equal(t, 3, s.GoldensToAdd, "one added class, and a new entry on two classes")
	assert.Equal(t, "20Gi", s.GoldenBytesToAdd, "8Gi for the class added to its entry, 2 x the catalog's 6Gi for the new entry")
	assert.Equal(t, int64(3+7-3), s.NetImportsAvoided)

	s = savingsOf(nil, AdoptCatalog{Images: []CatalogEntry{{Change: ChangeNew}}}, "")
	assert.Equal(t, 1, s.GoldensOfUnknownSize, "a catalog storage not known is left out of the bytes, and counted")
	assert.Equal(t, int64(-1), s.NetImportsAvoided, "a golden for pools with no worker costs one download")
}

// wholeNumber reads the API's counts up to its int32 maximum, nothing else.
func TestWholeNumberReadsTheAPIsCounts(t *testing.T) {
	for in, want := range map[string]int64{"3": 3, "3.0": 3, "2147483647": math.MaxInt32, "2147483648": 0, "-1": 0, "": 0, "1e400": 0, "NaN": 0} {
		assert.Equal(t, want, wholeNumber(in), in)
	}
}
