// Where a pool is on its way to a rollout's target, read from the objects
// that say it: its HelmRelease's status as helm-controller writes it, and
// its MachineDeployment's as Cluster API writes it. Read-only decisions the
// plan (is a pool on the target already?) and internal/apply (is it there
// yet?) share.

package rollout

import (
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/report"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// condition is one of status.conditions, as metav1.Condition holds it.
type condition struct {
	status, reason, message string
	observedGeneration      int64
	found                   bool
}

// says is the condition's reason and message on one line.
func (c condition) says() string {
	return strings.TrimSuffix(strings.Join(strings.Fields(c.reason+": "+c.message), " "), ":")
}

func conditionOf(obj map[string]any, kind string) condition {
	raw, _, _ := unstructured.NestedFieldNoCopy(obj, "status", "conditions")
	list, _ := raw.([]any)
	for _, item := range list {
		c, ok := item.(map[string]any)
		if !ok || c["type"] != kind {
			continue
		}
		reason, _, _ := unstructured.NestedString(c, "reason")
		message, _, _ := unstructured.NestedString(c, "message")
		observed, _ := fleet.Int64(c, "observedGeneration")
		return condition{status: fmt.Sprint(c["status"]), reason: reason, message: message, observedGeneration: observed, found: true}
	}
	return condition{}
}

// HelmReleaseStatus says whether helm-controller has released generation
// (Ready), failed it, or is still at it. It is Ready for generation when
// status.observedGeneration has reached it and the Ready condition is True,
// for that generation or a later one (the condition's own
// observedGeneration, where written). It failed when, at that generation,
// Stalled is True; or Ready is False with one of helm-controller's failure
// reasons, or with Reconciling not True; or helm-controller counts failures
// of that generation (status.failures, at status.lastAttemptedGeneration)
// and Ready is not True. Under Cozystack's RetryOnFailure a failed release
// never stalls: helm-controller retries it every retryInterval, with
// Reconciling True and, for each attempt, a moment of Ready Unknown, so
// waiting would only last until the rollout's timeout. Ready False with
// another reason while Reconciling is True (its source or a dependency not
// ready yet) is waited on. says is where it is, in a line.
func HelmReleaseStatus(hr map[string]any, generation int64) (ready bool, failed, says string) {
	observed, _ := fleet.Int64(hr, "status", "observedGeneration")
	readyC := conditionOf(hr, "Ready")
	atGeneration := func(c condition) bool {
		if c.observedGeneration != 0 {
			return c.observedGeneration >= generation
		}
		return observed >= generation
	}
	if s := conditionOf(hr, "Stalled"); s.found && s.status == "True" && atGeneration(s) {
		return false, fmt.Sprintf("HelmRelease stalled at generation %d: %s", generation, s.says()), "stalled"
	}
	if failure := releaseFailure(hr, readyC, generation, atGeneration(readyC)); failure != "" {
		return false, fmt.Sprintf("HelmRelease not Ready at generation %d: %s%s", generation, failure, retryNote(hr)), "failed"
	}
	switch {
	case !readyC.found || !atGeneration(readyC):
		return false, "", fmt.Sprintf("HelmRelease waiting for helm-controller to release generation %d (observed %d)", generation, observed)
	case readyC.status == "True" && observed >= generation:
		return true, "", fmt.Sprintf("HelmRelease Ready at generation %d", generation)
	case readyC.status == "False":
		if r := conditionOf(hr, "Reconciling"); r.found && r.status == "True" {
			return false, "", fmt.Sprintf("HelmRelease not Ready at generation %d, helm-controller retrying (%s)", generation, readyC.says())
		}
		return false, fmt.Sprintf("HelmRelease not Ready at generation %d: %s", generation, readyC.says()), "failed"
	}
	return false, "", fmt.Sprintf("HelmRelease Ready is %s at generation %d", readyC.status, generation)
}

// failureReasons are the reasons helm-controller v1.4 (its api/v2) gives a
// release action that failed, on Ready and on Released.
var failureReasons = map[string]bool{
	"InstallFailed": true, "UpgradeFailed": true, "TestFailed": true,
	"RollbackFailed": true, "UninstallFailed": true, "ArtifactFailed": true,
}

// releaseFailure is a failed release of generation, as reason: message
// with the error in it, or "". Ready False with a failure reason at the
// generation is one. So is status.failures counting attempts of the
// generation (helm-controller clears it when it attempts a new one, then
// sets lastAttemptedGeneration) while Ready is not True: Ready Unknown for
// the moment a retry runs says only "Running 'upgrade' action", and the
// error is on Released (or on Ready, as it was before the retry).
func releaseFailure(hr map[string]any, readyC condition, generation int64, readyAtGeneration bool) string {
	if readyAtGeneration && readyC.status == "False" && failureReasons[readyC.reason] {
		return readyC.says()
	}
	attempted, _ := fleet.Int64(hr, "status", "lastAttemptedGeneration")
	failures, _ := fleet.Int64(hr, "status", "failures")
	if failures == 0 || attempted < generation || (readyC.status == "True" && readyAtGeneration) {
		return ""
	}
	if r := conditionOf(hr, "Released"); r.status == "False" && failureReasons[r.reason] {
		return r.says()
	}
	if readyC.status == "False" {
		return readyC.says()
	}
	return fmt.Sprintf("%d failed attempts of generation %d (status.failures), no failure message on Ready or Released", failures, generation)
}

// retryNote says, of a failed release helm-controller retries on its own
// (the RetryOnFailure strategy of the action it last attempted, or
// Reconciling True), that it does and how the operator ends it: values
// that release, or the HelmRelease suspended.
func retryNote(hr map[string]any) string {
	actions := []string{"upgrade", "install"}
	if last, _, _ := unstructured.NestedString(hr, "status", "lastAttemptedReleaseAction"); last == "install" {
		actions = []string{"install", "upgrade"}
	}
	var every string
	for _, action := range actions {
		if name, _, _ := unstructured.NestedString(hr, "spec", action, "strategy", "name"); name == "RetryOnFailure" {
			every, _, _ = unstructured.NestedString(hr, "spec", action, "strategy", "retryInterval")
			if every == "" {
				every = "5m" // helm-controller's default retryInterval
			}
			break
		}
	}
	failures, _ := fleet.Int64(hr, "status", "failures")
	if every == "" && conditionOf(hr, "Reconciling").status != "True" {
		return ""
	}
	name, _, _ := unstructured.NestedString(hr, "metadata", "name")
	ns, _, _ := unstructured.NestedString(hr, "metadata", "namespace")
	note := " (helm-controller keeps retrying it on its own"
	if every != "" {
		note += " every " + every
	}
	if failures > 0 {
		note += fmt.Sprintf(", %s so far", report.Count(int(failures), "failure"))
	}
	return note + fmt.Sprintf(": fix its values so it releases, or stop the retries with flux suspend helmrelease %s -n %s; once fixed, flux reconcile helmrelease %s -n %s --force releases it at once)", report.OrNone(name), report.OrNone(ns), report.OrNone(name), report.OrNone(ns))
}

// Workers is a MachineDeployment's replicas: spec.replicas, which the
// autoscaler and Cluster API own (the chart leaves it out), else
// status.replicas; known is false when it states neither.
func Workers(md map[string]any) (n int64, known bool) {
	for _, path := range [][]string{{"spec", "replicas"}, {"status", "replicas"}} {
		if n, set := fleet.Int64(md, path...); set {
			return n, true
		}
	}
	return 0, false
}

// RunningTemplate is the KubevirtMachineTemplate a MachineDeployment names.
func RunningTemplate(md map[string]any) string {
	name, _, _ := unstructured.NestedString(md, "spec", "template", "spec", "infrastructureRef", "name")
	return name
}

// MachineDeploymentState is where a MachineDeployment is against the
// template it should run.
type MachineDeploymentState struct {
	// Template is what it names; the counts are its status's.
	Template                                 string
	Replicas, UpdatedReplicas, ReadyReplicas int64
	// Observed: Cluster API has observed its generation (its counts are of
	// its spec as it is).
	Observed bool
	// RolledOut: it runs the template with every worker updated and ready.
	RolledOut bool
	// Says where it is, in a line.
	Says string
}

// MachineDeploymentRolledOut says whether a MachineDeployment runs template
// with every worker updated and ready: it names template, Cluster API has
// observed its generation, and status.replicas, updatedReplicas and
// readyReplicas all equal its workers (desired, when it does not state
// spec.replicas). At zero workers the reference moving is enough.
func MachineDeploymentRolledOut(md map[string]any, template string, desired int64) MachineDeploymentState {
	if md == nil {
		return MachineDeploymentState{Says: "MachineDeployment not created yet"}
	}
	st := MachineDeploymentState{Template: RunningTemplate(md)}
	st.Replicas, _ = fleet.Int64(md, "status", "replicas")
	st.UpdatedReplicas, _ = fleet.Int64(md, "status", "updatedReplicas")
	st.ReadyReplicas, _ = fleet.Int64(md, "status", "readyReplicas")
	if st.Template != template {
		st.Says = fmt.Sprintf("MachineDeployment still names %s, waiting for %s", report.OrNone(st.Template), template)
		return st
	}
	if n, set := fleet.Int64(md, "spec", "replicas"); set {
		desired = n
	}
	if desired == 0 {
		st.RolledOut, st.Says = true, "MachineDeployment names "+template+" at zero workers"
		return st
	}
	generation := report.Generation(md)
	observed, _ := fleet.Int64(md, "status", "observedGeneration")
	st.Observed = observed >= generation
	counts := fmt.Sprintf("%d of %d updated, %d ready, %d in all", st.UpdatedReplicas, desired, st.ReadyReplicas, st.Replicas)
	switch {
	case observed < generation:
		st.Says = fmt.Sprintf("MachineDeployment on %s, Cluster API has not observed generation %d yet (%s)", template, generation, counts)
	case st.UpdatedReplicas == desired && st.ReadyReplicas == desired && st.Replicas == desired:
		st.RolledOut, st.Says = true, fmt.Sprintf("MachineDeployment on %s: %s", template, counts)
	default:
		st.Says = fmt.Sprintf("MachineDeployment rolling onto %s: %s", template, counts)
	}
	return st
}
