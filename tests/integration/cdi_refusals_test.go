//go:build integration

package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// What CDI's clone populator writes on a worker disk's claim when it falls
// back from a CSI clone: the strategy "copy" in annCloneType, and why here.
const annCloneFallbackReason = "cdi.kubevirt.io/cloneFallbackReason"

// cdiDecision is what CDI decided for a worker disk: the clone type and
// fallback reason on its claim, its DataVolume's phase and conditions, the
// events on both, and the pods and upload Services created since forgetPods.
type cdiDecision struct {
	phase, cloneType, clonePhase, fallback string
	conditions, events, pods               []string
}

func (d cdiDecision) String() string {
	return fmt.Sprintf("DataVolume phase %q, conditions %q; claim %s=%q, %s=%q, %s=%q; events %q; pods and upload Services %v",
		d.phase, d.conditions, annCloneType, d.cloneType, annClonePhase, d.clonePhase, annCloneFallbackReason, d.fallback, d.events, d.pods)
}

// hostAssisted: CDI took the host-assisted copy, for the reason given, and
// has created what copies the golden over the pod network: an upload server
// pod with its Service, and a clone source pod.
func (d cdiDecision) hostAssisted(reason string) bool {
	var service, upload, source bool
	for _, p := range d.pods {
		service = service || strings.HasPrefix(p, "Service ")
		upload = upload || strings.HasSuffix(p, "("+uploadServerComponent+")")
		source = source || strings.HasSuffix(p, "("+cloneSourceComponent+")")
	}
	return d.cloneType == "copy" && d.clonePhase == "HostClone" && d.fallback == reason && service && upload && source
}

// readCDIDecision reads a worker disk's cdiDecision.
func (e *env) readCDIDecision(t *testing.T, storage *cdiStorage, name string) cdiDecision {
	t.Helper()
	ctx := context.Background()
	var d cdiDecision
	if dv, ok := e.get(t, dataVolumeVersion, "DataVolume", cdiTenant, name); ok {
		d.phase, _, _ = unstructured.NestedString(dv.Object, "status", "phase")
		conditions, _, _ := unstructured.NestedSlice(dv.Object, "status", "conditions")
		for _, c := range conditions {
			if c, ok := c.(map[string]interface{}); ok && c["status"] == "True" {
				d.conditions = append(d.conditions, fmt.Sprintf("%v %v: %v", c["type"], c["reason"], c["message"]))
			}
		}
	}
	if pvc, err := storage.client.CoreV1().PersistentVolumeClaims(cdiTenant).Get(ctx, name, metav1.GetOptions{}); err == nil {
		d.cloneType, d.clonePhase, d.fallback = pvc.Annotations[annCloneType], pvc.Annotations[annClonePhase], pvc.Annotations[annCloneFallbackReason]
	}
	events, err := storage.client.CoreV1().Events(cdiTenant).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(events.Items, func(i, j int) bool { return events.Items[i].FirstTimestamp.Before(&events.Items[j].FirstTimestamp) })
	for _, ev := range events.Items {
		d.events = append(d.events, fmt.Sprintf("%s %s %s: %s", ev.InvolvedObject.Kind, ev.Type, ev.Reason, ev.Message))
	}
	d.pods = storage.podsSeen(t)
	return d
}

// waitCDIDecision polls a worker disk until CDI's decision is the one
// wanted, and fails with what CDI decided instead when it does not come.
func (e *env) waitCDIDecision(t *testing.T, storage *cdiStorage, name, want string, decided func(cdiDecision) bool) cdiDecision {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		d := e.readCDIDecision(t, storage, name)
		if decided(d) {
			t.Logf("worker disk %s/%s: %s", cdiTenant, name, d)
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker disk %s/%s: want %s; CDI's controller: %s", cdiTenant, name, want, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// refusedPool renders the pool with values the chart refuses, and requires
// the refusal to be the one the case shows (it says each fragment).
func (e *env) refusedPool(t *testing.T, refusal []string, kv ...interface{}) {
	t.Helper()
	_, err := e.cdiPool(t, "kubernetes-nodes-acme-cdi", kv...)
	for _, fragment := range refusal {
		if err == nil || !strings.Contains(err.Error(), fragment) {
			t.Fatalf("the chart's refusal for %v: got %v, want one saying %q", kv, err, fragment)
		}
	}
	t.Logf("the chart refuses %v: %v", kv, err)
}

// acceptedPool renders the pool, and fails if the chart refuses it.
func (e *env) acceptedPool(t *testing.T, kv ...interface{}) *render.Manifest {
	t.Helper()
	m, err := e.cdiPool(t, "kubernetes-nodes-acme-cdi", kv...)
	if err != nil {
		t.Fatalf("the chart refuses the accepted neighbour %v: %v", kv, err)
	}
	return m
}

// mergePatch merge-patches a cluster-scoped CDI object, and polls until
// CDI's controller has written what the chart reads into its status.
func (e *env) mergePatch(t *testing.T, kind, name, patch, field, want string) {
	t.Helper()
	if _, err := e.client(t, dataVolumeVersion, kind, "").Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch %s %s: %v", kind, name, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		obj, _ := e.get(t, dataVolumeVersion, kind, "", name)
		got := ""
		if obj != nil {
			got = fmt.Sprint(render.Get(obj.Object, field))
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: %s is %q after patching it with %s, want %q", kind, name, field, got, patch, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// setStorage edits a worker disk's spec.storage as other pool values would
// have rendered it.
func setStorage(field string, value interface{}) func(map[string]interface{}) {
	return func(spec map[string]interface{}) {
		path := append([]string{"storage"}, strings.Split(field, ".")...)
		if err := unstructured.SetNestedField(spec, value, path...); err != nil {
			panic(err)
		}
	}
}

// testCDIRefusals shows each refusal of the chart that exists because CDI
// would not CSI-clone (README refusals 4, 5, 6 and 9) against CDI's own
// controller: the accepted neighbour is CSI-cloned, and the worker disk the
// chart would have rendered had it not refused (the neighbour's entry with
// what the refused values change, created as KubeVirt creates it) gets what
// CDI decides for it, read from CDI's own annotations, conditions and events.
func testCDIRefusals(t *testing.T, e *env, cdi *cdiController, storage *cdiStorage, golden string) {
	// Refusal 4. CDI compares CSI drivers, not classes: on LINSTOR's other
	// class it CSI-clones (and the external-provisioner passes a clone
	// across classes since v3.1, leaving it to the driver); on Ceph RBD it
	// copies over the pod network.
	t.Run("Class", func(t *testing.T) {
		m := e.acceptedPool(t, "diskSize", goldenSize)
		storage.forgetPods(t)
		e.expectCSIClone(t, storage, e.workerDisk(t, cdi, m, "kubernetes-acme-cdi-class-replicated"), golden)

		// The chart's reason says which: no fallback on one driver.
		e.refusedPool(t, []string{`its disks would be on StorageClass "local"`, "Both classes are of the CSI driver linstor.csi.linbit.com, so CDI would not fall back"},
			"diskSize", goldenSize, "storageClass", "local")
		storage.forgetPods(t)
		e.expectCSIClone(t, storage, e.workerDisk(t, cdi, m, "kubernetes-acme-cdi-class-local", setStorage("storageClassName", "local")), golden)

		e.refusedPool(t, []string{`its disks would be on StorageClass "` + rbdClass + `"`, `so CDI would fall back to a host-assisted copy over the pod network ("Provisioners are incompatible")`},
			"diskSize", goldenSize, "storageClass", rbdClass)
		storage.forgetPods(t)
		dv := e.workerDisk(t, cdi, m, "kubernetes-acme-cdi-class-rbd", setStorage("storageClassName", rbdClass))
		e.waitCDIDecision(t, storage, dv.GetName(), `a host-assisted copy ("Provisioners are incompatible")`,
			func(d cdiDecision) bool { return d.hostAssisted("Provisioners are incompatible") })
	})

	// Refusal 5. CDI does not copy a smaller disk: it fails its validation.
	t.Run("Size", func(t *testing.T) {
		m := e.acceptedPool(t, "diskSize", goldenSize)
		storage.forgetPods(t)
		e.expectCSIClone(t, storage, e.workerDisk(t, cdi, m, "kubernetes-acme-cdi-size-6gi"), golden)

		e.refusedPool(t, []string{"is smaller than golden", "a clone cannot be smaller than its source"}, "diskSize", "5Gi")
		storage.forgetPods(t)
		// The chart writes a diskSize as its bytes.
		dv := e.workerDisk(t, cdi, m, "kubernetes-acme-cdi-size-5gi", setStorage("resources.requests.storage", fmt.Sprint(int64(5)<<30)))
		d := e.waitCDIDecision(t, storage, dv.GetName(), `CDI's validation failing ("smaller than the source")`, func(d cdiDecision) bool {
			for _, ev := range d.events {
				if strings.Contains(ev, "smaller than the source") {
					return true
				}
			}
			return false
		})
		if d.cloneType != "" || len(d.pods) > 0 || d.phase == "Succeeded" {
			t.Errorf("CDI went on with the smaller disk: %s", d)
		}
	})

	// Refusal 9. The StorageProfile gives a worker disk Filesystem; the
	// golden is Block.
	t.Run("VolumeMode", func(t *testing.T) {
		m := e.acceptedPool(t, "diskSize", goldenSize)
		storage.forgetPods(t)
		e.expectCSIClone(t, storage, e.workerDisk(t, cdi, m, "kubernetes-acme-cdi-mode-block"), golden)

		t.Cleanup(func() {
			e.mergePatch(t, "StorageProfile", "replicated", `{"spec":{"claimPropertySets":null}}`, "status.claimPropertySets.0.volumeMode", "Block")
		})
		e.mergePatch(t, "StorageProfile", "replicated", `{"spec":{"claimPropertySets":[{"accessModes":["ReadWriteMany"],"volumeMode":"Filesystem"}]}}`,
			"status.claimPropertySets.0.volumeMode", "Filesystem")
		e.refusedPool(t, []string{`but a worker disk on StorageClass "replicated" gets Filesystem`, "CDI cannot CSI-clone between volume modes and would fall back to a host-assisted copy"}, "diskSize", goldenSize)
		storage.forgetPods(t)
		// The same entry: a worker disk's volume mode is the StorageProfile's.
		dv := e.workerDisk(t, cdi, m, "kubernetes-acme-cdi-mode-filesystem")
		e.waitCDIDecision(t, storage, dv.GetName(), `a host-assisted copy ("The volume modes of source and target are incompatible")`,
			func(d cdiDecision) bool {
				return d.hostAssisted("The volume modes of source and target are incompatible")
			})
	})

	// Refusal 6. A Filesystem golden of 6Gi on "fixed", a class that cannot
	// expand (its StorageProfile set to Filesystem, as an operator sets a
	// class CDI does not know): CDIConfig's filesystem overhead decides
	// whether CDI's request for a 6Gi disk exceeds the golden's capacity.
	t.Run("CDIConfig", func(t *testing.T) {
		perClass := support.GoldenName(poolDefaults(t)) + "--fixed"
		e.createYAML(t, fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: %s, namespace: %s}
spec: {storageClassName: fixed, volumeMode: Filesystem, accessModes: [ReadWriteOnce], resources: {requests: {storage: %s}}}
`, perClass, catalogNamespace, goldenSize))
		storage.waitBound(t, catalogNamespace, perClass)
		e.mergePatch(t, "StorageProfile", "fixed", `{"spec":{"claimPropertySets":[{"accessModes":["ReadWriteOnce"],"volumeMode":"Filesystem"}]}}`,
			"status.claimPropertySets.0.volumeMode", "Filesystem")
		config, _ := e.get(t, dataVolumeVersion, "CDIConfig", "", "config")
		global := fmt.Sprint(render.Get(config.Object, "status.filesystemOverhead.global"))
		t.Logf("CDIConfig config: filesystem overhead %v", render.Get(config.Object, "status.filesystemOverhead"))

		t.Cleanup(func() {
			e.mergePatch(t, "CDIConfig", "config", `{"spec":{"filesystemOverhead":null}}`, "status.filesystemOverhead.storageClass.fixed", global)
		})
		e.mergePatch(t, "CDIConfig", "config", `{"spec":{"filesystemOverhead":{"storageClass":{"fixed":"0"}}}}`, "status.filesystemOverhead.storageClass.fixed", "0")
		m := e.acceptedPool(t, "diskSize", goldenSize, "storageClass", "fixed")
		storage.forgetPods(t)
		e.expectCSIClone(t, storage, e.workerDisk(t, cdi, m, "kubernetes-acme-cdi-overhead-0"), perClass)

		e.mergePatch(t, "CDIConfig", "config", `{"spec":{"filesystemOverhead":null}}`, "status.filesystemOverhead.storageClass.fixed", global)
		e.refusedPool(t, []string{"grown by the filesystem overhead " + global + " of the CDIConfig config", `does not set allowVolumeExpansion: true; CDI grows a CSI clone only on an expandable class and would otherwise take a host-assisted copy`},
			"diskSize", goldenSize, "storageClass", "fixed")
		storage.forgetPods(t)
		// The same entry: CDI grows a Filesystem disk's request by the overhead.
		dv := e.workerDisk(t, cdi, m, "kubernetes-acme-cdi-overhead-"+strings.ReplaceAll(global, ".", ""))
		e.waitCDIDecision(t, storage, dv.GetName(), `a host-assisted copy ("No volume expansion is possible")`,
			func(d cdiDecision) bool { return d.hostAssisted("No volume expansion is possible") })
	})
}
