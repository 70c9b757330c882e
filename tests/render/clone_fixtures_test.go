package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
)

// Cluster-state builders for the clone path. Each returns one YAML document,
// so a test's cluster reads as the objects an operator would see with kubectl.

const (
	defaultSchematic = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
	defaultTalos     = "v1.13.6"
	defaultGolden    = "talos-worker-" + defaultSchematic + "-" + defaultTalos
)

// golden is a golden as CDI leaves one in cozy-public: its DataVolume, and,
// once CDI bound it (any phase but "" or Pending), its PersistentVolumeClaim
// (volume mode mode, Filesystem when unset, as the API server defaults it;
// status.capacity capacity, else size) and the CSI PersistentVolume under it
// (of the class's driver, else driver). dvOnly leaves out the PVC and PV: a
// state CDI does not produce (it creates the PVC with the DataVolume), used
// only where no check that reads them is under test.
type golden struct {
	name, class, size, phase, claimName string
	mode, capacity, driver              string
	// claimClass is the class the PVC bound to, when the DataVolume names none.
	claimClass string
	dvOnly     bool
}

// classDrivers are the CSI drivers of the fixture classes (testdata/cluster/storageclasses.yaml).
var classDrivers = map[string]string{"replicated": "linstor.csi.linbit.com", "local": "linstor.csi.linbit.com", "fast": "rbd.csi.ceph.com", "fixed": "fixed.csi.example"}

func (g golden) yaml() string {
	if g.name == "" {
		g.name = defaultGolden
	}
	var storage []string
	if g.class != "" {
		storage = append(storage, "    storageClassName: "+g.class)
	}
	if g.size != "" {
		storage = append(storage, "    resources: {requests: {storage: "+g.size+"}}")
	}
	status := ""
	if g.phase != "" || g.claimName != "" {
		status = "status:\n"
		if g.phase != "" {
			status += "  phase: " + g.phase + "\n"
		}
		if g.claimName != "" {
			status += "  claimName: " + g.claimName + "\n"
		}
	}
	dv := fmt.Sprintf(`---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: %s
  namespace: cozy-public
  annotations: {helm.sh/resource-policy: keep}
spec:
  source: {http: {url: "https://factory.talos.dev/image/x/v/openstack-amd64.raw.xz"}}
  storage:
%s
%s`, g.name, strings.Join(append(storage, "    accessModes: [ReadWriteMany]"), "\n"), status)
	if g.dvOnly {
		return dv
	}
	claim := g.claimName
	if claim == "" {
		claim = g.name
	}
	class := g.class
	if class == "" {
		class = g.claimClass
	}
	size := g.size
	if size == "" {
		size = g.capacity
	}
	return dv + goldenClaim{name: claim, class: class, size: size, mode: g.mode, capacity: g.capacity, driver: g.driver, bound: g.phase != "" && g.phase != "Pending"}.yaml()
}

// goldenClaim is a golden's PersistentVolumeClaim in cozy-public as CDI and
// the API server leave it (content type kubevirt, volume mode defaulted),
// with, when bound, its capacity and its CSI PersistentVolume.
type goldenClaim struct {
	name, class, size, mode, capacity, driver string
	bound                                     bool
}

func (c goldenClaim) yaml() string {
	if c.mode == "" {
		c.mode = "Filesystem"
	}
	if c.capacity == "" {
		c.capacity = c.size
	}
	if c.driver == "" {
		c.driver = classDrivers[c.class]
	}
	out := fmt.Sprintf("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: %s\n  namespace: cozy-public\n  annotations: {cdi.kubevirt.io/storage.contentType: kubevirt}\nspec:\n  accessModes: [ReadWriteMany]\n  volumeMode: %s\n", c.name, c.mode)
	if c.class != "" {
		out += "  storageClassName: " + c.class + "\n"
	}
	if c.size != "" {
		out += "  resources: {requests: {storage: " + c.size + "}}\n"
	}
	if !c.bound {
		return out + "status: {phase: Pending}\n"
	}
	volume := "pv-" + c.name
	out += "  volumeName: " + volume + "\nstatus:\n  phase: Bound\n"
	if c.capacity != "" {
		out += "  capacity: {storage: " + c.capacity + "}\n"
	}
	if c.driver == "" {
		return out
	}
	return out + fmt.Sprintf(`---
apiVersion: v1
kind: PersistentVolume
metadata: {name: %s}
spec:
  accessModes: [ReadWriteMany]
  capacity: {storage: %s}
  volumeMode: %s
  storageClassName: %s
  claimRef: {namespace: cozy-public, name: %s}
  csi: {driver: %s, volumeHandle: %s}
`, volume, c.capacity, c.mode, c.class, c.name, c.driver, volume)
}

// pvc is a PersistentVolumeClaim; class "" leaves storageClassName out.
func pvc(namespace, name, class, size string) string {
	out := fmt.Sprintf("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  accessModes: [ReadWriteMany]\n", name, namespace)
	if class != "" {
		out += "  storageClassName: " + class + "\n"
	}
	if size != "" {
		out += "  resources: {requests: {storage: " + size + "}}\n"
	}
	return out
}

// storageClass builds a class: a fixture class name (classDrivers) keeps its
// CSI driver, any other name gets a driver <name>.csi.example of its own and
// that driver's CSIDriver object; annotations are "key=value" pairs.
func storageClass(name, created string, expandable bool, annotations ...string) string {
	out := fmt.Sprintf("---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: %s\n  creationTimestamp: %q\n", name, created)
	if len(annotations) > 0 {
		out += "  annotations:\n"
		for _, a := range annotations {
			k, v, _ := strings.Cut(a, "=")
			out += fmt.Sprintf("    %s: %q\n", k, v)
		}
	}
	// A fixture class keeps its driver (the test adds that driver's CSIDriver
	// once); any other class has a CSI driver of its own, and its CSIDriver here.
	driver, shared := classDrivers[name]
	if !shared {
		// A name the test quoted for YAML ("on") makes a plain driver name.
		driver = strings.Trim(name, `"`) + ".csi.example"
	}
	out += "provisioner: " + driver + "\n"
	if expandable {
		out += "allowVolumeExpansion: true\n"
	}
	if shared {
		return out
	}
	return out + support.CSIDriver(driver)
}

const (
	gaDefault   = "storageclass.kubernetes.io/is-default-class=true"
	betaDefault = "storageclass.beta.kubernetes.io/is-default-class=true"
	virtDefault = "storageclass.kubevirt.io/is-default-virt-class=true"
)

// runningPool is what a pool's earlier release left in its namespace: its
// MachineDeployment (ready workers in status) whose infrastructureRef names its
// KubevirtMachineTemplate, whose disk clones goldenName written with class
// (left out when ""). pool is the objects' base name (kubernetes-<cluster>-<pool>).
func runningPool(pool, template, goldenName, class string, ready int) string {
	classLine := ""
	if class != "" {
		classLine = "\n                  storageClassName: " + strconv.Quote(class)
	}
	return fmt.Sprintf(`---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  clusterName: kubernetes-acme
  template:
    spec:
      clusterName: kubernetes-acme
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: KubevirtMachineTemplate, name: %[3]s, namespace: %[2]s}
status: {replicas: %[5]d, readyReplicas: %[5]d}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: %[3]s, namespace: %[2]s}
spec:
  template:
    spec:
      virtualMachineTemplate:
        spec:
          dataVolumeTemplates:
            - metadata: {name: disk-system}
              spec:
                source: {pvc: {namespace: cozy-public, name: %[4]s}}
                storage:
                  resources: {requests: {storage: 20Gi}}%[6]s
`, pool, testNamespace, template, goldenName, ready, classLine)
}

// diskOf reads the worker disk template of a render.
func diskOf(m *render.Manifest) interface{} {
	for _, d := range m.Docs {
		if d.Kind() == "KubevirtMachineTemplate" {
			return render.Get(d.Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0")
		}
	}
	return nil
}
