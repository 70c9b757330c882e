package render

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every key of Cozystack's kubernetes-nodes chart is taken, with its default.
func TestEveryCozystackKeyIsTaken(t *testing.T) {
	values := vals(t, `
cluster: acme
storageClass: replicated
minReplicas: 0
maxReplicas: 10
instanceType: u1.medium
diskSize: 20Gi
roles: []
resources: {}
gpus: []
kubelet: {}
logSerialConsole: false
maxUnhealthy: "50%"
nodeStartupTimeout: "20m"
readyUnknownTimeout: "5m"
readyFalseTimeout: "10m"
maxNodeProvisionTime: "30m"
version: "v1.35"
talos:
  version: "v1.13.6"
  schematicID: "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
  imageFactoryURL: "https://factory.talos.dev"
  installerRepository: "factory.talos.dev/installer"
  registryMirrors: {}
images:
  kubectl: ""
`)
	written := mustRenderPool(t, values, loadCluster(t, "cluster/instancetypes.yaml"))
	defaults := mustRenderPool(t, vals(t, "cluster: acme"), loadCluster(t, "cluster/instancetypes.yaml"))
	assert.Equal(t, baselineText(t, defaults), baselineText(t, written), "the chart's defaults are Cozystack's, written out or left out")
	assert.Equal(t, doc(t, defaults, "MachineHealthCheck").Text, doc(t, written, "MachineHealthCheck").Text)
	mhc := doc(t, defaults, "MachineHealthCheck").Object
	assert.Equal(t, "50%", render.Get(mhc, "spec.maxUnhealthy"))
	assert.Equal(t, "20m", render.Get(mhc, "spec.nodeStartupTimeout"))
	md := doc(t, defaults, "MachineDeployment").Object
	assert.Equal(t, "30m", render.Get(md, "metadata.annotations[cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime]"))
	assert.EqualValues(t, 10, render.Get(md, "spec.strategy.rollingUpdate.maxSurge"), "a rollout may add up to maxReplicas workers at once")
	assert.EqualValues(t, 1, render.Get(md, "spec.strategy.rollingUpdate.maxUnavailable"))
}

// capacity is the allocatable memory (Mi, floored) and CPU (millicores,
// rounded up) of a worker, reservations left out: 5% of its memory (256Mi to
// 1Gi) and of its CPU (50m to 500m) each for the system and Kubernetes, and a
// hard eviction threshold of 7% of its memory.
func capacity(memoryMi, cores float64) (string, string) {
	reservedMi := math.Min(math.Max(math.Floor(memoryMi*0.05), 256), 1024)
	reservedMillis := math.Min(math.Max(math.Floor(cores*1000*0.05), 50), 500)
	allocatableMi := memoryMi - 2*reservedMi - memoryMi*0.07
	return fmt.Sprintf("%.0fMi", math.Floor(allocatableMi)), fmt.Sprintf("%.0fm", math.Ceil(cores*1000-2*reservedMillis))
}

// The cluster-autoscaler plans a pool at zero workers from the capacity its
// MachineDeployment publishes: the worker's size less what its kubelet keeps.
func TestMachineDeploymentPublishesTheWorkersCapacity(t *testing.T) {
	for _, tc := range []struct {
		values           string
		memoryMi, cores  float64
		wantMem, wantCPU string
	}{
		{values: "{cluster: acme}", memoryMi: 4096, cores: 1},
		{values: "{cluster: acme, instanceType: u1.xlarge}", memoryMi: 16384, cores: 4},
		{values: "{cluster: acme, instanceType: u1.4xlarge}", memoryMi: 65536, cores: 16},
		{values: "{cluster: acme, instanceType: u1.small}", memoryMi: 2048, cores: 1},
		{values: "{cluster: acme, resources: {cpu: 32, memory: 128Gi}}", memoryMi: 131072, cores: 32},
		{values: "{cluster: acme, resources: {cpu: 2, memory: 4Gi}, kubelet: {systemReservedMemory: 512Mi, kubeReservedMemory: 512Mi, systemReservedCpu: 100m, kubeReservedCpu: '0.1', evictionHardMemory: 100Mi, evictionSoftMemory: 200Mi}}", wantMem: "2972Mi", wantCPU: "1800m"},
	} {
		t.Run(tc.values, func(t *testing.T) {
			m := mustRenderPool(t, vals(t, tc.values), loadCluster(t, "cluster/instancetypes.yaml", "golden/state/instancetypes-more.yaml"))
			md := doc(t, m, "MachineDeployment").Object
			wantMem, wantCPU := tc.wantMem, tc.wantCPU
			if wantMem == "" {
				wantMem, wantCPU = capacity(tc.memoryMi, tc.cores)
			}
			assert.Equal(t, wantMem, render.Get(md, "metadata.annotations[capacity.cluster-autoscaler.kubernetes.io/memory]"))
			assert.Equal(t, wantCPU, render.Get(md, "metadata.annotations[capacity.cluster-autoscaler.kubernetes.io/cpu]"))
		})
	}
}

// The worker VM as Cozystack's chart shapes it: one socket and one thread per
// core, the disk's PCI address and block size, the pod's ephemeral storage at
// the platform's allocation ratio, GPUs in order, and the pod CPU pair.
func TestWorkerVMShape(t *testing.T) {
	m := mustRenderPool(t, vals(t, `{cluster: acme, _cluster: {ephemeral-storage-allocation-ratio: "8"}, resources: {cpu: 4, memory: 8Gi},
  gpus: [{name: nvidia.com/AD102GL_L40S}, {name: nvidia.com/GA100}], podCpuLimit: 6, podCpuRequest: 1500m, logSerialConsole: true, roles: [gpu]}`), nil)
	vm := render.Get(doc(t, m, "KubevirtMachineTemplate").Object, "spec.template.spec.virtualMachineTemplate")
	domain := render.Get(vm, "spec.template.spec.domain")
	assert.Equal(t, map[string]interface{}{"threads": float64(1), "cores": float64(4), "sockets": float64(1)}, render.Get(domain, "cpu"))
	assert.Equal(t, "8Gi", render.Get(domain, "memory.guest"))
	assert.Equal(t, []interface{}{
		map[string]interface{}{"name": "gpu1", "deviceName": "nvidia.com/AD102GL_L40S"},
		map[string]interface{}{"name": "gpu2", "deviceName": "nvidia.com/GA100"},
	}, render.Get(domain, "devices.gpus"))
	assert.Equal(t, true, render.Get(domain, "devices.logSerialConsole"))
	assert.Equal(t, "0000:07:00.0", render.Get(domain, "devices.disks.0.disk.pciAddress"))
	assert.Equal(t, map[string]interface{}{"logical": float64(512), "physical": float64(4096)}, render.Get(domain, "devices.disks.0.blockSize.custom"))
	assert.Equal(t, map[string]interface{}{
		"limits":   map[string]interface{}{"cpu": "6", "ephemeral-storage": "2Gi"},
		"requests": map[string]interface{}{"cpu": "1500m", "ephemeral-storage": fmt.Sprint(int64(2 << 30 / 8))},
	}, render.Get(domain, "resources"))
	assert.Equal(t, "External", render.Get(vm, "spec.template.spec.evictionStrategy"))
	assert.Equal(t, "", render.Get(vm, "metadata.labels[node-role.kubernetes.io/gpu]"))
	assert.Equal(t, "acme", render.Get(vm, "spec.template.metadata.labels[apps.cozystack.io/application.name]"))

	// Unset, false and absent render nothing of theirs.
	plain := mustRenderPool(t, vals(t, "{cluster: acme, logSerialConsole: false, gpus: []}"), nil)
	text := doc(t, plain, "KubevirtMachineTemplate").Text
	for _, absent := range []string{"logSerialConsole", "gpus:", "cpu:", "threads"} {
		assert.NotContains(t, text, absent)
	}
}

// The platform's topology spread policy reaches every worker VM, with the
// pool's cluster as the selector of its last constraint.
func TestPlatformTopologySpreadReachesTheVM(t *testing.T) {
	m := mustRenderPool(t, vals(t, `{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: "topologySpreadConstraints:\n- maxSkew: 1\n  topologyKey: topology.kubernetes.io/zone\n  whenUnsatisfiable: ScheduleAnyway\n"}}}`), nil)
	constraints := render.Get(doc(t, m, "KubevirtMachineTemplate").Object, "spec.template.spec.virtualMachineTemplate.spec.template.spec.topologySpreadConstraints")
	assert.Equal(t, []interface{}{map[string]interface{}{
		"maxSkew": float64(1), "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
		"labelSelector": map[string]interface{}{"matchLabels": map[string]interface{}{"cluster.x-k8s.io/cluster-name": "kubernetes-acme"}},
	}}, constraints)
	plain := mustRenderPool(t, vals(t, `{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: ""}}}`), nil)
	assert.NotContains(t, doc(t, plain, "KubevirtMachineTemplate").Text, "topologySpreadConstraints")
}

// Every refusal of the values Cozystack's chart takes, each with its
// neighbour that renders; with the schema off, since the templates hold
// without it.
func TestCozystackValueRefusals(t *testing.T) {
	resources := "instanceType: '', resources: {cpu: 2, memory: 4Gi}"
	for _, tc := range []struct {
		name, values, neighbour string
		refusal                 []string
		objects                 string
	}{
		{name: "gpus not a list", values: "{cluster: acme, gpus: {name: x}}", refusal: []string{"gpus is a map, not a list"}, neighbour: "{cluster: acme, gpus: [{name: x}]}"},
		{name: "too many gpus", values: "{cluster: acme, gpus: [" + strings.Repeat("{name: x},", 17) + "]}", refusal: []string{"gpus has 17 GPUs, more than the 16 the chart takes"}, neighbour: "{cluster: acme, gpus: [" + strings.Repeat("{name: x},", 16) + "]}"},
		{name: "gpu not a map", values: "{cluster: acme, gpus: [nvidia.com/L40S]}", refusal: []string{`gpus[0] is "nvidia.com/L40S", not a map`}, neighbour: "{cluster: acme, gpus: [{name: nvidia.com/L40S}]}"},
		{name: "gpu unknown key", values: "{cluster: acme, gpus: [{name: x, count: 2}]}", refusal: []string{`gpus[0] has no key "count"`}, neighbour: "{cluster: acme, gpus: [{name: x}]}"},
		{name: "gpu name breaks out", values: "{cluster: acme, gpus: [{name: \"x\\n  evil: 1\"}]}", refusal: []string{`gpus[0].name "x\n  evil: 1" is not a device resource name`}, neighbour: "{cluster: acme, gpus: [{name: example.com/x_1.2}]}"},
		{name: "serial console a string", values: "{cluster: acme, logSerialConsole: 'false'}", refusal: []string{`logSerialConsole is "false", not true or false`}, neighbour: "{cluster: acme, logSerialConsole: false}"},
		{name: "serial console null", values: "{cluster: acme, logSerialConsole: null}", refusal: []string{"logSerialConsole is null, which removes the chart's default"}, neighbour: "{cluster: acme}"},
		{name: "pod cpu limit negative", values: "{cluster: acme, " + resources + ", podCpuLimit: -1}", refusal: []string{"podCpuLimit -1 (a number) is not a CPU quantity the chart writes", "a non-negative quantity"}, neighbour: "{cluster: acme, " + resources + ", podCpuLimit: 1}"},
		{name: "pod cpu request malformed", values: "{cluster: acme, " + resources + ", podCpuRequest: 'two'}", refusal: []string{`podCpuRequest "two" is not a CPU quantity`}, neighbour: "{cluster: acme, " + resources + ", podCpuRequest: '2'}"},
		{name: "pod cpu limit with an instancetype", values: "{cluster: acme, podCpuLimit: 2}", refusal: []string{`podCpuLimit is set while the VM is sized by instanceType "u1.medium"`, "domain.resources.limits.cpu", "set both resources.cpu and resources.memory"}, neighbour: "{cluster: acme, " + resources + ", podCpuLimit: 2}"},
		{name: "pod cpu request with an instancetype", values: "{cluster: acme, podCpuRequest: 1}", refusal: []string{`podCpuRequest is set while the VM is sized by instanceType "u1.medium"`, "domain.resources.requests.cpu"}, neighbour: "{cluster: acme, " + resources + ", podCpuRequest: 1}"},
		{name: "zero limit alone", values: "{cluster: acme, " + resources + ", podCpuLimit: 0}", refusal: []string{"podCpuLimit is 0 without podCpuRequest", "set podCpuRequest: 0 beside it"}, neighbour: "{cluster: acme, " + resources + ", podCpuLimit: 0, podCpuRequest: 0}"},
		{name: "zero request under a limit", values: "{cluster: acme, " + resources + ", podCpuLimit: 2, podCpuRequest: 0}", refusal: []string{"podCpuRequest is 0 beside podCpuLimit 2", "replaces it with the limit"}, neighbour: "{cluster: acme, " + resources + ", podCpuLimit: 2, podCpuRequest: 100m}"},
		{name: "request above limit", values: "{cluster: acme, " + resources + ", podCpuLimit: 1500m, podCpuRequest: 2}", refusal: []string{"podCpuRequest 2 is above podCpuLimit 1500m"}, neighbour: "{cluster: acme, " + resources + ", podCpuLimit: 1500m, podCpuRequest: '1.5'}"},
		{name: "images not a map", values: "{cluster: acme, images: registry/kubectl}", refusal: []string{`images is "registry/kubectl", not a map`}, neighbour: "{cluster: acme, images: {kubectl: registry/kubectl}}"},
		{name: "images unknown key", values: "{cluster: acme, images: {talosCsrSigner: x}}", refusal: []string{`images has no key "talosCsrSigner"`}, neighbour: "{cluster: acme, images: {}}"},
		{name: "kubectl image breaks out", values: "{cluster: acme, images: {kubectl: \"alpine/k8s:1\\n  evil: 1\"}}", refusal: []string{"images.kubectl", "is not an image reference"}, neighbour: "{cluster: acme, images: {kubectl: 'registry.internal:5000/alpine/k8s:1.33.4@sha256:" + strings.Repeat("a", 64) + "'}}"},
		{name: "kubelet not a map", values: "{cluster: acme, kubelet: [systemReservedMemory]}", refusal: []string{"kubelet is a list, not a map"}, neighbour: "{cluster: acme, kubelet: {}}"},
		{name: "kubelet unknown key", values: "{cluster: acme, kubelet: {maxPods: 10}}", refusal: []string{`kubelet has no key "maxPods"`}, neighbour: "{cluster: acme, kubelet: {}}"},
		{name: "kubelet number", values: "{cluster: acme, kubelet: {systemReservedMemory: 512}}", refusal: []string{"kubelet.systemReservedMemory is 512 (a number), not a string"}, neighbour: "{cluster: acme, kubelet: {systemReservedMemory: '512Mi'}}"},
		{name: "kubelet memory malformed", values: "{cluster: acme, kubelet: {kubeReservedMemory: \"1Gi\\\"\"}}", refusal: []string{"kubelet.kubeReservedMemory", "is not a memory quantity"}, neighbour: "{cluster: acme, kubelet: {kubeReservedMemory: 1G}}"},
		{name: "kubelet memory in millibytes", values: "{cluster: acme, kubelet: {kubeReservedMemory: 500m}}", refusal: []string{`kubelet.kubeReservedMemory "500m" is not a memory quantity`}, neighbour: "{cluster: acme, kubelet: {kubeReservedMemory: 500M}}"},
		{name: "kubelet memory zero", values: "{cluster: acme, kubelet: {systemReservedMemory: 0Mi}}", refusal: []string{`kubelet.systemReservedMemory "0Mi" is zero`}, neighbour: "{cluster: acme, kubelet: {systemReservedMemory: 1Mi}}"},
		{name: "kubelet cpu malformed", values: "{cluster: acme, kubelet: {systemReservedCpu: 1.5m}}", refusal: []string{`kubelet.systemReservedCpu "1.5m" is not a CPU quantity in whole millicores`}, neighbour: "{cluster: acme, kubelet: {systemReservedCpu: 15m}}"},
		{name: "kubelet cpu zero", values: "{cluster: acme, kubelet: {kubeReservedCpu: 0m}}", refusal: []string{`kubelet.kubeReservedCpu "0m" is zero`}, neighbour: "{cluster: acme, kubelet: {kubeReservedCpu: 1m}}"},
		{name: "kubelet value too long", values: "{cluster: acme, kubelet: {systemReservedMemory: '" + strings.Repeat("1", 33) + "'}}", refusal: []string{"is longer than 32 characters"}, neighbour: "{cluster: acme, kubelet: {systemReservedMemory: '" + strings.Repeat("0", 24) + "1Mi'}}"},
		{name: "eviction percentage above 100", values: "{cluster: acme, kubelet: {evictionHardMemory: 5%, evictionSoftMemory: 101%}}", refusal: []string{`kubelet.evictionSoftMemory "101%" is a percentage outside (0%, 100%]`}, neighbour: "{cluster: acme, kubelet: {evictionHardMemory: 5%, evictionSoftMemory: 100%}}"},
		{name: "eviction percentage zero", values: "{cluster: acme, kubelet: {evictionHardMemory: 0%}}", refusal: []string{`kubelet.evictionHardMemory "0%" is a percentage outside (0%, 100%]`}, neighbour: "{cluster: acme, kubelet: {evictionHardMemory: 0.5%}}"},
		{name: "eviction percentage malformed", values: "{cluster: acme, kubelet: {evictionHardMemory: 5.%}}", refusal: []string{`kubelet.evictionHardMemory "5.%" is not a percentage`}, neighbour: "{cluster: acme, kubelet: {evictionHardMemory: 5.5%}}"},
		{name: "eviction kinds mixed", values: "{cluster: acme, kubelet: {evictionHardMemory: 200Mi}}", refusal: []string{`kubelet.evictionHardMemory "200Mi" and kubelet.evictionSoftMemory "10%" mix a percentage and a quantity`}, neighbour: "{cluster: acme, kubelet: {evictionHardMemory: 200Mi, evictionSoftMemory: 1Gi}}"},
		{name: "hard eviction not below soft", values: "{cluster: acme, kubelet: {evictionHardMemory: 1Gi, evictionSoftMemory: 1024Mi}}", refusal: []string{`kubelet.evictionHardMemory "1Gi" is not below kubelet.evictionSoftMemory "1024Mi"`}, neighbour: "{cluster: acme, kubelet: {evictionHardMemory: 1000Mi, evictionSoftMemory: 1024Mi}}"},
		{name: "memory kept back above the worker's", values: "{cluster: acme, kubelet: {systemReservedMemory: 2Gi, kubeReservedMemory: 2Gi}}", refusal: []string{"the kubelet keeps back systemReservedMemory 2Gi + kubeReservedMemory 2Gi + evictionHardMemory 7%, not less than the worker's 4Gi of memory"}, neighbour: "{cluster: acme, kubelet: {systemReservedMemory: 1Gi, kubeReservedMemory: 1Gi}}"},
		{name: "cpu kept back above the worker's", values: "{cluster: acme, " + resources + ", kubelet: {systemReservedCpu: '1', kubeReservedCpu: 1000m}}", refusal: []string{"the kubelet keeps back systemReservedCpu 1 + kubeReservedCpu 1000m, not less than the worker's 2 cores"}, neighbour: "{cluster: acme, " + resources + ", kubelet: {systemReservedCpu: '1', kubeReservedCpu: 999m}}"},
		{name: "memory reservation on an instancetype without memory", values: "{cluster: acme, instanceType: sized-by-cpu, kubelet: {systemReservedMemory: 1Gi}}", refusal: []string{`kubelet sets memory reservations, but the worker's memory is not known (instancetype "sized-by-cpu" states no spec.memory.guest)`}, neighbour: "{cluster: acme, instanceType: sized-by-cpu}",
			objects: "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\nmetadata: {name: sized-by-cpu}\nspec: {cpu: {guest: 2}}\n"},
		{name: "cpu reservation on an instancetype without cpu", values: "{cluster: acme, instanceType: sized-by-memory, kubelet: {kubeReservedCpu: 100m}}", refusal: []string{`kubelet sets CPU reservations, but the worker's CPU is not known (instancetype "sized-by-memory" states no spec.cpu.guest)`}, neighbour: "{cluster: acme, instanceType: sized-by-memory}",
			objects: "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\nmetadata: {name: sized-by-memory}\nspec: {memory: {guest: 2Gi}}\n"},
		{name: "instancetype memory unreadable", values: "{cluster: acme, instanceType: odd}", refusal: []string{`VirtualMachineClusterInstancetype odd has spec.memory.guest "4 Gi", which is not a memory quantity the chart can read`}, neighbour: "{cluster: acme, instanceType: u1.medium}",
			objects: "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\nmetadata: {name: odd}\nspec: {cpu: {guest: 1}, memory: {guest: 4 Gi}}\n"},
		{name: "instancetype cpu unreadable", values: "{cluster: acme, instanceType: odd}", refusal: []string{`VirtualMachineClusterInstancetype odd has spec.cpu.guest "1.5", which is not a whole number of cores`}, neighbour: "{cluster: acme, instanceType: u1.medium}",
			objects: "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\nmetadata: {name: odd}\nspec: {cpu: {guest: 1.5}, memory: {guest: 4Gi}}\n"},
		{name: "timer zero", values: "{cluster: acme, readyUnknownTimeout: 0s}", refusal: []string{`readyUnknownTimeout "0s" is not a duration the chart writes`, "a zero timeout remediates at once", "such as 5m"}, neighbour: "{cluster: acme, readyUnknownTimeout: 5m0s}"},
		{name: "timer fraction", values: "{cluster: acme, maxNodeProvisionTime: 1.5h}", refusal: []string{`maxNodeProvisionTime "1.5h" is not a duration the chart writes`, "such as 30m"}, neighbour: "{cluster: acme, maxNodeProvisionTime: 1h30m}"},
		{name: "timer a number", values: "{cluster: acme, readyFalseTimeout: 30}", refusal: []string{"readyFalseTimeout 30 (a number) is not a duration the chart writes"}, neighbour: "{cluster: acme, readyFalseTimeout: 30s}"},
		{name: "timer null", values: "{cluster: acme, maxNodeProvisionTime: null}", refusal: []string{"maxNodeProvisionTime is null, which removes the chart's default"}, neighbour: "{cluster: acme}"},
		{name: "ratio zero", values: "{cluster: acme, _cluster: {ephemeral-storage-allocation-ratio: '0'}}", refusal: []string{`_cluster.ephemeral-storage-allocation-ratio is "0", not a number above zero`}, neighbour: "{cluster: acme, _cluster: {ephemeral-storage-allocation-ratio: '0.5'}}"},
		{name: "ratio not a number", values: "{cluster: acme, _cluster: {ephemeral-storage-allocation-ratio: forty}}", refusal: []string{`_cluster.ephemeral-storage-allocation-ratio is "forty"`}, neighbour: "{cluster: acme, _cluster: {ephemeral-storage-allocation-ratio: 40}}"},
		{name: "scheduling not a map", values: "{cluster: acme, _cluster: {scheduling: spread}}", refusal: []string{`_cluster.scheduling is "spread", not a map`}, neighbour: "{cluster: acme, _cluster: {scheduling: {}}}"},
		{name: "spread policy not text", values: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: {topologySpreadConstraints: []}}}}", refusal: []string{"globalAppTopologySpreadConstraints is a map, not YAML text"}, neighbour: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: ''}}}"},
		{name: "spread policy too long", values: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: '" + strings.Repeat("#", 16385) + "'}}}", refusal: []string{"is 16385 bytes long, more than the 16384 the chart takes"}, neighbour: "{cluster: acme}"},
		{name: "spread policy of another key", values: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: 'affinity: {}'}}}", refusal: []string{"does not hold exactly one key, topologySpreadConstraints, with a list"}, neighbour: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: 'topologySpreadConstraints: [{maxSkew: 1}]'}}}"},
		{name: "spread policy empty list", values: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: 'topologySpreadConstraints: []'}}}", refusal: []string{"lists 0 constraints, not 1 to 16"}, neighbour: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: 'topologySpreadConstraints: [{maxSkew: 1}]'}}}"},
		{name: "spread policy of a string", values: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: 'topologySpreadConstraints: [zone]'}}}", refusal: []string{"lists a constraint that is not a map"}, neighbour: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: 'topologySpreadConstraints: [{topologyKey: zone}]'}}}"},
		{name: "spread policy with its own selector", values: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: 'topologySpreadConstraints: [{maxSkew: 1, labelSelector: {}}]'}}}", refusal: []string{"sets labelSelector on its last constraint"}, neighbour: "{cluster: acme, _cluster: {scheduling: {globalAppTopologySpreadConstraints: 'topologySpreadConstraints: [{maxSkew: 1, labelSelector: {}}, {maxSkew: 2}]'}}}"},
		{name: "cluster domain not a name", values: "{cluster: acme, _cluster: {cluster-domain: 'cozy local'}}", refusal: []string{`_cluster.cluster-domain is "cozy local", not a DNS name`}, neighbour: "{cluster: acme, _cluster: {cluster-domain: cozy.local}}"},
		{name: "pool name of another release", values: "{cluster: acme}", refusal: []string{`MachineDeployment tenant-acme/kubernetes-acme-workers belongs to the Helm release "kubernetes-acme", not to this pool's release "kubernetes-nodes-acme-workers"`, "remove that node group from the parent cluster first"}, neighbour: "{cluster: acme}",
			objects: "apiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata: {name: kubernetes-acme-workers, namespace: tenant-acme, annotations: {meta.helm.sh/release-name: kubernetes-acme}}\nspec: {clusterName: kubernetes-acme}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := clusterFromYAML(t, tc.objects, "cluster/instancetypes.yaml")
			_, err := renderPoolAs(t, schemaOff, vals(t, tc.values), cluster)
			requireRefusal(t, err, append([]string{"pool kubernetes-acme-workers: "}, tc.refusal...)...)
			if tc.objects != "" && strings.Contains(tc.objects, "MachineDeployment") {
				// The neighbour: the same MachineDeployment, this pool's own.
				cluster = clusterFromYAML(t, strings.Replace(tc.objects, "release-name: kubernetes-acme}", "release-name: kubernetes-nodes-acme-workers}", 1), "cluster/instancetypes.yaml")
			}
			_, err = renderPoolAs(t, schemaOff, vals(t, tc.neighbour), cluster)
			require.NoError(t, err, "valid neighbour %s", tc.neighbour)
		})
	}
}

// Reservations are checked against the worker's size only when a cluster
// answers; a preview (no cluster) renders them unchecked, as it renders an
// instancetype it cannot see.
func TestKubeletReservationsNeedAClusterToCheck(t *testing.T) {
	values := vals(t, "{cluster: acme, kubelet: {systemReservedMemory: 3Gi, kubeReservedMemory: 3Gi}}")
	_, err := renderPool(t, values, nil)
	require.NoError(t, err)
	_, err = renderPool(t, values, loadCluster(t, "cluster/instancetypes.yaml"))
	requireRefusal(t, err, "not less than the worker's 4Gi of memory")
}
