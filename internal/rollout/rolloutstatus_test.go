package rollout_test

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/yaml"
)

func object(t *testing.T, text string) map[string]any {
	t.Helper()
	var o map[string]any
	if err := yaml.Unmarshal([]byte(text), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// A HelmRelease is Ready for a generation once helm-controller observed it
// and its Ready condition is True for it; it failed when, at that
// generation, Stalled is True or Ready is False with no retry under way.
func TestHelmReleaseStatus(t *testing.T) {
	for _, c := range []struct {
		name, status string
		ready        bool
		failed, says string
	}{
		{"not reconciled", `{}`, false, "", "waiting for helm-controller to release generation 4 (observed 0)"},
		{"the previous generation Ready", `{observedGeneration: 3, conditions: [{type: Ready, status: "True", observedGeneration: 3}]}`, false, "", "observed 3"},
		{"Ready at it", `{observedGeneration: 4, conditions: [{type: Ready, status: "True", observedGeneration: 4, reason: UpgradeSucceeded}]}`, true, "", "HelmRelease Ready at generation 4"},
		{"Ready at a later one", `{observedGeneration: 5, conditions: [{type: Ready, status: "True", observedGeneration: 5}]}`, true, "", "Ready"},
		{"Ready without the condition's generation", `{observedGeneration: 4, conditions: [{type: Ready, status: "True"}]}`, true, "", "Ready"},
		{"Ready condition new, status not yet observed", `{observedGeneration: 3, conditions: [{type: Ready, status: "True", observedGeneration: 4}]}`, false, "", "Ready is True"},
		{"upgrade failed", `{observedGeneration: 4, conditions: [{type: Ready, status: "False", observedGeneration: 4, reason: UpgradeFailed, message: "Helm upgrade failed: timed out"}]}`, false, "HelmRelease not Ready at generation 4: UpgradeFailed: Helm upgrade failed: timed out", "failed"},
		{"failed, retried by helm-controller", `{observedGeneration: 4, conditions: [{type: Ready, status: "False", observedGeneration: 4, reason: UpgradeFailed}, {type: Reconciling, status: "True", observedGeneration: 4, reason: ProgressingWithRetry}]}`, false, "HelmRelease not Ready at generation 4: UpgradeFailed (helm-controller keeps retrying it on its own: fix its values", "failed"},
		{"not Ready for its source, retrying", `{observedGeneration: 4, conditions: [{type: Ready, status: "False", observedGeneration: 4, reason: SourceNotReady, message: "ExternalArtifact not ready"}, {type: Reconciling, status: "True", observedGeneration: 4, reason: ProgressingWithRetry}]}`, false, "", "helm-controller retrying (SourceNotReady: ExternalArtifact not ready)"},
		{"stalled", `{observedGeneration: 4, conditions: [{type: Stalled, status: "True", observedGeneration: 4, reason: RetriesExceeded, message: "too many retries"}, {type: Ready, status: "False", observedGeneration: 4}]}`, false, "HelmRelease stalled at generation 4: RetriesExceeded: too many retries", "stalled"},
		{"stalled at the previous generation", `{observedGeneration: 3, conditions: [{type: Stalled, status: "True", observedGeneration: 3}, {type: Ready, status: "False", observedGeneration: 3}]}`, false, "", "waiting"},
	} {
		hr := object(t, "status: "+c.status)
		ready, failed, says := rollout.HelmReleaseStatus(hr, 4)
		assert.Equal(t, c.ready, ready, c.name)
		if c.failed == "" {
			assert.Empty(t, failed, c.name)
		} else {
			assert.True(t, strings.HasPrefix(failed, c.failed), "%s: %q, want it to start %q", c.name, failed, c.failed)
		}
		assert.Contains(t, says, c.says, c.name)
	}
}

// retryingRelease is a pool's HelmRelease as cozystack-api writes it
// (RetryOnFailure every 30s) with status as Flux's helm-controller v1.4.3
// wrote it in the integration tier (RolloutRetryOnFailure) after the chart
// refused an upgrade: Ready and Released False with the same reason and
// message, Reconciling True, status.failures, no Stalled.
func retryingRelease(t *testing.T, status string) map[string]any {
	return object(t, `
metadata: {name: kubernetes-nodes-hc-pool, namespace: tenant-hc, generation: 3}
spec:
  install: {timeout: 15m, disableWait: true, strategy: {name: RetryOnFailure, retryInterval: 30s}}
  upgrade: {timeout: 15m, disableWait: true, strategy: {name: RetryOnFailure, retryInterval: 30s}}
status:
`+status)
}

const refused = `Helm upgrade failed for release tenant-hc/kubernetes-nodes-hc-pool with chart kubernetes-nodes@0.2.0+9e8883537303: execution error at (kubernetes-nodes/templates/talosconfig.yaml:2:4): pool kubernetes-hc-pool: instanceType "u1.nosuch" is not a VirtualMachineClusterInstancetype of this cluster (it has: u1.large, u1.medium, u1.xlarge); set instanceType to one of them, or set resources.cpu and resources.memory instead`

// Under Cozystack's RetryOnFailure helm-controller never stalls a release
// that fails: Ready False with the error while Reconciling is True, and a
// moment of Ready Unknown for each retry. At the generation, both are a
// failure, shown with the error and what the operator does; the previous
// generation's failures, or a retry that released it, are not.
func TestHelmReleaseStatusRetryOnFailure(t *testing.T) {
	const note = " (helm-controller keeps retrying it on its own every 30s, 2 failures so far: fix its values so it releases, or stop the retries with flux suspend helmrelease kubernetes-nodes-hc-pool -n tenant-hc; once fixed, flux reconcile helmrelease kubernetes-nodes-hc-pool -n tenant-hc --force releases it at once)"
	for _, c := range []struct {
		name, status string
		ready        bool
		failed, says string
	}{
		{"failed, Reconciling with retry", `
  observedGeneration: 3
  lastAttemptedGeneration: 3
  failures: 2
  conditions:
  - {type: Reconciling, status: "True", observedGeneration: 3, reason: ProgressingWithRetry, message: "retrying after 30s"}
  - {type: Ready, status: "False", observedGeneration: 3, reason: UpgradeFailed, message: '` + refused + `'}
  - {type: Released, status: "False", observedGeneration: 3, reason: UpgradeFailed, message: '` + refused + `'}
`, false, "HelmRelease not Ready at generation 3: UpgradeFailed: " + refused + note, "failed"},
		{"a retry running after a failure", `
  observedGeneration: 3
  lastAttemptedGeneration: 3
  failures: 2
  conditions:
  - {type: Reconciling, status: "True", observedGeneration: 3, reason: Progressing, message: "Running 'upgrade' action with timeout of 15m0s"}
  - {type: Ready, status: Unknown, observedGeneration: 3, reason: Progressing, message: "Running 'upgrade' action with timeout of 15m0s"}
  - {type: Released, status: "False", observedGeneration: 3, reason: UpgradeFailed, message: '` + refused + `'}
`, false, "HelmRelease not Ready at generation 3: UpgradeFailed: " + refused + note, "failed"},
		{"install failed", `
  observedGeneration: 3
  lastAttemptedGeneration: 3
  failures: 2
  conditions:
  - {type: Reconciling, status: "True", observedGeneration: 3, reason: ProgressingWithRetry, message: "retrying after 30s"}
  - {type: Ready, status: "False", observedGeneration: 3, reason: InstallFailed, message: "Helm install failed: context deadline exceeded"}
`, false, "HelmRelease not Ready at generation 3: InstallFailed: Helm install failed: context deadline exceeded" + note, "failed"},
		{"the previous generation failed, this one runs", `
  observedGeneration: 2
  lastAttemptedGeneration: 2
  failures: 2
  conditions:
  - {type: Reconciling, status: "True", observedGeneration: 3, reason: Progressing, message: "Fulfilling prerequisites"}
  - {type: Ready, status: Unknown, observedGeneration: 3, reason: Progressing, message: "Fulfilling prerequisites"}
  - {type: Released, status: "False", observedGeneration: 2, reason: UpgradeFailed, message: "the old error"}
`, false, "", "HelmRelease Ready is Unknown at generation 3"},
		{"a retry that released it", `
  observedGeneration: 3
  lastAttemptedGeneration: 3
  conditions:
  - {type: Ready, status: "True", observedGeneration: 3, reason: UpgradeSucceeded, message: "Helm upgrade succeeded for release tenant-hc/kubernetes-nodes-hc-pool.v4"}
  - {type: Released, status: "True", observedGeneration: 3, reason: UpgradeSucceeded}
`, true, "", "HelmRelease Ready at generation 3"},
	} {
		ready, failed, says := rollout.HelmReleaseStatus(retryingRelease(t, c.status), 3)
		assert.Equal(t, c.ready, ready, c.name)
		assert.Equal(t, c.failed, failed, c.name)
		assert.Contains(t, says, c.says, c.name)
	}
}

// A MachineDeployment is rolled out when it names the template, Cluster API
// observed its generation, and every worker is updated and ready; at zero
// workers, naming the template is enough.
func TestMachineDeploymentRolledOut(t *testing.T) {
	const tpl = "kubernetes-acme-golden-290a4a"
	md := func(name, rest string) map[string]any {
		return object(t, "metadata: {generation: 2}\nspec: {template: {spec: {infrastructureRef: {name: "+name+"}}}"+rest+"}\n")
	}
	for _, c := range []struct {
		name    string
		md      map[string]any
		desired int64
		done    bool
		says    string
	}{
		{"absent", nil, 2, false, "not created yet"},
		{"old template", md("kubernetes-acme-golden-37e982", "}\nstatus: {observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 2"), 2, false, "still names kubernetes-acme-golden-37e982"},
		{"not observed", md(tpl, "}\nstatus: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2"), 2, false, "not observed generation 2"},
		{"rolling", md(tpl, "}\nstatus: {observedGeneration: 2, replicas: 3, updatedReplicas: 1, readyReplicas: 3"), 2, false, "rolling onto kubernetes-acme-golden-290a4a: 1 of 2 updated, 3 ready, 3 in all"},
		{"updated, not ready", md(tpl, "}\nstatus: {observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 1"), 2, false, "rolling"},
		{"old machine left", md(tpl, "}\nstatus: {observedGeneration: 2, replicas: 3, updatedReplicas: 2, readyReplicas: 2"), 2, false, "rolling"},
		// Readings of Cluster API v1.10's own controller rolling 2 workers
		// with the chart's maxSurge 10 (TestPlatformControllers): every new
		// worker created at once, readyReplicas counting old and new alike.
		{"observed, no new worker yet", md(tpl, "}\nstatus: {observedGeneration: 2, replicas: 2, updatedReplicas: 0, readyReplicas: 2"), 2, false, "0 of 2 updated, 2 ready, 2 in all"},
		{"new workers not ready, old ones ready", md(tpl, "}\nstatus: {observedGeneration: 2, replicas: 4, updatedReplicas: 2, readyReplicas: 2"), 2, false, "2 of 2 updated, 2 ready, 4 in all"},
		{"more ready than desired", md(tpl, "}\nstatus: {observedGeneration: 2, replicas: 4, updatedReplicas: 2, readyReplicas: 4"), 2, false, "rolling"},
		{"done", md(tpl, "}\nstatus: {observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 2"), 2, true, "2 of 2 updated, 2 ready, 2 in all"},
		{"spec.replicas wins over the plan's count", md(tpl, ", replicas: 3}\nstatus: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 3"), 2, true, "3 of 3 updated"},
		{"zero workers", md(tpl, "}\nstatus: {observedGeneration: 1"), 0, true, "at zero workers"},
	} {
		got := rollout.MachineDeploymentRolledOut(c.md, tpl, c.desired)
		assert.Equal(t, c.done, got.RolledOut, c.name)
		assert.Equal(t, c.name != "not observed" && c.name != "absent" && c.name != "old template" && c.name != "zero workers", got.Observed, c.name)
		assert.Contains(t, got.Says, c.says, c.name)
	}
}

// A merge patch as RFC 7386 reads one: maps merge, null removes, the rest
// replaces; neither side is written to.
func TestMergePatch(t *testing.T) {
	values := map[string]any{"cluster": "acme", "minReplicas": int64(2), "talos": map[string]any{"version": "v1.13.6", "registryMirrors": map[string]any{"docker.io": "x"}}, "osImage": map[string]any{"factory": map[string]any{}}}
	patch := map[string]any{"talos": map[string]any{"version": "v1.13.7"}, "osImage": map[string]any{"builtin": map[string]any{}, "factory": nil}, "roles": []any{"a"}}
	got := rollout.MergePatch(values, patch)
	assert.Equal(t, map[string]any{"cluster": "acme", "minReplicas": int64(2), "talos": map[string]any{"version": "v1.13.7", "registryMirrors": map[string]any{"docker.io": "x"}}, "osImage": map[string]any{"builtin": map[string]any{}}, "roles": []any{"a"}}, got)
	assert.Equal(t, "v1.13.6", values["talos"].(map[string]any)["version"], "the values are not written to")
	assert.Equal(t, map[string]any{"a": "b"}, rollout.MergePatch(nil, map[string]any{"a": "b"}))
}

func TestWorkersAndGeneration(t *testing.T) {
	n, ok := rollout.Workers(object(t, "spec: {replicas: 4}\nstatus: {replicas: 3}"))
	assert.True(t, ok)
	assert.Equal(t, int64(4), n)
	n, ok = rollout.Workers(object(t, "status: {replicas: 3}"))
	assert.True(t, ok)
	assert.Equal(t, int64(3), n)
	_, ok = rollout.Workers(object(t, "status: {}"))
	assert.False(t, ok)
	assert.Equal(t, int64(7), report.Generation(object(t, "metadata: {generation: 7}")), "a state file's number")
	assert.Equal(t, int64(7), report.Generation(map[string]any{"metadata": map[string]any{"generation": int64(7)}}), "the API's")
}
