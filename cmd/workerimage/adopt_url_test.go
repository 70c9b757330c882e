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

// catalogPackageWith is the catalog's Package with imageFactoryURL in its
// values when url is set.
func catalogPackageWith(url string) string {
	values := "{}"
	if url != "" {
		values = fmt.Sprintf("{imageFactoryURL: %q}", url)
	}
	return catalogPackageOf(values)
}

// catalogPackageOf is the catalog's Package holding values (a YAML flow map).
func catalogPackageOf(values string) string {
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
		{"no Package", "", report.PublicImageFactoryURL, "the catalog chart's built-in factory: the cluster's catalog values set neither imageFactoryURL nor tenantWorkers.talos.imageFactoryURL"},
		{"a Package without a URL", catalogPackageWith(""), report.PublicImageFactoryURL, "the catalog chart's built-in factory: the cluster's catalog values set neither imageFactoryURL nor tenantWorkers.talos.imageFactoryURL"},
		{"the Package's mirror", catalogPackageWith("https://factory.mirror.internal"), "https://factory.mirror.internal", "the catalog's imageFactoryURL, spec.components.kubernetes-worker-image.values.imageFactoryURL of Package cozystack.kubernetes-worker-image"},
		{"the platform's mirror", catalogPackageWith("https://factory.mirror.internal") + platformRecord(t, map[string]any{"kubernetesWorkerImage": map[string]any{"imageFactoryURL": "https://factory.mirror.internal"}}),
			"https://factory.mirror.internal", "the platform's kubernetesWorkerImage.imageFactoryURL, which it forwards into the Package cozystack.kubernetes-worker-image"},
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

// publishedFactory is the catalog's published defaults giving new pools
// the Image Factory url, as the catalog renders them.
func publishedFactory(url string) string {
	return `---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubernetes-worker-image-tenant-defaults, namespace: cozy-public}
data:
  values.json: '{"talos":{"imageFactoryURL":"` + url + `"}}'
`
}

// adopt says of each catalog entry whose goldens import from another Image
// Factory than the one new pools are given: for goldens it creates (a new
// entry, an added class), the key that makes them import from there; for
// the goldens it keeps, that they stay as imported. The factory compared is
// the one the catalog publishes, or where the platform's release holds the
// catalog's values, the one its _cluster gives.
func TestAdoptSaysWhichEntriesImportFromAnotherFactory(t *testing.T) {
	r := adoptOf(t, "-cluster", stockState)
	require.NotNil(t, r.Catalog.TenantFactory)
	assert.Equal(t, report.Sourced{Value: "https://factory.mirror.internal", Source: "the catalog publishes it for new pools: talos.imageFactoryURL of ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults"}, *r.Catalog.TenantFactory)
	notes := map[string]string{}
	for _, e := range r.Catalog.Images {
		notes[e.Entry.Version] = e.FactoryNote
	}
	// The Package sets no imageFactoryURL: the new entry imports from the
	// factory the catalog publishes, as new pools do, and says nothing.
	assert.Equal(t, "https://factory.mirror.internal", r.Catalog.URL.Value)
	assert.Empty(t, notes["v1.13.4"])
	for _, v := range []string{"v1.13.5", "v1.13.6"} {
		assert.Equal(t, "its goldens were imported from https://factory.talos.dev, not from https://factory.mirror.internal, the Image Factory new pools are given; a golden's source never changes, and pools clone it as it is", notes[v])
	}

	// The Package's own imageFactoryURL on the public factory: the new entry
	// imports from there and says which key to change.
	onPublic := writeTemp(t, "cluster.yaml", strings.Replace(mustRead(t, stockState), "        storageClass: replicated\n        images:\n", "        imageFactoryURL: https://factory.talos.dev\n        storageClass: replicated\n        images:\n", 1))
	r = adoptOf(t, "-cluster", onPublic)
	for _, e := range r.Catalog.Images {
		notes[e.Entry.Version] = e.FactoryNote
	}
	assert.Equal(t, "its goldens import from https://factory.talos.dev (the catalog's imageFactoryURL, spec.components.kubernetes-worker-image.values.imageFactoryURL of Package cozystack.kubernetes-worker-image), not from https://factory.mirror.internal, the Image Factory new pools are given: for them to import from there, set spec.components.kubernetes-worker-image.values.imageFactoryURL of Package cozystack.kubernetes-worker-image to https://factory.mirror.internal before applying", notes["v1.13.4"])
	assert.Contains(t, r.Catalog.Values, "\n          # note: its goldens import from https://factory.talos.dev (the catalog's imageFactoryURL")
	text := cli(t, "adopt", "-cluster", stockState).stdout
	assert.Contains(t, text, "\ntenants  new pools are given the Image Factory https://factory.mirror.internal  (the catalog publishes it for new pools: talos.imageFactoryURL of ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults); an entry importing from another says so\n")

	// The catalog's imageFactoryURL on the mirror: the new entry imports
	// from it and says nothing; the kept ones still say where they came from.
	onMirror := writeTemp(t, "cluster.yaml", strings.Replace(mustRead(t, stockState), "        storageClass: replicated\n        images:\n", "        imageFactoryURL: https://factory.mirror.internal\n        storageClass: replicated\n        images:\n", 1))
	r = adoptOf(t, "-cluster", onMirror)
	assert.Equal(t, "https://factory.mirror.internal", r.Catalog.URL.Value)
	for _, e := range r.Catalog.Images {
		if e.Change == report.ChangeNew {
			assert.Empty(t, e.FactoryNote, e.Entry.Version)
			assert.Empty(t, e.Entry.ImageFactoryURL)
		} else {
			assert.NotEmpty(t, e.FactoryNote, e.Entry.Version)
		}
	}

	// An added class: its golden imports as its flavor's did.
	fleet := mustRead(t, td("adopt", "fleet.yaml"))
	r = adoptOf(t, "-cluster", writeTemp(t, "fleet.yaml", fleet+publishedFactory("https://factory.mirror.internal")))
	for _, e := range r.Catalog.Images {
		if e.Change == report.ChangeClassesAdded {
			assert.Equal(t, "its goldens import from https://factory.talos.dev, as its golden "+goldenName("v1.13.6")+" was, not from https://factory.mirror.internal, the Image Factory new pools are given; the goldens added for fast import from https://factory.talos.dev too (one flavor has one source)", e.FactoryNote)
		}
	}

	// Nothing published: nothing to compare with.
	r = adoptOf(t, "-cluster", td("adopt", "fleet.yaml"))
	assert.Nil(t, r.Catalog.TenantFactory)
	for _, e := range r.Catalog.Images {
		assert.Empty(t, e.FactoryNote, e.Entry.Version)
	}

	// The platform's release: its _cluster factory, its key.
	withRecord := writeTemp(t, "cluster.yaml", mustRead(t, stockState)+platformRecord(t, map[string]any{
		"kubernetesWorkerImage": map[string]any{"storageClass": "replicated"},
		"tenantWorkers":         map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.platform.internal"}},
	}))
	r = adoptOf(t, "-cluster", withRecord)
	assert.Equal(t, "https://factory.platform.internal", r.Catalog.TenantFactory.Value)
	for _, e := range r.Catalog.Images {
		if e.Change == report.ChangeNew {
			assert.Contains(t, e.FactoryNote, "set kubernetesWorkerImage.imageFactoryURL in the platform's values to https://factory.platform.internal before applying")
		}
	}
}

// Where the catalog chart refuses the cluster's catalog values, a new entry
// is said to import from their own imageFactoryURL, and the source says the
// chart refused them (catalog shows why); the neighbour, values it renders,
// names the Package's key.
func TestAdoptNewEntryURLWhereTheChartRefusesTheValues(t *testing.T) {
	fleet := mustRead(t, td("adopt", "fleet.yaml"))
	r := adoptOf(t, "-cluster", writeTemp(t, "fleet.yaml", fleet+catalogPackageOf(`{imageFactoryURL: "https://factory.mirror.internal", storage: "not a size"}`)))
	assert.Equal(t, report.Sourced{Value: "https://factory.mirror.internal", Source: "the cluster's catalog values' imageFactoryURL, else the catalog chart's default: the chart refuses those values (workerimage catalog shows why)"}, r.Catalog.URL)
	r = adoptOf(t, "-cluster", writeTemp(t, "fleet.yaml", fleet+catalogPackageOf(`{imageFactoryURL: "https://factory.mirror.internal", storage: 8Gi}`)))
	assert.Equal(t, "the catalog's imageFactoryURL, spec.components.kubernetes-worker-image.values.imageFactoryURL of Package cozystack.kubernetes-worker-image", r.Catalog.URL.Source)
	assert.Equal(t, "22Gi", r.Savings.GoldenBytesToAdd, "the new entry's two goldens at the Package's 8Gi, as the chart resolves it, and an added class at its flavor's 6Gi")
}
