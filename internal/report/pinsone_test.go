package report

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A golden safe to delete says how to delete it for good, by how the
// cluster holds it: through its entry (retire, then drop), its entry
// already retiring (drop), only its PVC left (kubectl, Helm never made it),
// a per-class golden whose flavor is in use (drop the class, then kubectl),
// a plain golden whose per-class one is in use (cannot retire yet). A golden
// in use, or absent, gets no steps.
func TestDeleteStepsFollowTheCatalogsRetirement(t *testing.T) {
	plain := golden.Name("abc", "v1.13.5")
	perClass := golden.PerClassName("abc", "v1.13.5", "fast")
	other := golden.Name("abc", "v1.13.6")
	gp := func(name, foundAs string, safe, retiring bool) GoldenPins {
		fl, _ := golden.Parse(name)
		return GoldenPins{Name: name, Flavor: fl.Plain, Class: fl.Class, FoundAs: foundAs, SafeToDelete: safe, Retiring: retiring}
	}
	platform := CatalogHome{Shape: ShapePlatform}
	steps := func(goldens ...GoldenPins) map[string]string {
		rep := PinsReport{Goldens: goldens}
		WithDeleteSteps(&rep, platform)
		out := map[string]string{}
		for _, g := range rep.Goldens {
			out[g.Name] = strings.Join(g.DeleteSteps, " | ")
		}
		return out
	}

	s := steps(gp(plain, "DataVolume", true, false), gp(other, "DataVolume", false, false))
	assert.True(t, strings.HasPrefix(s[plain], "set retire: true on the catalog entry {schematicID: abc, version: v1.13.5}"), s[plain])
	assert.Contains(t, s[plain], " | then remove the entry and upgrade again: Helm deletes the DataVolume")
	assert.Contains(t, s[plain], "a kubectl delete alone would not last")
	assert.Empty(t, s[other], "in use: no steps")

	s = steps(gp(plain, "DataVolume", true, true))
	assert.True(t, strings.HasPrefix(s[plain], "its entry sets retire: true already: remove the catalog entry"), s[plain])

	s = steps(gp(plain, "PersistentVolumeClaim", true, false))
	assert.Contains(t, s[plain], "kubectl -n cozy-public delete pvc "+plain)

	s = steps(gp(plain, "DataVolume", false, false), gp(perClass, "DataVolume", true, false))
	assert.True(t, strings.HasPrefix(s[perClass], `remove "fast" from the additionalStorageClasses of the catalog entry`), s[perClass])
	assert.Contains(t, s[perClass], "kubectl -n cozy-public delete datavolume "+perClass)

	s = steps(gp(plain, "DataVolume", true, false), gp(perClass, "DataVolume", false, false))
	assert.True(t, strings.HasPrefix(s[plain], "its entry cannot retire yet"), s[plain])
	assert.Contains(t, s[plain], perClass+" is still in use")

	s = steps(gp(plain, "absent", true, false))
	assert.Empty(t, s[plain], "nothing to delete")

	// Where the platform's values hold the catalog's, the platform is
	// upgraded; where the operator's Package does, the Package is applied.
	rep := PinsReport{Goldens: []GoldenPins{gp(plain, "DataVolume", true, false)}}
	WithDeleteSteps(&rep, platform)
	assert.Equal(t, ShapePlatform, rep.ChangeShape)
	assert.Equal(t, []string{
		"set retire: true on the catalog entry {schematicID: abc, version: v1.13.5} (kubernetesWorkerImage.images in the platform's values) and upgrade the platform: the catalog checks again that nothing uses the golden, then renders it without helm.sh/resource-policy: keep, marked retiring, and out of the clone Role",
		"then remove the entry and upgrade again: Helm deletes the DataVolume and CDI its PersistentVolumeClaim (a kubectl delete alone would not last while the catalog lists it: Helm creates it again at the catalog's next upgrade)",
	}, rep.Goldens[0].DeleteSteps)
	rep = PinsReport{Goldens: []GoldenPins{gp(plain, "DataVolume", true, false)}}
	WithDeleteSteps(&rep, CatalogHome{Shape: ShapePackage})
	assert.Equal(t, ShapePackage, rep.ChangeShape)
	assert.Equal(t, []string{
		"set retire: true on the catalog entry {schematicID: abc, version: v1.13.5} (spec.components.kubernetes-worker-image.values.images of Package cozystack.kubernetes-worker-image) and apply the Package (kubectl apply -f FILE): the catalog checks again that nothing uses the golden, then renders it without helm.sh/resource-policy: keep, marked retiring, and out of the clone Role",
		"then remove the entry and apply it again: Helm deletes the DataVolume and CDI its PersistentVolumeClaim (a kubectl delete alone would not last while the catalog lists it: Helm creates it again at the catalog's next upgrade)",
	}, rep.Goldens[0].DeleteSteps)
	assert.True(t, rep.HasGoldensToDelete())
	// No golden with steps: no shape said.
	rep = PinsReport{Goldens: []GoldenPins{gp(other, "DataVolume", false, false), gp(plain, "absent", true, false)}}
	assert.False(t, rep.HasGoldensToDelete(), "one in use, one absent: nothing to delete")
	WithDeleteSteps(&rep, CatalogHome{Shape: ShapePackage})
	assert.Empty(t, rep.ChangeShape)
}

// pins GOLDEN keeps that golden, its flavor's gaps and disks, and every
// pool not resolved; a name nothing knows names the nearest golden.
func TestOneGoldenNarrowsTheReport(t *testing.T) {
	a, b := golden.Name("abc", "v1.13.5"), golden.Name("abc", "v1.13.6")
	rep := PinsReport{
		Goldens:      []GoldenPins{{Name: a, Flavor: a, FoundAs: "DataVolume", SafeToDelete: true}, {Name: b, Flavor: b, FoundAs: "DataVolume"}},
		Unused:       []string{a},
		HTTPPools:    []PoolPin{{HelmRelease: "t/p"}},
		Unresolved:   []PoolPin{{HelmRelease: "t/u"}},
		HostAssisted: []DiskPin{{Name: "d1", Golden: a}, {Name: "d2", Golden: b}},
		NoPoolDisks:  []DiskPin{},
		Flavors:      []FlavorPins{{Flavor: a, Goldens: []string{a}}, {Flavor: b, Goldens: []string{b}, ClassesWithoutGolden: []ClassGap{{Class: "fast", Golden: b + "--fast"}}}},
	}
	one, err := OneGolden(rep, b)
	require.NoError(t, err)
	assert.Equal(t, b, one.Golden)
	require.Len(t, one.Goldens, 1)
	assert.Equal(t, b, one.Goldens[0].Name)
	assert.Empty(t, one.Unused)
	assert.Empty(t, one.HTTPPools)
	assert.Equal(t, rep.Unresolved, one.Unresolved)
	assert.Equal(t, []DiskPin{{Name: "d2", Golden: b}}, one.HostAssisted)
	require.Len(t, one.Flavors, 1)
	assert.Empty(t, one.Flavors[0].ClassesWithoutGolden, "the per-class gap belongs to another golden")

	one, err = OneGolden(rep, a)
	require.NoError(t, err)
	assert.Equal(t, []string{a}, one.Unused)

	_, err = OneGolden(rep, golden.Name("abc", "v1.13.7"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no DataVolume or PersistentVolumeClaim of that name in cozy-public")
	assert.Contains(t, err.Error(), "did you mean "+a+"?")
}
