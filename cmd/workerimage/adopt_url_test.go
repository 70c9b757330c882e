package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// tenantPool is an HTTP pool of a tenant of its own, with 0 workers, booting
// version from url.
func tenantPool(tenant, version, url string) string {
	return fmt.Sprintf(`---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kubernetes-nodes-%[1]s-w, namespace: tenant-%[1]s}
spec:
  chart: {spec: {chart: kubernetes-nodes, sourceRef: {kind: HelmRepository, name: cozystack-apps, namespace: cozy-public}}}
  values: {cluster: %[1]s, talos: {version: %[2]s, imageFactoryURL: %[3]q}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: kubernetes-%[1]s-w, namespace: tenant-%[1]s}
status: {replicas: 0}
`, tenant, version, url)
}

// catalogPackageWith is the platform's catalog Package, forwarding
// kubernetesWorkerImage.imageFactoryURL when url is set.
func catalogPackageWith(url string) string {
	values := "{}"
	if url != "" {
		values = fmt.Sprintf("{imageFactoryURL: %q}", url)
	}
	return fmt.Sprintf(`---
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata: {name: cozystack.kubernetes-worker-image}
spec:
  variant: default
  components:
    kubernetes-worker-image: {values: %s}
`, values)
}

// A tenant does not pick the source of a shared golden: two pools booting a
// flavor no golden has from an address of their choice get a catalog entry
// importing from the platform's catalog URL, and are listed with both URLs.
func TestAdoptProposesOnlyThePlatformsCatalogURL(t *testing.T) {
	const evil = "http://169.254.169.254:80/latest"
	fleet, err := os.ReadFile(td("adopt", "fleet.yaml"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name, pkg, want, source string
	}{
		{"no Package", "", report.PublicImageFactoryURL, "the catalog's built-in imageFactoryURL (no Package cozystack.kubernetes-worker-image)"},
		{"a Package without a URL", catalogPackageWith(""), report.PublicImageFactoryURL, "sets no kubernetesWorkerImage.imageFactoryURL"},
		{"the platform's mirror", catalogPackageWith("https://factory.mirror.internal"), "https://factory.mirror.internal", "the platform's kubernetesWorkerImage.imageFactoryURL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := writeTemp(t, "fleet.yaml", string(fleet)+tc.pkg+tenantPool("evil1", "v1.13.2", evil)+tenantPool("evil2", "v1.13.2", evil)+tenantPool("plain", "v1.13.2", tc.want))
			r := adoptOf(t, "-cluster", state)
			assert.Equal(t, tc.want, r.Catalog.URL.Value)
			assert.Contains(t, r.Catalog.URL.Source, tc.source)
			var entry *report.CatalogEntry
			for i := range r.Catalog.Images {
				if r.Catalog.Images[i].Entry.Version == "v1.13.2" {
					entry = &r.Catalog.Images[i]
				}
			}
			require.NotNil(t, entry, "a new entry for v1.13.2")
			assert.Equal(t, report.ChangeNew, entry.Change)
			assert.Empty(t, entry.Entry.ImageFactoryURL, "the entry imports from the catalog's own URL, whatever its pools boot from")
			assert.Equal(t, tc.want, entry.ImportsFrom)
			assert.Equal(t, []report.URLPool{{HelmRelease: "tenant-evil1/kubernetes-nodes-evil1-w", ImageFactoryURL: evil}, {HelmRelease: "tenant-evil2/kubernetes-nodes-evil2-w", ImageFactoryURL: evil}}, entry.OtherURLPools,
				"the pools on another URL are listed with theirs; the one on the catalog's URL is not")
			var pasted map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(r.Catalog.Values), &pasted))
			data, err := json.Marshal(pasted)
			require.NoError(t, err)
			assert.NotContains(t, string(data), "169.254", "the pasted values never carry a pool's URL (only the comment names it)")
			assert.Contains(t, r.Catalog.Values, "# note: its goldens import from "+tc.want+"; pools that boot this flavor from another URL today: tenant-evil1/kubernetes-nodes-evil1-w from "+evil)
			for hr, p := range adoptPools(r) {
				if !strings.HasPrefix(hr, "tenant-evil") {
					continue
				}
				assert.Equal(t, report.OutcomeNeedsEntry, p.Outcome, hr)
				assert.Equal(t, tc.want, p.GoldenImageFactoryURL, hr)
				assert.True(t, p.OtherImageFactoryURL, hr)
			}

			text := cli(t, "adopt", "-cluster", state)
			require.Equal(t, exitOK, text.code, text.stderr)
			assert.Contains(t, text.stdout, "catalog  a new entry imports from "+tc.want)
			assert.Contains(t, text.stdout, "    source    its golden imports from "+tc.want+"; the pool boots from "+evil+" today (talos.imageFactoryURL)")
		})
	}
}
