{{/*
Refuses to take over a MachineDeployment of this name that another Helm release manages: the pool's
name is then still a node group of the parent cluster's own chart (its default md0, say), and Helm
would otherwise stop on an ownership conflict with a message that names neither. Reads the
MachineDeployment the creation record reads (one GET per render).
*/}}
{{- define "kubernetes-nodes.assertOwnMachineDeployment" -}}
{{- if include "kubernetes-nodes.ensureMachineDeployment" . -}}
{{- $owner := dig "metadata" "annotations" "meta.helm.sh/release-name" "" ._kubernetesNodes.machineDeployment | toString -}}
{{- if and $owner (ne $owner .Release.Name) -}}
{{- fail (printf "pool %s: MachineDeployment %s/%s belongs to the Helm release %q, not to this pool's release %q: the pool's name is still a node group of another release (most likely the parent cluster's own nodeGroups, whose default is md0); name the pool differently, or remove that node group from the parent cluster first" (include "kubernetes-nodes.poolName" .) .Release.Namespace (include "kubernetes-nodes.poolName" .) (include "worker-image-lib.truncate" $owner) .Release.Name) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
YAML comment lines inside the MachineDeployment's spec. Cozystack's own chart writes exactly these
lines there, so they are kept as output, byte for byte, for the document to match the chart a platform
switches from (docs/upstream.md); they reach no object (YAML drops comments). What they describe is
this chart's rule too: spec.replicas is left out, so the autoscaler owns it.
*/}}
{{- define "kubernetes-nodes.machineDeploymentNote" -}}
# `spec.replicas` is intentionally omitted so the field is owned by
# the cluster-autoscaler alone. Two independent CAPI mechanisms —
# not Server-Side-Apply field managers — carry the guarantee:
#   1. Create: the MachineDeployment defaulting webhook seeds
#      `spec.replicas` from the `cluster-api-autoscaler-node-group-
#      min-size` annotation (see
#      https://cluster-api.sigs.k8s.io/tasks/automated-machine-management/autoscaling).
#   2. Update: `calculateMachineDeploymentReplicas` preserves the
#      existing live value (`oldMD.Spec.Replicas`) whenever the
#      incoming spec has `replicas: nil`, clamping into
#      `[min, max]` if it drifts outside — so a cluster the
#      autoscaler holds above min-size is not drained by a
#      `helm upgrade` that would otherwise re-render this field.
# Flux helm-controller applies this chart through the Helm SDK
# three-way merge (not SSA), so field-manager ownership is not the
# mechanism at play. The chart guarantee reduces to "leave the
# field out of the rendered manifest and let CAPI's update-time
# defaulting keep the live value stable". Emitting a chart-managed
# `replicas: N` here (as this chart did before
# cozystack/cozystack#3231) drains workers on every `helm upgrade`
# action until the autoscaler notices unschedulable Pods and
# scales back up — a real disruption window on every routine
# platform bump.
{{- end -}}
