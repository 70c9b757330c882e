package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// rolloutFixture is the example cluster as the pool chart deploys it
// (deployedState), settled as its controllers leave it (settled), with the
// golden of the next Talos patch imported
// (testdata/rollout/golden-v1.13.7.yaml): a fleet rollout can move. It is
// committed for the docs' examples, and rewritten by `make golden`.
var rolloutFixture = filepath.Join("testdata", "rollout", "cluster.yaml")

func rolloutState(t *testing.T) string {
	t.Helper()
	next, err := os.ReadFile(filepath.Join("testdata", "rollout", "golden-v1.13.7.yaml"))
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString("# The example cluster as the pool chart deploys it (testdata/rollcheck/deployed.yaml),\n")
	b.WriteString("# each HelmRelease released and each MachineDeployment rolled out as helm-controller\n")
	b.WriteString("# and Cluster API leave them, and the golden of testdata/rollout/golden-v1.13.7.yaml.\n")
	b.WriteString("# Rewritten by `make golden`.\n")
	for _, doc := range render.SplitDocuments(deployedState(t)) {
		b.WriteString("---\n" + settled(t, doc))
	}
	b.WriteString("---\n" + string(next))
	return b.String()
}

// settled is a document of the deployed cluster as its controller leaves
// it once done: a HelmRelease at generation 1 with the UID the API server
// gave it (fixtureUID), installed as Flux's helm-controller (v1.4.3, in the
// tier) writes it (helmControllerInstalled); a MachineDeployment at
// generation 1, observed, every worker updated. Other documents stay as
// they are.
func settled(t *testing.T, doc string) string {
	t.Helper()
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
	switch obj["kind"] {
	case "HelmRelease":
		meta := obj["metadata"].(map[string]any)
		meta["generation"] = 1
		meta["uid"] = fixtureUID(fmt.Sprint(meta["namespace"], "/", meta["name"]))
		meta["finalizers"] = []any{"finalizers.fluxcd.io"}
		obj["status"] = helmControllerInstalled(t, obj)
	case "MachineDeployment":
		obj["metadata"].(map[string]any)["generation"] = 1
		status, _ := obj["status"].(map[string]any)
		if status == nil {
			return doc
		}
		status["observedGeneration"] = 1
		status["updatedReplicas"] = status["replicas"]
		status["availableReplicas"] = status["readyReplicas"]
	default:
		return doc
	}
	text, err := yaml.Marshal(obj)
	require.NoError(t, err)
	return string(text)
}

// fixtureUID is the UID an API server gave the object named id: a UUID,
// the same at every rewrite of the fixture.
func fixtureUID(id string) string {
	h := sha256.Sum256([]byte(id))
	x := hex.EncodeToString(h[:16])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

func TestRolloutFixtureIsCurrent(t *testing.T) {
	got := rolloutState(t)
	if *support.Update {
		require.NoError(t, os.WriteFile(rolloutFixture, []byte(got), 0o644))
	}
	want, err := os.ReadFile(rolloutFixture)
	require.NoError(t, err, "run `make golden` deliberately")
	require.Equal(t, string(want), got, "%s is not the deployed example with the v1.13.7 golden: run `make golden` deliberately", rolloutFixture)
}

// fixtureArtifact is the digest of the pool chart's archive the fixtures'
// ExternalArtifact serves (source-controller's sha256 of the tarball): any
// fixed one does, as no fixture serves the archive.
const fixtureArtifact = "281a82f8d047ff97573f7472a00792644f31cc1c734bfb8b0ed06d341b5ee788"

// helmControllerInstalled is the status Flux's helm-controller writes once
// it installed hr at generation 1, as the tier's HelmControllerPool sees it:
// Ready and Released True (InstallSucceeded, naming the release version and
// the chart), one history entry, what it last attempted, where the record
// is. A chart from an artifact (spec.chartRef) gets its version suffixed with
// the first 12 hex of the artifact's digest, kept as ociDigest; one from a
// HelmRepository (spec.chart) keeps its version and names the HelmChart
// helm-controller made for it. The digests of the values and of the release
// are stand-ins: sha256 of the values' JSON and of the release's name.
func helmControllerInstalled(t *testing.T, hr map[string]any) map[string]any {
	t.Helper()
	chrt, err := support.LoadChart(render.PoolChart)
	require.NoError(t, err)
	meta := hr["metadata"].(map[string]any)
	name, ns := meta["name"].(string), meta["namespace"].(string)
	spec := hr["spec"].(map[string]any)
	version := chrt.Metadata.Version
	_, fromArtifact := spec["chartRef"]
	if fromArtifact {
		version += "+" + fixtureArtifact[:12]
	}
	values, err := json.Marshal(spec["values"])
	require.NoError(t, err)
	digest := func(b []byte) string { sum := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(sum[:]) }
	const at = "2026-08-21T00:00:00Z"
	message := fmt.Sprintf("Helm install succeeded for release %s/%s.v1 with chart %s@%s", ns, name, chrt.Metadata.Name, version)
	condition := func(kind string) map[string]any {
		return map[string]any{"type": kind, "status": "True", "reason": "InstallSucceeded", "observedGeneration": 1, "message": message, "lastTransitionTime": at}
	}
	entry := map[string]any{
		"appVersion": chrt.Metadata.AppVersion, "chartName": chrt.Metadata.Name, "chartVersion": version,
		"configDigest": digest(values), "digest": digest([]byte(ns + "/" + name + ".v1")),
		"firstDeployed": at, "lastDeployed": at, "name": name, "namespace": ns, "status": "deployed", "version": 1,
	}
	status := map[string]any{
		"observedGeneration":                 1,
		"conditions":                         []any{condition("Ready"), condition("Released")},
		"history":                            []any{entry},
		"lastAttemptedConfigDigest":          digest(values),
		"lastAttemptedGeneration":            1,
		"lastAttemptedReleaseAction":         "install",
		"lastAttemptedReleaseActionDuration": "612.480113ms",
		"lastAttemptedRevision":              version,
		"storageNamespace":                   ns,
	}
	if fromArtifact {
		entry["ociDigest"] = "latest@sha256:" + fixtureArtifact
		status["lastAttemptedRevisionDigest"] = entry["ociDigest"]
	} else {
		sourceNS, _, _ := unstructured.NestedString(spec, "chart", "spec", "sourceRef", "namespace")
		status["helmChart"] = sourceNS + "/" + ns + "-" + name
	}
	return status
}

// rolloutStockFixture is testdata/rollout/stock-source.yaml, a stock
// Cozystack after the takeover (no _cluster.talos, the catalog's Package
// publishing the mirror and its CA, a pool created from the dashboard
// before the takeover on the public factory), as it runs once each pool was
// installed with this checkout's pool chart (deployedPools) and settled as
// its controllers leave it (settled). Rewritten by `make golden`.
var rolloutStockFixture = filepath.Join("testdata", "rollout", "stock.yaml")

func rolloutStockState(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# testdata/rollout/stock-source.yaml as the pool chart deploys it, each HelmRelease\n")
	b.WriteString("# released and each MachineDeployment rolled out as helm-controller and Cluster API\n")
	b.WriteString("# leave them. Rewritten by `make golden`.\n")
	for _, doc := range render.SplitDocuments(deployedPools(t, support.Path("cmd", "workerimage", "testdata", "rollout", "stock-source.yaml"))) {
		b.WriteString("---\n" + settled(t, doc))
	}
	return b.String()
}

func TestRolloutStockFixtureIsCurrent(t *testing.T) {
	got := rolloutStockState(t)
	if *support.Update {
		require.NoError(t, os.WriteFile(rolloutStockFixture, []byte(got), 0o644))
	}
	want, err := os.ReadFile(rolloutStockFixture)
	require.NoError(t, err, "run `make golden` deliberately")
	require.Equal(t, string(want), got, "%s is not testdata/rollout/stock-source.yaml as the pool chart deploys it: run `make golden` deliberately", rolloutStockFixture)
}
