//go:build integration

package integration

import (
	"encoding/base64"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testPublishedMirrorsNow: the closed-network page's step that brings the
// catalog's published registry mirrors and installer to running pools without
// waiting for a platform upgrade, run as written against a pool Flux's
// helm-controller released and Cluster API rolled out. The catalog publishes
// one mirror; the pool's TalosConfigTemplate carries it. The catalog then
// publishes another mirror, its CA and another installer: the page's command makes
// helm-controller upgrade the release once more, with its chart and values
// unchanged; the pool's talos-config Job writes the TalosConfigTemplate
// again, under its name, with the new mirror, CA and installer, and no template
// name, MachineDeployment generation or Machine moves.
func testPublishedMirrorsNow(t *testing.T, e *env) {
	const ns, cluster, app = "tenant-mirrors", "mirrors", "mirrors-workers"
	release := support.CozystackReleasePrefix + app
	pool := poolName(release)
	schematicID, version := poolDefaults(t)
	for _, n := range []string{ns, catalogNamespace} {
		e.createNamespace(t, n)
	}
	e.createWorkloadCluster(t, ns, cluster)
	e.startHelmController(t)

	// The catalog publishes what the page's step 2 publishes: a registry
	// mirror and the installer repository (no golden: this step is about
	// the machine config).
	cat := e.helm(t, catalogNamespace)
	installed := false
	publish := func(mirror, installer, registryCA string) {
		t.Helper()
		registries := map[string]any{"mirrors": map[string]any{"docker.io": map[string]any{"endpoints": []any{mirror}}}}
		if registryCA != "" {
			registries["config"] = map[string]any{mirror: map[string]any{"tls": map[string]any{"ca": registryCA}}}
		}
		values := map[string]any{
			"images":        []any{},
			"tenantWorkers": map[string]any{"talos": map[string]any{"installerRepository": installer}},
			"registries":    registries,
		}
		if installed {
			cat.mustUpgrade(catalogRelease, render.CatalogChart, values)
			return
		}
		cat.mustInstall(catalogRelease, render.CatalogChart, values)
		installed = true
	}
	const (
		firstMirror, firstInstaller = "https://registry-a.mirror.internal/v2/docker.io", "registry-a.mirror.internal/siderolabs/installer"
		nextMirror, nextInstaller   = "https://registry-b.mirror.internal/v2/docker.io", "registry-b.mirror.internal/siderolabs/installer"
	)
	publish(firstMirror, firstInstaller, "")
	t.Cleanup(func() { e.uninstallCatalog(t, cat, catalogRelease) })

	e.createYAML(t, stockCozystackValues(ns))
	t.Cleanup(func() { e.remove(t, objectRef{"v1", "Secret", ns, "cozystack-values"}) })
	e.createYAML(t, cozystackHelmRelease(ns, app, "{cluster: "+cluster+"}"))
	t.Cleanup(func() { e.removeReleased(t, ns, release) })
	e.releasedAndRolledOut(t, ns, release, 1, 1)

	// running is what must not move, read from the cluster: the template the
	// MachineDeployment runs, its generation, and its Machines.
	running := func() string {
		t.Helper()
		md, _ := e.get(t, capiAPIVersion, "MachineDeployment", ns, pool)
		machines, err := e.client(t, capiAPIVersion, "Machine", ns).List(t.Context(), metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/deployment-name=" + pool})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range machines.Items {
			names = append(names, m.GetName()+" "+string(m.GetUID()))
		}
		sort.Strings(names)
		return fmt.Sprintf("template %s, MachineDeployment generation %d, Machines %v", rollout.RunningTemplate(md.Object), md.GetGeneration(), names)
	}
	first := e.talosConfigHolds(t, ns, pool, firstMirror)
	wantInstall := firstInstaller + "/" + schematicID + ":" + version
	if !strings.Contains(first, wantInstall) {
		t.Errorf("the TalosConfigTemplate of %s installs no %s:\n%s", pool, wantInstall, first)
	}
	before := running()
	hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", ns, release)
	generation := hr.GetGeneration()

	// The catalog publishes another mirror and installer: nothing renders the
	// pool, so nothing reaches it, until the page's step.
	raw, err := os.ReadFile(support.Path("examples", "platform", "mirror-ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	publish(nextMirror, nextInstaller, string(raw))
	cmds := newPageCommands(t, e)
	start := time.Now()
	ran := 0
	for _, b := range support.Blocks(section(t, support.ClosedNetworkPage, support.ClosedNetworkMirrorsNow)) {
		if b.Lang != "sh" {
			continue
		}
		for _, c := range b.Commands() {
			cmds.run(t, c)
			ran++
		}
	}
	if ran != 1 {
		t.Fatalf("%s, %q: %d commands, want the one that asks for every pool's render", support.ClosedNetworkPage, support.ClosedNetworkMirrorsNow, ran)
	}
	hr, _ = e.get(t, fleet.HelmReleaseAPI, "HelmRelease", ns, release)
	forceAt := hr.GetAnnotations()["reconcile.fluxcd.io/forceAt"]
	if forceAt == "" || hr.GetAnnotations()["reconcile.fluxcd.io/requestedAt"] != forceAt {
		t.Fatalf("after the page's command, %s/%s has annotations %v: want reconcile.fluxcd.io/forceAt and requestedAt, the same value", ns, release, hr.GetAnnotations())
	}
	waitFor(t, 60*time.Second, "helm-controller's forced upgrade of "+release, func() string {
		hr, _ := e.get(t, fleet.HelmReleaseAPI, "HelmRelease", ns, release)
		if handled := fmt.Sprint(render.Get(hr.Object, "status.lastHandledForceAt")); handled != forceAt {
			return "status.lastHandledForceAt is " + handled
		}
		if ready, failed, says := rollout.HelmReleaseStatus(hr.Object, generation); !ready {
			if failed != "" {
				t.Fatalf("helm-controller's forced upgrade of %s/%s: %s", ns, release, failed)
			}
			return says
		}
		return ""
	})
	next := e.talosConfigHolds(t, ns, pool, nextMirror)
	t.Logf("the page's step took %s to the TalosConfigTemplate's new content", time.Since(start).Round(100*time.Millisecond))
	if want := nextInstaller + "/" + schematicID + ":" + version; !strings.Contains(next, want) {
		t.Errorf("after the page's step the TalosConfigTemplate of %s installs no %s:\n%s", pool, want, next)
	}
	// Talos reads a registry's tls.ca as the PEM, base64-encoded.
	if want := base64.StdEncoding.EncodeToString(raw); !strings.Contains(next, want) {
		t.Errorf("after the page's step the TalosConfigTemplate of %s does not trust the published registry CA (examples/platform/mirror-ca.pem, base64-encoded):\n%s", pool, next)
	}
	if strings.Contains(next, firstMirror) {
		t.Errorf("after the page's step the TalosConfigTemplate of %s still names the mirror no longer published, %s", pool, firstMirror)
	}
	hr, _ = e.get(t, fleet.HelmReleaseAPI, "HelmRelease", ns, release)
	if hr.GetGeneration() != generation {
		t.Errorf("the page's step changed the HelmRelease's spec (generation %d -> %d): it should ask for a render, not write values", generation, hr.GetGeneration())
	}
	if deployed, history := releases(hr); deployed != 2 {
		t.Errorf("helm-controller's history of %s after the page's step: %v, want the install and one upgrade", release, history)
	}
	if after := running(); after != before {
		t.Errorf("the page's step moved the running pool:\nbefore: %s\nafter:  %s", before, after)
	} else {
		t.Logf("the pool kept %s", after)
	}
}
