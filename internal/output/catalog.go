package output

import (
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/report"
	yaml "go.yaml.in/yaml/v3"
)

// catalogValuesYAML writes the list for the platform's values, each entry
// under a comment saying why it is there, with a YAML library (yamlText).
func catalogValuesYAML(entries []report.CatalogEntry) string {
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
	tb.raw("catalog: paste into the platform's values, then wait for the new goldens to import. kubernetesWorkerImage.images replaces")
	tb.raw("the catalog's whole list, so every entry it has today is in it too, each as its golden shows it:")
	for _, l := range strings.Split(strings.TrimSuffix(c.Values, "\n"), "\n") {
		tb.raw(l)
	}
}
