// A rollout that moves pools importing over HTTP keeps each pool's factory
// URL unless --to-factory moves it too. Where that URL is not the factory
// new pools get now (a pool created before the platform published its
// mirror, in a network that cannot reach the public factory), the pool's
// new workers would import from a factory they may not reach, and a wave
// would wait out its timeout. The plan says so for each such pool, with the
// command that moves flavor and factory in one re-image; with --to-factory
// the target names the factory itself, and the plan says nothing of it.

package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/report"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
)

// builtinFactorySource names where a new pool's factory URL comes from when
// neither _cluster nor the catalog's published defaults set one.
const builtinFactorySource = "the chart's built-in default (talos.imageFactoryURL)"

// factoryCAFile is the name the command gives the CA it writes with the
// published URL: the operator saves the published PEM there (docs/day2.md).
const factoryCAFile = "mirror-ca.pem"

// otherFactory says whether a pool moving onto to will import from another
// factory than new pools get (as the chart reported them when the fleet was
// read: Behind's defaults); nil when it will not, or clones. catalogCA: the
// catalog's published defaults carry a CA.
func otherFactory(to *RolloutFlavor, rp report.ResolvedPool, catalogCA bool) *OtherFactory {
	if to == nil || to.Path != "http" || to.ImageFactoryURL == nil || rp.Facts == nil {
		return nil
	}
	d := rp.Facts.Behind.Defaults
	published := string(d.ImageFactoryURL)
	if published == "" || sameFactory(to.ImageFactoryURL.Value, published) {
		return nil
	}
	o := &OtherFactory{ImageFactoryURL: to.ImageFactoryURL.Value, Published: published}
	switch {
	case fleet.Text(rp.Values, "_cluster", "talos", "imageFactoryURL") != "":
		o.PublishedFrom = "_cluster.talos.imageFactoryURL"
		o.PublishedCA = fleet.Text(rp.Values, "_cluster", "talos", "imageFactoryCA") != ""
	case d.ImageFactoryURLFrom != "":
		o.PublishedFrom = string(d.ImageFactoryURLFrom)
		o.PublishedCA = catalogCA
		o.Blocks = true
	default:
		o.PublishedFrom = builtinFactorySource
	}
	return o
}

// sameFactory: two factory URLs name the same factory (a trailing slash
// aside, as the chart joins them).
func sameFactory(a, b string) bool {
	return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}

// publishedCatalogCA says whether the catalog's published defaults carry a
// CA (talos.imageFactoryCA), read as the chart reads them: a value larger
// than a pool reads is not read (every pool refuses it anyway).
func publishedCatalogCA(t report.Target) (bool, error) {
	text, err := publishedDefaultsText(t)
	if err != nil || text == "" {
		return false, err
	}
	var published struct {
		Talos struct {
			ImageFactoryCA string `json:"imageFactoryCA"`
		} `json:"talos"`
	}
	if json.Unmarshal([]byte(text), &published) != nil {
		return false, nil
	}
	return published.Talos.ImageFactoryCA != "", nil
}

// publishedDefaultsText is the catalog's published defaults as the chart
// reads them: "" when there are none, or more than a pool reads.
func publishedDefaultsText(t report.Target) (string, error) {
	if t.Provider == nil {
		return "", nil
	}
	cm, err := fleet.Get(context.Background(), t.Provider, "v1", "ConfigMap", golden.Namespace, report.TenantDefaultsConfigMap)
	if err != nil || cm == nil {
		return "", err
	}
	text := fleet.Text(cm.Object, "data", tenantDefaultsKey)
	if len(text) > tenantDefaultsMaxBytes {
		return "", nil
	}
	return text, nil
}

// The key of TenantDefaultsConfigMap the catalog writes, and what a pool
// reads of it at most (worker-image-lib.tenantDefaults).
const (
	tenantDefaultsKey      = "values.json"
	tenantDefaultsMaxBytes = 163840
)

// factoryCommands fills in each moving pool's command, and the plan's
// summary of them. The pools that get the same factory share a command:
// this rollout's selection and target with that factory added, narrowed
// with --pool to those pools where it would otherwise change another pool
// of the waves too (one whose own factory is another, or, with a CA, one
// on that factory already, whose values would take the CA).
func factoryCommands(plan *RolloutPlan) {
	type group struct {
		factory *OtherFactory
		pools   []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, p := range factoryPools(plan) {
		o := p.OtherFactory
		if o == nil {
			continue
		}
		key := fmt.Sprint(o.Published, o.PublishedCA)
		if byKey[key] == nil {
			byKey[key] = &group{factory: o}
			groups = append(groups, byKey[key])
		}
		byKey[key].pools = append(byKey[key].pools, p.HelmRelease)
	}
	plan.OtherFactoryPools, plan.OtherFactoryBlocked = 0, 0
	for _, g := range groups {
		plan.OtherFactoryPools += len(g.pools)
		if g.factory.Blocks {
			plan.OtherFactoryBlocked += len(g.pools)
		}
	}
	if len(groups) == 0 {
		return
	}
	narrow := len(groups) > 1
	for _, p := range plan.Pools() {
		if p.OtherFactory != nil || p.State != StateMoves || p.To == nil || p.To.Path != "http" || p.To.ImageFactoryURL == nil {
			continue
		}
		o := groups[0].factory
		if !sameFactory(p.To.ImageFactoryURL.Value, o.Published) || o.PublishedCA {
			narrow = true
		}
	}
	commands := map[string]string{}
	for _, g := range groups {
		var pools []string
		if narrow {
			pools = g.pools
		}
		command := rolloutCommand(plan, g.factory, pools)
		for _, hr := range g.pools {
			commands[hr] = command
		}
		if len(groups) == 1 {
			plan.FactoryCommand = command
		}
	}
	for w := range plan.Waves {
		for i := range plan.Waves[w].Pools {
			if p := &plan.Waves[w].Pools[i]; p.OtherFactory != nil {
				p.OtherFactory.Command = commands[p.HelmRelease]
			}
		}
	}
	for i := range plan.Blocked {
		if p := &plan.Blocked[i]; p.OtherFactory != nil {
			p.OtherFactory.Command = commands[p.HelmRelease]
			if p.OtherFactory.Command == plan.FactoryCommand {
				p.Reason += "; the factory line below plans it"
			} else {
				p.Reason += "; plan it with " + p.OtherFactory.Command + FactoryCAFileText(p.OtherFactory)
			}
		}
	}
}

// factoryPools are the pools a factory command may concern: those of the
// waves, then those blocked for their factory.
func factoryPools(plan *RolloutPlan) []RolloutPool {
	pools := plan.Pools()
	for _, p := range plan.Blocked {
		if p.State == StateOtherFactory {
			pools = append(pools, p)
		}
	}
	return pools
}

// FactoryCAFileText says what a factory command's --factory-ca file holds;
// "" when the command writes no CA.
func FactoryCAFileText(o *OtherFactory) string {
	if o == nil || !o.PublishedCA {
		return ""
	}
	return fmt.Sprintf(" (%s: the CA certificates published with that URL, talos.imageFactoryCA beside it in %s)", factoryCAFile, o.PublishedFrom)
}

// blockOtherFactory holds a pool that would import from another factory
// than the catalog publishes: the network publishes a mirror, so its
// workers would likely never boot, and the wave would wait out its timeout.
func (p *RolloutPool) blockOtherFactory() {
	o := p.OtherFactory
	if o == nil || !o.Blocks {
		return
	}
	p.State = StateOtherFactory
	p.Reason = fmt.Sprintf("it would import from %s once moved, not from %s, which %s publishes for new pools (the network's factory): where workers cannot reach %s they never boot and the wave waits out --timeout; move flavor and factory in one re-image (--to-factory %s", o.ImageFactoryURL, o.Published, o.PublishedFrom, o.ImageFactoryURL, o.Published)
	if o.PublishedCA {
		p.Reason += " --factory-ca " + factoryCAFile
	}
	p.Reason += "), or leave it out (--exclude " + p.HelmRelease + ")"
}

// rolloutCommand is the command that plans this rollout again with the
// factory o publishes (and its CA) added to the target: the same selection
// (its pools those given, when any are), and the same bounds.
func rolloutCommand(plan *RolloutPlan, o *OtherFactory, only []string) string {
	args := []string{"workerimage", "rollout"}
	t := plan.Target
	switch {
	case t.Defaults:
		args = append(args, "--to-defaults")
	case t.TalosVersion != "":
		args = append(args, "--to-talos", t.TalosVersion)
		if t.SchematicID != "" {
			args = append(args, "--to-schematic", t.SchematicID)
		}
	}
	args = append(args, "--to-factory", o.Published)
	if o.PublishedCA {
		args = append(args, "--factory-ca", factoryCAFile)
	}
	s := plan.Selection
	if s.Namespace != "" {
		args = append(args, "-n", s.Namespace)
	}
	pools := s.Pools
	if len(only) > 0 {
		pools = only
	}
	for _, p := range pools {
		args = append(args, "--pool", p)
	}
	if s.Flavor != "" {
		args = append(args, "--flavor", s.Flavor)
	}
	for _, e := range s.Exclude {
		args = append(args, "--exclude", e)
	}
	if s.Behind {
		args = append(args, "--behind")
	}
	args = append(args, "--wave", fmt.Sprint(plan.WaveSize))
	if plan.MaxWorkers > 0 {
		args = append(args, "--max-workers", fmt.Sprint(plan.MaxWorkers))
	}
	args = append(args, "--max-clones", fmt.Sprint(plan.MaxClones))
	if plan.Strict {
		args = append(args, "--strict")
	}
	for i, a := range args {
		args[i] = report.ShellWord(a)
	}
	return strings.Join(args, " ")
}
