package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
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
		// Unresolved counts the cluster's pools whose values could not be
		// computed (-values omitted): they are not checked.
		Unresolved int `json:"unresolved,omitempty"`
	} `json:"summary"`
}

type poolRoll struct {
	// Values is the values file, or, for a pool read from the cluster, its
	// HelmRelease ("helmrelease <namespace>/<name>", or "release
	// <namespace>/<name>" for one installed without a HelmRelease).
	Values string `json:"values"`
	// Unresolved is why a cluster pool's values could not be computed.
	Unresolved string   `json:"unresolved,omitempty"`
	Release    string   `json:"release"`
	Namespace  string   `json:"namespace"`
	Base       rollSide `json:"base"`
	Head       rollSide `json:"head"`
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
	glob := fs.String("values", "", "pool values files (a glob, quoted); without it, every pool of the cluster, with its values as Flux computes them")
	state, kube := clusterFlags(fs, "kubeconfig of a live cluster (optional)")
	var artifacts stringList
	fs.Var(&artifacts, "artifact", "with a cluster and no -values: a chartRef name, NAME or NAMESPACE/NAME, that is the pool chart (repeatable)")
	release := fs.String("release", "", "release name for every pool (default kubernetes-nodes-<cluster>-<values file name>)")
	namespace := fs.String("namespace", "", "release namespace for every pool (default tenant-<cluster>)")
	output := fs.String("o", "text", "output: text or json")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	fromCluster := *glob == "" && (*state != "" || kube.given())
	if *base == "" || *head == "" || (*glob == "" && !fromCluster) {
		return 0, problemf("-base and -head are required, and -values or a cluster (-cluster, -kubeconfig, -context) to read the pools from")
	}
	if fromCluster && (*release != "" || *namespace != "") {
		return 0, problemf("-release and -namespace apply to -values files; a cluster's pools are installed as their HelmReleases say")
	}
	if err := oneOf("o", *output, "text", "json"); err != nil {
		return 0, err
	}
	baseChart, err := chartAt(*base)
	if err != nil {
		return 0, err
	}
	headChart, err := chartAt(*head)
	if err != nil {
		return 0, err
	}
	var pools []rollInput
	if !fromCluster {
		if pools, err = rollInputsFromFiles(*glob, *release, *namespace); err != nil {
			return 0, err
		}
	}
	t, err := a.connect(*state, *kube, false)
	if err != nil {
		return 0, err
	}
	if fromCluster {
		if pools, err = rollInputsFromCluster(t, fleet.Options{Chart: headChart.Metadata.Name, Artifacts: artifacts}); err != nil {
			return 0, err
		}
	}

	rep := rollReport{Base: *base, Head: *head, Cluster: t.desc}
	for _, in := range pools {
		vals, rel := in.values, in.release
		p := poolRoll{Values: in.source, Release: rel.Name, Namespace: rel.Namespace, Unresolved: in.unresolved}
		if in.unresolved != "" {
			p.Status = "values not resolved"
			rep.Pools = append(rep.Pools, p)
			rep.Summary.Pools++
			rep.Summary.Unresolved++
			continue
		}
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
	if rep.Summary.Rolls > 0 || rep.Summary.RefusedAtHead > 0 || rep.Summary.Unresolved > 0 {
		return exitAttn, nil
	}
	return exitOK, nil
}

// rollInput is one pool to check: where its values came from, the values
// and its release.
type rollInput struct {
	source     string
	values     map[string]interface{}
	release    render.Release
	unresolved string
}

func rollInputsFromFiles(glob, release, namespace string) ([]rollInput, error) {
	files, err := filepath.Glob(glob)
	if err != nil {
		return nil, problemf("-values %q: %v", glob, err)
	}
	if len(files) == 0 {
		return nil, problemf("-values %q matches no file", glob)
	}
	sort.Strings(files)
	var out []rollInput
	for _, f := range files {
		vals, err := readValues(f)
		if err != nil {
			return nil, err
		}
		out = append(out, rollInput{source: f, values: vals, release: releaseFor(f, vals, release, namespace)})
	}
	return out, nil
}

// rollInputsFromCluster reads the cluster's pools as pins does; a cluster
// that runs pools none of which could be read is a problem, never "nothing
// rolls".
func rollInputsFromCluster(t target, o fleet.Options) ([]rollInput, error) {
	fl, err := fleet.Read(context.Background(), t.provider, o)
	if err != nil {
		return nil, problemf("%v", err)
	}
	if fl.Resolved() == 0 && len(fl.PoolObjects) > 0 {
		return nil, problemf("could not read the pools (%s found, none whose values resolve), yet the cluster runs %s (%s); name their chart artifact with -artifact, or give -values", count(len(fl.Pools), "pool"), count(len(fl.PoolObjects), "pool object"), firstFive(fl.PoolObjects))
	}
	var out []rollInput
	for _, p := range fl.Pools {
		source := "helmrelease " + p.HelmRelease
		if p.HelmRelease == "" {
			source = "release " + p.ID()
		}
		out = append(out, rollInput{source: source, values: p.Values, unresolved: p.Unresolved,
			release: render.Release{Name: p.Release, Namespace: p.Namespace, Upgrade: true}})
	}
	return out, nil
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
		if p.Unresolved != "" {
			tb.raw("    not checked: " + p.Unresolved)
		}
	}
	tb.write(out)
	s := r.Summary
	fmt.Fprintf(out, "\n%s: %d roll, %d refused at head, %d refused at base only, %d no roll", count(s.Pools, "pool"), s.Rolls, s.RefusedAtHead, s.RefusedAtBase, s.NoRoll)
	if s.Unresolved > 0 {
		fmt.Fprintf(out, ", %d not resolved (not checked)", s.Unresolved)
	}
	out.WriteString("\n")
}

func sideName(s rollSide) string {
	if s.Refusal != "" {
		return "(refused)"
	}
	return s.MachineTemplate
}
