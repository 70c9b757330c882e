package render

import (
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/render"
)

// Cluster-state builders for the clone path. Each returns one YAML document,
// so a test's cluster reads as the objects an operator would see with kubectl.

const (
	defaultSchematic = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
	defaultTalos     = "v1.13.6"
	defaultGolden    = "talos-worker-" + defaultSchematic + "-" + defaultTalos
)

// golden is a golden DataVolume in cozy-public.
type golden struct {
	name, class, size, phase, claimName string
}

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
	return fmt.Sprintf(`---
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

// storageClass builds a class; annotations are "key=value" pairs.
func storageClass(name, created string, expandable bool, annotations ...string) string {
	out := fmt.Sprintf("---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: %s\n  creationTimestamp: %q\n", name, created)
	if len(annotations) > 0 {
		out += "  annotations:\n"
		for _, a := range annotations {
			k, v, _ := strings.Cut(a, "=")
			out += fmt.Sprintf("    %s: %q\n", k, v)
		}
	}
	out += "provisioner: csi.example\n"
	if expandable {
		out += "allowVolumeExpansion: true\n"
	}
	return out
}

const (
	gaDefault   = "storageclass.kubernetes.io/is-default-class=true"
	betaDefault = "storageclass.beta.kubernetes.io/is-default-class=true"
	virtDefault = "storageclass.kubevirt.io/is-default-virt-class=true"
)

// workerDisk is a worker disk DataVolume in the tenant namespace, as CAPK
// creates it from the machine template, with its PVC when class is set.
func workerDisk(name, pool, goldenName, phase, class string) string {
	out := fmt.Sprintf(`---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: %s
  namespace: %s
  creationTimestamp: "2026-03-01T10:00:00Z"
  annotations:
    kubernetes-worker-image.cozystack.io/golden: %s
    kubernetes-worker-image.cozystack.io/pool: %s
spec:
  source: {pvc: {namespace: cozy-public, name: %s}}
  storage: {resources: {requests: {storage: 20Gi}}}
status:
  phase: %s
`, name, testNamespace, goldenName, pool, goldenName, phase)
	if class != "" {
		out += pvc(testNamespace, name, class, "20Gi")
	}
	return out
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
