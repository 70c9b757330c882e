// A --to-talos the platform cannot serve is refused before anything is
// planned: the new workers would get a 404 from the factory, and each wave
// would wait out its timeout. A release is known when a catalog entry, a
// golden in cozy-public or the chart's default for a new pool names it, or
// when it is a patch of a Talos minor the chart's support rows list, no
// newer than the next patch after the newest release of that minor any of
// those names (a CVE fix is the next patch; a typo, v1.13.80, is not). Else
// the factory each selected pool imports from is asked for its version
// list, trusting the CA the pool imports with; the release passes only when
// every such factory lists it.

package rollout

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/report"

	"github.com/Masterminds/semver/v3"
	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
)

// knownRelease is a release something of the platform names, and what.
type knownRelease struct {
	version *semver.Version
	text    string
	by      string
}

// knownReleases are the releases the cluster's goldens and the chart's
// defaults name, with read its catalog entries too.
func knownReleases(t report.Target, f *report.PinsFacts, defaults []string, read bool) ([]knownRelease, error) {
	var out []knownRelease
	add := func(v, by string) {
		if sv, err := report.TalosVersion(v); err == nil {
			out = append(out, knownRelease{sv, v, by})
		}
	}
	for _, n := range report.SortedKeys(f.Stored) {
		if fl, ok := golden.Parse(n); ok {
			add(fl.Version, "golden "+golden.Namespace+"/"+n)
		}
	}
	for _, v := range defaults {
		add(v, "the chart's Talos release for a new pool")
	}
	if read && t.Provider != nil {
		home, err := report.ReadCatalogHome(t)
		if err != nil {
			return nil, err
		}
		images, _ := home.CatalogValues()["images"].([]any)
		for i, e := range images {
			if i >= maxCatalogEntriesRead {
				break
			}
			m, _ := e.(map[string]any)
			if v, _ := m["version"].(string); v != "" {
				add(v, "the catalog entry "+home.PackageKey(fmt.Sprintf("images[%d]", i)))
			}
		}
	}
	return out, nil
}

// maxCatalogEntriesRead bounds the catalog entries read for releases: far
// more than a catalog holds (each is a golden of a few GiB).
const maxCatalogEntriesRead = 10000

// talosMinors are the Talos minors the chart's support rows list, as the
// chart answers them in a render (kubernetes-nodes.behindFacts): from a pool
// the fleet's read rendered, else from a render of a new pool without a
// cluster. The chart's source is never read for an answer.
func talosMinors(chrt *chart.Chart, f *report.PinsFacts) ([]string, error) {
	facts := func(cf *report.ChartFacts) []string {
		var out []string
		for _, m := range cf.Behind.Defaults.TalosMinors {
			out = append(out, string(m))
		}
		sort.Strings(out)
		return out
	}
	for _, rp := range f.Pools {
		if rp.Facts != nil && len(rp.Facts.Behind.Defaults.TalosMinors) > 0 {
			return facts(rp.Facts), nil
		}
	}
	cf, _, err := report.HelperFacts(chrt, report.Target{Desc: "none"}.Options(defaultProbe, map[string]any{"cluster": "rollout"}))
	if err != nil || cf == nil {
		return nil, err
	}
	return facts(cf), nil
}

// knownBy says what knows the release v among known, or "" when nothing
// does: a release named, or a patch of a supported minor no newer than the
// next after the newest named release of that minor.
func knownBy(v *semver.Version, text string, known []knownRelease, minors []string) string {
	for _, k := range known {
		if k.text == text {
			return k.by
		}
	}
	if v.Prerelease() != "" {
		return ""
	}
	minor := fmt.Sprintf("v%d.%d", v.Major(), v.Minor())
	supported := false
	for _, m := range minors {
		supported = supported || m == minor
	}
	if !supported {
		return ""
	}
	var newest *knownRelease
	for i, k := range known {
		if k.version.Major() == v.Major() && k.version.Minor() == v.Minor() && k.version.Prerelease() == "" && (newest == nil || k.version.GreaterThan(newest.version)) {
			newest = &known[i]
		}
	}
	if newest == nil || v.Patch() > newest.version.Patch()+1 {
		return ""
	}
	if v.Patch() == newest.version.Patch()+1 {
		return fmt.Sprintf("the chart's support row for Talos %s, the next patch after %s (%s)", minor, newest.text, newest.by)
	}
	return fmt.Sprintf("the chart's support row for Talos %s, a patch before %s (%s)", minor, newest.text, newest.by)
}

// nearestReleases names up to three known releases nearest to v: those of
// its minor first, newest first.
func nearestReleases(v *semver.Version, known []knownRelease) string {
	seen := map[string]bool{}
	var same, other []knownRelease
	for _, k := range known {
		if seen[k.text] {
			continue
		}
		seen[k.text] = true
		if k.version.Major() == v.Major() && k.version.Minor() == v.Minor() {
			same = append(same, k)
		} else {
			other = append(other, k)
		}
	}
	newestFirst := func(l []knownRelease) {
		sort.Slice(l, func(i, j int) bool { return l[i].version.GreaterThan(l[j].version) })
	}
	newestFirst(same)
	newestFirst(other)
	var names []string
	for _, k := range append(same, other...) {
		if len(names) == 3 {
			break
		}
		names = append(names, k.text)
	}
	return report.OrNone(strings.Join(names, ", "))
}

// poolFactory is where a selected pool's image would come from at the
// target, and the CA its import trusts there.
type poolFactory struct {
	url, caPEM, caFrom string
}

// factoryOf is the factory a selected pool imports from at the target: the
// target's (--to-factory, with --factory-ca) for an HTTP pool that moves
// there; its own, trusting its own talos.imageFactoryCA, else the CA
// published with that URL; for a pool that clones, the factory new pools
// (and so a new catalog entry) import from, with its published CA.
func factoryOf(rp *report.ResolvedPool, target RolloutTarget, published publishedFactory) (poolFactory, bool) {
	if rp.Facts == nil {
		return poolFactory{}, false
	}
	ds := rp.Facts.DiskSource
	defaults := rp.Facts.Behind.Defaults
	switch {
	case ds.Clone || target.Builtin:
		url := string(defaults.ImageFactoryURL)
		return poolFactory{url: url, caPEM: published.caFor(url, rp.Values), caFrom: "the CA published with it"}, url != ""
	case target.FactoryURL != "":
		return poolFactory{url: target.FactoryURL, caPEM: target.FactoryCA, caFrom: "--factory-ca " + target.FactoryCAFrom}, true
	}
	url := string(ds.ImageFactoryURL)
	if own := fleet.Text(rp.Values, "talos", "imageFactoryCA"); own != "" {
		return poolFactory{url: url, caPEM: own, caFrom: "its talos.imageFactoryCA"}, url != ""
	}
	return poolFactory{url: url, caPEM: published.caFor(url, rp.Values), caFrom: "the CA published with it"}, url != ""
}

// publishedFactory is the factory and CA the catalog publishes for new
// pools (its ConfigMap in cozy-public).
type publishedFactory struct {
	url, caPEM string
}

// caFor is the CA a pool trusts at url when it sets none of its own: the
// platform's (_cluster) or the catalog's published one, where url is the
// factory it comes with; "" otherwise.
func (p publishedFactory) caFor(url string, values map[string]any) string {
	if u := fleet.Text(values, "_cluster", "talos", "imageFactoryURL"); u != "" {
		if sameFactory(u, url) {
			return fleet.Text(values, "_cluster", "talos", "imageFactoryCA")
		}
		return ""
	}
	if p.url != "" && sameFactory(p.url, url) {
		return p.caPEM
	}
	return ""
}

// readPublishedFactory reads the factory and CA the catalog publishes, as
// the chart reads them (publishedCatalogCA's bounds).
func readPublishedFactory(t report.Target) (publishedFactory, error) {
	text, err := publishedDefaultsText(t)
	if err != nil || text == "" {
		return publishedFactory{}, err
	}
	var published struct {
		Talos struct {
			ImageFactoryURL string `json:"imageFactoryURL"`
			ImageFactoryCA  string `json:"imageFactoryCA"`
		} `json:"talos"`
	}
	if yaml.Unmarshal([]byte(text), &published) != nil {
		return publishedFactory{}, nil
	}
	return publishedFactory{url: published.Talos.ImageFactoryURL, caPEM: published.Talos.ImageFactoryCA}, nil
}

// checkTargetKnown refuses a --to-talos nothing of the platform knows and
// no selected pool's factory lists, naming the nearest known releases; it
// says how the release is known. Nothing for another target.
func checkTargetKnown(ctx context.Context, chrt *chart.Chart, t report.Target, f *report.PinsFacts, pools []*report.ResolvedPool, target RolloutTarget, reader *FactoryReader) (*TargetKnown, error) {
	if target.TalosVersion == "" || target.Defaults {
		return nil, nil
	}
	v, err := report.TalosVersion(target.TalosVersion)
	if err != nil {
		return nil, nil // the chart has refused it already (ResolveTarget)
	}
	var defaults []string
	for _, rp := range f.Pools {
		if rp.Facts != nil {
			defaults = append(defaults, string(rp.Facts.Behind.Defaults.Version))
		}
	}
	// What the fleet's read holds first; the catalog's values and the
	// chart's built-in default only when that does not know it (more
	// releases known only ever take more).
	minors, err := talosMinors(chrt, f)
	if err != nil {
		return nil, err
	}
	known, err := knownReleases(t, f, defaults, false)
	if err != nil {
		return nil, err
	}
	if by := knownBy(v, target.TalosVersion, known, minors); by != "" {
		return &TargetKnown{By: by}, nil
	}
	if d, err := chartDefaultVersion(chrt); err == nil && d != "" {
		defaults = append(defaults, d)
	}
	if known, err = knownReleases(t, f, defaults, true); err != nil {
		return nil, err
	}
	if by := knownBy(v, target.TalosVersion, known, minors); by != "" {
		return &TargetKnown{By: by}, nil
	}
	published, err := readPublishedFactory(t)
	if err != nil {
		return nil, err
	}
	var factories []poolFactory
	seen := map[string]bool{}
	for _, rp := range pools {
		pf, ok := factoryOf(rp, target, published)
		if key := pf.url + "\x00" + pf.caPEM; ok && !seen[key] {
			seen[key] = true
			factories = append(factories, pf)
		}
	}
	unknown := fmt.Sprintf("--to-talos %s: no catalog entry, golden in %s or chart default names it, and the chart's support rows (Talos %s) take a patch of a minor only up to the next after the newest named one; the nearest known releases: %s", target.TalosVersion, golden.Namespace, report.OrNone(strings.Join(minors, ", ")), nearestReleases(v, known))
	if len(factories) == 0 {
		return nil, fmt.Errorf("%s; no selected pool names a factory to ask: check the release (a typo?), or add it to the catalog first", unknown)
	}
	if reader == nil {
		reader = &FactoryReader{}
	}
	tk := &TargetKnown{}
	for _, pf := range factories {
		ca := "the system's roots"
		if pf.caPEM != "" {
			ca += " and " + pf.caFrom
		}
		asked := "GET " + VersionsURL(pf.url) + " (trusting " + ca + ")"
		t.Progressf("asking %s", asked)
		versions, err := reader.Versions(ctx, pf.url, pf.caPEM)
		if err != nil {
			return nil, fmt.Errorf("%s; asked the factory %s: %v: check the release (a typo?), or make the factory reachable from here and run again", unknown, asked, err)
		}
		listed := false
		for _, lv := range versions {
			listed = listed || lv == target.TalosVersion
		}
		if !listed {
			return nil, fmt.Errorf("%s; asked the factory %s: it does not list %s either (it lists %d releases, the newest of %s: %s): check the release (a typo?)", unknown, asked, target.TalosVersion, len(versions), minorOf(v), newestListed(versions, v))
		}
		tk.Asked = append(tk.Asked, asked+": lists it")
	}
	return tk, nil
}

// defaultProbe is the release the chart's default is read with, as a new
// pool's.
var defaultProbe = render.Release{Name: "kubernetes-nodes-rollout-default", Namespace: "tenant-rollout"}

// chartDefaultVersion is the Talos release the chart gives a new pool
// without a cluster (its built-in default).
func chartDefaultVersion(chrt *chart.Chart) (string, error) {
	rep, _, err := report.Plan(chrt, report.Target{Desc: "none"}, defaultProbe, map[string]any{"cluster": "rollout"})
	if err != nil || rep.DiskSource == nil {
		return "", err
	}
	return rep.DiskSource.Version.Value, nil
}

func minorOf(v *semver.Version) string { return fmt.Sprintf("v%d.%d", v.Major(), v.Minor()) }

// newestListed is the newest release of v's minor a factory lists.
func newestListed(versions []string, v *semver.Version) string {
	var best *semver.Version
	text := ""
	for _, lv := range versions {
		sv, err := report.TalosVersion(lv)
		if err != nil || sv.Major() != v.Major() || sv.Minor() != v.Minor() {
			continue
		}
		if best == nil || sv.GreaterThan(best) {
			best, text = sv, lv
		}
	}
	return report.OrNone(text)
}
