//go:build integration

package integration

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// testClosedNetworkPage: docs/closed-networks.md's path, step by step, its
// objects and commands as written, on a stock Cozystack (the platform's own
// chart, upstream's ApplicationDefinition, the platform's _cluster in
// cozy-public and the tenant's cozystack-values, nothing for tenant workers)
// whose pool was created through upstream's dashboard form before the page
// (the public factory in its values), released by Flux's helm-controller and
// rolled out by Cluster API. The commands that name the reader's registry run
// against the tier's own registry, under its own CA (the registry and the
// CA file are the only words changed). The Cozystack operator, its
// source-watcher and its ApplicationDefinition controller are the tier's
// stand-ins (cozystackStandIn; the last moves the pools to the
// ApplicationDefinition's chartRef); CDI's Package is a model marked Ready.
func testClosedNetworkPage(t *testing.T, e *env) {
	start := time.Now()
	const ns, cluster = "tenant-closed", "closed"
	const mirror = "https://factory.mirror.internal"
	for _, n := range []string{ns, catalogNamespace, cozySystem} {
		e.createNamespace(t, n)
	}
	e.createWorkloadCluster(t, ns, cluster)
	hc := e.startHelmController(t)
	op := newCozystackStandIn(t, e)
	op.stockCozystack(t)
	op.reconcile(t)
	t.Cleanup(func() {
		op.cleanup(t)
		// Kept on uninstall (helm.sh/resource-policy: keep), as the page says.
		e.remove(t, objectRef{"v1", "ConfigMap", catalogNamespace, tenantDefaultsName})
		schematicID, _ := poolDefaults(t)
		for _, v := range []string{"v1.13.6", "v1.13.7"} {
			e.remove(t, objectRef{dataVolumeVersion, "DataVolume", catalogNamespace, support.GoldenName(schematicID, v)})
		}
	})
	e.createYAML(t, stockCozystackValues(ns))
	t.Cleanup(func() { e.remove(t, objectRef{"v1", "Secret", ns, "cozystack-values"}) })

	// The pool created before: the values upstream's dashboard form wrote
	// for a pool of the example cluster (kubernetes-nodes-beta-web), on this
	// tenant's cluster and class.
	old := "kubernetes-nodes-" + cluster + "-old"
	values := dashboardPoolValues(t)
	values["cluster"], values["storageClass"] = cluster, "replicated"
	body, _ := json.Marshal(values)
	e.createYAML(t, support.CozystackHelmRelease(ns, cluster+"-old", string(body)))
	var released []string
	t.Cleanup(func() { e.removeReleased(t, released...) })
	released = append(released, ns, old)
	oldTemplate := e.releasedAndRolledOut(t, ns, old, 1, 1)
	if url := diskURL(t, e, ns, oldTemplate); !strings.HasPrefix(url, report.PublicImageFactoryURL+"/image/") {
		t.Fatalf("the pool created before imports from %s, want the public factory its values name", url)
	}

	cmds := newPageCommands(t, e)
	host, caFile := e.startRegistry(t)
	dist := filepath.Join(t.TempDir(), "dist")
	// The reader's registry and its CA, and where the archives go, are the
	// tier's: nothing else of a command changes.
	reader := strings.NewReplacer(
		"oci://registry.mirror.internal/", "oci://"+host+"/",
		"--ca-file examples/platform/mirror-ca.pem", "--ca-file "+caFile,
		"ca.crt=examples/platform/mirror-ca.pem", "ca.crt="+caFile,
		"DIST=dist", "DIST="+dist,
	)
	ran := 0
	step := func(heading string, each func(command, out string)) {
		t.Helper()
		for _, b := range support.Blocks(section(t, support.ClosedNetworkPage, heading)) {
			switch b.Lang {
			case "yaml":
				t.Fatalf("%s, %q: a yaml block; the path applies files with its commands", support.ClosedNetworkPage, heading)
			case "sh":
				for _, c := range b.Commands() {
					if r := reader.Replace(c); r != c {
						t.Logf("the page's `%s`, against the tier's registry: `%s`", c, r)
						c = r
					}
					out := cmds.run(t, c)
					ran++
					op.reconcile(t)
					if each != nil {
						each(c, out)
					}
				}
			}
		}
	}

	// 1. Charts into the registry, Flux trusting its CA.
	step(support.ClosedNetworkCharts, nil)
	for _, name := range []string{"kubernetes-worker-image", "kubernetes-nodes-golden", "kubernetes-nodes-rd"} {
		repo, ok := e.get(t, "source.toolkit.fluxcd.io/v1", "OCIRepository", cozySystem, name)
		if !ok || fmt.Sprint(render.Get(repo.Object, "spec.certSecretRef.name")) != "cozystack-addons-ca" {
			t.Errorf("step 1: OCIRepository %s/%s is not stored with certSecretRef cozystack-addons-ca: %v", cozySystem, name, repo)
		}
		op.created = append(op.created, objectRef{"source.toolkit.fluxcd.io/v1", "OCIRepository", cozySystem, name})
	}
	op.created = append(op.created, objectRef{"v1", "Secret", cozySystem, "cozystack-addons-ca"})
	if _, err := os.Stat(filepath.Join(dist, "kubernetes-nodes-"+hc.chart+".tgz")); err != nil {
		t.Errorf("step 1: make package left no pool chart archive: %v", err)
	}

	// 2. The catalog as the operator's Package, once CDI's Package is ready.
	op.applyObjects(t, "cozystack-operator", "apiVersion: "+cozystackAPI+"\nkind: Package\nmetadata: {name: cozystack.kubevirt-cdi}\nspec: {variant: default}\n")
	cdi, _ := e.get(t, cozystackAPI, "Package", "", "cozystack.kubevirt-cdi")
	op.setReady(t, cdi, "True", "ReconciliationSucceeded", "a model of CDI's Package: the tier runs no CDI")
	step(support.ClosedNetworkCatalog, func(c, out string) {
		if strings.HasPrefix(c, "workerimage catalog") && !strings.Contains(out, "\nresult ") {
			t.Errorf("step 2: `%s` printed no result:\n%s", c, out)
		}
	})
	for _, r := range []objectRef{{cozystackAPI, "PackageSource", "", catalogPkg}, {cozystackAPI, "Package", "", catalogPkg}} {
		if !containsRef(op.created, r) {
			op.created = append(op.created, r)
		}
	}
	schematicID, _ := poolDefaults(t)
	for _, v := range []string{"v1.13.6", "v1.13.7"} {
		g := support.GoldenName(schematicID, v)
		dv, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, g)
		if !ok {
			t.Fatalf("step 2: the catalog created no golden %s", g)
		}
		if url := fmt.Sprint(render.Get(dv.Object, "spec.source.http.url")); !strings.HasPrefix(url, mirror+"/image/") {
			t.Errorf("step 2: golden %s imports from %s, want the published mirror %s", g, url, mirror)
		}
		if render.Get(dv.Object, "spec.source.http.certConfigMap") == nil {
			t.Errorf("step 2: golden %s trusts no CA for the mirror", g)
		}
		e.setPhase(t, catalogNamespace, g, "Succeeded")
	}
	published := publishedDefaults(t, e)
	if render.Get(published, "talos.imageFactoryURL") != mirror || render.Get(published, "talos.registryConfig") == nil || render.Get(published, "talos.imageFactoryCA") == nil {
		t.Errorf("step 2: the catalog publishes %v, want the mirror, its CA and the registry's CA", published)
	}

	// 3. rollcheck of the pushed pool chart against what runs.
	step(support.ClosedNetworkRollcheck, func(c, out string) {
		if !strings.Contains(out, "1 pool: 0 roll") {
			t.Errorf("step 3: `%s`: want 1 pool, 0 roll:\n%s", c, out)
		}
	})

	// 4. The takeover, as the install page says, with step 1's
	// OCIRepositories in place of its own; Cozystack's ApplicationDefinition
	// controller then moves the pools to its chartRef.
	for _, heading := range []string{support.CozystackPoolSection, support.CozystackTakeover} {
		for _, b := range support.Blocks(section(t, support.CozystackPage, heading)) {
			switch b.Lang {
			case "yaml":
				objs, err := render.ParseObjects([]byte(b.Text))
				if err != nil {
					t.Fatal(err)
				}
				var kept []string
				for _, o := range objs {
					if o.GetKind() == "OCIRepository" {
						continue
					}
					raw, _ := yaml.Marshal(o.Object)
					kept = append(kept, string(raw))
				}
				op.created = append(op.created, e.applyPageObjects(t, support.Block{Lang: "yaml", Text: strings.Join(kept, "---\n")})...)
				op.reconcile(t)
			case "sh":
				for _, c := range b.Commands() {
					cmds.run(t, c)
					ran++
					op.reconcile(t)
				}
			}
		}
	}
	ours := adChartRef(t, e)
	if ours == cozystackArtifact {
		t.Fatalf("step 4: the ApplicationDefinition still names upstream's %s", ours)
	}
	hc.publish(t, e, ours)
	movePools(t, e, ours)
	if tpl := e.releasedAndRolledOut(t, ns, old, 2, 1); tpl != oldTemplate {
		t.Errorf("step 4: the takeover rolled the pool created before: %s -> %s", oldTemplate, tpl)
	}

	// 5. plan of a new pool shows what it takes (the factory, the installer,
	// the mirrors and the registry's CA, each from the catalog's published
	// defaults, never the CA itself); one created takes it.
	step(support.ClosedNetworkPlan, func(c, out string) {
		published := " of " + report.CatalogChannel + ")\n"
		for _, want := range []string{"disk source       HTTP import from " + mirror + "/image/", "image factory     " + mirror,
			"\ninstaller         registry.mirror.internal/siderolabs/installer/",
			"\nmirrors           docker.io -> https://registry.mirror.internal/v2/docker.io  (the default talos.registryMirrors" + published,
			"\n                  factory.talos.dev -> https://registry.mirror.internal/v2/factory.talos.dev  (the default talos.registryMirrors" + published,
			"\nregistry CAs      registry.mirror.internal  (the default talos.registryConfig" + published} {
			if !strings.Contains(out, want) {
				t.Errorf("step 5: `%s` prints no %q:\n%s", c, want, out)
			}
		}
		if strings.Contains(out, "BEGIN CERTIFICATE") {
			t.Errorf("step 5: `%s` prints a CA:\n%s", c, out)
		}
	})
	created := "kubernetes-nodes-" + cluster + "-new"
	e.createYAML(t, support.CozystackHelmReleaseOf(ours, ns, cluster+"-new", "{cluster: "+cluster+"}"))
	released = append(released, ns, created)
	newTemplate := e.releasedAndRolledOut(t, ns, created, 1, 0)
	if url := diskURL(t, e, ns, newTemplate); !strings.HasPrefix(url, mirror+"/image/") {
		t.Errorf("step 5: the new pool imports from %s, want the published mirror", url)
	}
	md, _ := e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(created))
	var record struct {
		ImageFactoryURL string   `json:"imageFactoryURL"`
		ImageFactoryCA  bool     `json:"imageFactoryCA"`
		FromCatalog     []string `json:"fromCatalog"`
	}
	if err := json.Unmarshal([]byte(md.GetAnnotations()[createdWith]), &record); err != nil || record.ImageFactoryURL != mirror || !record.ImageFactoryCA || !slices.Contains(record.FromCatalog, "imageFactoryURL") {
		t.Errorf("step 5: the new pool records %q (%v), want the published factory and its CA, from the catalog", md.GetAnnotations()[createdWith], err)
	}
	e.talosConfigHolds(t, ns, poolName(created), "image: registry.mirror.internal/siderolabs/installer/", "https://registry.mirror.internal/v2/docker.io", registryCA(t))

	// 6. The published mirrors, registry CA and installer on the running
	// pool, now: nothing rolls.
	// The pool's own values name upstream's installer repository (the form
	// writes it), which wins over the published one: its pulls go through
	// the published mirror of factory.talos.dev.
	step(support.ClosedNetworkMirrorsNow, nil)
	e.talosConfigHolds(t, ns, poolName(old), "image: factory.talos.dev/installer/", "https://registry.mirror.internal/v2/factory.talos.dev", "https://registry.mirror.internal/v2/docker.io", registryCA(t))
	md, _ = e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(old))
	if tpl := rollout.RunningTemplate(md.Object); tpl != oldTemplate {
		t.Errorf("step 6: the pool created before rolled: %s -> %s", oldTemplate, tpl)
	}

	// 7. The pool created before, onto the mirror with its CA, one re-image.
	step(support.ClosedNetworkMoveBefore, nil)
	hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", ns, old)
	if render.Get(hr.Object, "spec.values.talos.imageFactoryURL") != mirror || render.Get(hr.Object, "spec.values.talos.imageFactoryCA") == nil {
		t.Errorf("step 7: the pool created before has talos %v, want the mirror and its CA", render.Get(hr.Object, "spec.values.talos"))
	}
	md, _ = e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(old))
	moved := rollout.RunningTemplate(md.Object)
	if moved == oldTemplate || !strings.HasPrefix(diskURL(t, e, ns, moved), mirror+"/image/") {
		t.Errorf("step 7: the pool created before runs %s (was %s), importing from %s", moved, oldTemplate, diskURL(t, e, ns, moved))
	}
	if st := rollout.MachineDeploymentRolledOut(md.Object, moved, 1); !st.RolledOut {
		t.Errorf("step 7: the rollout ended before the pool rolled out: %s", st.Says)
	}
	if newMD, _ := e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(created)); rollout.RunningTemplate(newMD.Object) != newTemplate {
		t.Errorf("step 7: the new pool, on the mirror already, moved")
	}

	// Day 2: a Talos fix (v1.13.8) across the closed network.
	const fix = "v1.13.8"
	fixGolden := support.GoldenName(schematicID, fix)
	t.Cleanup(func() {
		e.remove(t, objectRef{dataVolumeVersion, "DataVolume", catalogNamespace, fixGolden})
	})
	templates := func() map[string]string {
		out := map[string]string{}
		for _, r := range []string{old, created} {
			md, _ := e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(r))
			out[r] = rollout.RunningTemplate(md.Object)
		}
		return out
	}
	before := templates()

	// 8. The fix into the catalog: its golden imports from the published
	// mirror, trusting its CA; the others are kept; no pool moves.
	step(support.ClosedNetworkFix, func(c, out string) {
		if strings.HasSuffix(c, "talos-fix.yaml") && (!strings.Contains(out, "\ncreates  "+fixGolden+"\n") || strings.Contains(out, "\nremoves ")) {
			t.Errorf("step 8: `%s` does not create %s alone, or removes something:\n%s", c, fixGolden, out)
		}
	})
	dv, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, fixGolden)
	if !ok {
		t.Fatalf("step 8: the catalog created no golden %s", fixGolden)
	}
	if url := fmt.Sprint(render.Get(dv.Object, "spec.source.http.url")); !strings.HasPrefix(url, mirror+"/image/") || render.Get(dv.Object, "spec.source.http.certConfigMap") == nil {
		t.Errorf("step 8: golden %s imports from %s (certConfigMap %v), want the published mirror and its CA", fixGolden, url, render.Get(dv.Object, "spec.source.http.certConfigMap"))
	}
	if published := publishedDefaults(t, e); render.Get(published, "talos.imageFactoryURL") != mirror || render.Get(published, "talos.registryMirrors") == nil || render.Get(published, "talos.imageFactoryCA") == nil {
		t.Errorf("step 8: a file of images alone changed what is published: %v", published)
	}
	e.setPhase(t, catalogNamespace, fixGolden, "Succeeded") // as CDI's import ends
	if now := templates(); fmt.Sprint(now) != fmt.Sprint(before) {
		t.Errorf("step 8: pools moved: %v -> %v", before, now)
	}

	// 9. New pools take the fix: published, recorded at creation; the
	// running pools stay on what they run.
	step(support.ClosedNetworkNewDefault, func(c, out string) {
		if strings.HasPrefix(c, "workerimage plan") && (!strings.Contains(out, "/"+fix+"/openstack-amd64.raw.xz") || !strings.Contains(out, "the default talos.version of "+report.CatalogChannel)) {
			t.Errorf("step 9: `%s` does not give a new pool %s from the catalog's published defaults:\n%s", c, fix, out)
		}
	})
	if v := render.Get(publishedDefaults(t, e), "talos.version"); v != fix {
		t.Errorf("step 9: the catalog publishes talos.version %v, want %s", v, fix)
	}
	if now := templates(); fmt.Sprint(now) != fmt.Sprint(before) {
		t.Errorf("step 9: publishing the release new pools take moved running pools: %v -> %v", before, now)
	}
	fresh := "kubernetes-nodes-" + cluster + "-fix"
	e.createYAML(t, support.CozystackHelmReleaseOf(ours, ns, cluster+"-fix", "{cluster: "+cluster+", osImage: {builtin: {}}}"))
	released = append(released, ns, fresh)
	freshTemplate := e.releasedAndRolledOut(t, ns, fresh, 1, 0)
	kmt, _ := e.get(t, kmtAPIVersion, kmtKind, ns, freshTemplate)
	if g := render.Get(kmt.Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.source.pvc.name"); g != fixGolden {
		t.Errorf("step 9: a new clone pool clones %v, want %s", g, fixGolden)
	}
	md, _ = e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(fresh))
	var freshRecord struct {
		Version     string   `json:"version"`
		FromCatalog []string `json:"fromCatalog"`
	}
	if err := json.Unmarshal([]byte(md.GetAnnotations()[createdWith]), &freshRecord); err != nil || freshRecord.Version != fix || !slices.Contains(freshRecord.FromCatalog, "version") {
		t.Errorf("step 9: the new pool records %q (%v), want version %s from the catalog", md.GetAnnotations()[createdWith], err, fix)
	}

	// 10. The fleet onto the fix, in waves: both HTTP pools on v1.13.6 move,
	// their images checked on the mirror first; the new pool is on it.
	step(support.ClosedNetworkFleetFix, func(c, out string) {
		if !strings.Contains(c, "--apply") && !strings.Contains(out, "can start: 2 pools") {
			t.Errorf("step 10: `%s` does not start the 2 pools on v1.13.6:\n%s", c, out)
		}
	})
	if asked := imageFactory(t).askedFor("/" + fix + "/openstack-amd64.raw.xz"); len(asked) == 0 {
		t.Errorf("step 10: the rollout asked the mirror for no %s image before patching", fix)
	}
	for _, r := range []string{old, created} {
		hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", ns, r)
		if v := render.Get(hr.Object, "spec.values.talos.version"); v != fix {
			t.Errorf("step 10: %s has talos.version %v, want %s", r, v, fix)
		}
		if v := render.Get(hr.Object, "spec.values.maxSurge"); v != nil {
			t.Errorf("step 10: %s keeps a maxSurge %v the rollout wrote", r, v)
		}
		md, _ := e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(r))
		tpl := rollout.RunningTemplate(md.Object)
		if url := diskURL(t, e, ns, tpl); tpl == before[r] || !strings.HasPrefix(url, mirror+"/image/"+schematicID+"/"+fix+"/") {
			t.Errorf("step 10: %s runs %s (was %s), importing %s", r, tpl, before[r], url)
		}
	}
	if md, _ := e.get(t, capiAPIVersion, "MachineDeployment", ns, poolName(fresh)); rollout.RunningTemplate(md.Object) != freshTemplate {
		t.Errorf("step 10: the new pool, on the fix already, moved")
	}

	// 11. The old goldens retired: safe to delete by pins, retired, then
	// deleted by Helm; the fix's golden stays.
	step(support.ClosedNetworkRetire, func(c, out string) {
		if c == "workerimage pins" {
			_, rest, _ := strings.Cut(out, "unused goldens (safe to delete):\n")
			unused := ""
			for _, line := range strings.SplitAfter(rest, "\n") {
				if !strings.HasPrefix(line, "  ") {
					break
				}
				unused += line
			}
			for _, v := range []string{"v1.13.6", "v1.13.7"} {
				if !strings.Contains(unused, support.GoldenName(schematicID, v)) {
					t.Errorf("step 11: pins does not call %s safe to delete:\n%s", v, out)
				}
			}
			if strings.Contains(unused, fixGolden) {
				t.Errorf("step 11: pins calls the golden new pools take safe to delete:\n%s", out)
			}
		}
	})
	for _, v := range []string{"v1.13.6", "v1.13.7"} {
		if _, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, support.GoldenName(schematicID, v)); ok {
			t.Errorf("step 11: golden %s is still there", support.GoldenName(schematicID, v))
		}
	}
	if _, ok := e.get(t, dataVolumeVersion, "DataVolume", catalogNamespace, fixGolden); !ok {
		t.Errorf("step 11: the golden of the fix is gone")
	}
	t.Logf("%s: %d commands and the install page's takeover run as written, in %s", support.ClosedNetworkPage, ran, time.Since(start).Round(100*time.Millisecond))
}

// dashboardPoolValues are the values of a pool Cozystack's dashboard form
// created before the takeover: the example cluster's kubernetes-nodes-beta-web.
func dashboardPoolValues(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(support.Path("examples", "cluster-state.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := render.ParseObjects(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "HelmRelease" && o.GetNamespace() == "tenant-beta" && o.GetName() == "kubernetes-nodes-beta-web" {
			values, _ := render.Get(o.Object, "spec.values").(map[string]any)
			if render.Get(values, "talos.imageFactoryURL") != report.PublicImageFactoryURL {
				t.Fatalf("the example's kubernetes-nodes-beta-web holds %v: not the dashboard form's values, with the public factory", values)
			}
			return values
		}
	}
	t.Fatal("the example cluster holds no HelmRelease tenant-beta/kubernetes-nodes-beta-web")
	return nil
}

// movePools is what Cozystack's ApplicationDefinition controller does when
// the ApplicationDefinition's chartRef changes: every KubernetesNodes
// HelmRelease gets it.
func movePools(t *testing.T, e *env, artifact string) {
	t.Helper()
	list, err := e.client(t, fleet.HelmReleaseAPI, "HelmRelease", "").List(t.Context(), metav1.ListOptions{LabelSelector: "apps.cozystack.io/application.kind=KubernetesNodes"})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"chartRef": map[string]any{"kind": "ExternalArtifact", "name": artifact, "namespace": cozySystem}}})
	for _, hr := range list.Items {
		if _, err := e.client(t, fleet.HelmReleaseAPI, "HelmRelease", hr.GetNamespace()).Patch(t.Context(), hr.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: "cozystack-controller"}); err != nil {
			t.Fatalf("move %s/%s to %s: %v", hr.GetNamespace(), hr.GetName(), artifact, err)
		}
	}
}

// diskURL is the HTTP source of the worker disk of a pool's template.
func diskURL(t *testing.T, e *env, namespace, template string) string {
	t.Helper()
	kmt, ok := e.get(t, kmtAPIVersion, kmtKind, namespace, template)
	if !ok {
		t.Fatalf("no %s %s/%s", kmtKind, namespace, template)
	}
	return fmt.Sprint(render.Get(kmt.Object, "spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates.0.spec.source.http.url"))
}

// publishedDefaults is what the catalog publishes now.
func publishedDefaults(t *testing.T, e *env) map[string]any {
	t.Helper()
	cm, ok := e.get(t, "v1", "ConfigMap", catalogNamespace, tenantDefaultsName)
	if !ok {
		t.Fatalf("no ConfigMap %s/%s", catalogNamespace, tenantDefaultsName)
	}
	text, _, _ := unstructured.NestedString(cm.Object, "data", "values.json")
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("ConfigMap %s: values.json: %v", tenantDefaultsName, err)
	}
	return out
}

// releasedAndRolledOut waits until helm-controller has released the pool's
// HelmRelease at generation and Cluster API has rolled its MachineDeployment
// out with workers (given their replicas, as the autoscaler would, once
// released at generation 1), and returns the template it runs.
func (e *env) releasedAndRolledOut(t *testing.T, namespace, release string, generation, workers int64) string {
	t.Helper()
	waitFor(t, 90*time.Second, "helm-controller released "+namespace+"/"+release, func() string {
		hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", namespace, release)
		if ready, failed, says := rollout.HelmReleaseStatus(hr.Object, generation); !ready {
			if failed != "" {
				t.Fatalf("helm-controller's release of %s/%s: %s", namespace, release, failed)
			}
			return says
		}
		return ""
	})
	md := poolName(release)
	if generation == 1 && workers > 0 {
		body, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": workers}})
		if _, err := e.client(t, capiAPIVersion, "MachineDeployment", namespace).Patch(t.Context(), md, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			t.Fatalf("replicas of %s/%s: %v", namespace, md, err)
		}
	}
	var template string
	waitFor(t, 90*time.Second, namespace+"/"+md+" rolled out", func() string {
		obj, _ := e.get(t, capiAPIVersion, "MachineDeployment", namespace, md)
		template = rollout.RunningTemplate(obj.Object)
		if st := rollout.MachineDeploymentRolledOut(obj.Object, template, workers); !st.RolledOut {
			return st.Says
		}
		return ""
	})
	return template
}

// talosConfigHolds waits until the pool's TalosConfigTemplate, as its
// talos-config Job applied it, holds each of wants in its machine config,
// and returns that machine config.
func (e *env) talosConfigHolds(t *testing.T, namespace, name string, wants ...string) string {
	t.Helper()
	var data string
	waitFor(t, 60*time.Second, "TalosConfigTemplate "+namespace+"/"+name+" holding "+strings.Join(wants, ", "), func() string {
		tct, ok := e.get(t, "bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", namespace, name)
		if !ok {
			return "not there yet"
		}
		data = fmt.Sprint(render.Get(tct.Object, "spec.template.spec.data"))
		for _, w := range wants {
			if !strings.Contains(data, w) {
				return "no " + w + " yet"
			}
		}
		return ""
	})
	return data
}

// registryCA is the registry CA examples/closed-network/catalog.yaml
// publishes, as a worker's machine config carries it (Talos reads tls.ca as
// the PEM, base64-encoded).
func registryCA(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(support.Path("examples", "platform", "mirror-ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw)
}
