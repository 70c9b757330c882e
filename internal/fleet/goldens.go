package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

const (
	annGolden        = "kubernetes-worker-image.cozystack.io/golden"
	annRetiring      = "kubernetes-worker-image.cozystack.io/retiring"
	annPool          = "kubernetes-worker-image.cozystack.io/pool"
	annCloneType     = "cdi.kubevirt.io/cloneType"
	annCloneFallback = "cdi.kubevirt.io/cloneFallbackReason"
	dataVolumeAPI    = "cdi.kubevirt.io/v1beta1"
	// CDI's record, on a PVC it imported, of the source's URL, certConfigMap
	// and checksum.
	annImportEndpoint      = "cdi.kubevirt.io/storage.import.endpoint"
	annImportCertConfigMap = "cdi.kubevirt.io/storage.import.certConfigMap"
	annImportChecksum      = "cdi.kubevirt.io/storage.import.checksum"
	// CatalogCAConfigMap is the catalog's ConfigMap of its chart-wide
	// imageFactoryCA; an entry's own CA is in <it>-<schematicID>-<version>.
	CatalogCAConfigMap = "kubernetes-worker-image-ca"
	// CAKey is the key of a CA ConfigMap that holds the PEM, the catalog's
	// and a pool's alike.
	CAKey = "ca.pem"
)

// Goldens is what a cluster holds of the goldens and their users: the
// goldens in cozy-public, the worker disks naming one, and the
// MachineDeployments a disk's pool annotation may name.
type Goldens struct {
	// Stored are the goldens cozy-public holds, by name.
	Stored map[string]Golden
	// Disks are the DataVolumes naming a golden, and the PVCs naming one
	// whose DataVolume is gone.
	Disks []Disk
	// MachineDeployments are the cluster's, by "<namespace>/<name>"; none
	// when it does not serve them.
	MachineDeployments map[string]*unstructured.Unstructured
}

// Golden is a golden as cozy-public holds it.
type Golden struct {
	// FoundAs: DataVolume, or PersistentVolumeClaim when its DataVolume was
	// garbage collected.
	FoundAs string
	Phase   string
	// Retiring: the catalog marked its DataVolume retiring (retire: true).
	Retiring bool
	// URL, Storage and Class are what the catalog compares an entry with
	// (kubernetes-worker-image.assertUnchanged): the DataVolume's source URL,
	// storage request and class, or, with only the PVC left, its request, its
	// class and CDI's import endpoint annotation ("" where not recorded).
	URL, Storage, Class string
	// CertConfigMap and Checksum are the CA ConfigMap and checksum it was
	// imported with (spec.source.http, or CDI's import annotations on the PVC).
	CertConfigMap, Checksum string
}

// Disk is a worker disk naming a golden, with what CDI recorded on its PVC.
type Disk struct {
	Namespace, Name string
	// Kind: DataVolume, or PersistentVolumeClaim for a disk kept only as its PVC.
	Kind string
	// Golden and Pool are its golden and pool annotations (anyone who can
	// create a DataVolume writes them).
	Golden, Pool string
	// PVC is the disk's PersistentVolumeClaim, "" when it has none yet.
	PVC string
	// CloneType and FallbackReason are CDI's record, on the PVC, of the clone
	// strategy it used and why it fell back from a CSI clone, if it did.
	CloneType, FallbackReason string
}

// diskOf is a disk and what CDI recorded on its PVC (nil: none yet).
func diskOf(namespace, name, kind string, ann map[string]string, pvc *unstructured.Unstructured) Disk {
	d := Disk{Namespace: namespace, Name: name, Kind: kind, Golden: ann[annGolden], Pool: ann[annPool]}
	if pvc != nil {
		d.PVC = pvc.GetName()
		d.CloneType, d.FallbackReason = pvc.GetAnnotations()[annCloneType], pvc.GetAnnotations()[annCloneFallback]
	}
	return d
}

// ReadGoldens lists every MachineDeployment, DataVolume and
// PersistentVolumeClaim once, and reads the goldens and worker disks from
// them.
func ReadGoldens(ctx context.Context, p engine.ClientProvider) (*Goldens, error) {
	g := &Goldens{Stored: map[string]Golden{}, MachineDeployments: map[string]*unstructured.Unstructured{}}
	if _, _, err := p.GetClientFor(machineDeplAPI, "MachineDeployment"); !errors.Is(err, render.ErrKindNotServed) {
		mds, err := List(ctx, p, machineDeplAPI, "MachineDeployment", "")
		if err != nil {
			return nil, err
		}
		for i := range mds {
			g.MachineDeployments[mds[i].GetNamespace()+"/"+mds[i].GetName()] = &mds[i]
		}
	}
	// One list of every DataVolume: the goldens, and the worker disks below.
	dvs, err := List(ctx, p, dataVolumeAPI, "DataVolume", "")
	if err != nil {
		return nil, err
	}
	for i := range dvs {
		addStoredDataVolume(g.Stored, &dvs[i])
	}
	pvcs, err := List(ctx, p, "v1", "PersistentVolumeClaim", "")
	if err != nil {
		return nil, err
	}
	pvcByKey := map[string]*unstructured.Unstructured{}
	for i := range pvcs {
		pvc := &pvcs[i]
		pvcByKey[pvc.GetNamespace()+"/"+pvc.GetName()] = pvc
		addStoredClaim(g.Stored, pvc)
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
		g.Disks = append(g.Disks, diskOf(dv.GetNamespace(), dv.GetName(), "DataVolume", ann, pvcByKey[dv.GetNamespace()+"/"+claim]))
	}
	for key, pvc := range pvcByKey {
		if ann := pvc.GetAnnotations(); ann[annGolden] != "" && !dvKeys[key] {
			g.Disks = append(g.Disks, diskOf(pvc.GetNamespace(), pvc.GetName(), "PersistentVolumeClaim", ann, pvc))
		}
	}
	return g, nil
}

// CatalogGoldens lists the goldens cozy-public holds, by name: its
// DataVolumes named as goldens, and the PVCs of goldens whose DataVolume is
// gone. Two lists of cozy-public, whatever the tenants hold.
func CatalogGoldens(ctx context.Context, p engine.ClientProvider) (map[string]Golden, error) {
	stored := map[string]Golden{}
	dvs, err := List(ctx, p, dataVolumeAPI, "DataVolume", golden.Namespace)
	if err != nil {
		return nil, err
	}
	for i := range dvs {
		addStoredDataVolume(stored, &dvs[i])
	}
	pvcs, err := List(ctx, p, "v1", "PersistentVolumeClaim", golden.Namespace)
	if err != nil {
		return nil, err
	}
	for i := range pvcs {
		addStoredClaim(stored, &pvcs[i])
	}
	return stored, nil
}

// addStoredDataVolume keeps dv in stored when it is a golden's DataVolume.
func addStoredDataVolume(stored map[string]Golden, dv *unstructured.Unstructured) {
	if dv.GetNamespace() != golden.Namespace || !strings.HasPrefix(dv.GetName(), golden.Prefix) {
		return
	}
	phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
	stored[dv.GetName()] = Golden{
		FoundAs: "DataVolume", Phase: phase, Retiring: dv.GetAnnotations()[annRetiring] == "true",
		URL:     Text(dv.Object, "spec", "source", "http", "url"),
		Storage: firstText(Text(dv.Object, "spec", "storage", "resources", "requests", "storage"), Text(dv.Object, "spec", "pvc", "resources", "requests", "storage")),
		Class:   firstText(Text(dv.Object, "spec", "storage", "storageClassName"), Text(dv.Object, "spec", "pvc", "storageClassName")),

		CertConfigMap: Text(dv.Object, "spec", "source", "http", "certConfigMap"),
		Checksum:      Text(dv.Object, "spec", "source", "http", "checksum"),
	}
}

// addStoredClaim keeps pvc in stored when it is a golden's PVC whose
// DataVolume stored does not hold (CDI's garbage collection removed it).
func addStoredClaim(stored map[string]Golden, pvc *unstructured.Unstructured) {
	if pvc.GetNamespace() != golden.Namespace || !strings.HasPrefix(pvc.GetName(), golden.Prefix) {
		return
	}
	if _, ok := stored[pvc.GetName()]; ok {
		return
	}
	stored[pvc.GetName()] = Golden{
		FoundAs: "PersistentVolumeClaim",
		URL:     pvc.GetAnnotations()[annImportEndpoint],
		Storage: Text(pvc.Object, "spec", "resources", "requests", "storage"),
		Class:   Text(pvc.Object, "spec", "storageClassName"),

		CertConfigMap: pvc.GetAnnotations()[annImportCertConfigMap],
		Checksum:      pvc.GetAnnotations()[annImportChecksum],
	}
}

// CAConfigMaps are the catalog's CA ConfigMaps in cozy-public
// (CatalogCAConfigMap, and <it>-<schematicID>-<version> for an entry's own),
// each with the PEM it holds (its ca.pem, as the catalog writes it).
func CAConfigMaps(ctx context.Context, p engine.ClientProvider) (map[string]string, error) {
	cms, err := List(ctx, p, "v1", "ConfigMap", golden.Namespace)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, cm := range cms {
		if name := cm.GetName(); cm.GetNamespace() == golden.Namespace && (name == CatalogCAConfigMap || strings.HasPrefix(name, CatalogCAConfigMap+"-")) {
			out[name] = Text(cm.Object, "data", CAKey)
		}
	}
	return out, nil
}

// GoldenSource reads where a golden in cozy-public was imported from: its
// DataVolume's spec.source.http.url, else, with only its PVC left, CDI's
// import endpoint annotation ("" when neither records one); and the CA
// ConfigMap and checksum of that import, read the same way.
func GoldenSource(ctx context.Context, p engine.ClientProvider, name string) (url, certConfigMap, checksum string, err error) {
	for _, kind := range []struct{ apiVersion, kind string }{{dataVolumeAPI, "DataVolume"}, {"v1", "PersistentVolumeClaim"}} {
		obj, err := Get(ctx, p, kind.apiVersion, kind.kind, golden.Namespace, name)
		if err != nil {
			return "", "", "", err
		}
		if obj == nil {
			continue
		}
		if kind.kind == "DataVolume" {
			return Text(obj.Object, "spec", "source", "http", "url"), Text(obj.Object, "spec", "source", "http", "certConfigMap"), Text(obj.Object, "spec", "source", "http", "checksum"), nil
		}
		a := obj.GetAnnotations()
		return a[annImportEndpoint], a[annImportCertConfigMap], a[annImportChecksum], nil
	}
	return "", "", "", nil
}

// List reads every object of a kind, in every namespace or in one.
func List(ctx context.Context, p engine.ClientProvider, apiVersion, kind, namespace string) ([]unstructured.Unstructured, error) {
	c, namespaced, err := p.GetClientFor(apiVersion, kind)
	if err != nil {
		return nil, fmt.Errorf("listing %s %s: %v", kind, apiVersion, err)
	}
	var r dynamic.ResourceInterface = c
	if namespaced && namespace != "" {
		r = c.Namespace(namespace)
	}
	l, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s %s: %v", kind, apiVersion, err)
	}
	return l.Items, nil
}

// Get reads one object; nil, without error, when the kind is not served or
// the object does not exist.
func Get(ctx context.Context, p engine.ClientProvider, apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	c, namespaced, err := p.GetClientFor(apiVersion, kind)
	if errors.Is(err, render.ErrKindNotServed) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %v", kind, apiVersion, err)
	}
	var r dynamic.ResourceInterface = c
	if namespaced {
		r = c.Namespace(namespace)
	}
	obj, err := r.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %v", kind, name, err)
	}
	return obj, nil
}

// Text reads a scalar field as its text: a quantity may be a YAML number,
// written out in full.
func Text(obj map[string]any, fields ...string) string {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	if !ok || v == nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		return v
	case float64:
		// A state file's number reads back as a float; 21474836480 is not
		// 2.147483648e+10 to the catalog, which compares the text.
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// Int64 reads a count the API wrote: an int64, or a whole float64 as a
// state file's JSON reads back (apimachinery's NestedInt64 takes the first
// only). set is false when the field is absent or null; n is 0 when it
// holds anything but such a number.
func Int64(obj map[string]any, fields ...string) (n int64, set bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	if !ok || v == nil {
		return 0, false
	}
	switch v := v.(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case float64:
		if v >= 0 && v <= math.MaxInt64/2 && v == math.Trunc(v) {
			return int64(v), true
		}
	}
	return 0, true
}

func firstText(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
