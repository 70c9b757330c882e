// What pins adds on top of its verdicts: the steps that delete a golden safe
// to delete (a `kubectl delete` of a golden the catalog still lists would be
// undone by Helm), and the report narrowed to one golden (`pins GOLDEN`).

package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/render"
)

// WithDeleteSteps fills in, for each golden safe to delete that exists,
// how to delete it as the catalog chart retires one (its README, "Retiring
// an entry"), through where the cluster's catalog values are written
// (home), and, for a golden of an entry whose other goldens are in use, why
// its entry cannot retire.
//
// Where those values list no images, the chart's default list applies, and
// an images list holding only the entry to retire would drop the default
// golden new pools clone: the golden then gets RetireValues, the whole
// values to apply with the default entries written out and its own entry
// retiring (f: the goldens its entry is read back from).
func WithDeleteSteps(rep *PinsReport, home CatalogHome, f *PinsFacts) error {
	inUse := map[string][]string{}
	for _, g := range rep.Goldens {
		if !g.SafeToDelete {
			inUse[g.Flavor] = append(inUse[g.Flavor], g.Name)
		}
	}
	_, listsImages := home.CatalogValues()["images"]
	var defaults []map[string]any
	if !listsImages {
		var err error
		if defaults, err = imagesOf(nil, ""); err != nil {
			return err
		}
	}
	for i := range rep.Goldens {
		g := &rep.Goldens[i]
		if !g.SafeToDelete || g.FoundAs == "absent" {
			continue
		}
		g.DeleteSteps = deleteSteps(*g, inUse[g.Flavor], home)
		rep.ChangeShape = home.Shape
		if !listsImages && retiresThroughEntry(*g, inUse[g.Flavor]) {
			g.RetireValues = retireValues(home, defaults, *g, f)
			g.DeleteSteps[0] = defaultListStep(*g, defaults, home)
		}
	}
	return nil
}

// retiresThroughEntry: the golden's delete steps set retire: true on its
// entry (deleteSteps' last case).
func retiresThroughEntry(g GoldenPins, flavorInUse []string) bool {
	_, ok := golden.Parse(g.Name)
	return ok && g.FoundAs != "PersistentVolumeClaim" && g.Class == "" && len(flavorInUse) == 0 && !g.Retiring
}

// retireValues are the whole values to apply where the cluster's catalog
// values list no images: the chart's default entries written out, the
// golden's own entry (read back from its goldens, as the catalog compares
// it) with retire: true in place of its default entry or after them.
func retireValues(home CatalogHome, defaults []map[string]any, g GoldenPins, f *PinsFacts) map[string]any {
	flavorGoldens := map[string]fleet.Golden{}
	for name, s := range f.Stored {
		if fl, ok := golden.Parse(name); ok && fl.Plain == g.Flavor {
			flavorGoldens[name] = s
		}
	}
	var retiring map[string]any
	for _, e := range existingEntries(flavorGoldens) {
		e.Entry.Retire = true
		raw, _ := json.Marshal(e.Entry)
		_ = json.Unmarshal(raw, &retiring)
	}
	images := []any{}
	placed := false
	for _, d := range defaults {
		if retiring != nil && imageKey(d) == imageKey(retiring) {
			images, placed = append(images, retiring), true
			continue
		}
		images = append(images, CopyMap(d))
	}
	if !placed && retiring != nil {
		images = append(images, retiring)
	}
	if home.Shape == ShapePlatform {
		platform := CopyMap(home.Platform)
		section := asMap(platform["kubernetesWorkerImage"])
		if section == nil {
			section = map[string]any{}
		}
		section["images"] = images
		platform["kubernetesWorkerImage"] = section
		return platform
	}
	values := CopyMap(home.CatalogValues())
	values["images"] = images
	return home.WithCatalogValues(values)
}

// defaultListStep is the first delete step where the catalog's values list
// no images: the whole values below, not the entry alone.
func defaultListStep(g GoldenPins, defaults []map[string]any, home CatalogHome) string {
	var names []string
	for _, d := range defaults {
		id, _ := d["schematicID"].(string)
		v, _ := d["version"].(string)
		names = append(names, golden.Name(id, v))
	}
	fl, _ := golden.Parse(g.Name)
	what, apply := "the Package below, whole", "apply it (kubectl apply -f FILE)"
	if home.Shape == ShapePlatform {
		what, apply = "the platform values below, whole", "upgrade the platform with them"
	}
	return fmt.Sprintf("set retire: true on the catalog entry {schematicID: %s, version: %s}: the cluster's catalog values list no images (%s), so the chart's default list applies (%s), and an images list holding only that entry would drop %s, which new pools clone; %s writes the default entries out and that entry with retire: true: preview it with workerimage catalog -f FILE, then %s; the catalog checks again that nothing uses the golden, then renders it without helm.sh/resource-policy: keep, marked retiring, and out of the clone Role",
		fl.SchematicID, fl.Version, home.PackageKey("images"), strings.Join(names, ", "), map[bool]string{true: "that golden", false: "those goldens"}[len(names) == 1], what, apply)
}

// HasGoldensToDelete: some golden is safe to delete and exists, so
// WithDeleteSteps has steps to write (and where the catalog's values are
// written to read).
func (r PinsReport) HasGoldensToDelete() bool {
	for _, g := range r.Goldens {
		if g.SafeToDelete && g.FoundAs != "absent" {
			return true
		}
	}
	return false
}

// deleteSteps says how one unused golden is deleted for good; flavorInUse
// are the goldens of its flavor something still uses.
func deleteSteps(g GoldenPins, flavorInUse []string, home CatalogHome) []string {
	fl, ok := golden.Parse(g.Name)
	entry := fmt.Sprintf("the catalog entry {schematicID: %s, version: %s} (%s)", fl.SchematicID, fl.Version, home.PackageKey("images"))
	apply, again := "upgrade the platform", "upgrade again"
	if home.Shape == ShapePackage {
		apply, again = "apply the Package (kubectl apply -f FILE)", "apply it again"
	}
	notKubectl := "a kubectl delete alone would not last while the catalog lists it: Helm creates it again at the catalog's next upgrade"
	switch {
	case !ok:
		return []string{"its name is not one the catalog builds, so no catalog entry manages it: delete it with kubectl -n " + golden.Namespace + " delete datavolume " + g.Name + " (and its PersistentVolumeClaim, if CDI left one)"}
	case g.FoundAs == "PersistentVolumeClaim":
		return []string{
			"remove " + entry + " if the catalog still lists it, so no pool is pointed at it any more, and " + apply,
			"its DataVolume is gone and Helm never created its PersistentVolumeClaim, so no upgrade deletes it: kubectl -n " + golden.Namespace + " delete pvc " + g.Name,
		}
	case g.Class != "" && len(flavorInUse) > 0:
		return []string{
			fmt.Sprintf("remove %q from the additionalStorageClasses of %s and %s: the catalog stops managing the golden and Helm keeps it (helm.sh/resource-policy: keep); the entry stays, since %s of its flavor %s in use", g.Class, entry, apply, strings.Join(flavorInUse, ", "), map[bool]string{true: "is", false: "are"}[len(flavorInUse) == 1]),
			"then delete it, which nothing undoes any more: kubectl -n " + golden.Namespace + " delete datavolume " + g.Name,
		}
	case len(flavorInUse) > 0:
		return []string{fmt.Sprintf("its entry cannot retire yet: %s retires every golden of the flavor, and %s still in use; move their pools first (workerimage pins shows them), or keep the entry", entry, strings.Join(flavorInUse, ", ")+map[bool]string{true: " is", false: " are"}[len(flavorInUse) == 1])}
	case g.Retiring:
		return []string{"its entry sets retire: true already: remove " + entry + " and " + apply + "; Helm deletes the DataVolume and CDI its PersistentVolumeClaim (" + notKubectl + ")"}
	}
	return []string{
		"set retire: true on " + entry + " and " + apply + ": the catalog checks again that nothing uses the golden, then renders it without helm.sh/resource-policy: keep, marked retiring, and out of the clone Role",
		"then remove the entry and " + again + ": Helm deletes the DataVolume and CDI its PersistentVolumeClaim (" + notKubectl + ")",
	}
}

// OneGolden narrows a pins report to the golden name: that golden, its
// flavor with that golden alone, and its disks; the pools whose values do
// not resolve stay listed, since any of them may use it. A name nothing
// knows (not in cozy-public, named by no pool or disk) is an error that
// names the nearest known golden.
func OneGolden(rep PinsReport, name string) (PinsReport, error) {
	var known []string
	var g *GoldenPins
	for i := range rep.Goldens {
		known = append(known, rep.Goldens[i].Name)
		if rep.Goldens[i].Name == name {
			g = &rep.Goldens[i]
		}
	}
	if g == nil {
		msg := fmt.Sprintf("golden %q: no DataVolume or PersistentVolumeClaim of that name in %s, and no pool or disk names it", name, golden.Namespace)
		if near := NearestWord(name, known); near != "" {
			msg += fmt.Sprintf("; did you mean %s?", near)
		} else if len(known) > 0 {
			msg += "; the goldens there: " + FirstFive(known)
		}
		return PinsReport{}, fmt.Errorf("%s", msg)
	}
	out := rep
	out.Golden = name
	out.Goldens = []GoldenPins{*g}
	out.Unused = []string{}
	if g.SafeToDelete && g.FoundAs != "absent" {
		out.Unused = []string{name}
	}
	out.HTTPPools = []PoolPin{}
	out.PoolsBehind = []PoolBehind{}
	for _, p := range rep.PoolsBehind {
		if p.Running != nil && p.Running.Golden == name {
			out.PoolsBehind = append(out.PoolsBehind, p)
		}
	}
	out.HostAssisted = disksOf(rep.HostAssisted, name)
	out.NoPoolDisks = disksOf(rep.NoPoolDisks, name)
	out.Flavors = []FlavorPins{}
	for _, f := range rep.Flavors {
		if f.Flavor != g.Flavor {
			continue
		}
		f.Goldens = []string{name}
		gaps := []ClassGap{}
		for _, c := range f.ClassesWithoutGolden {
			if c.Golden == name || (g.Class == "" && c.Golden == "") {
				gaps = append(gaps, c)
			}
		}
		f.ClassesWithoutGolden = gaps
		out.Flavors = append(out.Flavors, f)
	}
	return out, nil
}

func disksOf(disks []DiskPin, name string) []DiskPin {
	out := []DiskPin{}
	for _, d := range disks {
		if d.Golden == name {
			out = append(out, d)
		}
	}
	return out
}

// NotCreated is a golden a catalog entry names that cozy-public does not
// hold yet (pins GOLDEN before the catalog has imported it).
type NotCreated struct {
	Golden string `json:"golden"`
	// Entry is the catalog entry that names it, as the catalog chart labels
	// it; ValuesFrom where the catalog's values were read.
	Entry      string `json:"entry"`
	ValuesFrom string `json:"valuesFrom"`
	// InPackage: the entry is in the values of the cluster's Package
	// cozystack.kubernetes-worker-image, so the catalog creates the golden
	// at its next upgrade; false: the cluster has no such Package, and the
	// entry is one of the catalog's built-in values.
	InPackage bool `json:"inPackage"`
}

// CatalogEntryFor says which catalog entry names the golden name, in the
// catalog values the cluster holds (its Package, else the catalog's
// built-in values), as the catalog chart itself resolves them: nil when
// none does.
func CatalogEntryFor(t Target, name string) (*NotCreated, error) {
	vals, from, found, err := catalogValuesFromCluster(t)
	if err != nil {
		return nil, err
	}
	chrt, err := fleet.CatalogChart()
	if err != nil {
		return nil, fmt.Errorf("built-in chart %s: %v", render.CatalogChart, err)
	}
	entries, err := catalogGoldens(chrt, t.Options(render.Release{Name: catalogRelease, Namespace: golden.Namespace, Upgrade: true}, vals))
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name == name && !e.Retire {
			return &NotCreated{Golden: name, Entry: e.Label, ValuesFrom: from, InPackage: found}, nil
		}
	}
	return nil, nil
}
