package report

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/pmezard/go-difflib/difflib"
	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
)

// maxDiffLines bounds the excerpt of a template body change: enough to see
// what moved, short enough to scan a fleet.
const maxDiffLines = 6

// RollReport is what rollcheck answers: which pools the upgrade from base to
// head rolls. Base is a chart, or, with Deployed, what each pool runs now.
type RollReport struct {
	Base    string `json:"base"`
	Head    string `json:"head"`
	Cluster string `json:"cluster"`
	// Deployed: the base side of each pool is the KubevirtMachineTemplate its
	// MachineDeployment runs now, read from the cluster, not a chart's render.
	Deployed bool       `json:"deployed,omitempty"`
	Pools    []PoolRoll `json:"pools"`
	Summary  struct {
		Pools int `json:"pools"`
		Rolls int `json:"rolls"`
		// RefusedAtHead counts the pools the head chart refuses and base
		// renders (or that run now): the upgrade would fail their release.
		RefusedAtHead int `json:"refusedAtHead"`
		RefusedAtBase int `json:"refusedAtBaseOnly"`
		// RefusedAtBoth counts the pools both charts refuse: refused today as
		// well, so the upgrade changes nothing for them; reported, and they
		// do not fail the check.
		RefusedAtBoth int `json:"refusedAtBoth"`
		NoRoll        int `json:"noRoll"`
		// NotDeployed counts the pools (with Deployed) that have no
		// MachineDeployment yet: the upgrade creates them, rolling nothing.
		NotDeployed int `json:"notDeployed,omitempty"`
		// Unresolved counts the cluster's pools whose values could not be
		// computed (-values omitted), and the namespaces none of whose pools
		// could be read: they are not checked.
		Unresolved int `json:"unresolved,omitempty"`
		// Behind counts the pools the head chart renders that are behind what
		// it gives a new pool (PoolRoll.Behind): the upgrade moves none of
		// them; workerimage rollout does.
		Behind int `json:"behind,omitempty"`
		// UpstreamDefaults counts the pools that take upstream's
		// ApplicationDefinition's defaults at head where this chart gives
		// them another setting (PoolRoll.UpstreamDefaults).
		UpstreamDefaults int `json:"upstreamDefaults,omitempty"`
	} `json:"summary"`
	// Ignored are the cluster's tenant objects not read as pools: they name
	// what their place does not, or cannot be decoded.
	Ignored []fleet.Ignored `json:"ignored,omitempty"`
}

// PoolRoll is one pool rendered at base and at head.
type PoolRoll struct {
	// Values is the values file, or, for a pool read from the cluster, its
	// HelmRelease ("helmrelease <namespace>/<name>", or "release
	// <namespace>/<name>" for one installed without a HelmRelease).
	Values string `json:"values"`
	// Unresolved is why a cluster pool's values could not be computed.
	Unresolved string   `json:"unresolved,omitempty"`
	Release    string   `json:"release"`
	Namespace  string   `json:"namespace"`
	Base       RollSide `json:"base"`
	Head       RollSide `json:"head"`
	// Status: "no roll", "rolls", "refused at head", "refused at base",
	// "refused at both", "not deployed" or "values not resolved".
	Status string `json:"status"`
	Rolls  bool   `json:"rolls"`
	// FirstDiffLine is the base body's line (1-based) where the first change starts.
	FirstDiffLine int      `json:"firstDiffLine,omitempty"`
	Diff          []string `json:"diff,omitempty"`
	// OtherChanges are the release's other objects whose text changes; none of
	// them rolls the pool (the TalosConfigTemplate's name is stable).
	OtherChanges []string `json:"otherChanges,omitempty"`
	// Behind says how the pool, as the head chart renders it, is behind what
	// that chart gives a new pool (Behind): what a chart that only moves its
	// defaults leaves to workerimage rollout. Only for a head chart that
	// says (this chart's kubernetes-nodes.behindFacts).
	Behind []BehindReason `json:"behind,omitempty"`
	// UpstreamDefaults are the settings a HelmRelease of the cluster takes at
	// head from upstream's ApplicationDefinition's defaults (written into its
	// values by cozystack-api or upstream's form, or, with upstream's chart
	// at head, its own defaults) where this chart gives it another, each
	// with the fix (rollcheckupstream.go).
	UpstreamDefaults []UpstreamDefault `json:"upstreamDefaults,omitempty"`
}

// RollSide is one pool's render at one side: its template, or its refusal.
// On the deployed side, MachineTemplate is what the pool's MachineDeployment
// runs (its infrastructureRef), RunningFrom names that MachineDeployment.
type RollSide struct {
	MachineTemplate string `json:"machineTemplate,omitempty"`
	Refusal         string `json:"refusal,omitempty"`
	RunningFrom     string `json:"runningFrom,omitempty"`
	body            string
	object          map[string]any
	docs            map[string]string
	// running is what the side's chart resolved (a head render of a chart
	// that says); nil otherwise.
	running *Running
}

// Rollcheck renders every pool with the chart at base and at head against
// the same cluster and reports which would roll: a refusal is a report, a
// cluster problem an error.
func Rollcheck(baseChart, headChart *chart.Chart, t Target, base, head string, pools []RollInput) (RollReport, error) {
	rep := RollReport{Base: base, Head: head, Cluster: t.Desc}
	if err := CheckFactsHelpers(baseChart, "the base chart "+base); err != nil {
		return RollReport{}, err
	}
	if err := CheckFactsHelpers(headChart, "the head chart "+head); err != nil {
		return RollReport{}, err
	}
	err := rep.check(&t, headChart, pools, func(in RollInput, p *PoolRoll) error {
		var err error
		if p.Base, err = renderSide(baseChart, t, in.release, in.values); err != nil {
			return err
		}
		if p.Head, err = renderSide(headChart, t, in.release, in.values); err != nil {
			return err
		}
		compareSides(p)
		p.behindAtHead(t)
		return nil
	})
	return rep, err
}

// RollcheckDeployed answers "will upgrading to this chart roll my workers"
// against what runs: each pool rendered with the head chart against the
// cluster, its template name compared with the one its MachineDeployment
// runs (spec.template.spec.infrastructureRef), its body with that template's
// spec as the cluster stores it. Two GETs per pool, no list.
func RollcheckDeployed(headChart *chart.Chart, t Target, head string, pools []RollInput) (RollReport, error) {
	rep := RollReport{Base: "what each pool runs now (its MachineDeployment's KubevirtMachineTemplate)", Head: head, Cluster: t.Desc, Deployed: true}
	if err := CheckFactsHelpers(headChart, "the head chart "+head); err != nil {
		return RollReport{}, err
	}
	err := rep.check(&t, headChart, pools, func(in RollInput, p *PoolRoll) error {
		var err error
		if p.Base, err = runningSide(t, in.release); err != nil {
			return err
		}
		if p.Head, err = renderSide(headChart, t, in.release, in.values); err != nil {
			return err
		}
		if p.Base.RunningFrom == "" {
			p.Status = "not deployed"
			if p.Head.Refusal != "" {
				p.Status = "refused at head"
			}
			return nil
		}
		p.Head.body = normalizedSpec(p.Head.object)
		compareSides(p)
		p.OtherChanges = nil
		p.behindAtHead(t)
		return nil
	})
	return rep, err
}

// check reads the catalog's goldens into t once (what Behind compares
// with), then runs sides on every pool whose values resolved, names what a
// HelmRelease of the cluster takes from upstream's defaults at head
// (upstreamDefaults), and adds each pool to the report; a tenant object not
// read as a pool is listed apart. An error is a cluster problem, and the
// report is then not made.
func (r *RollReport) check(t *Target, headChart *chart.Chart, pools []RollInput, sides func(RollInput, *PoolRoll) error) error {
	var err error
	if t.Catalog, err = t.catalog(); err != nil {
		return err
	}
	poolChart, err := LoadPoolChart("")
	if err != nil {
		return err
	}
	headReadsRecord := readsCreationRecord(headChart)
	for i, in := range pools {
		if r.ignore(in) {
			continue
		}
		t.Progressf("rendering pool %d of %d: %s", i+1, len(pools), in.source)
		p := PoolRoll{Values: in.source, Release: in.release.Name, Namespace: in.release.Namespace, Unresolved: in.unresolved, Status: "values not resolved"}
		if in.unresolved == "" {
			err := sides(in, &p)
			if err == nil {
				p.UpstreamDefaults, err = upstreamDefaults(poolChart, *t, in, headReadsRecord)
			}
			if err != nil {
				*r = RollReport{}
				return err
			}
		}
		r.add(p)
	}
	return nil
}

// ignore lists in, when it is a tenant object not read as a pool, beside
// the pools; true when it was one.
func (r *RollReport) ignore(in RollInput) bool {
	if in.ignored == nil {
		return false
	}
	r.Ignored = append(r.Ignored, *in.ignored)
	return true
}

// add counts a checked pool into the summary.
func (r *RollReport) add(p PoolRoll) {
	r.Pools = append(r.Pools, p)
	r.Summary.Pools++
	if len(p.Behind) > 0 {
		r.Summary.Behind++
	}
	if len(p.UpstreamDefaults) > 0 {
		r.Summary.UpstreamDefaults++
	}
	switch {
	case p.Unresolved != "":
		r.Summary.Unresolved++
	case p.Rolls:
		r.Summary.Rolls++
	case p.Status == "refused at both":
		r.Summary.RefusedAtBoth++
	case p.Head.Refusal != "":
		r.Summary.RefusedAtHead++
	case p.Base.Refusal != "":
		r.Summary.RefusedAtBase++
	case p.Status == "not deployed":
		r.Summary.NotDeployed++
	default:
		r.Summary.NoRoll++
	}
}

// Attention: a pool rolls, is refused at head only, or was not checked. A
// pool refused at both sides is refused today too: the upgrade changes
// nothing for it.
func (r RollReport) Attention() bool {
	return r.Summary.Rolls > 0 || r.Summary.RefusedAtHead > 0 || r.Summary.Unresolved > 0
}

// RollInputsFromFiles reads the pools of values files (each argument a
// glob; every file it matches is one pool), released as ReleaseFor names them.
func RollInputsFromFiles(globs []string, release, namespace string) ([]RollInput, error) {
	var files []string
	seen := map[string]bool{}
	for _, glob := range globs {
		matched, err := filepath.Glob(glob)
		if err != nil {
			return nil, fmt.Errorf("values %q: %v", glob, err)
		}
		if len(matched) == 0 {
			return nil, fmt.Errorf("values %q matches no file", glob)
		}
		sort.Strings(matched)
		for _, f := range matched {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	var out []RollInput
	for _, f := range files {
		vals, err := ReadValues(f)
		if err != nil {
			return nil, err
		}
		out = append(out, RollInput{source: f, values: vals, release: ReleaseFor(f, vals, release, namespace)})
	}
	return out, nil
}

// RollInputsFromCluster reads the cluster's pools as pins does (only those of
// namespace, when it is not ""); a cluster that runs pools none of which
// could be read is a problem, never "nothing rolls", and each namespace none
// of whose pools could be read is a pool input not resolved: never checked,
// never "no roll".
func RollInputsFromCluster(t Target, o fleet.Options, namespace string) ([]RollInput, error) {
	t.Progressf("reading the pools (HelmReleases and Helm release records)")
	fl, err := fleet.Read(context.Background(), t.Provider, o)
	if err != nil {
		return nil, fmt.Errorf("%v", err)
	}
	if fl.Resolved() == 0 && len(fl.PoolObjects) > 0 {
		return nil, fmt.Errorf("could not read the pools (%s of the pool chart %s found, none whose values resolve), yet the cluster runs %s (%s); name their chart source with --artifact KIND/NAMESPACE/NAME, or give -f pool values files", Count(len(fl.Pools), "pool"), fl.PoolChart, Count(len(fl.PoolObjects), "pool object"), FirstFive(fl.PoolObjects))
	}
	var out []RollInput
	for _, p := range fl.Pools {
		if namespace != "" && p.Namespace != namespace {
			continue
		}
		source := "helmrelease " + p.HelmRelease
		if p.HelmRelease == "" {
			source = "release " + p.ID()
		}
		out = append(out, RollInput{source: source, values: p.Values, unresolved: p.Unresolved,
			release: render.Release{Name: p.Release, Namespace: p.Namespace, Upgrade: true}})
	}
	for _, u := range fl.Unread() {
		if namespace != "" && u.Namespace != namespace {
			continue
		}
		out = append(out, RollInput{source: "namespace " + u.Namespace, release: render.Release{Namespace: u.Namespace},
			unresolved: fmt.Sprintf("it holds %s (%s) and none of its pools could be read", Count(len(u.Objects), "pool object"), FirstFive(u.Objects))})
	}
	if namespace != "" && len(out) == 0 {
		set := map[string]bool{}
		for _, p := range fl.Pools {
			set[p.Namespace] = true
		}
		for _, u := range fl.Unread() {
			set[u.Namespace] = true
		}
		return nil, NoneSelected("namespace", namespace, "pool (a HelmRelease of the pool chart "+fl.PoolChart.String()+", or a Helm release record of it)", SortedKeys(set))
	}
	for i := range fl.Ignored {
		if namespace == "" || objectIn(fl.Ignored[i].Object, namespace) {
			out = append(out, RollInput{ignored: &fl.Ignored[i]})
		}
	}
	return out, nil
}

// runningSide reads the template a pool runs now: its MachineDeployment
// (named as the chart names it, kubernetes-<cluster>-<pool> from the release
// kubernetes-nodes-<cluster>-<pool>), the KubevirtMachineTemplate that names,
// and that template's spec. No MachineDeployment: the pool is not deployed.
func runningSide(t Target, rel render.Release) (RollSide, error) {
	ctx := context.Background()
	name := "kubernetes-" + strings.TrimPrefix(rel.Name, "kubernetes-nodes-")
	md, err := fleet.Get(ctx, t.Provider, machineDeploymentAPI, "MachineDeployment", rel.Namespace, name)
	if err != nil || md == nil {
		return RollSide{}, err
	}
	s := RollSide{RunningFrom: "MachineDeployment " + rel.Namespace + "/" + name}
	s.MachineTemplate = fleet.Text(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	if s.MachineTemplate == "" {
		s.MachineTemplate = "(none)"
		return s, nil
	}
	kmt, err := fleet.Get(ctx, t.Provider, machineTemplateAPI, "KubevirtMachineTemplate", rel.Namespace, s.MachineTemplate)
	if err != nil {
		return RollSide{}, err
	}
	if kmt != nil {
		s.body = normalizedSpec(kmt.Object)
	}
	return s, nil
}

const (
	machineDeploymentAPI = "cluster.x-k8s.io/v1beta1"
	machineTemplateAPI   = "infrastructure.cluster.x-k8s.io/v1alpha1"
)

// normalizedSpec writes an object's spec as sigs.k8s.io/yaml writes it
// (sorted keys), so a rendered template and one the cluster stores compare
// line by line whatever their formatting; "" without a spec.
func normalizedSpec(obj map[string]any) string {
	spec, ok := obj["spec"]
	if !ok {
		return ""
	}
	out, err := yaml.Marshal(spec)
	if err != nil {
		return ""
	}
	return string(out)
}

// behindAtHead judges the pool as the head chart renders it (a pool that
// renders there, of a head chart that says what it resolved).
func (p *PoolRoll) behindAtHead(t Target) {
	if p.Head.running != nil && p.Head.Refusal == "" {
		p.Behind = Behind(*p.Head.running, t.Catalog)
	}
}

// renderSide renders one side; with a chart that says what it resolved (this
// chart's kubernetes-nodes.behindFacts), it reads that from the same render.
func renderSide(chrt *chart.Chart, t Target, rel render.Release, vals map[string]any) (RollSide, error) {
	withFacts := definesTemplate(chrt, "kubernetes-nodes.behindFacts")
	rendered := chrt
	if withFacts {
		rendered = render.WithTemplate(chrt, factsTemplate, factsBody("kubernetes-nodes.diskSource", false))
	}
	opts := t.Options(rel, vals)
	if p := opts.Provider(); p != nil {
		// A chart named on the command line reads what the pool chart reads.
		opts.Cluster = render.OnlyKinds(p, poolChartKinds())
	}
	r, err := render.RenderLazy(rendered, opts)
	if err != nil {
		refusal, prob := RenderFailure(err)
		if prob != nil {
			return RollSide{}, prob
		}
		return RollSide{Refusal: refusal}, nil
	}
	s := RollSide{docs: map[string]string{}}
	if withFacts {
		facts, err := takeFacts(chrt, r)
		if err != nil {
			return RollSide{}, err
		}
		running := RunningFromFacts(facts)
		s.running = &running
	}
	m, err := r.Manifest()
	if err != nil {
		return RollSide{}, err
	}
	for _, d := range m.Docs {
		if d.Kind() == "KubevirtMachineTemplate" {
			s.MachineTemplate = d.Name()
			s.body = templateBody(d.Text)
			s.object = d.Object
			continue
		}
		s.docs[d.Kind()+"/"+d.Name()] = d.Text
	}
	return s, nil
}

// poolChartKinds are the kinds the pool chart built into this binary looks
// up, and upstreamPoolKinds: all a head or base chart's lookups may reach.
var poolChartKinds = sync.OnceValue(func() []string {
	c, err := LoadPoolChart("")
	if err != nil {
		return nil
	}
	return append(render.LookupKinds(c), upstreamPoolKinds...)
})

// upstreamPoolKinds are what Cozystack's own pool chart looks up besides
// ours (the MachineSets of a pool's MachineDeployment), so rollcheck against
// upstream's chart, the way back from this one, reads what it reads.
var upstreamPoolKinds = []string{"cluster.x-k8s.io/v1beta1 MachineSet"}

// templateBody is the part of the KubevirtMachineTemplate that is hashed into
// its name: everything under spec.
func templateBody(text string) string {
	if _, after, ok := strings.Cut(text, "\nspec:\n"); ok {
		return after
	}
	return text
}

func compareSides(p *PoolRoll) {
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

// firstHunk diffs two bodies line by line (difflib's sequence matcher, as
// Python's difflib, without its junk heuristic so every line counts) and
// returns the base line where the first change starts and that change's
// lines, "-" for base and "+" for head, at most max of them then "...".
func firstHunk(a, b []string, max int) (int, []string) {
	for _, op := range difflib.NewMatcherWithJunk(a, b, false, nil).GetOpCodes() {
		if op.Tag == 'e' {
			continue
		}
		var out []string
		for _, l := range a[op.I1:op.I2] {
			out = append(out, "-"+l)
		}
		for _, l := range b[op.J1:op.J2] {
			out = append(out, "+"+l)
		}
		if len(out) > max {
			out = append(out[:max], "...")
		}
		return op.I1 + 1, out
	}
	return 0, nil
}
