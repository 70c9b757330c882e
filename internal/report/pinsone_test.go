package report

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/render"
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
	// Homes whose values list images: the steps go through the entry alone.
	platform := CatalogHome{Shape: ShapePlatform, Platform: map[string]any{"kubernetesWorkerImage": map[string]any{"images": []any{}}}}
	pkg := CatalogHome{Shape: ShapePackage, Package: newCatalogPackage()}
	pkg.Package = pkg.WithCatalogValues(map[string]any{"images": []any{}})
	steps := func(goldens ...GoldenPins) map[string]string {
		rep := PinsReport{Goldens: goldens}
		require.NoError(t, WithDeleteSteps(&rep, platform, nil))
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
	require.NoError(t, WithDeleteSteps(&rep, platform, nil))
	assert.Equal(t, ShapePlatform, rep.ChangeShape)
	assert.Equal(t, []string{
		"set retire: true on the catalog entry {schematicID: abc, version: v1.13.5} (kubernetesWorkerImage.images in the platform's values) and upgrade the platform: the catalog checks again that nothing uses the golden, then renders it without helm.sh/resource-policy: keep, marked retiring, and out of the clone Role",
		"then remove the entry and upgrade again: Helm deletes the DataVolume and CDI its PersistentVolumeClaim (a kubectl delete alone would not last while the catalog lists it: Helm creates it again at the catalog's next upgrade)",
	}, rep.Goldens[0].DeleteSteps)
	rep = PinsReport{Goldens: []GoldenPins{gp(plain, "DataVolume", true, false)}}
	require.NoError(t, WithDeleteSteps(&rep, pkg, nil))
	assert.Equal(t, ShapePackage, rep.ChangeShape)
	assert.Equal(t, []string{
		"set retire: true on the catalog entry {schematicID: abc, version: v1.13.5} (spec.components.kubernetes-worker-image.values.images of Package cozystack.kubernetes-worker-image) and apply the Package (kubectl apply -f FILE): the catalog checks again that nothing uses the golden, then renders it without helm.sh/resource-policy: keep, marked retiring, and out of the clone Role",
		"then remove the entry and apply it again: Helm deletes the DataVolume and CDI its PersistentVolumeClaim (a kubectl delete alone would not last while the catalog lists it: Helm creates it again at the catalog's next upgrade)",
	}, rep.Goldens[0].DeleteSteps)
	assert.Nil(t, rep.Goldens[0].RetireValues, "the values list images: the entry alone is the change")
	assert.True(t, rep.HasGoldensToDelete())
	// No golden with steps: no shape said.
	rep = PinsReport{Goldens: []GoldenPins{gp(other, "DataVolume", false, false), gp(plain, "absent", true, false)}}
	assert.False(t, rep.HasGoldensToDelete(), "one in use, one absent: nothing to delete")
	require.NoError(t, WithDeleteSteps(&rep, pkg, nil))
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

// Where the cluster's catalog values list no images, the chart's default
// list applies: the retirement step prints the whole values with the
// default entries written out and the golden's own entry retiring (read
// back from its golden, as the catalog compares it), so applying them keeps
// the default golden new pools clone; a home that lists images gets none.
func TestRetireStepWritesTheDefaultListOut(t *testing.T) {
	chartDefault, err := imagesOf(nil, "")
	require.NoError(t, err)
	require.Len(t, chartDefault, 1, "the catalog chart's default list")
	id := chartDefault[0]["schematicID"].(string)
	old := golden.Name(id, "v1.13.5")
	url := "https://factory.talos.dev" + golden.ImagePath(id, "v1.13.5")
	facts := &PinsFacts{Stored: map[string]fleet.Golden{old: {FoundAs: "DataVolume", Phase: "Succeeded", URL: url, Storage: "6Gi", Class: "replicated"}}}
	gp := GoldenPins{Name: old, Flavor: old, FoundAs: "DataVolume", SafeToDelete: true}

	for _, c := range []struct {
		name   string
		home   CatalogHome
		images func(map[string]any) any
		apply  string
	}{
		{"the operator's Package", CatalogHome{Shape: ShapePackage, PackageFound: true, Package: newCatalogPackage()},
			func(v map[string]any) any {
				return render.Get(v, "spec.components.kubernetes-worker-image.values.images")
			}, "apply it (kubectl apply -f FILE)"},
		{"the platform's values", CatalogHome{Shape: ShapePlatform, Platform: map[string]any{"kubernetesWorkerImage": map[string]any{"storageClass": "replicated"}}},
			func(v map[string]any) any { return render.Get(v, "kubernetesWorkerImage.images") }, "upgrade the platform with them"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := PinsReport{Goldens: []GoldenPins{gp}}
			require.NoError(t, WithDeleteSteps(&rep, c.home, facts))
			g := rep.Goldens[0]
			require.NotNil(t, g.RetireValues)
			assert.Equal(t, []any{
				map[string]any{"schematicID": id, "version": chartDefault[0]["version"]},
				map[string]any{"schematicID": id, "version": "v1.13.5", "imageFactoryURL": "https://factory.talos.dev", "storage": "6Gi", "storageClass": "replicated", "retire": true},
			}, c.images(g.RetireValues), "the default entry kept, the old one retiring as its golden shows it")
			assert.Contains(t, g.DeleteSteps[0], "the cluster's catalog values list no images")
			assert.Contains(t, g.DeleteSteps[0], "so the chart's default list applies ("+golden.Name(id, chartDefault[0]["version"].(string))+"), and an images list holding only that entry would drop that golden, which new pools clone")
			assert.Contains(t, g.DeleteSteps[0], c.apply)
			assert.Contains(t, g.DeleteSteps[1], "then remove the entry")
		})
	}
	if c := (CatalogHome{Shape: ShapePackage, Package: newCatalogPackage()}); true {
		c.Package = c.WithCatalogValues(map[string]any{"images": []any{map[string]any{"schematicID": id, "version": "v1.13.5"}}})
		rep := PinsReport{Goldens: []GoldenPins{gp}}
		require.NoError(t, WithDeleteSteps(&rep, c, facts))
		assert.Nil(t, rep.Goldens[0].RetireValues)
		assert.True(t, strings.HasPrefix(rep.Goldens[0].DeleteSteps[0], "set retire: true on the catalog entry {schematicID: "+id+", version: v1.13.5} (spec.components"))
	}
}
