package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
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
	annRetiring      = "kubernetes-worker-image.cozystack.io/retiring"
	machineTemplAPI  = "infrastructure.cluster.x-k8s.io/v1alpha1"
	annCloneType     = "cdi.kubevirt.io/cloneType"
	annCloneFallback = "cdi.kubevirt.io/cloneFallbackReason"
	helmReleaseAPI   = fleet.HelmReleaseAPI
	machineDeplAPI   = "cluster.x-k8s.io/v1beta1"
	// annImportEndpoint: where CDI imported a PVC from.
	annImportEndpoint = "cdi.kubevirt.io/storage.import.endpoint"
	// annImportCertConfigMap and annImportChecksum: CDI's record, on a PVC it
	// imported, of the source's certConfigMap and checksum.
	annImportCertConfigMap = "cdi.kubevirt.io/storage.import.certConfigMap"
	annImportChecksum      = "cdi.kubevirt.io/storage.import.checksum"
	// catalogCAConfigMap is the catalog's ConfigMap of its chart-wide
	// imageFactoryCA; an entry's own CA is in <it>-<schematicID>-<version>.
	catalogCAConfigMap = "kubernetes-worker-image-ca"
)

// pinsFacts is what pins reads from the cluster, before any verdict: the
// report is assembled from it in pins.go, as plan's is from chartFacts.
type pinsFacts struct {
	// stored are the goldens cozy-public holds, by name.
	stored map[string]storedGolden
	disks  []diskPin
	pools  []resolvedPool
	// users are, by golden, what the catalog chart counts as using it
	// (kubernetes-worker-image.goldenUsers, its retirement rule): disks and
	// KubevirtMachineTemplates, as "<namespace>/<kind>/<name>". The report
	// never decides this itself.
	users *fleet.Users
	// poolObjects are the pool MachineDeployments and KubevirtMachineTemplates
	// the cluster holds (fleet.Fleet.PoolObjects).
	poolObjects []string
	// machineDeployments are the cluster's MachineDeployments by
	// "<namespace>/<name>": a disk belongs to the pool its annotation names
	// only where that pool's MachineDeployment is.
	machineDeployments map[string]*unstructured.Unstructured
	// caConfigMaps are the catalog's CA ConfigMaps in cozy-public
	// (kubernetes-worker-image-ca, and -<schematicID>-<version> for an entry's own).
	caConfigMaps map[string]bool
}

type storedGolden struct {
	// foundAs: DataVolume, or PersistentVolumeClaim when its DataVolume was
	// garbage collected.
	foundAs string
	phase   string
	// retiring: the catalog marked its DataVolume retiring (retire: true).
	retiring bool
	// url, storage and class are what the catalog compares an entry with
	// (kubernetes-worker-image.assertUnchanged): the DataVolume's source URL,
	// storage request and class, or, with only the PVC left, its request, its
	// class and CDI's import endpoint annotation ("" where not recorded).
	url, storage, class string
	// certConfigMap and checksum are the CA ConfigMap and checksum it was
	// imported with (spec.source.http, or CDI's import annotations on the PVC).
	certConfigMap, checksum string
}

type resolvedPool struct {
	pin poolPin
	// clone: the pool clones pin.Golden; false for an HTTP import or a pool
	// whose image does not resolve.
	clone bool
	// release and values are what the pool was rendered with; facts is what
	// the chart answered (nil when the image does not resolve).
	release render.Release
	values  map[string]interface{}
	facts   *chartFacts
}

// gatherPins reads the goldens, the worker disks and the pools (found and
// valued as Flux deploys them, internal/fleet), and asks the catalog chart who
// uses each golden. Any error is a cluster problem, and so is a cluster that
// runs pools none of which could be read: no verdict is safe there.
func gatherPins(chrt *chart.Chart, t target, o fleet.Options) (*pinsFacts, error) {
	ctx := context.Background()
	fl, err := fleet.Read(ctx, t.provider, o)
	if err != nil {
		return nil, problemf("%v", err)
	}
	if fl.Resolved() == 0 && len(fl.PoolObjects) > 0 {
		why := "no HelmRelease or Helm release record of chart " + o.Chart + " was found"
		switch {
		case !fl.HelmReleasesServed:
			why = fmt.Sprintf("the cluster serves no HelmRelease (%s) and no Helm release record of chart %s was found", fleet.HelmReleaseAPI, o.Chart)
		case len(fl.Pools) > 0:
			why = fmt.Sprintf("none of the %s found has values that resolve (first: %s: %s)", count(len(fl.Pools), "pool"), fl.Pools[0].ID(), fl.Pools[0].Unresolved)
		}
		return nil, problemf("could not read the pools: %s, yet the cluster runs %s (%s); without the pools no golden can be called unused. Run it where the pools' HelmReleases (or Helm release Secrets) are readable, or name their chart artifact with -artifact", why, count(len(fl.PoolObjects), "pool object"), firstFive(fl.PoolObjects))
	}
	f := &pinsFacts{stored: map[string]storedGolden{}, machineDeployments: map[string]*unstructured.Unstructured{}, poolObjects: fl.PoolObjects, caConfigMaps: map[string]bool{}}
	if err := f.gatherMachineDeployments(t); err != nil {
		return nil, err
	}

	// One list of every DataVolume: the goldens, and the worker disks below.
	dvs, err := t.list("cdi.kubevirt.io/v1beta1", "DataVolume", "")
	if err != nil {
		return nil, err
	}
	for _, dv := range dvs {
		if dv.GetNamespace() == goldenNamespace && strings.HasPrefix(dv.GetName(), goldenPrefix) {
			phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
			f.stored[dv.GetName()] = storedGolden{
				foundAs: "DataVolume", phase: phase, retiring: dv.GetAnnotations()[annRetiring] == "true",
				url:     text(dv.Object, "spec", "source", "http", "url"),
				storage: firstText(text(dv.Object, "spec", "storage", "resources", "requests", "storage"), text(dv.Object, "spec", "pvc", "resources", "requests", "storage")),
				class:   firstText(text(dv.Object, "spec", "storage", "storageClassName"), text(dv.Object, "spec", "pvc", "storageClassName")),

				certConfigMap: text(dv.Object, "spec", "source", "http", "certConfigMap"),
				checksum:      text(dv.Object, "spec", "source", "http", "checksum"),
			}
		}
	}
	pvcs, err := t.list("v1", "PersistentVolumeClaim", "")
	if err != nil {
		return nil, err
	}
	pvcByKey := map[string]*unstructured.Unstructured{}
	for i := range pvcs {
		p := &pvcs[i]
		pvcByKey[p.GetNamespace()+"/"+p.GetName()] = p
		if p.GetNamespace() == goldenNamespace && strings.HasPrefix(p.GetName(), goldenPrefix) {
			if _, ok := f.stored[p.GetName()]; !ok {
				f.stored[p.GetName()] = storedGolden{
					foundAs: "PersistentVolumeClaim",
					url:     p.GetAnnotations()[annImportEndpoint],
					storage: text(p.Object, "spec", "resources", "requests", "storage"),
					class:   text(p.Object, "spec", "storageClassName"),

					certConfigMap: p.GetAnnotations()[annImportCertConfigMap],
					checksum:      p.GetAnnotations()[annImportChecksum],
				}
			}
		}
	}

	// Worker disks: DataVolumes naming a golden, and PVCs naming one whose
	// DataVolume is gone.
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
		d := diskOf(dv.GetNamespace(), dv.GetName(), ann, pvcByKey[dv.GetNamespace()+"/"+claim])
		d.kind = "DataVolume"
		f.addDisk(d)
	}
	for key, p := range pvcByKey {
		if ann := p.GetAnnotations(); ann[annGolden] != "" && !dvKeys[key] {
			d := diskOf(p.GetNamespace(), p.GetName(), ann, p)
			d.kind = "PersistentVolumeClaim"
			f.addDisk(d)
		}
	}

	// Pools: resolved by the chart itself.
	for _, pool := range fl.Pools {
		rp, err := resolvePool(chrt, t, pool)
		if err != nil {
			return nil, err
		}
		f.pools = append(f.pools, rp)
	}

	// Who uses each golden the report names: the catalog chart's answer.
	names := map[string]bool{}
	for n := range f.stored {
		names[n] = true
	}
	for _, d := range f.disks {
		names[d.Golden] = true
	}
	for _, rp := range f.pools {
		if rp.pin.Golden != "" {
			names[rp.pin.Golden] = true
		}
	}
	catalog, err := fleet.CatalogChart()
	if err != nil {
		return nil, problemf("built-in chart %s: %v", render.CatalogChart, err)
	}
	if f.users, err = fleet.GoldenUsers(catalog, t.provider, sortedKeys(names)); err != nil {
		if _, prob := renderFailure(err); prob != nil {
			return nil, prob
		}
		return nil, problemf("asking the catalog chart who uses the goldens: %v", err)
	}

	// The catalog's CA ConfigMaps, to tell the goldens imported without the CA
	// it holds now (after the pools, whose renders read the cluster first).
	cms, err := t.list("v1", "ConfigMap", goldenNamespace)
	if err != nil {
		return nil, err
	}
	for _, cm := range cms {
		if name := cm.GetName(); cm.GetNamespace() == goldenNamespace && (name == catalogCAConfigMap || strings.HasPrefix(name, catalogCAConfigMap+"-")) {
			f.caConfigMaps[name] = true
		}
	}
	return f, nil
}

// gatherMachineDeployments lists every MachineDeployment once. A cluster
// that does not serve them has none, so no disk there belongs to a pool.
func (f *pinsFacts) gatherMachineDeployments(t target) error {
	if _, _, err := t.provider.GetClientFor(machineDeplAPI, "MachineDeployment"); errors.Is(err, render.ErrKindNotServed) {
		return nil
	}
	mds, err := t.list(machineDeplAPI, "MachineDeployment", "")
	if err != nil {
		return err
	}
	for i := range mds {
		f.machineDeployments[mds[i].GetNamespace()+"/"+mds[i].GetName()] = &mds[i]
	}
	return nil
}

// addDisk records a worker disk, and whether it belongs to a pool: the pool
// chart annotates each disk with its pool's MachineDeployment name
// (kubernetes-<cluster>-<pool>), but anyone who can create a DataVolume can
// write that annotation, so it counts only where the disk's own namespace
// holds that MachineDeployment.
func (f *pinsFacts) addDisk(d diskPin) {
	d.NoPool = d.Pool == "" || f.machineDeployments[d.Namespace+"/"+d.Pool] == nil
	f.disks = append(f.disks, d)
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
	// The report's line keeps annotation text on one line: whoever can edit
	// the PVC writes it.
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	switch {
	case d.FallbackReason != "":
		d.HostAssisted = true
		d.Clone = fmt.Sprintf("host-assisted copy (cloneType %s, fallback: %s)", orNone(flat(d.CloneType)), flat(d.FallbackReason))
	case d.CloneType == "csi-clone":
		d.CSIClone = true
		d.Clone = "csi-clone"
	case d.CloneType == "copy":
		d.HostAssisted = true
		d.Clone = "host-assisted copy (cloneType copy)"
	case d.CloneType == "":
		d.Clone = "clone type not recorded yet"
	default:
		d.Clone = flat(d.CloneType) + " (not a CSI clone)"
	}
	return d
}

// resolvePool asks the chart which golden a pool clones: its values, as
// Flux computes them, rendered through the chart's own diskSource against the
// same cluster, with only the chart's helpers, so a pool whose objects would
// be refused for another reason (an unknown instancetype, a golden gone)
// still resolves. A pool whose values do not resolve is not rendered.
func resolvePool(chrt *chart.Chart, t target, pool fleet.Pool) (resolvedPool, error) {
	p := poolPin{HelmRelease: pool.ID(), Release: pool.Release, Namespace: pool.Namespace, FoundBy: pool.FoundBy, Unresolved: pool.Unresolved}
	rel := render.Release{Name: pool.Release, Namespace: pool.Namespace, Upgrade: true}
	if pool.Unresolved != "" {
		return resolvedPool{pin: p, release: rel}, nil
	}
	vals := pool.Values
	facts, refusal, err := helperFacts(chrt, t.options(rel, vals))
	if err != nil {
		return resolvedPool{}, err
	}
	p.Refusal = refusal
	if facts == nil {
		return resolvedPool{pin: p, release: rel, values: vals}, nil
	}
	p.Pool = string(facts.Pool)
	if facts.DiskSource.Clone {
		p.Golden = string(facts.DiskSource.Golden)
	}
	if r := facts.DiskSource.Report; r != nil {
		p.Class = string(facts.DiskSource.StorageClassName)
		p.GoldenChoice = string(r.GoldenChoice)
		p.perClassGolden = string(r.PerClassGolden)
	}
	return resolvedPool{pin: p, clone: facts.DiskSource.Clone, release: rel, values: vals, facts: facts}, nil
}

// text reads a scalar field as its text: a quantity may be a YAML number.
func text(obj map[string]interface{}, fields ...string) string {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func firstText(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// goldenFlavor splits a golden's name as the catalog builds it
// (worker-image-lib.goldenName and perClassGoldenName):
// talos-worker-<schematicID>-<version>, plus --<class> for a per-class golden.
// A schematicID holds no "." and every version does, between digits, and no
// version holds "--": so the version starts at the last "-v" before the
// first ".", and the class after the first "--" past it. ok is false for a
// name not built that way.
func goldenFlavor(name string) (plain, schematicID, version, class string, ok bool) {
	rest, found := strings.CutPrefix(name, goldenPrefix)
	dot := strings.Index(rest, ".")
	if !found || dot < 0 {
		return name, "", "", "", false
	}
	v := strings.LastIndex(rest[:dot], "-v")
	if v <= 0 {
		return name, "", "", "", false
	}
	schematicID, version = rest[:v], rest[v+1:]
	if i := strings.Index(rest[dot:], "--"); i >= 0 {
		version, class = rest[v+1:dot+i], rest[dot+i+2:]
	}
	return goldenPrefix + schematicID + "-" + version, schematicID, version, class, true
}
