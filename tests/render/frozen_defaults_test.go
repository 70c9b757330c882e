package render

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
)

// movedPoolChart is the pool chart as a release that only moves its
// defaults would ship it: the Talos version a new pool gets (v1.13.6 to
// v1.13.7) and the Kubernetes patch of v1.35 and v1.34. Edited in memory,
// in the library files that hold them.
func movedPoolChart(t testing.TB) *chart.Chart {
	t.Helper()
	c := poolChart(t)
	// The built-in flavor lives in worker-image-lib (the catalog reads it too).
	edits := map[string][2]string{
		"worker-image-lib/templates/_golden.tpl":       {"version: v1.13.6\n", "version: v1.13.7\n"},
		"kubernetes-nodes-lib/templates/_versions.tpl": {"v1.34: v1.34.9\nv1.35: v1.35.6\n", "v1.34: v1.34.10\nv1.35: v1.35.7\n"},
	}
	for _, dep := range c.Dependencies() {
		for _, f := range dep.Templates {
			if e, ok := edits[dep.Name()+"/"+f.Name]; ok {
				edited := strings.Replace(string(f.Data), e[0], e[1], 1)
				require.NotEqual(t, string(f.Data), edited, "the edit changes %s", f.Name)
				f.Data = []byte(edited)
				delete(edits, dep.Name()+"/"+f.Name)
			}
		}
	}
	require.Empty(t, edits, "every default was found")
	return c
}

// imageFacts is what the chart resolved for the pool's image, as
// kubernetes-nodes.osImage answers tools, and the Kubernetes release.
func imageFacts(t testing.TB, c *chart.Chart, values map[string]interface{}, cluster *support.Cluster) map[string]interface{} {
	t.Helper()
	withFacts := render.WithTemplate(render.HelpersOnly(c), "templates/facts.yaml", []byte(`apiVersion: v1
kind: ImageFacts
image:
  {{- include "kubernetes-nodes.osImage" . | nindent 2 }}
behind:
  {{- include "kubernetes-nodes.behindFacts" . | nindent 2 }}
`))
	m, err := renderChartAs(t, withFacts, render.Release{Name: testRelease, Namespace: testNamespace}, values, cluster)
	require.NoError(t, err)
	return doc(t, m, "ImageFacts").Object
}

func kubeletImage(t testing.TB, m *render.Manifest) interface{} {
	return render.Get(workerConfig(t, m), "machine.kubelet.image")
}

// A chart release that only moves the defaults (the Talos version for new
// pools, the Kubernetes patch table) changes no byte of a running pool that
// relies on them, on either path and on another minor; a new pool gets the
// new defaults; a pool's own value still wins and rolls it.
func TestChartDefaultsReachNoRunningPool(t *testing.T) {
	for _, values := range []string{"cluster: acme", "{cluster: acme, osImage: {builtin: {}}}", "{cluster: acme, version: v1.34}", "{cluster: acme, storageClass: '', osImage: {factory: {}}}"} {
		t.Run(values, func(t *testing.T) {
			cluster := healthyCluster(t, golden{name: "talos-worker-" + defaultSchematic + "-v1.13.7", class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml())
			installed := mustRenderPool(t, vals(t, values), cluster)
			require.NoError(t, cluster.Apply(installed, testNamespace))

			upgraded, err := renderChartAs(t, movedPoolChart(t), render.Release{Name: testRelease, Namespace: testNamespace, Upgrade: true}, vals(t, values), cluster)
			require.NoError(t, err)
			assert.Equal(t, installed.Text(), upgraded.Text(), "no byte of the running pool moves: its template name, MachineDeployment and Talos config are what it runs")

			// A new pool with the same values takes the chart's new defaults.
			fresh, err := renderChartAs(t, movedPoolChart(t), render.Release{Name: "kubernetes-nodes-acme-fresh", Namespace: testNamespace}, vals(t, values), cluster)
			require.NoError(t, err)
			assert.Contains(t, render.Get(workerConfig(t, fresh), "machine.install.image"), ":v1.13.7")
			assert.Contains(t, doc(t, fresh, "KubevirtMachineTemplate").Text, "v1.13.7")
			if strings.Contains(values, "v1.34") {
				assert.Equal(t, "v1.34.10", render.Get(doc(t, fresh, "MachineDeployment").Object, "spec.template.spec.version"))
			} else {
				assert.Equal(t, "v1.35.7", render.Get(doc(t, fresh, "MachineDeployment").Object, "spec.template.spec.version"))
			}

			// Its own values win, and roll it.
			own := vals(t, values)
			own["talos"] = map[string]interface{}{"version": "v1.13.7"}
			moved, err := renderChartAs(t, movedPoolChart(t), render.Release{Name: testRelease, Namespace: testNamespace, Upgrade: true}, own, cluster)
			require.NoError(t, err)
			assert.NotEqual(t, machineTemplateName(t, installed), machineTemplateName(t, moved), "talos.version set: the pool re-images")
			assert.Contains(t, render.Get(workerConfig(t, moved), "machine.install.image"), ":v1.13.7")
		})
	}
}

// The flavor an unset talos.* keeps is read from the disk of the template the
// pool's MachineDeployment runs (an HTTP import or a golden, per-class ones
// too) and feeds the disk, the installer image and the support check; a
// template that cannot be read leaves the chart's default, saying why.
func TestFrozenFlavorIsWhatThePoolRuns(t *testing.T) {
	deployed := func(template, disk string) string {
		return `---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: ` + testPoolName + `, namespace: ` + testNamespace + `}
spec:
  clusterName: kubernetes-acme
  template:
    spec:
      clusterName: kubernetes-acme
      version: v1.35.6
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: KubevirtMachineTemplate, name: ` + template + `, namespace: ` + testNamespace + `}
status: {replicas: 2, readyReplicas: 2}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: ` + testPoolName + `-abc123, namespace: ` + testNamespace + `}
spec:
  template:
    spec:
      virtualMachineTemplate:
        spec:
          dataVolumeTemplates:
            - metadata: {name: disk-system}
              spec:
                source: ` + disk + `
                storage: {storageClassName: replicated, resources: {requests: {storage: 20Gi}}}
`
	}
	const template = testPoolName + "-abc123"
	http := func(factory, schematic, version string) string {
		return "{http: {url: '" + factory + "/image/" + schematic + "/" + version + "/openstack-amd64.raw.xz'}}"
	}
	clone := func(name string) string { return "{pvc: {namespace: cozy-public, name: " + name + "}}" }
	kept := "talos.version unset: kept from what the pool runs, KubevirtMachineTemplate " + testNamespace + "/" + template
	for _, tc := range []struct {
		name, disk, schematic, version, source string
	}{
		{"an HTTP import", http("https://factory.talos.dev", "abc", "v1.13.5"), "abc", "v1.13.5", kept},
		{"an HTTP import from a mirror with a path", http("https://mirror.internal/talos/image/x", defaultSchematic, "v1.12.4-rc.1"), defaultSchematic, "v1.12.4-rc.1", kept},
		{"a clone of a golden", clone("talos-worker-abc-def-v1.13.5"), "abc-def", "v1.13.5", kept},
		{"a clone of a per-class golden", clone("talos-worker-abc-v1.13.5--ceph-rbd"), "abc", "v1.13.5", kept},
		{"a clone from another namespace", "{pvc: {namespace: tenant-acme, name: talos-worker-abc-v1.13.5}}", defaultSchematic, defaultTalos, "talos.version unset: the chart's default, since what the pool runs could not be read: the disk of its KubevirtMachineTemplate " + testNamespace + "/" + template + " neither imports"},
		{"an image of another layout", "{http: {url: 'https://images.internal/talos-v1.13.5.raw.xz'}}", defaultSchematic, defaultTalos, "could not be read: the disk of its KubevirtMachineTemplate"},
		{"a schematic the chart would refuse", http("https://factory.talos.dev", "ABC", "v1.13.5"), defaultSchematic, defaultTalos, "could not be read"},
		{"a schematic too long", http("https://factory.talos.dev", strings.Repeat("a", 65), "v1.13.5"), defaultSchematic, defaultTalos, "could not be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := clusterFromYAML(t, deployed(template, tc.disk), "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
			facts := imageFacts(t, poolChart(t), vals(t, "cluster: acme"), cluster)
			assert.Equal(t, tc.schematic, render.Get(facts, "image.schematicID"))
			assert.Equal(t, tc.version, render.Get(facts, "image.version"))
			assert.Contains(t, render.Get(facts, "image.versionSource"), tc.source)
			m := mustRenderPool(t, vals(t, "cluster: acme"), cluster)
			assert.Equal(t, "factory.talos.dev/installer/"+tc.schematic+":"+tc.version, render.Get(workerConfig(t, m), "machine.install.image"), "the installer is the disk's flavor")
			assert.Contains(t, render.Get(diskOf(m), "spec.source.http.url"), "/image/"+tc.schematic+"/"+tc.version+"/", "an HTTP pool keeps importing it (its factory is its own record's)")
		})
	}

	for name, state := range map[string]string{
		"a new pool": "",
		"a MachineDeployment naming no template": `apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: ` + testPoolName + `, namespace: ` + testNamespace + `}
spec: {clusterName: kubernetes-acme}`,
		"a template that is gone": strings.SplitAfter(deployed("gone", http("https://factory.talos.dev", "abc", "v1.13.5")), "readyReplicas: 2}\n")[0],
	} {
		cluster := clusterFromYAML(t, state, "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
		facts := imageFacts(t, poolChart(t), vals(t, "cluster: acme"), cluster)
		assert.Equal(t, defaultTalos, render.Get(facts, "image.version"), name)
		assert.Equal(t, defaultSchematic, render.Get(facts, "image.schematicID"), name)
		want := map[string]string{
			"a new pool":                             "talos.version unset: the chart's default for a new pool",
			"a MachineDeployment naming no template": "could not be read: its MachineDeployment " + testNamespace + "/" + testPoolName + " names no KubevirtMachineTemplate",
			"a template that is gone":                "could not be read: the KubevirtMachineTemplate " + testNamespace + "/gone its MachineDeployment names is absent",
		}[name]
		assert.Contains(t, render.Get(facts, "image.versionSource"), want, name)
	}

	// Own values win field by field; osImage's own fields too; neither reads the template.
	cluster := clusterFromYAML(t, deployed(template, http("https://factory.talos.dev", "abc", "v1.13.5")), "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
	facts := imageFacts(t, poolChart(t), vals(t, "{cluster: acme, talos: {version: v1.13.6}}"), cluster)
	assert.Equal(t, []interface{}{"abc", "v1.13.6", "talos.version"}, []interface{}{render.Get(facts, "image.schematicID"), render.Get(facts, "image.version"), render.Get(facts, "image.versionSource")})
	cluster.ResetCalls()
	facts = imageFacts(t, poolChart(t), vals(t, "{cluster: acme, osImage: {factory: {schematicID: def, version: v1.13.7}}}"), cluster)
	assert.Equal(t, []interface{}{"def", "v1.13.7"}, []interface{}{render.Get(facts, "image.schematicID"), render.Get(facts, "image.version")})
	assert.Zero(t, cluster.CallsByVerb()["get kubevirtmachinetemplates"], "osImage names the whole flavor: what runs is not read")

	// The kept flavor goes through the support matrix: a pool moving its own
	// Kubernetes minor past what its Talos supports is refused, naming where the
	// Talos release came from; naming a Talos release that supports it renders.
	old := clusterFromYAML(t, deployed(template, http("https://factory.talos.dev", defaultSchematic, "v1.11.5")), "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
	_, err := renderPool(t, vals(t, "{cluster: acme, version: v1.35}"), old)
	requireRefusal(t, err, "Talos v1.11.5 ("+kept+") does not support Kubernetes v1.35", "Talos v1.11 supports v1.29 to v1.34")
	_, err = renderPool(t, vals(t, "{cluster: acme, version: v1.34}"), old)
	require.NoError(t, err, "v1.34 is within Talos v1.11's range")
	_, err = renderPool(t, vals(t, "{cluster: acme, version: v1.35, talos: {version: v1.13.6}}"), old)
	require.NoError(t, err, "the pool's own talos.version moves it")
}

// The Kubernetes release: a minor keeps the release of it the pool runs (its
// MachineDeployment's version); another minor, a new pool or a version that
// is no release of it gets the chart's; a release in version is taken when
// the chart ships its minor and it is no newer than the chart's.
func TestKubernetesReleaseIsWhatThePoolRuns(t *testing.T) {
	running := func(version string) *support.Cluster {
		return clusterFromYAML(t, `apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: `+testPoolName+`, namespace: `+testNamespace+`}
spec: {clusterName: kubernetes-acme, template: {spec: {clusterName: kubernetes-acme, version: `+version+`}}}`, "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
	}
	for _, tc := range []struct{ running, version, want string }{
		{"v1.35.5", "v1.35", "v1.35.5"},
		{"v1.35.9", "v1.35", "v1.35.9"},
		{"v1.34.9", "v1.35", "v1.35.6"},
		{"v1.35.x", "v1.35", "v1.35.6"},
		{"v1.35.5", "v1.34", "v1.34.9"},
		{"v1.35.5", "v1.35.2", "v1.35.2"},
		{"v1.35.5", "v1.35.6", "v1.35.6"},
		{"v1.35.5", "v1.35.0", "v1.35.0"},
	} {
		m := mustRenderPool(t, vals(t, "{cluster: acme, version: "+tc.version+"}"), running(tc.running))
		assert.Equal(t, tc.want, render.Get(doc(t, m, "MachineDeployment").Object, "spec.template.spec.version"), "%+v", tc)
		assert.Equal(t, "ghcr.io/siderolabs/kubelet:"+tc.want, kubeletImage(t, m), "%+v: the kubelet is the MachineDeployment's", tc)
	}
	facts := imageFacts(t, poolChart(t), vals(t, "cluster: acme"), running("v1.35.5"))
	assert.Equal(t, "version v1.35: kept from what the pool runs, MachineDeployment "+testNamespace+"/"+testPoolName, render.Get(facts, "behind.kubernetes.source"))
	facts = imageFacts(t, poolChart(t), vals(t, "cluster: acme"), running("v1.34.9"))
	assert.Equal(t, "version v1.35: the chart's release of it, since the pool runs v1.34.9, not a release of v1.35", render.Get(facts, "behind.kubernetes.source"))

	release := render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}
	for version, refusal := range map[string]string{
		"v1.35.7":  "version v1.35.7 is newer than the newest v1.35 release this chart ships (v1.35.6), so its kubelet image may not exist; set version to v1.35.6 or older, or to v1.35 for the chart's",
		"v1.30.1":  `version "v1.30.1" is not a Kubernetes minor this chart ships; set version to one of v1.31, v1.32, v1.33, v1.34, v1.35, v1.36, or to a release of one no newer than the chart's (such as v1.36.0)`,
		"v1.35.06": `version "v1.35.06" is not a Kubernetes minor this chart ships`,
		"v1.35.":   `version "v1.35." is not a Kubernetes minor this chart ships`,
	} {
		_, err := renderPoolAs(t, release, vals(t, "{cluster: acme, version: '"+version+"'}"), running("v1.35.5"))
		requireRefusal(t, err, "pool kubernetes-acme-workers: "+refusal)
		_, err = renderPool(t, vals(t, "{cluster: acme, version: '"+version+"'}"), nil)
		require.Error(t, err, "%s: the schema refuses it too", version)
	}
}

// Reading what runs adds one GET by name (the template) to a running pool's
// render and nothing to a new one's; no list, whatever the namespace holds.
func TestFrozenDefaultsCostFixedGets(t *testing.T) {
	cluster := healthyCluster(t)
	installed := mustRenderPool(t, vals(t, "cluster: acme"), cluster)
	require.NoError(t, cluster.Apply(installed, testNamespace))
	require.NoError(t, cluster.Apply(mustRenderPool(t, vals(t, "cluster: acme"), nil), "tenant-other"))
	cluster.ResetCalls()
	mustRenderPool(t, vals(t, "cluster: acme"), cluster)
	assert.Equal(t, map[string]int{
		"list virtualmachineclusterinstancetypes": 1,
		"get machinedeployments":                  1,
		"get configmaps":                          2,
		"get kubevirtmachinetemplates":            1,
	}, cluster.CallsByVerb(), "its MachineDeployment (record, Kubernetes release), the earlier chart's record and the catalog's published defaults (one GET each), its template")

	cluster.ResetCalls()
	mustRenderPool(t, vals(t, "{cluster: acme, talos: {version: v1.13.6, schematicID: "+defaultSchematic+"}}"), cluster)
	assert.Zero(t, cluster.CallsByVerb()["get kubevirtmachinetemplates"], "a pool naming its flavor reads no template")
}
