package schema

import (
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

const poolChart = render.PoolChart

func TestPoolSchemaAcceptsEveryExample(t *testing.T) {
	s := compile(t, poolChart)
	var files []string
	for _, glob := range []string{"examples/pools/*.yaml", "tests/render/testdata/golden/pool-cozystack-*.values.yaml"} {
		more, err := filepath.Glob(filepath.Join(support.RepoRoot(), glob))
		require.NoError(t, err)
		files = append(files, more...)
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		require.NoError(t, s.Validate(fileDocument(t, f)), f)
	}
}

func TestPoolSchema(t *testing.T) {
	s := compile(t, poolChart)
	checkCases(t, s, withCluster(
		"{cluster: acme, storageClass: ''}",
		"{resources: {cpu: 2, memory: 4Gi}}",
		"{resources: {}}",
		"{diskSize: 1.5Ti}",
		"{diskSize: '21474836480'}",
		"{maxUnhealthy: 0}",
		"{maxUnhealthy: '40%'}",
		"{maxUnhealthy: '100%'}",
		"{nodeStartupTimeout: 1h30m}",
		"{nodeStartupTimeout: '0'}",
		"{roles: [ingress-nginx, gpu]}",
		"{talos: {registryMirrors: {docker.io: {endpoints: [https://m.internal]}}}}",
		"{talos: {registryMirrors: {ghcr.io: {endpoints: [https://m.internal], overridePath: true, skipFallback: true}}}}",
		"{_cluster: {talos: {}}, _namespace: {}}",
		"{version: v1.36}",
		"{osImage: {}}",
		"{osImage: {builtin: {}}}",
		"{osImage: {factory: {}}}",
		"{osImage: {factory: {schematicID: abc, version: v1.13.6, imageFactoryURL: 'https://f.internal'}}}",
		"{storageClass: replicated-2.fast, instanceType: u1.2xlarge}",
		"{diskSize: 21474836480}",
		"{resources: {cpu: '2', memory: 4294967296}}",
		"{podCpuLimit: 3, podCpuRequest: 200m}",
		"{podCpuLimit: '1.5', podCpuRequest: 0}",
		"{gpus: [{name: nvidia.com/AD102GL_L40S}]}",
		"{kubelet: {systemReservedMemory: 512Mi, kubeReservedMemory: 1G, systemReservedCpu: 100m, kubeReservedCpu: '0.5', evictionHardMemory: 5%, evictionSoftMemory: 8%}}",
		"{kubelet: {evictionHardMemory: 200Mi, evictionSoftMemory: 1Gi}}",
		"{logSerialConsole: true}",
		"{maxUnhealthy: '2'}",
		"{readyUnknownTimeout: 90s, readyFalseTimeout: 1h30m, maxNodeProvisionTime: 20m0s}",
		"{images: {kubectl: ''}}",
		"{version: v1.35.1}",
		"{version: v1.35.0}",
		"{talos: {version: '', schematicID: ''}}",
		"{images: {kubectl: registry.internal/alpine/k8s:1.33.4}}",
		"{maxSurge: 0}",
		"{maxSurge: 2147483647}",
		"{maxSurge: '3'}",
		"{maxSurge: '0'}",
	), withCluster(
		"{unknownKey: 1}",
		"{cluster: 7}",
		"{cluster: Acme}",
		"{diskSize: 20GB}",
		"{diskSize: -20}",
		"{diskSize: twenty}",
		"{resources: {cpu: '2.5'}}",
		"{podCpuLimit: -1}",
		"{podCpuRequest: two}",
		"{gpus: [{name: x, count: 1}]}",
		"{gpus: [{}]}",
		"{kubelet: {maxPods: 10}}",
		"{kubelet: {systemReservedMemory: 512}}",
		"{kubelet: {systemReservedCpu: 1.5m}}",
		"{logSerialConsole: 'true'}",
		"{readyUnknownTimeout: 0s}",
		"{readyFalseTimeout: 1.5h}",
		"{maxNodeProvisionTime: 30}",
		"{images: {other: x}}",
		"{resources: {cpu: 0}}",
		"{resources: {gpu: 1}}",
		"{resources: {memory: 4GB}}",
		"{minReplicas: -1}",
		"{maxReplicas: 2.5}",
		"{maxSurge: -1}",
		"{maxSurge: 2.5}",
		"{maxSurge: 2147483648}",
		"{maxSurge: '25%'}",
		"{maxSurge: '12345678901'}",
		"{maxSurge: null}",
		"{maxSurge: true}",
		"{version: '1.35'}",
		"{version: v1.35.01}",
		"{version: v1.35.}",
		"{version: v1.35.1.2}",
		"{talos: {version: 1}}",
		"{talos: {extra: x}}",
		"{talos: {registryMirrors: {docker.io: {}}}}",
		"{talos: {registryMirrors: {docker.io: {endpoints: []}}}}",
		"{talos: {registryMirrors: {docker.io: {endpoints: [x], auth: {}}}}}",
		"{talos: {registryMirrors: [docker.io]}}",
		"{maxUnhealthy: '101%'}",
		"{maxUnhealthy: half}",
		"{maxUnhealthy: -1}",
		"{nodeStartupTimeout: ten}",
		"{nodeStartupTimeout: 10}",
		"{roles: [Ingress]}",
		"{roles: [a, a]}",
		"{storageClass: 'a b'}",
		"{storageClass: \"a\\nkind: Secret\"}",
		"{instanceType: U1.medium}",
		"{osImage: {builtin: {imageFactoryURL: 'https://x'}}}",
		"{osImage: {other: {}}}",
	))
}
