package render

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// talosConfigData is the pool's talos-config ConfigMap's data.
func talosConfigData(t testing.TB, m *render.Manifest) map[string]interface{} {
	t.Helper()
	for _, d := range m.OfKind("ConfigMap") {
		if d.Name() == testPoolName+"-talos-config" {
			return d.Object["data"].(map[string]interface{})
		}
	}
	t.Fatalf("no ConfigMap %s-talos-config", testPoolName)
	return nil
}

// The worker's machine config carries what joining the parent's control plane
// takes, the parent's live values as placeholders the Job fills, and the
// pool's own settings.
func TestWorkerConfigJoinsTheParentControlPlane(t *testing.T) {
	m := mustRenderPool(t, vals(t, `{cluster: acme, instanceType: u1.xlarge, gpus: [{name: nvidia.com/L40S}],
  _cluster: {cluster-domain: cozy.local}, talos: {registryMirrors: {docker.io: {endpoints: [https://m.internal]}}}}`), loadCluster(t, "cluster/instancetypes.yaml"))
	tct := talosConfigTemplate(t, m)
	assert.Equal(t, testPoolName, render.Get(tct, "metadata.name"), "the stable name the MachineDeployment's bootstrap names")
	assert.Equal(t, testNamespace, render.Get(tct, "metadata.namespace"))
	assert.Equal(t, "keep", render.Get(tct, "metadata.annotations[helm.sh/resource-policy]"))
	assert.Equal(t, []interface{}{map[string]interface{}{"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha1", "kind": "KamajiControlPlane",
		"name": "kubernetes-acme", "uid": "@CONTROL_PLANE_UID@", "controller": true, "blockOwnerDeletion": true}}, render.Get(tct, "metadata.ownerReferences"))
	assert.Equal(t, "v1.13.6", render.Get(tct, "spec.template.spec.talosVersion"))
	c := workerConfig(t, m)
	for path, want := range map[string]interface{}{
		"version":                                    "v1alpha1",
		"machine.type":                               "worker",
		"machine.token":                              "@TALOS_TOKEN@",
		"machine.ca.crt":                             "@TALOS_CA@",
		"machine.network.nameservers":                []interface{}{"@DNS_IP@"},
		"machine.network.searchDomains":              []interface{}{"svc.cozy.local", "cozy.local", "svc.cluster.local", "cluster.local"},
		"machine.network.extraHostEntries":           []interface{}{map[string]interface{}{"ip": "@SERVICE_IP@", "aliases": []interface{}{"kubernetes-acme.tenant-acme.svc", "kubernetes-acme.tenant-acme.svc.cluster.local"}}},
		"machine.nodeLabels":                         map[string]interface{}{"gpu": "on"},
		"machine.kubelet.image":                      "ghcr.io/siderolabs/kubelet:v1.35.6",
		"machine.kubelet.extraConfig.systemReserved": map[string]interface{}{"cpu": "200m", "memory": "819Mi"},
		"machine.kubelet.extraConfig.kubeReserved":   map[string]interface{}{"cpu": "200m", "memory": "819Mi"},
		"machine.install.image":                      "factory.talos.dev/installer/" + defaultSchematic + ":v1.13.6",
		"machine.registries.mirrors":                 map[string]interface{}{"docker.io": map[string]interface{}{"endpoints": []interface{}{"https://m.internal"}}},
		"cluster.id":                                 "@CLUSTER_ID@",
		"cluster.secret":                             "@CLUSTER_SECRET@",
		"cluster.token":                              "@BOOTSTRAP_TOKEN@",
		"cluster.ca.crt":                             "@KUBERNETES_CA@",
		"cluster.clusterName":                        "kubernetes-acme",
		"cluster.controlPlane.endpoint":              "https://kubernetes-acme.tenant-acme.svc:6443",
		"cluster.network.serviceSubnets":             []interface{}{"10.95.0.0/16"},
	} {
		assert.Equal(t, want, render.Get(c, path), path)
	}
	// With the management cluster's domain the tenant's, the search list does not repeat it.
	plain := workerConfig(t, mustRenderPool(t, vals(t, "{cluster: acme, _cluster: {cluster-domain: cluster.local}}"), nil))
	assert.Equal(t, []interface{}{"svc.cluster.local", "cluster.local"}, render.Get(plain, "machine.network.searchDomains"))
	assert.Nil(t, render.Get(plain, "machine.nodeLabels"), "only a GPU pool is labelled gpu=on")
	assert.Nil(t, render.Get(plain, "machine.registries"))
}

// Every placeholder the config holds is one the Job fills, and the other way
// round; the Job's permissions name exactly the parent's objects it reads.
func TestReconcileJobFillsEveryPlaceholderWithWhatItMayRead(t *testing.T) {
	m := mustRenderPool(t, vals(t, "cluster: acme"), nil)
	data := talosConfigData(t, m)
	template, script := data["talosconfigtemplate.yaml"].(string), data["write-talos-config.sh"].(string)
	inTemplate := regexp.MustCompile(`'(@[A-Z_]+@)'`).FindAllStringSubmatch(template, -1)
	filled := regexp.MustCompile(`s\|(@[A-Z_]+@)\|`).FindAllStringSubmatch(script, -1)
	set := func(ms [][]string) []string {
		seen := map[string]bool{}
		var out []string
		for _, m := range ms {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
		sort.Strings(out)
		return out
	}
	require.Len(t, set(filled), 9)
	assert.Equal(t, set(filled), set(inTemplate))
	assert.NotContains(t, template, "{{", "no template text left over")

	// Every object the script reads or writes, by kind and name, is one the Role or ClusterRole grants.
	role, clusterRole := doc(t, m, "Role").Object, doc(t, m, "ClusterRole").Object
	grants := map[string]bool{}
	for _, r := range append(render.Get(role, "rules").([]interface{}), render.Get(clusterRole, "rules").([]interface{})...) {
		rule := r.(map[string]interface{})
		names, _ := rule["resourceNames"].([]interface{})
		for _, res := range rule["resources"].([]interface{}) {
			for _, v := range rule["verbs"].([]interface{}) {
				if len(names) == 0 {
					grants[v.(string)+" "+res.(string)+" *"] = true
				}
				for _, n := range names {
					grants[v.(string)+" "+res.(string)+" "+n.(string)] = true
				}
			}
		}
	}
	cluster := "kubernetes-acme"
	for _, need := range []string{
		"get services " + cluster, "get kamajicontrolplanes " + cluster, "patch kamajicontrolplanes " + cluster,
		"get secrets " + cluster + "-ca", "get secrets " + cluster + "-talos-ca", "get secrets " + cluster + "-talos-secrets",
		"get services kube-dns", "patch talosconfigtemplates " + testPoolName, "create talosconfigtemplates *",
		// The bootstrap provider's webhook refuses changes to a template's spec: the step replaces it.
		"delete talosconfigtemplates " + testPoolName,
	} {
		assert.True(t, grants[need], "the Job may %s", need)
	}
	for _, read := range regexp.MustCompile(`field -n "\$NAMESPACE" (\w+) "\$CLUSTER([-\w]*)"`).FindAllStringSubmatch(script, -1) {
		assert.True(t, grants["get "+read[1]+"s "+cluster+read[2]], "the Job reads %s %s%s and may", read[1], cluster, read[2])
	}
	assert.Len(t, grants, 11, "nothing beyond what the Job does: %v", grants)
	assert.Equal(t, []interface{}{map[string]interface{}{"kind": "ServiceAccount", "name": testPoolName + "-talos-config", "namespace": testNamespace}}, render.Get(doc(t, m, "RoleBinding").Object, "subjects"))
}

// The script is POSIX sh that a shell reads, and the Job runs it from the
// ConfigMap it mounts, with the environment it reads.
func TestReconcileJobRunsTheScript(t *testing.T) {
	m := mustRenderPool(t, vals(t, "{cluster: acme, images: {kubectl: registry.internal/alpine/k8s:1.33.4}}"), nil)
	script := talosConfigData(t, m)["write-talos-config.sh"].(string)
	path := filepath.Join(t.TempDir(), "write-talos-config.sh")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	out, err := exec.Command("sh", "-n", path).CombinedOutput()
	require.NoError(t, err, "sh -n: %s", out)
	job := doc(t, m, "Job").Object
	container := render.Get(job, "spec.template.spec.containers.0").(map[string]interface{})
	assert.Equal(t, "registry.internal/alpine/k8s:1.33.4", container["image"])
	assert.Equal(t, []interface{}{"sh", "/etc/talos-config/write-talos-config.sh"}, container["command"])
	env := map[string]string{}
	for _, e := range container["env"].([]interface{}) {
		env[e.(map[string]interface{})["name"].(string)] = e.(map[string]interface{})["value"].(string)
	}
	for _, name := range regexp.MustCompile(`\$\{?([A-Z_]+)`).FindAllStringSubmatch(script, -1) {
		_, ok := env[name[1]]
		assert.True(t, ok, "the script reads $%s and the Job sets it", name[1])
	}
	assert.Equal(t, "/etc/talos-config", render.Get(container, "volumeMounts.0.mountPath"))
	assert.Equal(t, testPoolName+"-talos-config", render.Get(job, "spec.template.spec.volumes.0.configMap.name"))
	assert.Equal(t, testPoolName+"-talos-config", render.Get(job, "spec.template.spec.serviceAccountName"))
	assert.Equal(t, "OnFailure", render.Get(job, "spec.template.spec.restartPolicy"))
	assert.Equal(t, true, render.Get(container, "securityContext.runAsNonRoot"))
	plain := mustRenderPool(t, vals(t, "cluster: acme"), nil)
	assert.Contains(t, render.Get(doc(t, plain, "Job").Object, "spec.template.spec.containers.0.image"), "docker.io/alpine/k8s:1.33.4@sha256:")
}

// The Job is named by a hash of what it does: an unchanged pool keeps its Job
// (Helm leaves it alone), a changed config gets a new one (which runs), and no
// change to the Job rolls a worker.
func TestReconcileJobIsNamedByItsContent(t *testing.T) {
	jobName := func(values string) string {
		return doc(t, mustRenderPool(t, vals(t, values), nil), "Job").Name()
	}
	base := jobName("cluster: acme")
	assert.Regexp(t, "^"+testPoolName+"-talos-[0-9a-f]{6}$", base)
	assert.Equal(t, base, jobName("{cluster: acme, minReplicas: 2, maxUnhealthy: 1}"), "what the config does not hold leaves the Job")
	for _, changed := range []string{
		"{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: [https://m.internal]}}}}",
		"{cluster: acme, kubelet: {systemReservedMemory: 300Mi}}",
		"{cluster: acme, talos: {installerRepository: registry.internal/installer}}",
		"{cluster: acme, version: v1.34}",
		"{cluster: acme, images: {kubectl: registry.internal/kubectl:1}}",
	} {
		assert.NotEqual(t, base, jobName(changed), "%s writes another config: a new Job runs", changed)
	}
	kmt := machineTemplateName(t, mustRenderPool(t, vals(t, "cluster: acme"), nil))
	assert.Equal(t, kmt, machineTemplateName(t, mustRenderPool(t, vals(t, "{cluster: acme, kubelet: {systemReservedMemory: 300Mi}, talos: {installerRepository: registry.internal/installer}}"), nil)),
		"the config reaches workers created afterwards; it rolls none")
}

// No secret in the release: the render holds no Secret, and the config only
// placeholders where the parent's tokens and CAs go.
func TestNoSecretInTheRelease(t *testing.T) {
	m := mustRenderPool(t, vals(t, "cluster: acme"), nil)
	assert.Empty(t, m.OfKind("Secret"))
	assert.Empty(t, m.OfKind("TalosConfigTemplate"), "the Job writes it, outside the release")
	assert.NotContains(t, m.Text(), "valueFrom", "the Job reads the parent's Secrets itself, at run time")
}

// On a cluster that serves Cilium's policies (a Cozystack tenant namespace
// denies egress by default), the Job may reach the API server and DNS.
func TestCiliumPolicyWhereCiliumRuns(t *testing.T) {
	c := poolChart(t)
	m, err := render.Render(c, render.Options{Release: render.Release{Name: testRelease, Namespace: testNamespace}, Values: vals(t, "cluster: acme"),
		APIVersions: []string{"cilium.io/v2", "cilium.io/v2/CiliumNetworkPolicy"}})
	require.NoError(t, err)
	cnp := doc(t, m, "CiliumNetworkPolicy").Object
	assert.Equal(t, map[string]interface{}{"kubernetes-worker-image.cozystack.io/talos-config": testPoolName}, render.Get(cnp, "spec.endpointSelector.matchLabels"))
	assert.Equal(t, map[string]interface{}{"kubernetes-worker-image.cozystack.io/talos-config": testPoolName}, render.Get(doc(t, m, "Job").Object, "spec.template.metadata.labels"))
	assert.Equal(t, []interface{}{"kube-apiserver"}, render.Get(cnp, "spec.egress.0.toEntities"))
	assert.Empty(t, mustRenderPool(t, vals(t, "cluster: acme"), nil).OfKind("CiliumNetworkPolicy"), "elsewhere, none")
	assert.True(t, strings.HasSuffix(doc(t, m, "ClusterRole").Name(), testPoolName+"-kube-dns"))
}
