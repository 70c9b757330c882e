package render

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func TestPoolObjectsAreNamedFromTheCluster(t *testing.T) {
	m := mustRenderPool(t, vals(t, "cluster: acme"), loadCluster(t, "cluster/instancetypes.yaml"))
	kinds := []string{}
	for _, d := range m.Docs {
		kinds = append(kinds, d.Kind())
	}
	require.Equal(t, poolKinds, kinds)
	for _, kind := range []string{"MachineDeployment", "MachineHealthCheck"} {
		d := doc(t, m, kind)
		assert.Equal(t, testPoolName, d.Name(), kind)
		assert.Equal(t, testNamespace, d.Namespace(), kind)
	}
	kmt := doc(t, m, "KubevirtMachineTemplate")
	assert.Equal(t, "infrastructure.cluster.x-k8s.io/v1alpha1", kmt.Object["apiVersion"])
	assert.Equal(t, testPoolName+"-"+bodyHash(t, kmt), kmt.Name(), "the name is the sha256 of the body")
	assert.Equal(t, testNamespace, render.Get(kmt.Object, "spec.template.spec.virtualMachineTemplate.metadata.namespace"))
}

func TestMachineDeploymentIsOwnedByTheAutoscaler(t *testing.T) {
	m := mustRenderPool(t, vals(t, "{cluster: acme, minReplicas: 2, maxReplicas: 7}"), nil)
	md := doc(t, m, "MachineDeployment")
	assert.Nil(t, render.Get(md.Object, "spec.replicas"), "the autoscaler owns spec.replicas")
	assert.Equal(t, "2", render.Get(md.Object, "metadata.annotations[cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size]"))
	assert.Equal(t, "7", render.Get(md.Object, "metadata.annotations[cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size]"))
	assert.Equal(t, "kubernetes-acme", render.Get(md.Object, "spec.clusterName"))
	assert.Equal(t, machineTemplateName(t, m), render.Get(md.Object, "spec.template.spec.infrastructureRef.name"))
	assert.Equal(t, "KubevirtMachineTemplate", render.Get(md.Object, "spec.template.spec.infrastructureRef.kind"))
	assert.Equal(t, testPoolName, render.Get(md.Object, "spec.template.spec.bootstrap.configRef.name"))
	assert.Equal(t, "TalosConfigTemplate", render.Get(md.Object, "spec.template.spec.bootstrap.configRef.kind"))
	assert.Equal(t, "v1.35.6", render.Get(md.Object, "spec.template.spec.version"))
}

func TestWorkerDiskImportsTheTalosImageOverHTTP(t *testing.T) {
	m := mustRenderPool(t, vals(t, "cluster: acme"), nil)
	disk := render.Get(doc(t, m, "KubevirtMachineTemplate").Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0")
	assert.Equal(t, "disk-system", render.Get(disk, "metadata.name"))
	assert.Equal(t, "false", render.Get(disk, "metadata.annotations[cdi.kubevirt.io/storage.usePopulator]"))
	assert.Equal(t, "https://factory.talos.dev/image/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.6/openstack-amd64.raw.xz", render.Get(disk, "spec.source.http.url"))
	assert.Equal(t, "20Gi", render.Get(disk, "spec.storage.resources.requests.storage"))
	assert.Equal(t, "replicated", render.Get(disk, "spec.storage.storageClassName"))
}

func TestFactoryURLWithTrailingSlashHasNoDoubleSlash(t *testing.T) {
	m := mustRenderPool(t, vals(t, "{cluster: acme, talos: {imageFactoryURL: 'https://mirror.internal/'}}"), nil)
	url := render.Get(doc(t, m, "KubevirtMachineTemplate").Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.source.http.url")
	assert.Equal(t, "https://mirror.internal/image/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.6/openstack-amd64.raw.xz", url)
}

func TestEmptyStorageClassLeavesTheChoiceToTheCluster(t *testing.T) {
	m := mustRenderPool(t, vals(t, "{cluster: acme, storageClass: ''}"), nil)
	storage := render.Get(doc(t, m, "KubevirtMachineTemplate").Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.storage").(map[string]interface{})
	assert.NotContains(t, storage, "storageClassName")
}

func TestExplicitResourcesReplaceTheInstancetype(t *testing.T) {
	m := mustRenderPool(t, vals(t, "{cluster: acme, resources: {cpu: 4, memory: 8Gi}}"), loadCluster(t, "cluster/instancetypes.yaml"))
	vm := render.Get(doc(t, m, "KubevirtMachineTemplate").Object, "spec.template.spec.virtualMachineTemplate.spec")
	assert.Nil(t, render.Get(vm, "instancetype"), "with both resources set the VM carries no instancetype")
	assert.EqualValues(t, 4, render.Get(vm, "template.spec.domain.cpu.cores"))
	assert.Equal(t, "8Gi", render.Get(vm, "template.spec.domain.memory.guest"))

	m = mustRenderPool(t, vals(t, "{cluster: acme, instanceType: u1.large}"), loadCluster(t, "cluster/instancetypes.yaml"))
	vm = render.Get(doc(t, m, "KubevirtMachineTemplate").Object, "spec.template.spec.virtualMachineTemplate.spec")
	assert.Equal(t, "u1.large", render.Get(vm, "instancetype.name"))
	assert.Equal(t, "VirtualMachineClusterInstancetype", render.Get(vm, "instancetype.kind"))
	assert.Nil(t, render.Get(vm, "template.spec.domain.cpu"))
}

func TestRolesLabelTheMachines(t *testing.T) {
	m := mustRenderPool(t, vals(t, "{cluster: acme, roles: [ingress-nginx, monitoring]}"), nil)
	labels := render.Get(doc(t, m, "MachineDeployment").Object, "spec.template.metadata.labels").(map[string]interface{})
	assert.Equal(t, "", labels["node-role.kubernetes.io/ingress-nginx"])
	assert.Equal(t, "", labels["node-role.kubernetes.io/monitoring"])
	assert.Equal(t, testPoolName, labels["cluster.x-k8s.io/deployment-name"])
}

func TestMachineHealthCheckTakesCountOrPercent(t *testing.T) {
	for _, tc := range []struct {
		values string
		want   interface{}
	}{
		{"{cluster: acme}", "50%"},
		{"{cluster: acme, maxUnhealthy: '2'}", float64(2)},
		{"{cluster: acme, maxUnhealthy: 3}", float64(3)},
		{"{cluster: acme, maxUnhealthy: '0%'}", "0%"},
		{"{cluster: acme, maxUnhealthy: 0}", float64(0)},
	} {
		m := mustRenderPool(t, vals(t, tc.values), nil)
		mhc := doc(t, m, "MachineHealthCheck")
		assert.Equal(t, tc.want, render.Get(mhc.Object, "spec.maxUnhealthy"), tc.values)
		assert.Equal(t, "20m", render.Get(mhc.Object, "spec.nodeStartupTimeout"))
		assert.Equal(t, "5m", render.Get(mhc.Object, "spec.unhealthyConditions.0.timeout"))
		assert.Equal(t, "10m", render.Get(mhc.Object, "spec.unhealthyConditions.1.timeout"))
		assert.Equal(t, testPoolName, render.Get(mhc.Object, "spec.selector.matchLabels[cluster.x-k8s.io/deployment-name]"))
	}
}

// talosConfigTemplate parses the TalosConfigTemplate the pool's reconcile Job
// applies (the ConfigMap <pool>-talos-config, placeholders in place).
func talosConfigTemplate(t testing.TB, m *render.Manifest) map[string]interface{} {
	t.Helper()
	var text string
	for _, d := range m.OfKind("ConfigMap") {
		if strings.HasSuffix(d.Name(), "-talos-config") {
			text, _ = render.Get(d.Object, "data[talosconfigtemplate.yaml]").(string)
		}
	}
	require.NotEmpty(t, text, "the render holds the pool's talos-config ConfigMap")
	tct := map[string]interface{}{}
	require.NoError(t, yaml.Unmarshal([]byte(text), &tct))
	require.Equal(t, "TalosConfigTemplate", tct["kind"])
	assert.Equal(t, "none", render.Get(tct, "spec.template.spec.generateType"), "CABPT uses the data as it is")
	return tct
}

// poolConfigMaps are a pool render's ConfigMaps besides its talos-config
// (the Image Factory CA's, an earlier record's): the ones a test asks after.
func poolConfigMaps(m *render.Manifest) []render.Doc {
	var out []render.Doc
	for _, d := range m.OfKind("ConfigMap") {
		if !strings.HasSuffix(d.Name(), "-talos-config") {
			out = append(out, d)
		}
	}
	return out
}

// workerConfig parses the worker's Talos machine config the TalosConfigTemplate carries.
func workerConfig(t testing.TB, m *render.Manifest) map[string]interface{} {
	t.Helper()
	raw, ok := render.Get(talosConfigTemplate(t, m), "spec.template.spec.data").(string)
	require.True(t, ok, "spec.template.spec.data is a YAML string")
	config := map[string]interface{}{}
	require.NoError(t, yaml.Unmarshal([]byte(raw), &config))
	return config
}

func TestTalosConfigCarriesInstallerAndMirrors(t *testing.T) {
	patch := workerConfig(t, mustRenderPool(t, vals(t, "cluster: acme"), nil))
	assert.Equal(t, "factory.talos.dev/installer/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515:v1.13.6", render.Get(patch, "machine.install.image"))
	assert.Nil(t, render.Get(patch, "machine.registries"), "no mirrors, no registries section")

	patch = workerConfig(t, mustRenderPool(t, vals(t, `
cluster: acme
talos:
  installerRepository: registry.internal/installer
  registryMirrors:
    docker.io: {endpoints: [https://registry.internal/v2/docker.io]}
`), nil))
	assert.Equal(t, "registry.internal/installer/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515:v1.13.6", render.Get(patch, "machine.install.image"))
	assert.Equal(t, []interface{}{"https://registry.internal/v2/docker.io"}, render.Get(patch, "machine.registries.mirrors[docker.io].endpoints"))
}

// The template name is the pool's identity: only values inside the body move it.
func TestMachineTemplateNameMovesOnlyWithTheBody(t *testing.T) {
	base := machineTemplateName(t, mustRenderPool(t, vals(t, "cluster: acme"), nil))
	for _, same := range []string{
		"{cluster: acme, minReplicas: 3, maxReplicas: 9}",
		"{cluster: acme, maxUnhealthy: 1, nodeStartupTimeout: 1h, readyUnknownTimeout: 1m, readyFalseTimeout: 1h, maxNodeProvisionTime: 1h}",
		"{cluster: acme, kubelet: {systemReservedMemory: 300Mi, evictionHardMemory: 5%}}",
		"{cluster: acme, images: {kubectl: registry.internal/kubectl:1.35}}",
		"{cluster: acme, talos: {installerRepository: registry.internal/installer}}",
		"{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: [https://m.internal]}}}}",
		"{cluster: acme, version: v1.34}",
	} {
		assert.Equal(t, base, machineTemplateName(t, mustRenderPool(t, vals(t, same), nil)), "%s must not roll the pool", same)
	}
	for _, rolls := range []string{
		"{cluster: acme, storageClass: local}",
		"{cluster: acme, diskSize: 30Gi}",
		"{cluster: acme, instanceType: u1.large}",
		"{cluster: acme, resources: {cpu: 2, memory: 4Gi}}",
		"{cluster: acme, roles: [ingress-nginx]}",
		"{cluster: acme, gpus: [{name: nvidia.com/AD102GL_L40S}]}",
		"{cluster: acme, logSerialConsole: true}",
		"{cluster: acme, talos: {version: v1.13.5}}",
		"{cluster: acme, talos: {imageFactoryURL: 'https://mirror.internal'}}",
	} {
		assert.NotEqual(t, base, machineTemplateName(t, mustRenderPool(t, vals(t, rolls), nil)), "%s re-images the pool", rolls)
	}
}

func TestPoolRefusals(t *testing.T) {
	withTypes := "cluster/instancetypes.yaml"
	for _, tc := range []struct {
		name       string
		release    string
		values     string
		skipSchema bool
		refusal    []string
		neighbour  string
	}{
		{name: "cluster missing", values: "{}", skipSchema: true, refusal: []string{".Values.cluster is empty", "set cluster"}, neighbour: "cluster: acme"},
		{name: "cluster not a DNS label", values: "cluster: Acme_1", skipSchema: true, refusal: []string{`cluster "Acme_1" is not a DNS label`}, neighbour: "cluster: acme-1", release: "kubernetes-nodes-acme-1-workers"},
		{name: "release of another cluster", release: "kubernetes-nodes-other-workers", values: "cluster: acme", refusal: []string{`release "kubernetes-nodes-other-workers" does not match kubernetes-nodes-<cluster>-<pool>`, "kubernetes-nodes-acme-<pool>"}, neighbour: "cluster: other"},
		{name: "release without pool", release: "kubernetes-nodes-acme-", values: "cluster: acme", refusal: []string{`release "kubernetes-nodes-acme-" does not match`}},
		{name: "release not a pool release", release: "workers", values: "cluster: acme", refusal: []string{`release "workers" does not match`}},
		{name: "cpu without memory", values: "{cluster: acme, resources: {cpu: 2}}", refusal: []string{"pool kubernetes-acme-workers: resources sets only cpu", "set both resources.cpu and resources.memory"}, neighbour: "{cluster: acme, resources: {cpu: 2, memory: 4Gi}}"},
		{name: "memory without cpu", values: "{cluster: acme, resources: {memory: 4Gi}}", refusal: []string{"resources sets only memory"}, neighbour: "{cluster: acme, resources: {}}"},
		{name: "no instancetype no resources", values: "{cluster: acme, instanceType: ''}", refusal: []string{"instanceType is empty and resources is not set"}, neighbour: "{cluster: acme, instanceType: '', resources: {cpu: 1, memory: 1Gi}}"},
		{name: "instancetype unknown to the cluster", values: "{cluster: acme, instanceType: u1.huge}", refusal: []string{`instanceType "u1.huge" is not a VirtualMachineClusterInstancetype of this cluster`, "u1.large, u1.medium, u1.xlarge"}, neighbour: "{cluster: acme, instanceType: u1.xlarge}"},
		{name: "kubernetes minor not shipped", values: "{cluster: acme, version: v1.30}", skipSchema: true, refusal: []string{`version "v1.30" is not a Kubernetes minor this chart ships`, "v1.31, v1.32"}, neighbour: "{cluster: acme, version: v1.31}"},
		{name: "talos does not support kubernetes", values: "{cluster: acme, version: v1.36, talos: {version: v1.12.4}}", refusal: []string{"Talos v1.12.4 (talos.version) does not support Kubernetes v1.36", "v1.30 to v1.35"}, neighbour: "{cluster: acme, version: v1.35, talos: {version: v1.12.4}}"},
		{name: "talos v1.11 above its range", values: "{cluster: acme, version: v1.35, talos: {version: v1.11.0}}", refusal: []string{"Talos v1.11.0 (talos.version) does not support Kubernetes v1.35", "v1.29 to v1.34"}, neighbour: "{cluster: acme, version: v1.34, talos: {version: v1.11.0}}"},
		{name: "maxUnhealthy malformed", values: "{cluster: acme, maxUnhealthy: 'half'}", skipSchema: true, refusal: []string{`maxUnhealthy "half" is neither a count nor a percentage`}, neighbour: "{cluster: acme, maxUnhealthy: '50%'}"},
		{name: "maxUnhealthy above 100%", values: "{cluster: acme, maxUnhealthy: '101%'}", skipSchema: true, refusal: []string{`maxUnhealthy "101%"`}, neighbour: "{cluster: acme, maxUnhealthy: '100%'}"},
		{name: "nodeStartupTimeout malformed", values: "{cluster: acme, nodeStartupTimeout: 'ten minutes'}", skipSchema: true, refusal: []string{`nodeStartupTimeout "ten minutes" is not a duration`}, neighbour: "{cluster: acme, nodeStartupTimeout: 600s}"},
		{name: "min above max", values: "{cluster: acme, minReplicas: 5, maxReplicas: 2}", refusal: []string{"minReplicas 5 is greater than maxReplicas 2"}, neighbour: "{cluster: acme, minReplicas: 2, maxReplicas: 2}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rel := render.Release{Name: tc.release, Namespace: testNamespace, SkipSchemaValidation: tc.skipSchema}
			if rel.Name == "" {
				rel.Name = testRelease
			}
			_, err := renderPoolAs(t, rel, vals(t, tc.values), loadCluster(t, withTypes))
			requireRefusal(t, err, tc.refusal...)
			if tc.neighbour != "" {
				_, err := renderPoolAs(t, rel, vals(t, tc.neighbour), loadCluster(t, withTypes))
				require.NoError(t, err, "valid neighbour %s", tc.neighbour)
			}
		})
	}
}

func TestUnknownTalosMinorPassesTheSupportMatrix(t *testing.T) {
	_, err := renderPool(t, vals(t, "{cluster: acme, version: v1.31, talos: {version: v1.14.0}}"), nil)
	require.NoError(t, err, "a Talos minor the chart does not know is not refused")
}

// helm template has no cluster to ask: the instancetype check is skipped so a
// preview renders, while a live cluster refuses the same values.
func TestInstancetypeCheckNeedsACluster(t *testing.T) {
	values := vals(t, "{cluster: acme, instanceType: u1.preview-only}")
	_, err := renderPool(t, values, nil)
	require.NoError(t, err)
	_, err = renderPool(t, values, clusterFromYAML(t, ""))
	requireRefusal(t, err, `instanceType "u1.preview-only" is not a VirtualMachineClusterInstancetype`, "(it has: none)")
}

func BenchmarkPoolRender(b *testing.B) {
	c := poolChart(b)
	cluster := loadCluster(b, "cluster/instancetypes.yaml")
	values := vals(b, "cluster: acme")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := render.Render(c, render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: values, Cluster: cluster}); err != nil {
			b.Fatal(err)
		}
	}
}

// Values written unquoted into the machine template are refused when they could
// break out of the YAML, even with the schema skipped.
func TestUnquotedValuesMustBePlain(t *testing.T) {
	skip := render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}
	for _, tc := range []struct{ values, refusal, neighbour string }{
		{"{cluster: acme, storageClass: \"replicated\\nkind: Secret\"}", `storageClass "replicated\nkind: Secret" is not a DNS subdomain name`, "{cluster: acme, storageClass: replicated-2.fast}"},
		{"{cluster: acme, storageClass: 'a: b'}", `storageClass "a: b"`, "{cluster: acme, storageClass: ''}"},
		{"{cluster: acme, instanceType: 'u1.medium # x'}", `instanceType "u1.medium # x" is not a DNS subdomain name`, "{cluster: acme, instanceType: u1.large}"},
		{"{cluster: acme, diskSize: \"20Gi\\n  x: y\"}", `diskSize "20Gi\n  x: y"`, "{cluster: acme, diskSize: 25Gi}"},
		{"{cluster: acme, resources: {cpu: 2, memory: '4Gi}'}}", `resources.memory "4Gi}"`, "{cluster: acme, resources: {cpu: 2, memory: 4Gi}}"},
		{"{cluster: acme, resources: {cpu: '2 ', memory: 4Gi}}", `resources.cpu "2 "`, "{cluster: acme, resources: {cpu: 16, memory: 4Gi}}"},
		{"{cluster: acme, resources: {cpu: 0, memory: 4Gi}}", `resources.cpu 0 (a number) is not a whole number of cores (it is outside 1 to 2147483647)`, "{cluster: acme, resources: {cpu: 1, memory: 4Gi}}"},
	} {
		_, err := renderPool(t, vals(t, tc.values), loadCluster(t, "cluster/instancetypes.yaml"))
		require.Error(t, err, "the schema refuses %s", tc.values)
		_, err = renderPoolAs(t, skip, vals(t, tc.values), loadCluster(t, "cluster/instancetypes.yaml"))
		requireRefusal(t, err, "pool kubernetes-acme-workers: "+tc.refusal)
		_, err = renderPoolAs(t, skip, vals(t, tc.neighbour), loadCluster(t, "cluster/instancetypes.yaml"))
		require.NoError(t, err, tc.neighbour)
	}
}
