// What -n does to the verbs that read a cluster's pools: a selection that
// matches nothing is bad input naming the nearest namespace, as a mistyped
// name is, never an empty report that reads as "nothing to do".

package report

import (
	"fmt"
	"sort"
	"strings"
)

// NoneSelected is the error of a selection that matches nothing: what was
// asked (what, a flag's value), the nearest of known, and what there is.
func NoneSelected(what, asked, holds string, known []string) error {
	msg := fmt.Sprintf("%s %q holds no %s", what, asked, holds)
	if len(known) == 0 {
		return fmt.Errorf("%s, and no %s holds one: nothing to select", msg, what)
	}
	if near := NearestWord(asked, known); near != "" {
		msg += "; did you mean " + near + "?"
	}
	return fmt.Errorf("%s (the %ss that hold one: %s)", msg, what, FirstFive(known))
}

// namespaces are the namespaces holding a pool (resolved or not), a worker
// disk, or pool objects none of whose pools could be read, sorted.
func (f *PinsFacts) namespaces() []string {
	set := map[string]bool{}
	for _, p := range f.Pools {
		set[p.Pin.Namespace] = true
	}
	for _, d := range f.disks {
		set[d.Namespace] = true
	}
	for _, u := range f.Unread {
		set[u.Namespace] = true
	}
	return SortedKeys(set)
}

// CheckNamespace: ns ("" is every namespace) holds a pool, a worker disk or
// unread pool objects; otherwise the error names the nearest that does.
func (f *PinsFacts) CheckNamespace(ns string) error {
	if ns == "" {
		return nil
	}
	known := f.namespaces()
	if i := sort.SearchStrings(known, ns); i < len(known) && known[i] == ns {
		return nil
	}
	return NoneSelected("namespace", ns, "pool (a HelmRelease of the pool chart, or a Helm release record of it) and no worker disk", known)
}

// InNamespace is facts narrowed to one namespace's pools, disks, unread
// pool objects and ignored objects (adopt -n): what moving them takes. The
// goldens cozy-public holds stay.
func (f *PinsFacts) InNamespace(ns string) (*PinsFacts, error) {
	if err := f.CheckNamespace(ns); err != nil || ns == "" {
		return f, err
	}
	out := *f
	out.Pools, out.disks, out.Unread, out.Ignored = nil, nil, nil, nil
	for _, p := range f.Pools {
		if p.Pin.Namespace == ns {
			out.Pools = append(out.Pools, p)
		}
	}
	for _, d := range f.disks {
		if d.Namespace == ns {
			out.disks = append(out.disks, d)
		}
	}
	for _, u := range f.Unread {
		if u.Namespace == ns {
			out.Unread = append(out.Unread, u)
		}
	}
	for _, i := range f.Ignored {
		if objectIn(i.Object, ns) {
			out.Ignored = append(out.Ignored, i)
		}
	}
	return &out, nil
}

// objectIn: an ignored object, "<kind> <namespace>/<name>", is in ns.
func objectIn(object, ns string) bool {
	_, id, _ := strings.Cut(object, " ")
	return strings.HasPrefix(id, ns+"/")
}

// PinsInNamespace narrows a pins report to one namespace's pools (pins -n):
// each golden cozy-public holds stays listed, with only that namespace's
// pools and disks under it (a filter narrows the pools, never the goldens or
// what cozy-public holds), and so does a golden absent from cozy-public
// that the namespace's pools or disks name; its pools are listed apart
// (HTTP, not resolved, behind), and PoolsRead counts the pools shown. The
// verdicts stay the cluster's: a golden another namespace uses is never
// called safe to delete here, nor one pinned by a namespace whose pools
// could not be read.
func PinsInNamespace(rep PinsReport, ns string) PinsReport {
	if ns == "" {
		return rep
	}
	out := rep
	out.Namespace = ns
	keep := map[string]bool{}
	out.Goldens = []GoldenPins{}
	pools := 0
	for _, g := range rep.Goldens {
		g.Pools = poolsIn(g.Pools, ns)
		g.Disks = disksIn(g.Disks, ns)
		g.NoPoolDisks = disksIn(g.NoPoolDisks, ns)
		g.Templates = templatesIn(g.Templates, ns)
		pools += len(g.Pools)
		if g.FoundAs != "absent" || g.Name == rep.Golden || len(g.Pools)+len(g.Disks)+len(g.NoPoolDisks) > 0 {
			keep[g.Name] = true
			out.Goldens = append(out.Goldens, g)
		}
	}
	out.Unused = []string{}
	for _, u := range rep.Unused {
		if keep[u] {
			out.Unused = append(out.Unused, u)
		}
	}
	out.HTTPPools = poolsIn(rep.HTTPPools, ns)
	out.Unresolved = poolsIn(rep.Unresolved, ns)
	out.PoolsRead = pools + len(out.HTTPPools) + len(out.Unresolved)
	out.HostAssisted = disksIn(rep.HostAssisted, ns)
	out.NoPoolDisks = disksIn(rep.NoPoolDisks, ns)
	out.PoolsBehind = []PoolBehind{}
	for _, p := range rep.PoolsBehind {
		if p.Namespace == ns {
			out.PoolsBehind = append(out.PoolsBehind, p)
		}
	}
	out.Flavors = []FlavorPins{}
	for _, f := range rep.Flavors {
		var goldens []string
		for _, g := range f.Goldens {
			if keep[g] {
				goldens = append(goldens, g)
			}
		}
		if len(goldens) == 0 {
			continue
		}
		f.Goldens = goldens
		gaps := []ClassGap{}
		for _, c := range f.ClassesWithoutGolden {
			var pools []string
			for _, p := range c.Pools {
				if strings.HasPrefix(p, ns+"/") {
					pools = append(pools, p)
				}
			}
			if len(pools) > 0 {
				c.Pools = pools
				gaps = append(gaps, c)
			}
		}
		f.ClassesWithoutGolden = gaps
		out.Flavors = append(out.Flavors, f)
	}
	out.Ignored = nil
	for _, i := range rep.Ignored {
		if objectIn(i.Object, ns) {
			out.Ignored = append(out.Ignored, i)
		}
	}
	return out
}

func poolsIn(pools []PoolPin, ns string) []PoolPin {
	out := []PoolPin{}
	for _, p := range pools {
		if p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

// templatesIn are the templates ("<namespace>/KubevirtMachineTemplate/<name>")
// in ns.
func templatesIn(templates []string, ns string) []string {
	out := []string{}
	for _, t := range templates {
		if strings.HasPrefix(t, ns+"/") {
			out = append(out, t)
		}
	}
	return out
}

func disksIn(disks []DiskPin, ns string) []DiskPin {
	out := []DiskPin{}
	for _, d := range disks {
		if d.Namespace == ns {
			out = append(out, d)
		}
	}
	return out
}
