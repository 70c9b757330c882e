package main

import (
	"fmt"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// The catalog values adopt prints. The platform forwards
// kubernetesWorkerImage.images to the catalog as its whole images list, so the
// list must hold every entry the catalog has today, or the upgrade would drop
// their goldens from the clone Role. Those entries are read back from the
// goldens in cozy-public, with the very fields the catalog compares an entry
// with (kubernetes-worker-image.assertUnchanged), so it reads none as edited.

type adoptCatalog struct {
	// URL is the factory a new entry imports from: the platform's
	// kubernetesWorkerImage.imageFactoryURL, else the catalog's built-in one.
	// A new entry never takes a URL a tenant's pool chose.
	URL sourced `json:"url"`
	// Changed: some pool waits for a new entry or an added class.
	Changed bool `json:"changed"`
	// Images is the catalog's images list with the changes, existing entries
	// first (by golden name), then the new ones.
	Images []catalogEntry `json:"images"`
	// Values is the same list as YAML, with comments, to paste into the
	// platform's values; "" when nothing changes.
	Values string `json:"values"`
}

type catalogEntry struct {
	// Entry is the images[] entry, as the catalog takes it.
	Entry catalogImage `json:"entry"`
	// Change is kept (as its golden shows it), classes-added, or new.
	Change string `json:"change"`
	// AddedClasses are the classes added to additionalStorageClasses.
	AddedClasses []string `json:"addedClasses,omitempty"`
	// Pools are the HelmReleases of the pools that wait for the change.
	Pools []string `json:"pools,omitempty"`
	// ImportsFrom is the factory URL the entry's goldens import from (the
	// catalog's URL for a new entry; "" when it cannot be read back).
	ImportsFrom string `json:"importsFrom,omitempty"`
	// OtherURLPools are the pools waiting for the entry that boot its flavor
	// from another factory URL today: switching changes where their image
	// comes from, for the operator to decide.
	OtherURLPools []urlPool `json:"otherURLPools,omitempty"`
	// Notes say what could not be read back from the cluster.
	Notes []string `json:"notes,omitempty"`

	plain string
}

type urlPool struct {
	HelmRelease     string `json:"helmRelease"`
	ImageFactoryURL string `json:"imageFactoryURL"`
}

type catalogImage struct {
	SchematicID     string `json:"schematicID"`
	Version         string `json:"version"`
	ImageFactoryURL string `json:"imageFactoryURL,omitempty"`
	Storage         string `json:"storage,omitempty"`
	// StorageClass is set when known; "" (the cluster default) is a value.
	StorageClass             *string  `json:"storageClass,omitempty"`
	AdditionalStorageClasses []string `json:"additionalStorageClasses,omitempty"`
	Retire                   bool     `json:"retire,omitempty"`
}

const (
	changeKept         = "kept"
	changeClassesAdded = "classes-added"
	changeNew          = "new"
)

// catalogFor is the images list with what the pools wait for: a per-class
// golden adds the pool's class to its flavor's entry; a missing flavor gets
// an entry on the class most of its pools are on, the others as additional
// classes, and no imageFactoryURL of its own: it imports from the catalog's
// URL (catalogURL), whatever URL its pools boot from. A pool booting from
// another URL than its entry imports from is listed with both.
func catalogFor(stored map[string]storedGolden, pools []adoptPool, catalogURL sourced) adoptCatalog {
	entries := existingEntries(stored)
	byPlain := map[string]*catalogEntry{}
	for i := range entries {
		byPlain[entries[i].plain] = &entries[i]
	}
	type wanted struct {
		schematicID, version string
		classes              map[string]int
		pools                []adoptPool
	}
	missing := map[string]*wanted{}
	sorted := append([]adoptPool(nil), pools...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].HelmRelease < sorted[j].HelmRelease })
	for _, p := range sorted {
		if p.Outcome != outcomeNeedsEntry && p.Outcome != outcomeNeedsPerClass {
			continue
		}
		plain := goldenPrefix + p.schematicID + "-" + p.version
		if e := byPlain[plain]; e != nil {
			e.addClass(p.class())
			e.Pools = append(e.Pools, p.HelmRelease)
			e.addURLPool(p)
			continue
		}
		w := missing[plain]
		if w == nil {
			w = &wanted{schematicID: p.schematicID, version: p.version, classes: map[string]int{}}
			missing[plain] = w
		}
		w.classes[p.class()]++
		w.pools = append(w.pools, p)
	}
	for _, plain := range sortedKeys(missing) {
		w := missing[plain]
		e := catalogEntry{plain: plain, Change: changeNew, ImportsFrom: catalogURL.Value, Entry: catalogImage{SchematicID: w.schematicID, Version: w.version}}
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
	c := adoptCatalog{URL: catalogURL, Images: entries}
	for i := range entries {
		e := &entries[i]
		c.Changed = c.Changed || e.Change != changeKept
		if len(e.OtherURLPools) > 0 {
			e.Notes = append(e.Notes, urlNote(*e))
		}
	}
	if c.Images == nil {
		c.Images = []catalogEntry{}
	}
	if c.Changed {
		c.Values = catalogValuesYAML(entries)
	}
	return c
}

// addURLPool lists p when it boots the flavor from another factory URL than
// the entry's goldens import from.
func (e *catalogEntry) addURLPool(p adoptPool) {
	if e.ImportsFrom != "" && p.imageFactoryURL != e.ImportsFrom {
		e.OtherURLPools = append(e.OtherURLPools, urlPool{HelmRelease: p.HelmRelease, ImageFactoryURL: p.imageFactoryURL})
	}
}

func urlNote(e catalogEntry) string {
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
func (e *catalogEntry) addClass(class string) {
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
	e.Change = changeClassesAdded
}

// existingEntries reads each flavor's entry back from its goldens: the plain
// golden's source URL (less the path the catalog appends), storage and class,
// its per-class goldens' classes, and retire when it is marked retiring.
func existingEntries(stored map[string]storedGolden) []catalogEntry {
	type flavor struct {
		schematicID, version string
		plain                *storedGolden
		perClass             map[string]storedGolden
	}
	flavors := map[string]*flavor{}
	for _, name := range sortedKeys(stored) {
		plain, schematicID, version, class, ok := goldenFlavor(name)
		if !ok {
			continue
		}
		f := flavors[plain]
		if f == nil {
			f = &flavor{schematicID: schematicID, version: version, perClass: map[string]storedGolden{}}
			flavors[plain] = f
		}
		g := stored[name]
		if class == "" {
			f.plain = &g
		} else {
			f.perClass[class] = g
		}
	}
	var out []catalogEntry
	for _, plain := range sortedKeys(flavors) {
		f := flavors[plain]
		e := catalogEntry{plain: plain, Change: changeKept, Entry: catalogImage{SchematicID: f.schematicID, Version: f.version}}
		src := f.plain
		if src == nil {
			first := f.perClass[sortedKeys(f.perClass)[0]]
			src = &first
			e.Notes = append(e.Notes, "its own golden "+plain+" is not in cozy-public: storageClass is not known, set it as in your values")
		} else {
			class := src.class
			e.Entry.StorageClass = &class
			e.Entry.Retire = src.retiring
		}
		suffix := "/image/" + f.schematicID + "/" + f.version + "/openstack-amd64.raw.xz"
		switch {
		case strings.HasSuffix(src.url, suffix):
			e.Entry.ImageFactoryURL = strings.TrimSuffix(src.url, suffix)
			e.ImportsFrom = e.Entry.ImageFactoryURL
		case src.url == "":
			e.Notes = append(e.Notes, "its source URL is not recorded on its golden (only its PVC is left): imageFactoryURL as in your values")
		default:
			e.Notes = append(e.Notes, fmt.Sprintf("its source URL %q is not one the catalog builds: imageFactoryURL as in your values", src.url))
		}
		e.Entry.Storage = src.storage
		if src.storage == "" {
			e.Notes = append(e.Notes, "its storage is not recorded on its golden: storage as in your values")
		}
		e.Entry.AdditionalStorageClasses = sortedKeys(f.perClass)
		out = append(out, e)
	}
	return out
}

// byCount lists the keys by how many counted them, most first, then by name.
func byCount(m map[string]int) []string {
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}

// catalogValuesYAML writes the list for the platform's values, each entry
// under a comment saying why it is there, with a YAML library (yamlText).
func catalogValuesYAML(entries []catalogEntry) string {
	items := &yaml.Node{Kind: yaml.SequenceNode}
	for _, e := range entries {
		var why string
		switch e.Change {
		case changeKept:
			why = fmt.Sprintf("kept as its golden %s shows it", e.plain)
		case changeClassesAdded:
			why = fmt.Sprintf("kept, with additionalStorageClasses %s added for %s", strings.Join(e.AddedClasses, ", "), poolsText(e.Pools))
		case changeNew:
			why = fmt.Sprintf("new, golden %s, for %s", e.plain, poolsText(e.Pools))
		}
		comments := []string{why}
		for _, n := range e.Notes {
			comments = append(comments, "note: "+n)
		}
		img := e.Entry
		item := yamlMap(false, "schematicID", yamlString(img.SchematicID), "version", yamlString(img.Version))
		if img.ImageFactoryURL != "" {
			item.Content = append(item.Content, yamlString("imageFactoryURL"), yamlString(img.ImageFactoryURL))
		}
		if img.Storage != "" {
			item.Content = append(item.Content, yamlString("storage"), yamlString(img.Storage))
		}
		if img.StorageClass != nil {
			item.Content = append(item.Content, yamlString("storageClass"), yamlString(*img.StorageClass))
		}
		if len(img.AdditionalStorageClasses) > 0 {
			classes := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, c := range img.AdditionalStorageClasses {
				classes.Content = append(classes.Content, yamlString(c))
			}
			item.Content = append(item.Content, yamlString("additionalStorageClasses"), classes)
		}
		if img.Retire {
			item.Content = append(item.Content, yamlString("retire"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		}
		item.HeadComment = yamlComment(comments)
		items.Content = append(items.Content, item)
	}
	return yamlText(yamlMap(false, "kubernetesWorkerImage", yamlMap(false, "images", items)))
}

// yamlMap is a mapping of alternating keys and nodes (a string key each).
func yamlMap(flow bool, kv ...interface{}) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	if flow {
		m.Style = yaml.FlowStyle
	}
	for i := 0; i < len(kv); i += 2 {
		m.Content = append(m.Content, yamlString(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}

// yamlString is s as a string scalar that reads back as s under YAML 1.1
// (Helm reads values with sigs.k8s.io/yaml, a YAML 1.1 reader: yes, on, 0b101,
// 1_000 are not strings there) and YAML 1.2 readers: plain where both read the
// plain form back as s, in a block and in a flow collection, double-quoted
// otherwise.
func yamlString(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if !plainReadsBack(n) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func plainReadsBack(n *yaml.Node) bool {
	for _, doc := range []*yaml.Node{
		yamlMapNoCheck("k", n),
		yamlMapNoCheck("k", &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{n}}),
	} {
		text, err := yaml.Marshal(doc)
		if err != nil {
			return false
		}
		var v11 map[string]interface{}
		if err := sigsyaml.Unmarshal(text, &v11); err != nil || !readsAs(v11["k"], n.Value) {
			return false
		}
		var v12 map[string]interface{}
		if err := yaml.Unmarshal(text, &v12); err != nil || !readsAs(v12["k"], n.Value) {
			return false
		}
	}
	return true
}

func yamlMapNoCheck(key string, value *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, value}}
}

// readsAs: v is s, or a one-item list holding s.
func readsAs(v interface{}, s string) bool {
	if l, ok := v.([]interface{}); ok && len(l) == 1 {
		v = l[0]
	}
	got, ok := v.(string)
	return ok && got == s
}

// yamlComment is comment lines as YAML takes them: each escaped as the text
// reports are (termSafe), so no string ends the comment and starts data.
func yamlComment(lines []string) string {
	safe := make([]string, len(lines))
	for i, l := range lines {
		safe[i] = termSafe(l)
	}
	return strings.Join(safe, "\n")
}

// yamlText writes a document with 2-space indentation.
func yamlText(doc *yaml.Node) string {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(doc)
	_ = enc.Close()
	return b.String()
}

func poolsText(pools []string) string {
	shown := pools
	if len(shown) > 3 {
		shown = shown[:3]
	}
	s := count(len(pools), "pool") + ": " + strings.Join(shown, ", ")
	if len(pools) > 3 {
		s += fmt.Sprintf(" and %d more", len(pools)-3)
	}
	return s
}

func writeCatalogText(tb *table, c adoptCatalog) {
	if !c.Changed {
		tb.raw("catalog: no change needed (no pool that imports over HTTP waits for a golden)")
		return
	}
	tb.raw("catalog: paste into the platform's values, then wait for the new goldens to import. kubernetesWorkerImage.images replaces")
	tb.raw("the catalog's whole list, so every entry it has today is in it too, each as its golden shows it:")
	for _, l := range strings.Split(strings.TrimSuffix(c.Values, "\n"), "\n") {
		tb.raw(l)
	}
}
