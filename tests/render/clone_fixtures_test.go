package render

import (
	"fmt"
	"strconv"
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
