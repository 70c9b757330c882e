// The catalog change adopt and rollout print. The catalog takes its images
// list whole (from its Package, which the platform writes where it forwards
// kubernetesWorkerImage.images), so the list must hold every entry the
// catalog has today, or the change would drop their goldens from the clone
// Role. Those entries are read back from the goldens in cozy-public, with
// the very fields the catalog compares an entry with
// (kubernetes-worker-image.assertUnchanged), so it reads none as edited.

package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
)

// CatalogFor is the images list with what the pools wait for: a per-class
// golden adds the pool's class to its flavor's entry; a missing flavor gets
// an entry on the class most of its pools are on, the others as additional
// classes, and no imageFactoryURL of its own: it imports from the catalog's
// URL (catalogURL), whatever URL its pools boot from. A pool booting from
// another URL than its entry imports from is listed with both. The change
// is written where the cluster's catalog values are (home).
// Every entry the cluster's catalog values list stays in the list, created
// or not: an entry whose golden is not in cozy-public yet is kept as they
// write it (listedEntries).
func CatalogFor(home CatalogHome, stored map[string]fleet.Golden, pools []AdoptPool, catalogURL Sourced) (AdoptCatalog, error) {
	listed, err := imagesOf(home.CatalogValues(), "")
	if err != nil {
		return AdoptCatalog{}, err
	}
	_, listsImages := home.CatalogValues()["images"]
	c := catalogEntriesFor(stored, listedEntries(listed, listsImages, stored, catalogURL), pools, catalogURL)
	if c.Changed {
		c.At(home)
	}
	return c, nil
}

// At writes the change where home holds the catalog's values.
func (c *AdoptCatalog) At(home CatalogHome) {
	c.ChangeShape, c.ValuesFrom, c.WholePlatform = home.Shape, home.From, home.Shape == ShapePlatform
	c.Platform, c.Package = home.Platform, home.Package
}

// listedEntries are the images[] entries of the cluster's catalog values
// (listed; the chart's default list where they list none: listsImages
// false) whose plain golden cozy-public does not hold: the list printed must
// keep them, or applying it would drop an entry the catalog is about to
// create. Each is kept field for field as written.
func listedEntries(listed []map[string]any, listsImages bool, stored map[string]fleet.Golden, catalogURL Sourced) []CatalogEntry {
	var out []CatalogEntry
	seen := map[string]bool{}
	for _, m := range listed {
		str := func(k string) string { s, _ := m[k].(string); return s }
		img := CatalogImage{SchematicID: str("schematicID"), Version: str("version"), ImageFactoryURL: str("imageFactoryURL"), ImageFactoryCA: str("imageFactoryCA"), Checksum: str("checksum"), Storage: str("storage")}
		plain := golden.Name(img.SchematicID, img.Version)
		if _, ok := stored[plain]; ok || seen[plain] || img.SchematicID == "" || img.Version == "" {
			continue
		}
		seen[plain] = true
		if c, ok := m["storageClass"].(string); ok {
			img.StorageClass = &c
		}
		for _, c := range asList(m["additionalStorageClasses"]) {
			if s, ok := c.(string); ok {
				img.AdditionalStorageClasses = append(img.AdditionalStorageClasses, s)
			}
		}
		img.Retire, _ = m["retire"].(bool)
		e := CatalogEntry{Plain: plain, Change: ChangeListed, Entry: img, ImportsFrom: img.ImageFactoryURL}
		if e.ImportsFrom == "" {
			e.ImportsFrom = catalogURL.Value
		}
		if !listsImages {
			e.Notes = append(e.Notes, "the chart's default entry: the cluster's catalog values list no images, so the chart's default list applies; written out so the list keeps it")
		}
		out = append(out, e)
	}
	return out
}

// catalogEntriesFor is catalogFor's images list: the entries read back from
// the goldens, those listed with no golden yet (listed), and the pools'.
func catalogEntriesFor(stored map[string]fleet.Golden, listed []CatalogEntry, pools []AdoptPool, catalogURL Sourced) AdoptCatalog {
	entries := append(existingEntries(stored), listed...)
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Plain < entries[j].Plain })
	byPlain := map[string]*CatalogEntry{}
	for i := range entries {
		byPlain[entries[i].Plain] = &entries[i]
	}
	type wanted struct {
		schematicID, version string
		classes              map[string]int
		pools                []AdoptPool
	}
	missing := map[string]*wanted{}
	sorted := append([]AdoptPool(nil), pools...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].HelmRelease < sorted[j].HelmRelease })
	for _, p := range sorted {
		if p.Outcome != OutcomeNeedsEntry && p.Outcome != OutcomeNeedsPerClass {
			continue
		}
		plain := golden.Name(p.SchematicID, p.Version)
		if e := byPlain[plain]; e != nil {
			e.addClass(p.Class())
			e.Pools = append(e.Pools, p.HelmRelease)
			e.addURLPool(p)
			continue
		}
		w := missing[plain]
		if w == nil {
			w = &wanted{schematicID: p.SchematicID, version: p.Version, classes: map[string]int{}}
			missing[plain] = w
		}
		w.classes[p.Class()]++
		w.pools = append(w.pools, p)
	}
	for _, plain := range SortedKeys(missing) {
		w := missing[plain]
		e := CatalogEntry{Plain: plain, Change: ChangeNew, ImportsFrom: catalogURL.Value, Entry: CatalogImage{SchematicID: w.schematicID, Version: w.version}}
		for _, p := range w.pools {
			e.Pools = append(e.Pools, p.HelmRelease)
			e.addURLPool(p)
		}
		classes := byCount(w.classes)
		for _, c := range classes {
			switch {
			case c == "":
				// Pools without a class compare none: any class serves them.
			case e.Entry.StorageClass == nil:
				c := c
				e.Entry.StorageClass = &c
			default:
				e.Entry.AdditionalStorageClasses = append(e.Entry.AdditionalStorageClasses, c)
			}
		}
		if e.Entry.StorageClass == nil {
			e.Notes = append(e.Notes, "its pools' class is not known: the golden goes on the catalog's storageClass")
		}
		entries = append(entries, e)
	}
	c := AdoptCatalog{URL: catalogURL, Images: entries}
	for i := range entries {
		e := &entries[i]
		c.Changed = c.Changed || e.Change == ChangeNew || e.Change == ChangeClassesAdded
		if len(e.OtherURLPools) > 0 {
			e.Notes = append(e.Notes, urlNote(*e))
		}
	}
	if c.Images == nil {
		c.Images = []CatalogEntry{}
	}
	return c
}

// addURLPool lists p when it boots the flavor from another factory URL than
// the entry's goldens import from.
func (e *CatalogEntry) addURLPool(p AdoptPool) {
	if e.ImportsFrom != "" && p.ImageFactoryURL != e.ImportsFrom {
		e.OtherURLPools = append(e.OtherURLPools, URLPool{HelmRelease: p.HelmRelease, ImageFactoryURL: p.ImageFactoryURL})
	}
}

func urlNote(e CatalogEntry) string {
	shown := e.OtherURLPools
	if len(shown) > 3 {
		shown = shown[:3]
	}
	var parts []string
	for _, p := range shown {
		parts = append(parts, fmt.Sprintf("%s from %s", p.HelmRelease, p.ImageFactoryURL))
	}
	more := ""
	if len(e.OtherURLPools) > 3 {
		more = fmt.Sprintf(" and %d more", len(e.OtherURLPools)-3)
	}
	return fmt.Sprintf("its goldens import from %s; pools that boot this flavor from another URL today: %s%s. Switching them changes where their image comes from: decide before pasting (a pool left on HTTP keeps its own source)",
		e.ImportsFrom, strings.Join(parts, ", "), more)
}

// addClass lists class in the entry's additionalStorageClasses, unless the
// entry's golden is on it already.
func (e *CatalogEntry) addClass(class string) {
	if class == "" || (e.Entry.StorageClass != nil && *e.Entry.StorageClass == class) {
		return
	}
	for _, c := range e.Entry.AdditionalStorageClasses {
		if c == class {
			return
		}
	}
	e.Entry.AdditionalStorageClasses = append(e.Entry.AdditionalStorageClasses, class)
	sort.Strings(e.Entry.AdditionalStorageClasses)
	e.AddedClasses = append(e.AddedClasses, class)
	sort.Strings(e.AddedClasses)
	e.Change = ChangeClassesAdded
}

// existingEntries reads each flavor's entry back from its goldens: the plain
// golden's source URL (less the path the catalog appends), storage and class,
// its per-class goldens' classes, and retire when it is marked retiring.
func existingEntries(stored map[string]fleet.Golden) []CatalogEntry {
	type flavor struct {
		schematicID, version string
		plain                *fleet.Golden
		perClass             map[string]fleet.Golden
	}
	flavors := map[string]*flavor{}
	for _, name := range SortedKeys(stored) {
		fl, ok := golden.Parse(name)
		plain, schematicID, version, class := fl.Plain, fl.SchematicID, fl.Version, fl.Class
		if !ok {
			continue
		}
		f := flavors[plain]
		if f == nil {
			f = &flavor{schematicID: schematicID, version: version, perClass: map[string]fleet.Golden{}}
			flavors[plain] = f
		}
		g := stored[name]
		if class == "" {
			f.plain = &g
		} else {
			f.perClass[class] = g
		}
	}
	var out []CatalogEntry
	for _, plain := range SortedKeys(flavors) {
		f := flavors[plain]
		e := CatalogEntry{Plain: plain, Change: ChangeKept, Entry: CatalogImage{SchematicID: f.schematicID, Version: f.version}}
		src := f.plain
		if src == nil {
			first := f.perClass[SortedKeys(f.perClass)[0]]
			src = &first
			e.Notes = append(e.Notes, "its own golden "+plain+" is not in cozy-public: storageClass is not known, set it as in your values")
		} else {
			class := src.Class
			e.Entry.StorageClass = &class
			e.Entry.Retire = src.Retiring
		}
		suffix := golden.ImagePath(f.schematicID, f.version)
		switch {
		case strings.HasSuffix(src.URL, suffix):
			e.Entry.ImageFactoryURL = strings.TrimSuffix(src.URL, suffix)
			e.ImportsFrom = e.Entry.ImageFactoryURL
		case src.URL == "":
			e.Notes = append(e.Notes, "its source URL is not recorded on its golden (only its PVC is left): imageFactoryURL as in your values")
		default:
			e.Notes = append(e.Notes, fmt.Sprintf("its source URL %q is not one the catalog builds: imageFactoryURL as in your values", src.URL))
		}
		e.Entry.Storage = src.Storage
		if src.Storage == "" {
			e.Notes = append(e.Notes, "its storage is not recorded on its golden: storage as in your values")
		}
		e.Entry.AdditionalStorageClasses = SortedKeys(f.perClass)
		out = append(out, e)
	}
	return out
}

// byCount lists the keys by how many counted them, most first, then by name.
func byCount(m map[string]int) []string {
	keys := SortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}
