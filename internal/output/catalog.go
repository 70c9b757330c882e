package output

import (
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/report"
	yaml "go.yaml.in/yaml/v3"
)

// catalogValuesYAML writes the catalog change whole, with the catalog's
// new images list, each entry under a comment saying why it is there, with a
// YAML library (yamlText): the Package with the list in its
// spec.components.kubernetes-worker-image.values (every other field as the
// cluster holds it), or the platform's values with their
// kubernetesWorkerImage.images replaced. Something to apply as it is, not a
// part to merge by hand.
func catalogValuesYAML(c report.AdoptCatalog) string {
	if c.ChangeShape == report.ShapePlatform {
		doc := valuesNode(c.Platform)
		section := mapKey(doc, "kubernetesWorkerImage")
		*mapKey(section, "images") = *imagesNode(c.Images)
		setDefaults(doc, c.NewPools)
		return yamlText(doc)
	}
	doc := valuesNode(c.Package)
	values := mapKey(mapKey(mapKey(mapKey(doc, "spec"), "components"), "kubernetes-worker-image"), "values")
	*mapKey(values, "images") = *imagesNode(c.Images)
	setDefaults(values, c.NewPools)
	return yamlText(doc)
}

// setDefaults writes each default a rollout moves for new pools at its key
// under root (the platform's values or the catalog's), under a comment
// saying what new pools take until then.
func setDefaults(root *yaml.Node, moves []report.DefaultMove) {
	for _, m := range moves {
		path := strings.Split(m.Key, ".")
		at := root
		for _, k := range path[:len(path)-1] {
			at = mapKey(at, k)
		}
		value := yamlString(m.To)
		value.LineComment = fmt.Sprintf("new pools take it from then on; now %s (%s)", m.From.Value, m.From.Source)
		last := path[len(path)-1]
		set := false
		for i := 0; i+1 < len(at.Content); i += 2 {
			if at.Content[i].Value == last {
				at.Content[i+1] = value
				set = true
			}
		}
		if !set {
			at.Content = append(at.Content, yamlString(last), value)
		}
	}
}

// mapKey is the value of key in the mapping m, added (an empty mapping)
// when m has none or holds something else there.
func mapKey(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind != yaml.MappingNode && key != "images" {
				*v = yaml.Node{Kind: yaml.MappingNode}
			}
			v.Style = 0
			return v
		}
	}
	v := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, yamlString(key), v)
	return v
}

// imagesNode is the images list, each entry under a comment saying why.
func imagesNode(entries []report.CatalogEntry) *yaml.Node {
	items := &yaml.Node{Kind: yaml.SequenceNode}
	for _, e := range entries {
		var why string
		switch e.Change {
		case report.ChangeKept:
			why = fmt.Sprintf("kept as its golden %s shows it", e.Plain)
		case report.ChangeClassesAdded:
			why = fmt.Sprintf("kept, with additionalStorageClasses %s added for %s", strings.Join(e.AddedClasses, ", "), poolsText(e.Pools))
		case report.ChangeNew:
			why = fmt.Sprintf("new, golden %s, for %s", e.Plain, poolsText(e.Pools))
			if len(e.Pools) == 0 {
				why = fmt.Sprintf("new, golden %s, for new pools", e.Plain)
			}
		case report.ChangeListed:
			why = fmt.Sprintf("kept as the cluster's catalog values list it: its golden %s is not created yet", e.Plain)
		}
		comments := []string{why}
		if e.FactoryNote != "" {
			comments = append(comments, "note: "+e.FactoryNote)
		}
		for _, n := range e.Notes {
			comments = append(comments, "note: "+n)
		}
		img := e.Entry
		item := yamlMap(false, "schematicID", yamlString(img.SchematicID), "version", yamlString(img.Version))
		if img.ImageFactoryURL != "" {
			item.Content = append(item.Content, yamlString("imageFactoryURL"), yamlString(img.ImageFactoryURL))
		}
		if img.ImageFactoryCA != "" {
			item.Content = append(item.Content, yamlString("imageFactoryCA"), yamlString(img.ImageFactoryCA))
		}
		if img.Checksum != "" {
			item.Content = append(item.Content, yamlString("checksum"), yamlString(img.Checksum))
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
	return items
}

func poolsText(pools []string) string {
	shown := pools
	if len(shown) > 3 {
		shown = shown[:3]
	}
	s := report.Count(len(pools), "pool") + ": " + strings.Join(shown, ", ")
	if len(pools) > 3 {
		s += fmt.Sprintf(" and %d more", len(pools)-3)
	}
	return s
}

func writeCatalogText(tb *table, c report.AdoptCatalog) {
	if !c.Changed {
		tb.raw("catalog: no change needed (no pool that imports over HTTP waits for a golden)")
		return
	}
	// A rollout whose every golden exists moves only the default for new
	// pools: nothing to import.
	what, wait := "the catalog's new images list", ", then wait for the new goldens to import"
	if !imagesChanged(c) {
		what, wait = "the Talos release new pools take moved", ""
	}
	switch {
	case c.ChangeShape == report.ShapePlatform:
		tb.raw("catalog: the platform's values with " + what + ", complete: upgrade the platform with them as they are")
		tb.raw("(helm upgrade cozystack -n cozy-system -f FILE)" + wait + ". They are " + c.ValuesFrom + ",")
		tb.raw("with kubernetesWorkerImage.images replaced: the catalog's whole list, every entry it has today in it too, each as its golden shows it:")
	default:
		tb.raw("catalog: the catalog's Package with " + strings.Replace(what, "the catalog's new", "its new", 1) + ", complete: " + c.ValuesFrom + ".")
		tb.raw("Save it to a file, preview it with workerimage catalog -f FILE against this cluster, apply it with kubectl apply -f FILE")
		tb.raw("(or commit it where you keep that object)" + wait + ". Every field and value it holds today is kept;")
		tb.raw("spec.components.kubernetes-worker-image.values.images is the catalog's whole list, every entry it has today in it too, each as its golden shows it:")
	}
	for _, m := range c.NewPools {
		tb.raw(fmt.Sprintf("new pools take %s from then on: %s (now %s, %s); a pool takes it when created, so no running pool rolls for it", m.To, m.Key, m.From.Value, m.From.Source))
	}
	if c.NewPoolsNote != "" {
		tb.raw(c.NewPoolsNote)
	}
	for _, e := range c.Images {
		if e.Change == report.ChangeListed {
			tb.raw("(an entry whose golden is not created yet is kept as the cluster's catalog values list it: applying the list never drops it)")
			break
		}
	}
	for _, l := range strings.Split(strings.TrimSuffix(c.Values, "\n"), "\n") {
		tb.raw(l)
	}
}

// imagesChanged: the change adds an entry or a class, a golden to import.
func imagesChanged(c report.AdoptCatalog) bool {
	for _, e := range c.Images {
		if e.Change == report.ChangeNew || e.Change == report.ChangeClassesAdded {
			return true
		}
	}
	return false
}
