package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rule object's kinds and API versions (docs/monitoring.md).
var ruleAPIVersions = map[string]string{
	"VMRule":         "operator.victoriametrics.com/v1beta1",
	"PrometheusRule": "monitoring.coreos.com/v1",
}

func renderCatalogSchemaOff(t testing.TB, values map[string]interface{}) (*render.Manifest, error) {
	t.Helper()
	return renderCatalogAs(t, render.Release{Name: catalogRelease, Namespace: catalogNamespace, SkipSchemaValidation: true}, values, nil)
}

func ruleObject(t testing.TB, m *render.Manifest) render.Doc {
	t.Helper()
	d, err := support.RuleObject(m)
	require.NoError(t, err)
	return d
}

// Off by default: no rule object, and no other document changes (the
// committed catalog renders pin the rest byte for byte).
func TestCatalogMonitoringOffRendersNoRule(t *testing.T) {
	for _, snippet := range []string{"", "monitoring: {enabled: false, ruleKind: PrometheusRule, goldenNotSucceededFor: 2h}", "monitoring: null"} {
		m := mustRenderCatalog(t, vals(t, snippet), nil)
		_, err := support.RuleObject(m)
		require.Error(t, err, "values %q render no rule object", snippet)
		assert.Equal(t, mustRenderCatalog(t, nil, nil).Text(), m.Text(), "values %q change nothing else", snippet)
	}
}

func TestCatalogMonitoringRendersTheChosenRuleKind(t *testing.T) {
	for kind, apiVersion := range ruleAPIVersions {
		t.Run(kind, func(t *testing.T) {
			m := mustRenderCatalog(t, vals(t, fmt.Sprintf("monitoring: {enabled: true, ruleKind: %s, labels: {release: kube-prometheus-stack, team.example.com/owner: platform}}", kind)), nil)
			d := ruleObject(t, m)
			assert.Equal(t, apiVersion, d.Object["apiVersion"])
			assert.Equal(t, support.RuleObjectName, d.Name())
			assert.Equal(t, support.RuleObjectNamespace, render.Get(d.Object, "metadata.namespace"))
			assert.Equal(t, map[string]interface{}{
				"app.kubernetes.io/part-of": "kubernetes-worker-image",
				"release":                   "kube-prometheus-stack",
				"team.example.com/owner":    "platform",
			}, render.Get(d.Object, "metadata.labels"))
			rules := render.Get(d.Object, "spec.groups").([]interface{})[0].(map[string]interface{})["rules"].([]interface{})
			var names []string
			for _, r := range rules {
				names = append(names, r.(map[string]interface{})["alert"].(string))
			}
			assert.Equal(t, []string{"KubernetesWorkerImageGoldenFailed", "KubernetesWorkerImageGoldenNotSucceeded", "KubernetesWorkerImageHostAssistedClone", "KubernetesWorkerImagePoolBehind"}, names)
			// The golden alerts read cozy-public only: a tenant's look-alike raises nothing.
			for _, r := range rules[:2] {
				assert.Contains(t, r.(map[string]interface{})["expr"], `exported_namespace="cozy-public"`)
			}
		})
	}
}

// The thresholds reach the rules as written, and every valid edge renders.
func TestCatalogMonitoringThresholds(t *testing.T) {
	for _, c := range []struct{ failed, notSucceeded, behind string }{
		{"0s", "5m", "1h"}, {"0", "7d", "90d"}, {"1d", "1w", "12w6d"}, {"90s", "1h30m", "3600s"}, {"24h", "168h", "2160h"}, {"1h", "2d12h", "14d"},
	} {
		m := mustRenderCatalog(t, vals(t, fmt.Sprintf("monitoring: {enabled: true, goldenFailedFor: %q, goldenNotSucceededFor: %q, poolBehindFor: %q}", c.failed, c.notSucceeded, c.behind)), nil)
		rules := render.Get(ruleObject(t, m).Object, "spec.groups").([]interface{})[0].(map[string]interface{})["rules"].([]interface{})
		assert.Equal(t, c.failed, rules[0].(map[string]interface{})["for"], "goldenFailedFor %s", c.failed)
		assert.Equal(t, c.notSucceeded, rules[1].(map[string]interface{})["for"], "goldenNotSucceededFor %s", c.notSucceeded)
		_, hasFor := rules[2].(map[string]interface{})["for"]
		assert.False(t, hasFor, "the host-assisted alert fires at once: the clone type never changes back")
		assert.Equal(t, c.behind, rules[3].(map[string]interface{})["for"], "poolBehindFor %s", c.behind)
	}
	rules := render.Get(ruleObject(t, mustRenderCatalog(t, vals(t, "monitoring: {enabled: true}"), nil)).Object, "spec.groups").([]interface{})[0].(map[string]interface{})["rules"].([]interface{})
	assert.Equal(t, "7d", rules[3].(map[string]interface{})["for"], "poolBehindFor defaults to a week")
	assert.Contains(t, rules[3].(map[string]interface{})["expr"], `kubernetes_worker_image_golden_talos_patch{exported_namespace="cozy-public"}`, "the goldens of cozy-public only")
}

// Each monitoring value the catalog cannot render is refused, with the schema
// on and off, naming the key, the value and the fix; the platform refuses the
// same value under kubernetesWorkerImage.monitoring with the same words.
func TestMonitoringRefusals(t *testing.T) {
	seventeen := make([]string, 17)
	for i := range seventeen {
		seventeen[i] = fmt.Sprintf("l%d: v", i)
	}
	cases := []struct {
		name, monitoring string
		fragments        []string
	}{
		{"not a map", `"yes"`, []string{`monitoring is "yes", not a map`}},
		{"typo", `{enable: true}`, []string{`monitoring has no key "enable"`, "enabled"}},
		{"enabled a string", `{enabled: "true"}`, []string{`monitoring.enabled is "true", not a boolean`}},
		{"unknown rule kind", `{ruleKind: ServiceMonitor}`, []string{`monitoring.ruleKind is "ServiceMonitor"`, "VMRule", "PrometheusRule"}},
		{"duration in words", `{goldenFailedFor: 5 minutes}`, []string{`monitoring.goldenFailedFor is "5 minutes", not a Prometheus duration`, "0s to 1d"}},
		{"fractional duration", `{goldenNotSucceededFor: 1.5h}`, []string{`monitoring.goldenNotSucceededFor is "1.5h", not a Prometheus duration`}},
		{"units out of order", `{goldenNotSucceededFor: 30m1h}`, []string{"not a Prometheus duration"}},
		{"seven digits", `{goldenNotSucceededFor: 1000000s}`, []string{"at most 6 digits"}},
		{"a number", `{goldenFailedFor: 300}`, []string{`monitoring.goldenFailedFor is 300 (a number), not a string`}},
		{"failed past a day", `{goldenFailedFor: 25h}`, []string{`monitoring.goldenFailedFor "25h" is outside 0s to 1d`}},
		{"import below five minutes", `{goldenNotSucceededFor: 4m59s}`, []string{`monitoring.goldenNotSucceededFor "4m59s" is outside 5m to 7d`, "merely importing"}},
		{"import past a week", `{goldenNotSucceededFor: 1w1s}`, []string{`"1w1s" is outside 5m to 7d`}},
		{"behind below an hour", `{poolBehindFor: 59m}`, []string{`monitoring.poolBehindFor "59m" is outside 1h to 90d`, "while a rollout is still moving it"}},
		{"behind past ninety days", `{poolBehindFor: 90d1s}`, []string{`monitoring.poolBehindFor "90d1s" is outside 1h to 90d`, "says nothing useful"}},
		{"behind in words", `{poolBehindFor: a week}`, []string{`monitoring.poolBehindFor is "a week", not a Prometheus duration`, "1h to 90d"}},
		{"runbook with a fragment", `{runbookURL: "https://docs.example.com/runbooks.md#x"}`, []string{"monitoring.runbookURL is", "no fragment"}},
		{"runbook not http", `{runbookURL: "javascript:alert(1)"}`, []string{"monitoring.runbookURL is", "not a plain http(s) URL"}},
		{"labels a list", `{labels: [release]}`, []string{"monitoring.labels is a list, not a map"}},
		{"too many labels", `{labels: {` + strings.Join(seventeen, ", ") + `}}`, []string{"monitoring.labels has 17 labels, more than the 16"}},
		{"bad label name", `{labels: {"-bad": x}}`, []string{`monitoring.labels: "-bad" is not a label name`}},
		{"label value a number", `{labels: {release: 1}}`, []string{`monitoring.labels["release"] is 1 (a number), not a label value`}},
		{"label value too long", `{labels: {release: ` + strings.Repeat("a", 64) + `}}`, []string{`monitoring.labels["release"]`, "at most 63"}},
		{"part-of label", `{labels: {app.kubernetes.io/part-of: other}}`, []string{"sets app.kubernetes.io/part-of"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := renderCatalogSchemaOff(t, vals(t, "monitoring: "+c.monitoring))
			requireRefusal(t, err, c.fragments...)
			_, err = renderCatalog(t, vals(t, "monitoring: "+c.monitoring), nil)
			require.Error(t, err, "refused with the schema on too")
			platformValues := vals(t, "kubernetesWorkerImage: {monitoring: "+c.monitoring+"}")
			_, err = renderPlatformAs(t, true, platformValues)
			fragments := make([]string, len(c.fragments))
			for i, f := range c.fragments {
				fragments[i] = strings.ReplaceAll(f, "monitoring", "kubernetesWorkerImage.monitoring")
			}
			requireRefusal(t, err, fragments...)
			_, err = renderPlatformAs(t, false, platformValues)
			require.Error(t, err, "the platform refuses it with the schema on too")
		})
	}
}

// The neighbours of those refusals render: the edges of every bound.
func TestMonitoringValidNeighboursRender(t *testing.T) {
	sixteen := make([]string, 16)
	for i := range sixteen {
		sixteen[i] = fmt.Sprintf("l%d: v", i)
	}
	for _, monitoring := range []string{
		`{enabled: true, goldenFailedFor: 1d, goldenNotSucceededFor: 4m60s}`,
		`{enabled: true, goldenNotSucceededFor: 604800s}`,
		`{enabled: true, poolBehindFor: 1h, goldenFailedFor: 0s}`,
		`{enabled: true, poolBehindFor: 89d23h59m60s}`,
		`{enabled: true, runbookURL: "http://docs.internal:8080/runbooks%20v2.md"}`,
		`{enabled: true, labels: {` + strings.Join(sixteen, ", ") + `}}`,
		`{enabled: true, labels: {release: "", example.com/a-b_c.d: ` + strings.Repeat("a", 63) + `}}`,
		`{enabled: false, goldenFailedFor: 0s}`,
	} {
		m, err := renderCatalogSchemaOff(t, vals(t, "monitoring: "+monitoring))
		require.NoError(t, err, monitoring)
		_, err = renderCatalog(t, vals(t, "monitoring: "+monitoring), nil)
		require.NoError(t, err, "%s passes the schema too", monitoring)
		_, ruleErr := support.RuleObject(m)
		assert.Equal(t, strings.Contains(monitoring, "enabled: true"), ruleErr == nil, monitoring)
		_, err = renderPlatformAs(t, false, vals(t, "kubernetesWorkerImage: {monitoring: "+monitoring+"}"))
		require.NoError(t, err, "the platform forwards %s", monitoring)
	}
}

func renderPlatformAs(t testing.TB, schemaOff bool, values map[string]interface{}) (*render.Manifest, error) {
	t.Helper()
	c, err := support.LoadChart(render.PlatformChart)
	require.NoError(t, err)
	return render.Render(c, render.Options{Release: render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: schemaOff}, Values: values})
}

// The platform forwards kubernetesWorkerImage.monitoring, only the keys set,
// as the catalog's monitoring values.
func TestPlatformForwardsMonitoring(t *testing.T) {
	m := mustRenderPlatform(t, vals(t, "bundles: {enabledPackages: [cozystack.kubernetes-worker-image]}\nkubernetesWorkerImage: {monitoring: {enabled: true, ruleKind: PrometheusRule}}"))
	values, err := support.PackageComponentValues(m, catalogPackage, "kubernetes-worker-image")
	require.NoError(t, err)
	assert.Equal(t, map[string]interface{}{"monitoring": map[string]interface{}{"enabled": true, "ruleKind": "PrometheusRule"}}, values)
	catalog := mustRenderCatalog(t, values, nil)
	assert.Equal(t, "PrometheusRule", ruleObject(t, catalog).Kind())
}

// kubernetesWorkerImage.metrics.enabled renders the monitoring-agents Package
// whose kube-state-metrics reads the goldens and worker disks, keeping the
// custom resources and read rule monitoring-agents has for Flux (Helm replaces
// a list given in values). Off, nothing of it renders.
func TestPlatformMetricsSwitch(t *testing.T) {
	off := mustRenderPlatform(t, nil)
	_, found := off.Find("Package", support.MonitoringAgentsPackage)
	assert.False(t, found, "no monitoring-agents Package by default")
	for _, snippet := range []string{"kubernetesWorkerImage: {metrics: {enabled: false}}", "kubernetesWorkerImage: {metrics: {}}"} {
		assert.Equal(t, off.Text(), mustRenderPlatform(t, vals(t, snippet)).Text(), "%s changes nothing", snippet)
	}

	on := mustRenderPlatform(t, vals(t, "kubernetesWorkerImage: {metrics: {enabled: true}}"))
	require.Len(t, on.Docs, len(off.Docs)+1, "one more document, the Package")
	values, err := support.PackageComponentValues(on, support.MonitoringAgentsPackage, "monitoring-agents")
	require.NoError(t, err)
	assert.Equal(t, "tenant-root", render.Get(values, "global.target"), "the Package keeps what Cozystack's platform gives monitoring-agents")
	ksm := values["kube-state-metrics"].(map[string]interface{})
	assert.Equal(t, true, render.Get(ksm, "customResourceState.enabled"))
	resources := render.Get(ksm, "customResourceState.config.spec.resources").([]interface{})
	kinds := map[string]string{}
	for _, r := range resources {
		gvk := r.(map[string]interface{})["groupVersionKind"].(map[string]interface{})
		kinds[gvk["kind"].(string)] = r.(map[string]interface{})["metricNamePrefix"].(string)
	}
	for _, flux := range []string{"Kustomization", "HelmRelease", "GitRepository", "Bucket", "HelmRepository", "HelmChart", "OCIRepository", "Alert", "Provider", "Receiver", "ImageRepository", "ImagePolicy", "ImageUpdateAutomation"} {
		assert.Equal(t, "gotk", kinds[flux], "monitoring-agents' own %s metrics are kept", flux)
	}
	assert.Equal(t, "kubernetes_worker_image", kinds["DataVolume"])
	assert.Equal(t, "kubernetes_worker_image", kinds["MachineDeployment"], "the pools' flavor, for the alert on pools behind")
	rules := render.Get(ksm, "rbac.extraRules").([]interface{})
	require.Len(t, rules, 3)
	assert.Contains(t, rules[0].(map[string]interface{})["resources"], "ocirepositories")
	assert.Contains(t, rules[0].(map[string]interface{})["resources"], "imagepolicies")
	assert.Equal(t, map[string]interface{}{"apiGroups": []interface{}{"cdi.kubevirt.io"}, "resources": []interface{}{"datavolumes"}, "verbs": []interface{}{"list", "watch"}}, rules[1])
	assert.Equal(t, map[string]interface{}{"apiGroups": []interface{}{"cluster.x-k8s.io"}, "resources": []interface{}{"machinedeployments"}, "verbs": []interface{}{"list", "watch"}}, rules[2])

	// The pools learn it through _cluster, and annotate their MachineDeployments.
	assert.Equal(t, map[string]interface{}{"metrics": true}, clusterChannel(t, "kubernetesWorkerImage: {metrics: {enabled: true}}")["kubernetesWorkerImage"])
	assert.NotContains(t, clusterChannel(t, "kubernetesWorkerImage: {metrics: {enabled: false}}"), "kubernetesWorkerImage")
}

// With the platform's metrics on, a pool annotates its MachineDeployment with
// the flavor it runs after the render (schematic, minor, patch) and its disks'
// class, and nothing else moves: the template keeps its name. Off (the
// default, or metrics: false), the MachineDeployment keeps its bytes.
func TestPoolMetricsAnnotations(t *testing.T) {
	const key = "kubernetes-worker-image.cozystack.io/"
	cluster := healthyCluster(t)
	off := mustRenderPool(t, vals(t, "cluster: acme"), cluster)
	for _, values := range []string{"{cluster: acme, _cluster: {kubernetesWorkerImage: {metrics: false}}}", "{cluster: acme, _cluster: {kubernetesWorkerImage: {}}}", "{cluster: acme, _cluster: {kubernetesWorkerImage: null}}"} {
		assert.Equal(t, off.Text(), mustRenderPool(t, vals(t, values), cluster).Text(), values)
	}
	for _, c := range []struct {
		values string
		want   map[string]interface{}
	}{
		{"{cluster: acme, _cluster: {kubernetesWorkerImage: {metrics: true}}}", map[string]interface{}{key + "talos-schematic-id": defaultSchematic, key + "talos-minor": "v1.13", key + "talos-patch": "6", key + "storage-class": "replicated"}},
		{"{cluster: acme, storageClass: '', _cluster: {kubernetesWorkerImage: {metrics: true}}}", map[string]interface{}{key + "talos-schematic-id": defaultSchematic, key + "talos-minor": "v1.13", key + "talos-patch": "6"}},
		{"{cluster: acme, storageClass: '', osImage: {builtin: {}}, _cluster: {kubernetesWorkerImage: {metrics: true}}}", map[string]interface{}{key + "talos-schematic-id": defaultSchematic, key + "talos-minor": "v1.13", key + "talos-patch": "6", key + "storage-class": "replicated"}},
		{"{cluster: acme, talos: {version: v1.14.0-beta.1, schematicID: abc}, version: v1.34, _cluster: {kubernetesWorkerImage: {metrics: true}}}", map[string]interface{}{key + "talos-schematic-id": "abc", key + "talos-minor": "v1.14", key + "storage-class": "replicated"}},
		// A patch is written up to 999, the most the alert rules read as one
		// (worker-image-lib.wellFormed); above, as for a pre-release, none.
		{"{cluster: acme, talos: {version: v1.13.999, schematicID: abc}, _cluster: {kubernetesWorkerImage: {metrics: true}}}", map[string]interface{}{key + "talos-schematic-id": "abc", key + "talos-minor": "v1.13", key + "talos-patch": "999", key + "storage-class": "replicated"}},
		{"{cluster: acme, talos: {version: v1.13.1000, schematicID: abc}, _cluster: {kubernetesWorkerImage: {metrics: true}}}", map[string]interface{}{key + "talos-schematic-id": "abc", key + "talos-minor": "v1.13", key + "storage-class": "replicated"}},
	} {
		on := mustRenderPool(t, vals(t, c.values), cluster)
		md := doc(t, on, "MachineDeployment")
		got := map[string]interface{}{}
		for k, v := range render.Get(md.Object, "metadata.annotations").(map[string]interface{}) {
			if strings.HasPrefix(k, key) {
				got[k] = v
			}
		}
		assert.Equal(t, c.want, got, c.values)
		plain := vals(t, c.values)
		delete(plain, "_cluster")
		assert.Equal(t, machineTemplateName(t, mustRenderPool(t, plain, cluster)), machineTemplateName(t, on), "%s: the template keeps its name", c.values)
	}

	release := render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}
	for values, refusal := range map[string]string{
		"{cluster: acme, _cluster: {kubernetesWorkerImage: true}}":             "pool kubernetes-acme-workers: _cluster.kubernetesWorkerImage is true (a boolean), not a map",
		"{cluster: acme, _cluster: {kubernetesWorkerImage: {metrics: 'yes'}}}": `pool kubernetes-acme-workers: _cluster.kubernetesWorkerImage.metrics is "yes", not a boolean`,
		"{cluster: acme, _cluster: {kubernetesWorkerImage: {metric: true}}}":   `pool kubernetes-acme-workers: _cluster.kubernetesWorkerImage has no key "metric"`,
	} {
		_, err := renderPoolAs(t, release, vals(t, values), cluster)
		requireRefusal(t, err, refusal)
	}
}

func TestPlatformMetricsRefusals(t *testing.T) {
	for _, c := range []struct {
		name, values string
		fragments    []string
	}{
		{"not a map", `kubernetesWorkerImage: {metrics: true}`, []string{"kubernetesWorkerImage.metrics is true (a boolean), not a map", "{enabled: true}"}},
		{"typo", `kubernetesWorkerImage: {metrics: {enable: true}}`, []string{`kubernetesWorkerImage.metrics has no key "enable"`}},
		{"a string", `kubernetesWorkerImage: {metrics: {enabled: "yes"}}`, []string{`kubernetesWorkerImage.metrics.enabled is "yes", not a boolean`}},
		{"monitoring-agents disabled", "bundles: {disabledPackages: [cozystack.monitoring-agents]}\nkubernetesWorkerImage: {metrics: {enabled: true}}", []string{"disabledPackages lists cozystack.monitoring-agents", "docs/monitoring.md"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := renderPlatformAs(t, true, vals(t, c.values))
			requireRefusal(t, err, c.fragments...)
			_, err = renderPlatformAs(t, false, vals(t, c.values))
			require.Error(t, err, "refused with the schema on too")
		})
	}
	// Neighbours: another package disabled, or monitoring-agents disabled with metrics off.
	for _, ok := range []string{
		"bundles: {disabledPackages: [cozystack.kubernetes-nodes]}\nkubernetesWorkerImage: {metrics: {enabled: true}}",
		"bundles: {disabledPackages: [cozystack.monitoring-agents]}\nkubernetesWorkerImage: {metrics: {enabled: false}}",
	} {
		_, err := renderPlatformAs(t, true, vals(t, ok))
		require.NoError(t, err, ok)
	}
}

// Every alert summary that names a pool names its namespace, from the series'
// exported_namespace (where kube-state-metrics found the object), never from
// an annotation alone: a tenant's worker disk annotated with another tenant's
// pool reads as that name in the tenant's own namespace. The rules read a
// disk's pool and golden annotations only in the shape the pool chart writes
// them (tests/monitoring runs them).
func TestAlertSummariesNameThePoolNamespace(t *testing.T) {
	m, err := renderCatalog(t, vals(t, "monitoring: {enabled: true}"), nil)
	require.NoError(t, err)
	pools := 0
	for _, g := range render.Get(ruleObject(t, m).Object, "spec.groups").([]interface{}) {
		for _, r := range g.(map[string]interface{})["rules"].([]interface{}) {
			rule := r.(map[string]interface{})
			summary := render.Get(rule, "annotations.summary").(string)
			if !strings.HasPrefix(summary, "Pool ") {
				continue
			}
			pools++
			assert.Regexp(t, `^Pool \{\{ \$labels\.exported_namespace \}\}/\{\{ \$labels\.(pool|name) \}\} `, summary, "alert %s", rule["alert"])
		}
	}
	assert.Equal(t, 2, pools, "the host-assisted clone and pools-behind alerts name a pool")
}

// The retiring label is exported only as "true" (a "key=value" path step):
// whatever else a look-alike's annotation holds writes no label.
func TestMetricsRetiringLabelIsOnlyTrue(t *testing.T) {
	values, err := support.PackageComponentValues(mustRenderPlatform(t, vals(t, "kubernetesWorkerImage: {metrics: {enabled: true}}")), support.MonitoringAgentsPackage, "monitoring-agents")
	require.NoError(t, err)
	found := 0
	for _, r := range render.Get(values, "kube-state-metrics.customResourceState.config.spec.resources").([]interface{}) {
		for _, metric := range r.(map[string]interface{})["metrics"].([]interface{}) {
			path, ok := render.Get(metric.(map[string]interface{}), "labelsFromPath.retiring").([]interface{})
			if !ok {
				continue
			}
			found++
			assert.Equal(t, []interface{}{"metadata", "annotations", "kubernetes-worker-image.cozystack.io/retiring=true"}, path)
		}
	}
	assert.Equal(t, 1, found, "golden_info carries retiring")
}
