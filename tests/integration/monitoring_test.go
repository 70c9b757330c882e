//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// The flavor of the goldens this part creates (a made-up schematic ID).
const ksmSchematicID = "6b0e6ad1c6d4c1f0a7e3b59c2d8e4f1a3b5c7d9e0f2a4b6c8d0e1f3a5b7c9d1e"

// testKubeStateMetrics runs kube-state-metrics (built from tools/kube-state-metrics
// by `make kube-state-metrics`) against the tier's kube-apiserver with the
// custom-resource-state configuration the platform hands Cozystack's
// monitoring-agents, and reads its /metrics: goldens the catalog renders (their
// status written as CDI's controllers write it) and worker disks as a pool
// writes them (their clone type annotated as CDI's DataVolume controller does)
// export every series the catalog's alert rules read, with the labels the
// rules select and aggregate by; promtool then evaluates the rules and every
// panel query of the Grafana dashboard over what it exported.
func testKubeStateMetrics(t *testing.T, e *env) {
	bin, ok, why := support.Tool("kube-state-metrics", "KUBE_STATE_METRICS")
	if !ok {
		t.Fatal(why)
	}

	// The configuration, exactly as monitoring-agents' kube-state-metrics
	// chart writes it into its ConfigMap (toYaml of customResourceState.config).
	platform, err := support.RenderPlatform(map[string]any{"kubernetesWorkerImage": map[string]any{"metrics": map[string]any{"enabled": true}}})
	if err != nil {
		t.Fatal(err)
	}
	agents, err := support.PackageComponentValues(platform, support.MonitoringAgentsPackage, "monitoring-agents")
	if err != nil {
		t.Fatal(err)
	}
	config, err := yaml.Marshal(render.Get(agents, "kube-state-metrics.customResourceState.config"))
	if err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(e.dir, "customresourcestate-config.yaml")
	writeFile(t, configFile, string(config))

	// Goldens: the catalog's own DataVolumes (one per-class), created as Helm
	// would, then each given the status CDI writes at one point of an import.
	e.createNamespace(t, catalogNamespace)
	catalog, err := support.RenderCatalog(map[string]any{
		"images": []any{
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.13.1", "additionalStorageClasses": []any{"ceph-rbd"}},
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.13.2"},
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.13.3"},
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.13.4"},
			// On the cluster's default class (no class written), and one retiring.
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.13.5", "storageClass": ""},
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.13.6", "retire": true},
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.14.0-beta.1"},
			// Importing, at the other forms of progress CDI writes (for the dashboard).
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.13.7"},
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.13.8"},
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.13.9"},
			map[string]any{"schematicID": ksmSchematicID, "version": "v1.13.10"},
		},
		"monitoring": map[string]any{"enabled": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	name := func(version string) string { return support.GoldenName(ksmSchematicID, version) }
	var created []objectRef
	for _, d := range catalog.OfKind("DataVolume") {
		obj := &unstructured.Unstructured{Object: d.Object}
		e.create(t, obj)
		created = append(created, objectRef{dataVolumeVersion, "DataVolume", catalogNamespace, obj.GetName()})
	}
	status := map[string]string{
		name("v1.13.1"):                "Succeeded|100.0%",
		name("v1.13.1") + "--ceph-rbd": "ImportInProgress|45.20%",
		name("v1.13.2"):                "Failed|N/A",
		name("v1.13.3"):                "ImportScheduled|N/A",
		// v1.13.4: no status at all, as before CDI's controller first reconciles it.
		name("v1.13.5"):        "Succeeded|100.0%",
		name("v1.13.6"):        "Succeeded|100.0%",
		name("v1.14.0-beta.1"): "Succeeded|100.0%",
		// CDI's progress is "N/A" before the importer reports, then the
		// importer's percentage as fmt's %.2f%% (from 0.00% to 100.00%,
		// through the import populator's annotation or the importer pod's
		// metric), and "100.0%" once it succeeded.
		name("v1.13.7"):  "ImportInProgress|0.00%",
		name("v1.13.8"):  "ImportInProgress|7.05%",
		name("v1.13.9"):  "ImportInProgress|99.99%",
		name("v1.13.10"): "ImportInProgress|100.00%",
	}
	for dv, s := range status {
		phase, progress, _ := strings.Cut(s, "|")
		e.patchStatus(t, dataVolumeVersion, "DataVolume", catalogNamespace, dv, map[string]any{"phase": phase, "progress": progress})
	}

	// A tenant's DataVolume labelled like a golden (its retiring annotation
	// 4 KiB long), and a plain one: kube-state-metrics reads both, and the
	// rules must not take the first for a golden.
	const tenant = "tenant-ksm"
	e.createNamespace(t, tenant)
	lookAlike := fmt.Sprintf(`apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata:
  name: %s
  namespace: %s
  labels: {app.kubernetes.io/part-of: kubernetes-worker-image}
  annotations: {kubernetes-worker-image.cozystack.io/retiring: "%s"}
spec:
  source: {http: {url: "https://factory.talos.dev/image/x/v1.13.2/openstack-amd64.raw.xz"}}
  storage: {resources: {requests: {storage: 6Gi}}}
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: plain-disk, namespace: %s}
spec:
  source: {blank: {}}
  storage: {resources: {requests: {storage: 1Gi}}}
`, name("v1.13.2"), tenant, strings.Repeat("true", 1024), tenant)
	e.createYAML(t, lookAlike)
	e.patchStatus(t, dataVolumeVersion, "DataVolume", tenant, name("v1.13.2"), map[string]any{"phase": "Failed"})
	created = append(created, objectRef{dataVolumeVersion, "DataVolume", tenant, name("v1.13.2")}, objectRef{dataVolumeVersion, "DataVolume", tenant, "plain-disk"})

	// Worker disks: the pool's dataVolumeTemplates entry as the committed
	// render of a builtin pool holds it, created as KubeVirt creates a VM's
	// disks; CDI then records the clone strategy it took on each.
	disk := poolDiskTemplate(t)
	pool := render.Get(disk, "metadata.annotations").(map[string]any)["kubernetes-worker-image.cozystack.io/pool"].(string)
	golden := render.Get(disk, "metadata.annotations").(map[string]any)["kubernetes-worker-image.cozystack.io/golden"].(string)
	disks := map[string]string{pool + "-aaaaa-disk-system": "copy", pool + "-bbbbb-disk-system": "csi-clone", pool + "-ccccc-disk-system": ""}
	for diskName, cloneType := range disks {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": dataVolumeVersion, "kind": "DataVolume",
			"metadata": map[string]any{"name": diskName, "namespace": tenant, "annotations": render.Get(disk, "metadata.annotations")},
			"spec":     render.Get(disk, "spec"),
		}}
		e.create(t, obj)
		created = append(created, objectRef{dataVolumeVersion, "DataVolume", tenant, diskName})
		if cloneType != "" {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"cdi.kubevirt.io/cloneType":%q}}}`, cloneType)
			if _, err := e.client(t, dataVolumeVersion, "DataVolume", tenant).Patch(context.Background(), diskName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Pools: the MachineDeployments the pool chart renders while the
	// platform's metrics are on (_cluster.kubernetesWorkerImage.metrics), one
	// on a declared class and one on the cluster's default (no class written).
	poolChart, err := support.LoadChart(render.PoolChart)
	if err != nil {
		t.Fatal(err)
	}
	poolFlavor, err := support.PoolDefaults()
	if err != nil {
		t.Fatal(err)
	}
	poolMDs := map[string]string{"kubernetes-ksm-declared": "replicated", "kubernetes-ksm-default": ""}
	var defaultMD map[string]any
	for mdName, class := range poolMDs {
		values := map[string]any{"cluster": "ksm", "storageClass": class, "_cluster": map[string]any{"kubernetesWorkerImage": map[string]any{"metrics": true}}}
		m, err := render.Render(poolChart, render.Options{Release: render.Release{Name: "kubernetes-nodes-ksm-" + strings.TrimPrefix(mdName, "kubernetes-ksm-"), Namespace: tenant}, Values: values})
		if err != nil {
			t.Fatal(err)
		}
		md, err := m.One("MachineDeployment")
		if err != nil {
			t.Fatal(err)
		}
		e.create(t, &unstructured.Unstructured{Object: md.Object})
		created = append(created, objectRef{capiAPIVersion, "MachineDeployment", tenant, mdName})
		if class == "" {
			defaultMD = md.Object
		}
	}
	// What a tenant who writes its MachineDeployment's annotations can make
	// of them: the patch "+Inf" or "NaN", which kube-state-metrics reads as
	// numbers, beside a pool on the newest patch; all of the goldens' flavor,
	// without a class. And a worker disk whose pool annotation is 64 KiB,
	// which kube-state-metrics exports as written.
	tenantPatches := map[string]string{"kubernetes-ksm-patch-inf": "+Inf", "kubernetes-ksm-patch-nan": "NaN", "kubernetes-ksm-patch-newest": "5"}
	for mdName, patch := range tenantPatches {
		md := (&unstructured.Unstructured{Object: defaultMD}).DeepCopy()
		md.SetName(mdName)
		annotations := md.GetAnnotations()
		annotations["kubernetes-worker-image.cozystack.io/talos-schematic-id"] = ksmSchematicID
		annotations["kubernetes-worker-image.cozystack.io/talos-minor"] = "v1.13"
		annotations["kubernetes-worker-image.cozystack.io/talos-patch"] = patch
		md.SetAnnotations(annotations)
		e.create(t, md)
		created = append(created, objectRef{capiAPIVersion, "MachineDeployment", tenant, mdName})
	}
	longPool := strings.Repeat("p", 64<<10)
	longDisk := pool + "-zzzzz-disk-system"
	e.create(t, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": dataVolumeVersion, "kind": "DataVolume",
		"metadata": map[string]any{"name": longDisk, "namespace": tenant, "annotations": map[string]any{
			"kubernetes-worker-image.cozystack.io/golden": golden, "kubernetes-worker-image.cozystack.io/pool": longPool, "cdi.kubevirt.io/cloneType": "copy"}},
		"spec": render.Get(disk, "spec"),
	}})
	created = append(created, objectRef{dataVolumeVersion, "DataVolume", tenant, longDisk})
	t.Cleanup(func() { e.remove(t, created...) })

	port, telemetry := freePort(t), freePort(t)
	started := time.Now()
	e.start(t, "kube-state-metrics", bin,
		"--kubeconfig="+e.kubeconfig,
		"--host=127.0.0.1", "--port="+strconv.Itoa(port),
		"--telemetry-host=127.0.0.1", "--telemetry-port="+strconv.Itoa(telemetry),
		"--custom-resource-state-config-file="+configFile)
	t.Cleanup(func() { e.stopProcess("kube-state-metrics") })

	// What each object exports, label by label.
	type expect struct {
		metric string
		labels map[string]string
		absent []string
	}
	var expects []expect
	for _, d := range catalog.OfKind("DataVolume") {
		labels := map[string]string{
			"exported_namespace": catalogNamespace, "name": d.Name(),
			"source_url": render.Get(d.Object, "spec.source.http.url").(string),
		}
		noLabel := []string{"retiring"}
		if class, _ := render.Get(d.Object, "spec.storage.storageClassName").(string); class != "" {
			labels["storage_class"] = class
		} else {
			noLabel = append(noLabel, "storage_class")
		}
		if d.Name() == name("v1.13.6") {
			labels["retiring"], noLabel = "true", noLabel[1:]
		}
		expects = append(expects, expect{support.GoldenInfoMetric, labels, noLabel})
		// Its Talos patch, the value, for the pools-behind alert; a pre-release has none.
		patch := map[string]string{"exported_namespace": catalogNamespace, "name": d.Name(), "schematic_id": ksmSchematicID, "talos_minor": "v1.13"}
		var patchAbsent []string
		if class, ok := labels["storage_class"]; ok {
			patch["storage_class"] = class
		} else {
			patchAbsent = []string{"storage_class"}
		}
		if !strings.Contains(d.Name(), "-beta.") {
			expects = append(expects, expect{support.GoldenPatchMetric, patch, patchAbsent})
		}
		s := map[string]string{"exported_namespace": catalogNamespace, "name": d.Name(), "part_of": "kubernetes-worker-image"}
		var absent []string
		if phase, progress, ok := strings.Cut(status[d.Name()], "|"); ok {
			s["phase"], s["progress"] = phase, progress
		} else {
			absent = []string{"phase", "progress"}
		}
		expects = append(expects, expect{support.GoldenStatusMetric, s, absent})
	}
	for diskName, cloneType := range disks {
		labels := map[string]string{"exported_namespace": tenant, "name": diskName, "golden": golden, "pool": pool}
		var absent []string
		if cloneType != "" {
			labels["clone_type"] = cloneType
		} else {
			absent = []string{"clone_type"}
		}
		expects = append(expects, expect{support.WorkerDiskMetric, labels, absent})
	}
	expects = append(expects, expect{support.GoldenStatusMetric, map[string]string{"exported_namespace": tenant, "name": name("v1.13.2"), "phase": "Failed"}, nil})
	// Its retiring annotation, 4 KiB, is no "true": no label.
	expects = append(expects, expect{support.GoldenInfoMetric, map[string]string{"exported_namespace": tenant, "name": name("v1.13.2")}, []string{"retiring"}})
	flavorMinor := poolFlavor.Version[:strings.LastIndex(poolFlavor.Version, ".")]
	for mdName, class := range poolMDs {
		labels := map[string]string{"exported_namespace": tenant, "name": mdName, "schematic_id": poolFlavor.SchematicID, "talos_minor": flavorMinor}
		var absent []string
		if class != "" {
			labels["storage_class"] = class
		} else {
			absent = []string{"storage_class"}
		}
		expects = append(expects, expect{support.PoolPatchMetric, labels, absent})
	}
	for mdName := range tenantPatches {
		labels := map[string]string{"exported_namespace": tenant, "name": mdName, "schematic_id": ksmSchematicID, "talos_minor": "v1.13"}
		expects = append(expects, expect{support.PoolPatchMetric, labels, []string{"storage_class"}})
	}
	expects = append(expects, expect{support.WorkerDiskMetric, map[string]string{"exported_namespace": tenant, "name": longDisk, "golden": golden, "pool": longPool, "clone_type": "copy"}, nil})
	// Wait until every object above is exported: other parts of the tier
	// leave goldens too, so count none, look for each.
	var series []metricSeries
	deadline := time.Now().Add(60 * time.Second)
	for {
		series = scrape(t, port)
		missing := 0
		for _, x := range expects {
			if len(filterSeries(series, x.metric, x.labels)) == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			e.dumpLogs(t)
			t.Fatalf("kube-state-metrics exported %d series after 60 s, %d objects still missing:\n%s", len(series), missing, dumpSeries(series))
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("kube-state-metrics exported every golden and worker disk %s after it started:\n%s", time.Since(started).Round(100*time.Millisecond), dumpSeries(series))

	for _, x := range expects {
		found := filterSeries(series, x.metric, x.labels)
		if len(found) != 1 {
			t.Errorf("%s%v: %d series, want 1", x.metric, x.labels, len(found))
			continue
		}
		switch x.metric {
		case support.GoldenPatchMetric:
			want := x.labels["name"][strings.LastIndex(x.labels["name"], ".")+1:]
			if cut := strings.Index(want, "-"); cut >= 0 {
				want = want[:cut] // a per-class golden's name goes on with --<class>
			}
			if found[0].value != want {
				t.Errorf("%s%v = %s, want the patch %s", x.metric, x.labels, found[0].value, want)
			}
		case support.PoolPatchMetric:
			want := poolFlavor.Version[strings.LastIndex(poolFlavor.Version, ".")+1:]
			if written, ok := tenantPatches[x.labels["name"]]; ok {
				want = written // exported as written: kube-state-metrics checks no value
			}
			if found[0].value != want {
				t.Errorf("%s%v = %s, want the patch %s", x.metric, x.labels, found[0].value, want)
			}
		}
		for _, l := range x.absent {
			if _, has := found[0].labels[l]; has {
				t.Errorf("%s%v has label %s=%q, want none", x.metric, x.labels, l, found[0].labels[l])
			}
		}
	}
	// Nothing for a DataVolume that is neither a golden nor a worker disk.
	for _, s := range series {
		if strings.HasPrefix(s.name, "kubernetes_worker_image_") && s.labels["name"] == "plain-disk" {
			t.Errorf("kube-state-metrics exported %s for plain-disk, which is no golden and no worker disk", s)
		}
		if s.name == support.GoldenPatchMetric && strings.Contains(s.labels["name"], "-beta.") {
			t.Errorf("kube-state-metrics exported %s for a pre-release, which has no patch to compare", s)
		}
	}

	// Every selector of every rule the catalog renders matches what was
	// exported, and carries the labels the rule aggregates by.
	rules, err := support.RuleObject(catalog)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, g := range render.Get(rules.Object, "spec.groups").([]any) {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			rule := r.(map[string]any)
			expr := rule["expr"].(string)
			by := byLabels(t, expr)
			if rule["alert"] == "KubernetesWorkerImagePoolBehind" {
				// Its aggregations group different metrics apart (joined on
				// exported_namespace and name); each must carry what it is
				// grouped by, storage_class being absent where no class is written.
				by = nil
			}
			for _, sel := range selectors(t, expr) {
				matched := 0
				for _, s := range series {
					if s.name == sel.metric && sel.matches(s.labels) {
						matched++
						for _, l := range by {
							if s.labels[l] == "" {
								t.Errorf("alert %s: series %s lacks %s, which the rule aggregates by", rule["alert"], s, l)
							}
						}
					}
				}
				if matched == 0 {
					t.Errorf("alert %s: no series kube-state-metrics exported matches %s", rule["alert"], sel.text)
				}
				if rule["alert"] == "KubernetesWorkerImagePoolBehind" {
					for _, s := range series {
						if s.name != sel.metric || !sel.matches(s.labels) {
							continue
						}
						need := []string{"exported_namespace", "name"}
						if sel.metric == support.GoldenPatchMetric || sel.metric == support.PoolPatchMetric {
							need = append(need, "schematic_id", "talos_minor")
						}
						for _, l := range need {
							if s.labels[l] == "" {
								t.Errorf("alert %s: series %s lacks %s, which the rule groups or joins by", rule["alert"], s, l)
							}
						}
					}
				}
				t.Logf("alert %s: %s matches %d series", rule["alert"], sel.text, matched)
				checked++
			}
		}
	}
	// One per golden alert, and the pools-behind alert's: per arm, the goldens'
	// patch (twice: it is checked whole), status and retiring info, and the
	// pools' patch (four times: checked whole, else read as -1).
	if checked != 3+3*8 {
		t.Errorf("checked %d rule selectors, want 27", checked)
	}

	// The rules over what kube-state-metrics exported, evaluated by promtool
	// as if held for a week (poolBehindFor 7d): the pools annotated "+Inf" and
	// "NaN" read as patch -1, 6 behind the newest Succeeded golden of their
	// flavor not retiring (v1.13.5), and fire; the pool on v1.13.5 does not.
	// The disk whose pool annotation is 64 KiB raises nothing; the pool's own
	// copied disk does, its summary naming the namespace the disk is in.
	//
	// Over the same series, every panel query of the Grafana dashboard, as
	// recording rules beside the catalog's (its "Pools behind" reads the
	// ALERTS series the rules write), shows what the panel says it shows.
	dashboard, err := support.ReadDashboard()
	if err != nil {
		t.Fatal(err)
	}
	panelGroup, panelTests, err := support.DashboardPromtool(dashboard, dashboardOverExported(tenant, pool, longPool, golden, name), "169h")
	if err != nil {
		t.Fatal(err)
	}
	groups := append(render.Get(rules.Object, "spec.groups").([]any), panelGroup)
	runRulesOverExported(t, e, groups, series, func(s metricSeries) bool {
		switch s.name {
		case support.GoldenPatchMetric:
			return s.labels["schematic_id"] == ksmSchematicID
		case support.GoldenStatusMetric:
			// The tenant's look-alike too: the dashboard must not read it.
			ours := strings.HasPrefix(s.labels["name"], support.GoldenName(ksmSchematicID, "v"))
			return ours && (s.labels["exported_namespace"] == catalogNamespace || s.labels["exported_namespace"] == tenant)
		case support.GoldenInfoMetric:
			return s.labels["exported_namespace"] == catalogNamespace && strings.HasPrefix(s.labels["name"], support.GoldenName(ksmSchematicID, "v"))
		case support.PoolPatchMetric:
			return tenantPatches[s.labels["name"]] != ""
		case support.WorkerDiskMetric:
			return s.labels["exported_namespace"] == tenant
		}
		return false
	}, fmt.Sprintf(`      - eval_time: 169h
        alertname: KubernetesWorkerImagePoolBehind
        exp_alerts:%[1]s%[2]s
      - eval_time: 169h
        alertname: KubernetesWorkerImageHostAssistedClone
        exp_alerts:
          - exp_labels: {severity: warning, service: kubernetes-worker-image, exported_instance: %[3]s/%[4]s, exported_namespace: %[3]s, pool: %[4]s, golden: %[5]s}
            exp_annotations:
              summary: 'Pool %[3]s/%[4]s has worker disks copied from %[5]s over the pod network'
              description: '1 worker disk(s) of pool %[3]s/%[4]s were cloned from golden %[5]s by CDI''s host-assisted copy (cdi.kubevirt.io/cloneType: copy), not a CSI clone: each moved the whole image over the pod network, and the next worker will too.'
              runbook_url: https://github.com/cozystack/golden-worker-images/blob/main/docs/runbooks.md#host-assisted-clone
`, poolBehindAlert(tenant, "kubernetes-ksm-patch-inf"), poolBehindAlert(tenant, "kubernetes-ksm-patch-nan"), tenant, pool, golden), panelTests)
}

// dashboardOverExported is what each panel of the dashboard must show over
// the series testKubeStateMetrics keeps of kube-state-metrics' output, by
// title: label set -> value (support.DashboardPromtool).
func dashboardOverExported(tenant, pool, longPool, golden string, name func(version string) string) map[string]map[string]float64 {
	progress := func(golden string) string {
		return fmt.Sprintf(`{exported_namespace=%q, name=%q}`, catalogNamespace, golden)
	}
	copies := func(pool string) string {
		return fmt.Sprintf(`{exported_namespace=%q, pool=%q, golden=%q}`, tenant, pool, golden)
	}
	return map[string]map[string]float64{
		// In cozy-public only (the tenant's Failed look-alike is not counted);
		// the golden CDI has not reconciled has no phase.
		"Goldens per phase": {
			`{phase="Succeeded"}`: 4, `{phase="ImportInProgress"}`: 5, `{phase="Failed"}`: 1, `{phase="ImportScheduled"}`: 1, `{}`: 1,
		},
		// Whole percent, truncated, from each form CDI writes.
		"Golden import progress": {
			progress(name("v1.13.1")):                100, // 100.0%
			progress(name("v1.13.1") + "--ceph-rbd"): 45,  // 45.20%
			progress(name("v1.13.2")):                0,   // N/A, Failed
			progress(name("v1.13.3")):                0,   // N/A, scheduled
			progress(name("v1.13.4")):                0,   // no status yet
			progress(name("v1.13.5")):                100, // 100.0%
			progress(name("v1.13.6")):                100, // 100.0%, retiring
			progress(name("v1.14.0-beta.1")):         100, // 100.0%
			progress(name("v1.13.7")):                0,   // 0.00%
			progress(name("v1.13.8")):                7,   // 7.05%
			progress(name("v1.13.9")):                99,  // 99.99%
			progress(name("v1.13.10")):               100, // 100.00%
		},
		// The pool's three disks; the tenant's disk with a 64 KiB pool is not
		// well formed, and the panel selects disks as the alert does.
		"Clones per golden": {fmt.Sprintf(`{golden=%q}`, golden): 3},
		// The pools annotated +Inf and NaN, as the alert fires for them.
		"Pools behind": {`{}`: 2},
		// The pool's copied disk; the 64 KiB pool a tenant wrote raises no
		// alert and counts on no panel.
		"Host-assisted copies": {copies(pool): 1},
	}
}

// poolBehindAlert is the pools-behind alert a promtool unit test expects for
// a pool of the tier's golden flavor whose patch reads as -1.
func poolBehindAlert(namespace, name string) string {
	return fmt.Sprintf(`
          - exp_labels: {severity: warning, service: kubernetes-worker-image, exported_instance: %[1]s/%[2]s, exported_namespace: %[1]s, name: %[2]s, schematic_id: %[3]s, talos_minor: v1.13}
            exp_annotations:
              summary: 'Pool %[1]s/%[2]s runs an older Talos patch than the catalog holds for 7d'
              description: 'The pool whose MachineDeployment is %[1]s/%[2]s runs Talos v1.13 of schematic %[3]s 6 patch(es) behind the newest golden of that minor and schematic Succeeded on its class (a talos-patch annotation that is no whole number from 0 to 999 reads as -1). A chart release never moves a running pool: workerimage rollout --behind does.'
              runbook_url: https://github.com/cozystack/golden-worker-images/blob/main/docs/runbooks.md#pool-behind`, namespace, name, ksmSchematicID)
}

// runRulesOverExported runs `promtool test rules` (built by `make promtool`)
// with the rule groups over the exported series keep selects, each held at
// its scraped value for a week at an hourly interval, against the
// alert_rule_test entries and the promql_expr_test entries given.
func runRulesOverExported(t *testing.T, e *env, groups []any, series []metricSeries, keep func(metricSeries) bool, alertTests string, exprTests []any) {
	t.Helper()
	bin, ok, why := support.Tool("promtool", "PROMTOOL")
	if !ok {
		t.Fatal(why)
	}
	dir := filepath.Join(e.dir, "promtool")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ruleFile, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "rules.yaml"), string(ruleFile))
	var b strings.Builder
	// The groups are evaluated in the order given, each at every step: the
	// dashboard's, after the catalog's, reads the ALERTS series the catalog's
	// wrote at the same step (an hour earlier is beyond the query's lookback).
	var order []string
	for _, g := range groups {
		order = append(order, g.(map[string]any)["name"].(string))
	}
	evalOrder, err := json.Marshal(order)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "rule_files: [rules.yaml]\nevaluation_interval: 1h\ngroup_eval_order: %s\ntests:\n  - interval: 1h\n    input_series:\n", evalOrder)
	inputs := 0
	for _, s := range series {
		if !keep(s) {
			continue
		}
		keys := make([]string, 0, len(s.labels))
		for k := range s.labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := []string{`job="kube-state-metrics"`}
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%s", k, strconv.Quote(s.labels[k])))
		}
		// JSON strings are YAML double-quoted scalars, on one line however long.
		text, err := json.Marshal(fmt.Sprintf("%s{%s}", s.name, strings.Join(parts, ", ")))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "      - series: %s\n        values: %q\n", text, s.value+"+0x200") // V+0xN: V held N steps, +Inf and NaN included
		inputs++
	}
	b.WriteString("    alert_rule_test:\n" + alertTests)
	// JSON is YAML: one line, however long its labels.
	exprs, err := json.Marshal(exprTests)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "    promql_expr_test: %s\n", exprs)
	test := filepath.Join(dir, "exported.test.yaml")
	writeFile(t, test, b.String())
	started := time.Now()
	out, err := exec.Command(bin, "test", "rules", test).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules over %d series kube-state-metrics exported (%s): %v\n%s", inputs, test, err, truncate(string(out), 8<<10))
	}
	t.Logf("promtool: the rules over %d exported series fire as expected, and %d dashboard queries show what their panels must (%s)", inputs, len(exprTests), time.Since(started).Round(100*time.Millisecond))
}

// truncate keeps at most n bytes of s, saying how many it dropped.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s... (%d more bytes)", s[:n], len(s)-n)
}

// patchStatus writes status fields through the status subresource, as CDI's
// controllers do.
func (e *env) patchStatus(t testing.TB, apiVersion, kind, namespace, name string, status map[string]any) {
	t.Helper()
	raw, err := yaml.Marshal(map[string]any{"status": status})
	if err != nil {
		t.Fatal(err)
	}
	patch, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client(t, apiVersion, kind, namespace).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("patch status of %s %s/%s: %v", kind, namespace, name, err)
	}
}

// poolDiskTemplate is the worker disk of the committed builtin pool render.
func poolDiskTemplate(t testing.TB) map[string]any {
	t.Helper()
	objs, err := render.LoadObjects(support.Fixture("golden/pool-builtin-declared-class.golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == kmtKind {
			templates := render.Get(o.Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates").([]any)
			return templates[0].(map[string]any)
		}
	}
	t.Fatal("the builtin pool render holds no KubevirtMachineTemplate")
	return nil
}

// metricSeries is one sample line of the Prometheus text format.
type metricSeries struct {
	name   string
	labels map[string]string
	value  string
}

func (s metricSeries) String() string {
	keys := make([]string, 0, len(s.labels))
	for k := range s.labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, truncate(s.labels[k], 128)))
	}
	return fmt.Sprintf("%s{%s} %s", s.name, strings.Join(parts, ","), s.value)
}

func scrape(t testing.TB, port int) []metricSeries {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	series, err := parseText(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	return series
}

// parseText reads the sample lines of the Prometheus text exposition format
// (the label values' escapes \\, \" and \n included).
func parseText(text string) ([]metricSeries, error) {
	var out []metricSeries
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := metricSeries{labels: map[string]string{}}
		i := strings.IndexAny(line, "{ ")
		if i < 0 {
			return nil, fmt.Errorf("unreadable line %q", line)
		}
		s.name, line = line[:i], line[i:]
		if strings.HasPrefix(line, "{") {
			line = line[1:]
			for !strings.HasPrefix(line, "}") {
				eq := strings.Index(line, `="`)
				if eq < 0 {
					return nil, fmt.Errorf("unreadable labels in %q", line)
				}
				key := strings.TrimLeft(line[:eq], ",")
				line = line[eq+2:]
				var b strings.Builder
				for {
					if line == "" {
						return nil, fmt.Errorf("unterminated label value for %s", key)
					}
					c := line[0]
					line = line[1:]
					if c == '"' {
						break
					}
					if c == '\\' && line != "" {
						switch line[0] {
						case 'n':
							b.WriteByte('\n')
						default:
							b.WriteByte(line[0])
						}
						line = line[1:]
						continue
					}
					b.WriteByte(c)
				}
				s.labels[key] = b.String()
				line = strings.TrimPrefix(line, ",")
			}
			line = line[1:]
		}
		s.value = strings.TrimSpace(line)
		out = append(out, s)
	}
	return out, nil
}

// filterSeries are the series of metric carrying every label given.
func filterSeries(series []metricSeries, metric string, labels map[string]string) []metricSeries {
	var out []metricSeries
	for _, s := range series {
		if s.name != metric {
			continue
		}
		ok := true
		for k, v := range labels {
			if s.labels[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

func dumpSeries(series []metricSeries) string {
	var lines []string
	for _, s := range series {
		if strings.HasPrefix(s.name, "kubernetes_worker_image_") {
			lines = append(lines, s.String())
		}
	}
	return strings.Join(lines, "\n")
}

// selector is one metric selector of a rule's expression.
type selector struct {
	text     string
	metric   string
	matchers []matcher
}

type matcher struct {
	label, op, value string
}

func (s selector) matches(labels map[string]string) bool {
	for _, m := range s.matchers {
		v := labels[m.label]
		switch m.op {
		case "=":
			if v != m.value {
				return false
			}
		case "!=":
			if v == m.value {
				return false
			}
		case "=~", "!~":
			matched := regexp.MustCompile("^(?:" + m.value + ")$").MatchString(v)
			if matched != (m.op == "=~") {
				return false
			}
		}
	}
	return true
}

var (
	// A selector's braces hold quoted strings, which may hold braces and
	// commas of their own (a regular expression's {0,61}).
	selectorRE = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[^}"]|"(?:[^"\\]|\\.)*")*)\}`)
	matcherRE  = regexp.MustCompile(`\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)`)
	byRE       = regexp.MustCompile(`\bby\s*\(([^)]*)\)`)
)

// selectors reads the metric selectors of a rule expression (the rules hold
// only name{matchers} selectors, checked here: any other form fails).
func selectors(t testing.TB, expr string) []selector {
	t.Helper()
	var out []selector
	for _, m := range selectorRE.FindAllStringSubmatch(expr, -1) {
		sel := selector{text: m[0], metric: m[1]}
		read := 0
		for _, mm := range matcherRE.FindAllStringSubmatchIndex(m[2], -1) {
			if mm[0] != read {
				t.Fatalf("unreadable matcher %q in %s", m[2][read:mm[0]], expr)
			}
			sel.matchers = append(sel.matchers, matcher{m[2][mm[2]:mm[3]], m[2][mm[4]:mm[5]], m[2][mm[6]:mm[7]]})
			read = mm[1]
		}
		if read != len(m[2]) || len(sel.matchers) == 0 {
			t.Fatalf("unreadable matchers %q in %s", m[2], expr)
		}
		out = append(out, sel)
	}
	if len(out) == 0 {
		t.Fatalf("no selector in %s", expr)
	}
	return out
}

func byLabels(t testing.TB, expr string) []string {
	t.Helper()
	var out []string
	for _, m := range byRE.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(m[1], ",") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// stopProcess stops one process the tier started, by name.
func (e *env) stopProcess(name string) {
	e.mu.Lock()
	procs := append([]*process(nil), e.procs...)
	e.mu.Unlock()
	for _, p := range procs {
		if p.name == name {
			p.stop()
		}
	}
}

// testGoldenRecovery walks docs/runbooks.md's recovery of a Failed golden on
// the real API server, as far as it goes without CDI: a golden the catalog
// installed fails; new pools of its flavor are refused; the runbook's step
// deletes its DataVolume and its PVC (CDI's DataVolume owns the PVC, and the
// garbage collector, which the tier does not run, would delete it); while it
// is gone new pools are refused as absent; an unchanged `helm upgrade` of the
// catalog (what Flux's forced reconcile runs) creates it again, with the same
// name and spec and a new UID; a new pool of the flavor then installs while it
// imports, as CDI's clone waits for its source.
func testGoldenRecovery(t *testing.T, e *env) {
	schematicID, _ := poolDefaults(t)
	const version = "v1.13.0"
	golden := support.GoldenName(schematicID, version)
	values := map[string]any{"images": []any{map[string]any{"schematicID": schematicID, "version": version}}}

	e.createNamespace(t, catalogNamespace)
	cat := e.helm(t, catalogNamespace)
	cat.mustInstall(catalogRelease, render.CatalogChart, values)
	t.Cleanup(func() {
		e.uninstallCatalog(t, cat, catalogRelease)
		e.remove(t, objectRef{dataVolumeVersion, "DataVolume", catalogNamespace, golden})
	})
	before, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, golden)
	if !ok {
		t.Fatalf("the catalog did not create golden %s", golden)
	}
	// The PVC CDI makes for the golden, owned by its DataVolume.
	e.createYAML(t, fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s
  namespace: %s
  ownerReferences:
    - {apiVersion: cdi.kubevirt.io/v1beta1, kind: DataVolume, name: %s, uid: %s, controller: true, blockOwnerDeletion: true}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: replicated
  resources: {requests: {storage: 6Gi}}
`, golden, catalogNamespace, golden, before.GetUID()))
	e.patchStatus(t, dataVolumeVersion, "DataVolume", catalogNamespace, golden, map[string]any{"phase": "Failed", "progress": "N/A"})

	const poolNS = "tenant-recover"
	e.createNamespace(t, poolNS)
	pools := e.helm(t, poolNS)
	poolValues := map[string]any{"cluster": poolCluster, "osImage": map[string]any{"builtin": map[string]any{"version": version}}}
	refused := func(want string) {
		t.Helper()
		if _, err := pools.dryRunInstall("kubernetes-nodes-acme-recover", render.PoolChart, poolValues); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a new pool of the flavor: got %v, want a refusal containing %q", err, want)
		}
	}
	refused(fmt.Sprintf("golden %s in cozy-public failed to import (status.phase Failed)", golden))

	// The runbook: delete the DataVolume, then its PVC if it is left.
	e.deleteOne(t, dataVolumeVersion, "DataVolume", catalogNamespace, golden)
	pvcs := e.client(t, "v1", "PersistentVolumeClaim", catalogNamespace)
	if err := pvcs.Delete(context.Background(), golden, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete the golden's PVC: %v", err)
	}
	// The API server's admission put kubernetes.io/pvc-protection on the claim;
	// kube-controller-manager, which the tier does not run, lifts it once no pod
	// uses the claim. Do what it does.
	if _, err := pvcs.Patch(context.Background(), golden, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("lift the PVC's protection finalizer: %v", err)
	}
	e.waitGone(t, []objectRef{{dataVolumeVersion, "DataVolume", catalogNamespace, golden}, {"v1", "PersistentVolumeClaim", catalogNamespace, golden}})
	refused(fmt.Sprintf("golden %s is absent from cozy-public", golden))

	cat.mustUpgrade(catalogRelease, render.CatalogChart, values)
	after, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, golden)
	if !ok {
		t.Fatalf("an unchanged helm upgrade of the catalog did not create golden %s again", golden)
	}
	if after.GetUID() == before.GetUID() {
		t.Errorf("golden %s kept its UID: it was not created again", golden)
	}
	for _, path := range [][]string{{"spec"}, {"metadata", "annotations"}, {"metadata", "labels"}} {
		b, _, _ := unstructured.NestedFieldNoCopy(before.Object, path...)
		a, _, _ := unstructured.NestedFieldNoCopy(after.Object, path...)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("golden %s: %s is %v after it was created again, was %v", golden, strings.Join(path, "."), a, b)
		}
	}
	if phase, found, _ := unstructured.NestedString(after.Object, "status", "phase"); found {
		t.Errorf("golden %s created again carries status.phase %q; CDI would import it anew", golden, phase)
	}
	rel, err := pools.dryRunInstall("kubernetes-nodes-acme-recover", render.PoolChart, poolValues)
	if err != nil {
		t.Fatalf("a new pool of the flavor while its golden imports again: %v", err)
	}
	if !strings.Contains(rel.Manifest, "name: "+golden) {
		t.Errorf("the new pool does not clone %s:\n%s", golden, rel.Manifest)
	}
}

// testRuleObjectsDryRun sends every rule object the catalog renders (VMRule and
// PrometheusRule, defaults and thresholds, labels, as the platform forwards
// them) through strict server-side dry-run apply against the CRDs controller-gen
// generates from the VictoriaMetrics operator's and prometheus-operator's API
// types; an undeclared field and a number where a duration string belongs are
// refused, so a pass means something.
func testRuleObjectsDryRun(t *testing.T, e *env) {
	e.createNamespace(t, catalogNamespace)
	variants := []map[string]any{
		{"enabled": true},
		{"enabled": true, "ruleKind": "PrometheusRule"},
		{"enabled": true, "goldenFailedFor": "0s", "goldenNotSucceededFor": "1w", "labels": map[string]any{"release": "kube-prometheus-stack"}},
		{"enabled": true, "ruleKind": "PrometheusRule", "goldenFailedFor": "1d", "goldenNotSucceededFor": "2h30m", "runbookURL": "http://docs.internal:8080/runbooks.md", "labels": map[string]any{"example.com/team": "platform"}},
	}
	kinds := map[string]int{}
	for _, v := range variants {
		m, err := support.RenderCatalog(map[string]any{"monitoring": v})
		if err != nil {
			t.Fatal(err)
		}
		d, err := support.RuleObject(m)
		if err != nil {
			t.Fatal(err)
		}
		kinds[d.Kind()]++
		_, problems := e.dryRunApply(t, &render.Manifest{Docs: []render.Doc{d}}, catalogNamespace)
		for _, p := range problems {
			t.Errorf("%s %v: %s", d.Kind(), v, p)
		}
		for name, spoil := range map[string]func(rule map[string]any){
			"an undeclared field": func(rule map[string]any) { rule["severity"] = "critical" },
			"a number for for":    func(rule map[string]any) { rule["for"] = int64(300) },
		} {
			obj := (&unstructured.Unstructured{Object: d.Object}).DeepCopy()
			groups, _, _ := unstructured.NestedSlice(obj.Object, "spec", "groups")
			spoil(groups[0].(map[string]any)["rules"].([]any)[0].(map[string]any))
			if err := unstructured.SetNestedSlice(obj.Object, groups, "spec", "groups"); err != nil {
				t.Fatal(err)
			}
			if err := e.serverSideApply(t, obj, catalogNamespace, true); err == nil {
				t.Errorf("%s with %s passed strict dry-run apply", d.Kind(), name)
			}
		}
	}
	if kinds["VMRule"] != 2 || kinds["PrometheusRule"] != 2 {
		t.Errorf("dry-ran %v, want two of each kind", kinds)
	}
}
