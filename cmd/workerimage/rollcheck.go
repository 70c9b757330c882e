package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
)

// maxDiffLines bounds the excerpt of a template body change: enough to see
// what moved, short enough to scan a fleet.
const maxDiffLines = 6

type rollReport struct {
	Base    string     `json:"base"`
	Head    string     `json:"head"`
	Cluster string     `json:"cluster"`
	Pools   []poolRoll `json:"pools"`
	Summary struct {
		Pools         int `json:"pools"`
		Rolls         int `json:"rolls"`
		RefusedAtHead int `json:"refusedAtHead"`
		RefusedAtBase int `json:"refusedAtBaseOnly"`
		NoRoll        int `json:"noRoll"`
	} `json:"summary"`
}

type poolRoll struct {
	Values    string   `json:"values"`
	Release   string   `json:"release"`
	Namespace string   `json:"namespace"`
	Base      rollSide `json:"base"`
	Head      rollSide `json:"head"`
	// Status: "no roll", "rolls", "refused at head", "refused at base" or "refused at both".
	Status string `json:"status"`
	Rolls  bool   `json:"rolls"`
	// FirstDiffLine is the base body's line (1-based) where the first change starts.
	FirstDiffLine int      `json:"firstDiffLine,omitempty"`
	Diff          []string `json:"diff,omitempty"`
	// OtherChanges are the release's other objects whose text changes; none of
	// them rolls the pool (the TalosConfigTemplate's name is stable).
	OtherChanges []string `json:"otherChanges,omitempty"`
}

type rollSide struct {
	MachineTemplate string `json:"machineTemplate,omitempty"`
	Refusal         string `json:"refusal,omitempty"`
	body            string
	docs            map[string]string
}

func (a app) rollcheck(args []string, out *bytes.Buffer) (int, error) {
	fs := newFlags("rollcheck")
	base := fs.String("base", "", "checkout of the chart's current version (its "+render.PoolChart+" is rendered)")
	head := fs.String("head", "", "checkout of the chart's next version")
	glob := fs.String("values", "", "pool values files (a glob, quoted)")
	state := fs.String("cluster", "", "cluster state file (optional; default: no cluster, as helm template)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of a live cluster (optional)")
	release := fs.String("release", "", "release name for every pool (default kubernetes-nodes-<cluster>-<values file name>)")
	namespace := fs.String("namespace", "", "release namespace for every pool (default tenant-<cluster>)")
	output := fs.String("o", "text", "output: text or json")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if *base == "" || *head == "" || *glob == "" {
		return 0, problemf("-base, -head and -values are required")
	}
	if err := oneOf("o", *output, "text", "json"); err != nil {
		return 0, err
	}
	files, err := filepath.Glob(*glob)
	if err != nil {
		return 0, problemf("-values %q: %v", *glob, err)
	}
	if len(files) == 0 {
		return 0, problemf("-values %q matches no file", *glob)
	}
	sort.Strings(files)
	baseChart, err := chartAt(*base)
	if err != nil {
		return 0, err
	}
	headChart, err := chartAt(*head)
	if err != nil {
		return 0, err
	}
	valuesOf := map[string]map[string]interface{}{}
	for _, f := range files {
		if valuesOf[f], err = readValues(f); err != nil {
			return 0, err
		}
	}
	t, err := a.connect(*state, *kubeconfig, false)
	if err != nil {
		return 0, err
	}

	rep := rollReport{Base: *base, Head: *head, Cluster: t.desc}
	for _, f := range files {
		vals := valuesOf[f]
		rel := releaseFor(f, vals, *release, *namespace)
		p := poolRoll{Values: f, Release: rel.Name, Namespace: rel.Namespace}
		if p.Base, err = renderSide(baseChart, t, rel, vals); err != nil {
			return 0, err
		}
		if p.Head, err = renderSide(headChart, t, rel, vals); err != nil {
			return 0, err
		}
		compareSides(&p)
		rep.Pools = append(rep.Pools, p)
		rep.Summary.Pools++
		switch {
		case p.Rolls:
			rep.Summary.Rolls++
		case p.Head.Refusal != "":
			rep.Summary.RefusedAtHead++
		case p.Base.Refusal != "":
			rep.Summary.RefusedAtBase++
		default:
			rep.Summary.NoRoll++
		}
	}
	if *output == "json" {
		writeJSON(out, rep)
	} else {
		writeRollText(out, &rep)
	}
	if rep.Summary.Rolls > 0 || rep.Summary.RefusedAtHead > 0 {
		return exitAttn, nil
	}
	return exitOK, nil
}

func chartAt(dir string) (*chart.Chart, error) {
	path := filepath.Join(dir, render.PoolChart)
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return nil, problemf("%s: no pool chart there (want a checkout of this repository)", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, problemf("%s: %v", path, err)
	}
	return loadPoolChart(abs)
}

func renderSide(chrt *chart.Chart, t target, rel render.Release, vals map[string]interface{}) (rollSide, error) {
	m, err := render.Render(chrt, t.options(rel, vals))
	if err != nil {
		refusal, prob := renderFailure(err)
		if prob != nil {
			return rollSide{}, prob
		}
		return rollSide{Refusal: refusal}, nil
	}
	s := rollSide{docs: map[string]string{}}
	for _, d := range m.Docs {
		if d.Kind() == "KubevirtMachineTemplate" {
			s.MachineTemplate = d.Name()
			s.body = templateBody(d.Text)
			continue
		}
		s.docs[d.Kind()+"/"+d.Name()] = d.Text
	}
	return s, nil
}

// templateBody is the part of the KubevirtMachineTemplate that is hashed into
// its name: everything under spec.
func templateBody(text string) string {
	if _, after, ok := strings.Cut(text, "\nspec:\n"); ok {
		return after
	}
	return text
}

func compareSides(p *poolRoll) {
	switch {
	case p.Base.Refusal != "" && p.Head.Refusal != "":
		p.Status = "refused at both"
		return
	case p.Base.Refusal != "":
		p.Status = "refused at base"
		return
	case p.Head.Refusal != "":
		p.Status = "refused at head"
		return
	}
	p.Rolls = p.Base.MachineTemplate != p.Head.MachineTemplate
	p.Status = "no roll"
	if p.Rolls {
		p.Status = "rolls"
	}
	if p.Base.body != p.Head.body {
		p.FirstDiffLine, p.Diff = firstHunk(splitLines(p.Base.body), splitLines(p.Head.body), maxDiffLines)
	}
	keys := map[string]bool{}
	for k := range p.Base.docs {
		keys[k] = true
	}
	for k := range p.Head.docs {
		keys[k] = true
	}
	for k := range keys {
		b, inBase := p.Base.docs[k]
		h, inHead := p.Head.docs[k]
		// The MachineDeployment names the template: that reference moving is
		// the roll itself, already reported, not another change.
		h = strings.ReplaceAll(h, p.Head.MachineTemplate, p.Base.MachineTemplate)
		switch {
		case !inBase:
			p.OtherChanges = append(p.OtherChanges, k+" (added)")
		case !inHead:
			p.OtherChanges = append(p.OtherChanges, k+" (removed)")
		case b != h:
			p.OtherChanges = append(p.OtherChanges, k+" (changed)")
		}
	}
	sort.Strings(p.OtherChanges)
}

func splitLines(s string) []string {
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

// firstHunk diffs two bodies line by line (longest common subsequence) and
// returns the base line where the first change starts and that change's lines,
// "-" for base and "+" for head, at most max of them.
func firstHunk(a, b []string, max int) (int, []string) {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else if lcs[i+1][j] >= lcs[i][j+1] {
				lcs[i][j] = lcs[i+1][j]
			} else {
				lcs[i][j] = lcs[i][j+1]
			}
		}
	}
	start := 0
	var out []string
	emit := func(line string, at int) bool {
		if start == 0 {
			start = at
		}
		if len(out) == max {
			out = append(out, "...")
			return false
		}
		out = append(out, line)
		return true
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			if start != 0 {
				return start, out
			}
			i, j = i+1, j+1
		case j == len(b) || (i < len(a) && lcs[i+1][j] >= lcs[i][j+1]):
			if !emit("-"+a[i], i+1) {
				return start, out
			}
			i++
		default:
			if !emit("+"+b[j], i+1) {
				return start, out
			}
			j++
		}
	}
	return start, out
}

func writeRollText(out *bytes.Buffer, r *rollReport) {
	var head table
	head.raw("base     " + r.Base)
	head.raw("head     " + r.Head)
	head.raw("cluster  " + r.Cluster)
	head.raw("")
	head.write(out)
	var tb table
	tb.row("VALUES", "MACHINE TEMPLATE AT BASE", "AT HEAD", "ROLL")
	for _, p := range r.Pools {
		tb.row(p.Values, sideName(p.Base), sideName(p.Head), p.Status)
		switch {
		case p.Base.Refusal != "" && p.Base.Refusal == p.Head.Refusal:
			tb.raw("    refused at base and head: " + p.Base.Refusal)
		default:
			if p.Base.Refusal != "" {
				tb.raw("    refused at base: " + p.Base.Refusal)
			}
			if p.Head.Refusal != "" {
				tb.raw("    refused at head: " + p.Head.Refusal)
			}
		}
		if len(p.Diff) > 0 {
			tb.raw(fmt.Sprintf("    template body, first change at line %d:", p.FirstDiffLine))
			for _, l := range p.Diff {
				tb.raw("      " + l)
			}
		}
		if len(p.OtherChanges) > 0 {
			tb.raw("    also changes (never rolls): " + strings.Join(p.OtherChanges, ", "))
		}
	}
	tb.write(out)
	s := r.Summary
	fmt.Fprintf(out, "\n%s: %d roll, %d refused at head, %d refused at base only, %d no roll\n", count(s.Pools, "pool"), s.Rolls, s.RefusedAtHead, s.RefusedAtBase, s.NoRoll)
}

func sideName(s rollSide) string {
	if s.Refusal != "" {
		return "(refused)"
	}
	return s.MachineTemplate
}
