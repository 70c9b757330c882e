package report

import (
	"fmt"
	"sort"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"
)

// A chart the CLI reads facts from (one that defines
// kubernetes-nodes.behindFacts) must define every named template the facts
// template reaches, directly or through the helpers it includes: one it
// lacks fails every render the facts are added to, which would read as the
// chart refusing each pool (rollcheck's "refused at base", "0 roll").

// missingFactsHelpers names the templates the facts template (diskSource
// reading the disk source) reaches that neither chrt nor a chart it depends
// on defines, sorted; none for a chart that defines them all. Only literal
// names are followed (include "x", template "x"): a name computed at render
// time cannot be known before it.
func missingFactsHelpers(chrt *chart.Chart, diskSourceHelper string) []string {
	defined := map[string]*parse.Tree{}
	collectDefines(chrt, defined)
	root := parseTrees("facts", string(factsBody(diskSourceHelper, false)))
	var queue []*parse.Tree
	for _, t := range root {
		queue = append(queue, t)
	}
	seen := map[string]bool{}
	missing := map[string]bool{}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		for _, name := range templateRefs(t.Root) {
			if seen[name] {
				continue
			}
			seen[name] = true
			if d, ok := defined[name]; ok {
				queue = append(queue, d)
			} else {
				missing[name] = true
			}
		}
	}
	return SortedKeys(missing)
}

// CheckFactsHelpers refuses a chart rollcheck would read facts from (one
// that defines kubernetes-nodes.behindFacts) but cannot, naming the chart
// (which, as the command line named it) and the templates it lacks: an
// error (exit 2), before any pool is rendered. A chart without behindFacts
// (upstream's) is compared without facts.
func CheckFactsHelpers(chrt *chart.Chart, which string) error {
	if !definesTemplate(chrt, "kubernetes-nodes.behindFacts") {
		return nil
	}
	return factsHelpersError(which, "it defines kubernetes-nodes.behindFacts but not", missingFactsHelpers(chrt, "kubernetes-nodes.diskSource"),
		"no pool would be compared. Give a chart that defines them (one of this workerimage's release: workerimage version), or upstream's chart, which workerimage renders without facts")
}

// CheckPoolChartFacts refuses a --chart that plan, pins and rollout, which
// read every pool through the facts template, cannot read facts from.
func CheckPoolChartFacts(chrt *chart.Chart, dir string) error {
	missing := map[string]bool{}
	for _, helper := range []string{"kubernetes-nodes.diskSource", "kubernetes-nodes.osImage"} {
		for _, m := range missingFactsHelpers(chrt, helper) {
			missing[m] = true
		}
	}
	return factsHelpersError("--chart "+dir, "it does not define", SortedKeys(missing),
		"no pool could be read through it. Give a chart of this workerimage's release (workerimage version), or leave out --chart for the one built in")
}

// factsHelpersError names the chart (which), what it lacks, and the advice.
func factsHelpersError(which, lacks string, missing []string, advice string) error {
	if len(missing) == 0 {
		return nil
	}
	quoted := make([]string, len(missing))
	for i, m := range missing {
		quoted[i] = fmt.Sprintf("%q", m)
	}
	return fmt.Errorf("%s cannot be read: %s %s, which workerimage's facts template reaches; every render of it would fail for that, not for its pool, and %s", which, lacks, strings.Join(quoted, ", "), advice)
}

// collectDefines parses every template of chrt and its dependencies (one
// namespace, as Helm's engine parses them) into the named templates they define.
func collectDefines(chrt *chart.Chart, into map[string]*parse.Tree) {
	for _, f := range chrt.Templates {
		for name, t := range parseTrees(f.Name, string(f.Data)) {
			if name != f.Name {
				into[name] = t
			}
		}
	}
	for _, dep := range chrt.Dependencies() {
		collectDefines(dep, into)
	}
}

// parseTrees parses one template file without knowing Helm's functions; a
// file that does not parse defines nothing here (its render reports it).
func parseTrees(name, text string) map[string]*parse.Tree {
	trees := map[string]*parse.Tree{}
	t := parse.New(name)
	t.Mode = parse.SkipFuncCheck
	if _, err := t.Parse(text, "", "", trees); err != nil {
		return nil
	}
	return trees
}

// templateRefs lists the literal template names a tree includes or calls.
func templateRefs(n parse.Node) []string {
	var out []string
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case nil:
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			if len(n.Args) > 1 {
				if id, ok := n.Args[0].(*parse.IdentifierNode); ok && id.Ident == "include" {
					if s, ok := n.Args[1].(*parse.StringNode); ok {
						out = append(out, s.Text)
					}
				}
			}
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.TemplateNode:
			out = append(out, n.Name)
			walk(n.Pipe)
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		}
	}
	walk(n)
	sort.Strings(out)
	return out
}
