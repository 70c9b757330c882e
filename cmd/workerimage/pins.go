package main

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	goldenNamespace = "cozy-public"
	// goldenPrefix: the catalog names every golden talos-worker-<schematicID>-<version>;
	// other DataVolumes in cozy-public (VM images) are not goldens.
	goldenPrefix     = "talos-worker-"
	annGolden        = "kubernetes-worker-image.cozystack.io/golden"
	annPool          = "kubernetes-worker-image.cozystack.io/pool"
	annCloneType     = "cdi.kubevirt.io/cloneType"
	annCloneFallback = "cdi.kubevirt.io/cloneFallbackReason"
	helmReleaseAPI   = "helm.toolkit.fluxcd.io/v2"
)

type pinsReport struct {
	Cluster string `json:"cluster"`
	// Chart is the chart name a HelmRelease must install to count as a pool.
	Chart        string       `json:"chart"`
	Goldens      []goldenPins `json:"goldens"`
	Unused       []string     `json:"unused"`
	HostAssisted []diskPin    `json:"hostAssisted"`
	HTTPPools    []poolPin    `json:"httpPools"`
	Unresolved   []poolPin    `json:"unresolved"`
}

type goldenPins struct {
	Name string `json:"name"`
	// FoundAs: DataVolume, PersistentVolumeClaim (its DataVolume was garbage
	// collected), or absent (named by a pool or a disk, not in cozy-public).
	FoundAs      string    `json:"foundAs"`
	Phase        string    `json:"phase,omitempty"`
	Pools        []poolPin `json:"pools"`
	Disks        []diskPin `json:"disks"`
	SafeToDelete bool      `json:"safeToDelete"`
}

type poolPin struct {
	HelmRelease string `json:"helmRelease"`
	Release     string `json:"release"`
	Namespace   string `json:"namespace"`
	Pool        string `json:"pool,omitempty"`
	Golden      string `json:"golden,omitempty"`
	// Disks counts the pool's disks cloned from this golden: 0 for a pool at
	// zero workers, or one that has not rolled onto this golden yet.
	Disks int `json:"disks"`
	// Refusal: the pool's render is refused (the golden is absent, say); the
	// golden it declares is still known, from the chart's image resolution.
	Refusal string `json:"refusal,omitempty"`
}

type diskPin struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Golden    string `json:"golden"`
	Pool      string `json:"pool,omitempty"`
	// PVC is the disk's PersistentVolumeClaim, "" when it has none yet.
	PVC            string `json:"pvc,omitempty"`
	CloneType      string `json:"cloneType,omitempty"`
	FallbackReason string `json:"fallbackReason,omitempty"`
	CSIClone       bool   `json:"csiClone"`
	HostAssisted   bool   `json:"hostAssisted"`
	Clone          string `json:"clone"`
}

func (a app) pins(args []string, out *bytes.Buffer) (int, error) {
	fs := newFlags("pins")
	state := fs.String("cluster", "", "cluster state file (multi-document YAML)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of a live cluster")
	chartDir := fs.String("chart", "", "pool chart folder the pools are resolved with (default: the "+render.PoolChart+" built into this binary)")
	output := fs.String("o", "text", "output: text or json")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if err := oneOf("o", *output, "text", "json"); err != nil {
		return 0, err
	}
	chrt, err := loadPoolChart(*chartDir)
	if err != nil {
		return 0, err
	}
	t, err := a.connect(*state, *kubeconfig, true)
	if err != nil {
		return 0, err
	}
	// Pools are found through Flux's HelmRelease: on a cluster without it no
	// pool would be found and every golden would look unused.
	if _, _, err := t.provider.GetClientFor(helmReleaseAPI, "HelmRelease"); errors.Is(err, render.ErrKindNotServed) {
		return 0, problemf("the cluster serves no HelmRelease (%s): pins finds the pools that declare a golden through Flux HelmReleases, so without them it cannot tell whether any golden is in use; run it against the cluster whose Flux installs the worker pools", helmReleaseAPI)
	}
	rep := pinsReport{Cluster: t.desc, Chart: chrt.Metadata.Name}
	goldens := map[string]*goldenPins{}
	golden := func(name string) *goldenPins {
		if g, ok := goldens[name]; ok {
			return g
		}
		g := &goldenPins{Name: name, FoundAs: "absent", Pools: []poolPin{}, Disks: []diskPin{}}
		goldens[name] = g
		return g
	}

	// One list of every DataVolume: the goldens, and the worker disks below.
	dvs, err := t.list("cdi.kubevirt.io/v1beta1", "DataVolume", "")
	if err != nil {
		return 0, err
	}
	for _, dv := range dvs {
		if dv.GetNamespace() == goldenNamespace && strings.HasPrefix(dv.GetName(), goldenPrefix) {
			g := golden(dv.GetName())
			g.FoundAs = "DataVolume"
			g.Phase, _, _ = unstructured.NestedString(dv.Object, "status", "phase")
		}
	}
	pvcs, err := t.list("v1", "PersistentVolumeClaim", "")
	if err != nil {
		return 0, err
	}
	pvcByKey := map[string]*unstructured.Unstructured{}
	for i := range pvcs {
		p := &pvcs[i]
		pvcByKey[p.GetNamespace()+"/"+p.GetName()] = p
		if p.GetNamespace() == goldenNamespace && strings.HasPrefix(p.GetName(), goldenPrefix) {
			if g := golden(p.GetName()); g.FoundAs == "absent" {
				g.FoundAs = "PersistentVolumeClaim"
			}
		}
	}

	// Worker disks: DataVolumes naming a golden, and PVCs naming one whose
	// DataVolume is gone.
	var disks []diskPin
	dvKeys := map[string]bool{}
	for _, dv := range dvs {
		ann := dv.GetAnnotations()
		if ann[annGolden] == "" {
			continue
		}
		dvKeys[dv.GetNamespace()+"/"+dv.GetName()] = true
		claim, _, _ := unstructured.NestedString(dv.Object, "status", "claimName")
		if claim == "" {
			claim = dv.GetName()
		}
		disks = append(disks, diskOf(dv.GetNamespace(), dv.GetName(), ann, pvcByKey[dv.GetNamespace()+"/"+claim]))
	}
	for key, p := range pvcByKey {
		if ann := p.GetAnnotations(); ann[annGolden] != "" && !dvKeys[key] {
			disks = append(disks, diskOf(p.GetNamespace(), p.GetName(), ann, p))
		}
	}

	// Pools: the chart's HelmReleases, resolved by the chart itself.
	hrs, err := t.list(helmReleaseAPI, "HelmRelease", "")
	if err != nil {
		return 0, err
	}
	for _, hr := range hrs {
		if name, _, _ := unstructured.NestedString(hr.Object, "spec", "chart", "spec", "chart"); name != rep.Chart {
			continue
		}
		p, clone, err := resolvePool(chrt, t, hr)
		if err != nil {
			return 0, err
		}
		switch {
		case p.Golden == "" && p.Refusal != "":
			rep.Unresolved = append(rep.Unresolved, p)
		case !clone:
			rep.HTTPPools = append(rep.HTTPPools, p)
		default:
			for _, d := range disks {
				if d.Golden == p.Golden && d.Pool == p.Pool {
					p.Disks++
				}
			}
			g := golden(p.Golden)
			g.Pools = append(g.Pools, p)
		}
	}
	for _, d := range disks {
		g := golden(d.Golden)
		g.Disks = append(g.Disks, d)
		if d.HostAssisted {
			rep.HostAssisted = append(rep.HostAssisted, d)
		}
	}

	names := make([]string, 0, len(goldens))
	for n := range goldens {
		names = append(names, n)
	}
	sort.Strings(names)
	rep.Goldens = []goldenPins{}
	rep.Unused = []string{}
	for _, n := range names {
		g := goldens[n]
		sort.Slice(g.Pools, func(i, j int) bool { return g.Pools[i].HelmRelease < g.Pools[j].HelmRelease })
		sortDisks(g.Disks)
		g.SafeToDelete = len(g.Pools) == 0 && len(g.Disks) == 0
		if g.SafeToDelete && g.FoundAs != "absent" {
			rep.Unused = append(rep.Unused, n)
		}
		rep.Goldens = append(rep.Goldens, *g)
	}
	sortDisks(rep.HostAssisted)
	for _, l := range [][]poolPin{rep.HTTPPools, rep.Unresolved} {
		sort.Slice(l, func(i, j int) bool { return l[i].HelmRelease < l[j].HelmRelease })
	}
	if rep.HostAssisted == nil {
		rep.HostAssisted = []diskPin{}
	}
	if rep.HTTPPools == nil {
		rep.HTTPPools = []poolPin{}
	}
	if rep.Unresolved == nil {
		rep.Unresolved = []poolPin{}
	}

	if *output == "json" {
		writeJSON(out, rep)
	} else {
		writePinsText(out, &rep)
	}
	return exitOK, nil
}

func sortDisks(d []diskPin) {
	sort.Slice(d, func(i, j int) bool {
		if d[i].Namespace != d[j].Namespace {
			return d[i].Namespace < d[j].Namespace
		}
		return d[i].Name < d[j].Name
	})
}

// diskOf reads what CDI recorded on the disk's PVC: the clone strategy it
// used (cloneType) and why it fell back from a CSI clone, if it did.
func diskOf(namespace, name string, ann map[string]string, pvc *unstructured.Unstructured) diskPin {
	d := diskPin{Namespace: namespace, Name: name, Golden: ann[annGolden], Pool: ann[annPool]}
	if pvc == nil {
		d.Clone = "no PVC yet"
		return d
	}
	d.PVC = pvc.GetName()
	pa := pvc.GetAnnotations()
	d.CloneType, d.FallbackReason = pa[annCloneType], pa[annCloneFallback]
	switch {
	case d.FallbackReason != "":
		d.HostAssisted = true
		d.Clone = fmt.Sprintf("host-assisted copy (cloneType %s, fallback: %s)", orNone(d.CloneType), d.FallbackReason)
	case d.CloneType == "csi-clone":
		d.CSIClone = true
		d.Clone = "csi-clone"
	case d.CloneType == "copy":
		d.HostAssisted = true
		d.Clone = "host-assisted copy (cloneType copy)"
	case d.CloneType == "":
		d.Clone = "clone type not recorded yet"
	default:
		d.Clone = d.CloneType + " (not a CSI clone)"
	}
	return d
}

// resolvePool asks the chart which golden a Flux HelmRelease's pool clones:
// its spec.values (valuesFrom is not read) rendered through the chart's own
// diskSource against the same cluster, with only the chart's helpers, so a
// pool whose objects would be refused for another reason (an unknown
// instancetype, a golden gone) still resolves.
func resolvePool(chrt *chart.Chart, t target, hr unstructured.Unstructured) (poolPin, bool, error) {
	vals, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	if vals == nil {
		vals = map[string]interface{}{}
	}
	// Flux's defaults: the release goes to spec.targetNamespace, else the
	// HelmRelease's namespace, and is named spec.releaseName, else
	// [<targetNamespace>-]<name>.
	namespace, _, _ := unstructured.NestedString(hr.Object, "spec", "targetNamespace")
	name, _, _ := unstructured.NestedString(hr.Object, "spec", "releaseName")
	if name == "" {
		name = hr.GetName()
		if namespace != "" {
			name = namespace + "-" + name
		}
	}
	if namespace == "" {
		namespace = hr.GetNamespace()
	}
	p := poolPin{HelmRelease: hr.GetNamespace() + "/" + hr.GetName(), Release: name, Namespace: namespace}
	facts, refusal, err := helperFacts(chrt, t.options(render.Release{Name: name, Namespace: namespace, Upgrade: true}, vals))
	if err != nil {
		return p, false, err
	}
	p.Refusal = refusal
	if facts == nil {
		return p, false, nil
	}
	p.Pool = string(facts.Pool)
	if facts.DiskSource.Clone {
		p.Golden = string(facts.DiskSource.Golden)
	}
	return p, facts.DiskSource.Clone, nil
}

func writePinsText(out *bytes.Buffer, r *pinsReport) {
	fmt.Fprintf(out, "cluster  %s\npools    Flux HelmReleases (%s) of chart %s\n\n", r.Cluster, helmReleaseAPI, r.Chart)
	var tb table
	if len(r.Goldens) == 0 {
		tb.raw("no golden in " + goldenNamespace)
	}
	for _, g := range r.Goldens {
		state := g.FoundAs
		if g.Phase != "" {
			state += ", phase " + g.Phase
		}
		if g.FoundAs == "absent" {
			state = "absent from " + goldenNamespace
		}
		verdict := fmt.Sprintf("in use: %s, %s", count(len(g.Pools), "pool"), count(len(g.Disks), "disk"))
		if g.SafeToDelete {
			verdict = "safe to delete: no pool declares it, no disk names it"
		}
		tb.raw(fmt.Sprintf("%s  (%s)  %s", g.Name, state, verdict))
		for _, p := range g.Pools {
			note := count(p.Disks, "disk")
			if p.Disks == 0 {
				note = "no disk cloned from it yet"
			}
			if p.Refusal != "" {
				note += "; its render is refused, see workerimage plan"
			}
			tb.row("  pool", p.HelmRelease, p.Pool, note)
		}
		for _, d := range g.Disks {
			tb.row("  disk", d.Namespace+"/"+d.Name, orNone(d.Pool), d.Clone)
		}
	}
	tb.raw("")
	if len(r.Unused) == 0 {
		tb.raw("unused goldens (safe to delete): none")
	} else {
		tb.raw("unused goldens (safe to delete):")
		for _, n := range r.Unused {
			tb.raw("  " + n)
		}
	}
	if len(r.HostAssisted) == 0 {
		tb.raw("disks that fell back to a host-assisted copy: none")
	} else {
		tb.raw("disks that fell back to a host-assisted copy:")
		for _, d := range r.HostAssisted {
			tb.row("  disk", d.Namespace+"/"+d.Name, orNone(d.Pool), d.Clone)
		}
	}
	if len(r.HTTPPools) > 0 {
		tb.raw("pools that import over HTTP (no golden):")
		for _, p := range r.HTTPPools {
			tb.row("  pool", p.HelmRelease, p.Pool, "")
		}
	}
	if len(r.Unresolved) > 0 {
		tb.raw("pools not resolved (their values are refused before a disk source resolves; check them before deleting):")
		for _, p := range r.Unresolved {
			tb.row("  pool", p.HelmRelease, "refused: "+p.Refusal)
		}
	}
	tb.write(out)
}
