package main

import (
	"errors"
	"fmt"
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
	annRetiring      = "kubernetes-worker-image.cozystack.io/retiring"
	machineTemplAPI  = "infrastructure.cluster.x-k8s.io/v1alpha1"
	annCloneType     = "cdi.kubevirt.io/cloneType"
	annCloneFallback = "cdi.kubevirt.io/cloneFallbackReason"
	helmReleaseAPI   = "helm.toolkit.fluxcd.io/v2"
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
	// templates are the KubevirtMachineTemplates whose disk clones a retiring
	// golden, as "<namespace>/KubevirtMachineTemplate/<name>" by golden: the
	// catalog refuses to let Helm delete a golden while one exists. Read only
	// while a golden is retiring, as the catalog does.
	templates map[string][]string
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

// gatherPins reads the goldens, the worker disks and the pools of chrt's
// HelmReleases. Any error is a cluster problem.
func gatherPins(chrt *chart.Chart, t target) (*pinsFacts, error) {
	// Pools are found through Flux's HelmRelease: on a cluster without it no
	// pool would be found and every golden would look unused.
	if _, _, err := t.provider.GetClientFor(helmReleaseAPI, "HelmRelease"); errors.Is(err, render.ErrKindNotServed) {
		return nil, problemf("the cluster serves no HelmRelease (%s): pins finds the pools that declare a golden through Flux HelmReleases, so without them it cannot tell whether any golden is in use; run it against the cluster whose Flux installs the worker pools", helmReleaseAPI)
	}
	f := &pinsFacts{stored: map[string]storedGolden{}, templates: map[string][]string{}, machineDeployments: map[string]*unstructured.Unstructured{}, caConfigMaps: map[string]bool{}}
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
	if err := f.gatherRetiringTemplates(t); err != nil {
		return nil, err
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

	// Pools: the chart's HelmReleases, resolved by the chart itself.
	hrs, err := t.list(helmReleaseAPI, "HelmRelease", "")
	if err != nil {
		return nil, err
	}
	for _, hr := range hrs {
		if name, _, _ := unstructured.NestedString(hr.Object, "spec", "chart", "spec", "chart"); name != chrt.Metadata.Name {
			continue
		}
		rp, err := resolvePool(chrt, t, hr)
		if err != nil {
			return nil, err
		}
		f.pools = append(f.pools, rp)
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

// gatherRetiringTemplates finds the KubevirtMachineTemplates, in any
// namespace, whose disks clone a retiring golden from cozy-public.
func (f *pinsFacts) gatherRetiringTemplates(t target) error {
	retiring := false
	for _, s := range f.stored {
		retiring = retiring || s.retiring
	}
	if !retiring {
		return nil
	}
	tpls, err := t.list(machineTemplAPI, "KubevirtMachineTemplate", "")
	if err != nil {
		return err
	}
	for _, tpl := range tpls {
		disks, _, _ := unstructured.NestedSlice(tpl.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
		seen := map[string]bool{}
		for _, d := range disks {
			m, ok := d.(map[string]interface{})
			if !ok {
				continue
			}
			ns, _, _ := unstructured.NestedString(m, "spec", "source", "pvc", "namespace")
			name, _, _ := unstructured.NestedString(m, "spec", "source", "pvc", "name")
			if ns == goldenNamespace && f.stored[name].retiring && !seen[name] {
				seen[name] = true
				f.templates[name] = append(f.templates[name], tpl.GetNamespace()+"/KubevirtMachineTemplate/"+tpl.GetName())
			}
		}
	}
	return nil
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

// resolvePool asks the chart which golden a Flux HelmRelease's pool clones:
// its spec.values (valuesFrom is not read) rendered through the chart's own
// diskSource against the same cluster, with only the chart's helpers, so a
// pool whose objects would be refused for another reason (an unknown
// instancetype, a golden gone) still resolves.
func resolvePool(chrt *chart.Chart, t target, hr unstructured.Unstructured) (resolvedPool, error) {
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
	rel := render.Release{Name: name, Namespace: namespace, Upgrade: true}
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
