{{/*
Pool identity. The release name is the only place the pool name comes from, so a
release named otherwise is refused rather than guessed at.
*/}}
{{- define "kubernetes-nodes.pool" -}}
{{- $cluster := .Values.cluster | default "" | toString -}}
{{- if not $cluster -}}
{{- fail (printf "release %q: .Values.cluster is empty; set cluster to the name of the parent tenant cluster (the pool's objects are named kubernetes-<cluster>-<pool>)" .Release.Name) -}}
{{- end -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $cluster) -}}
{{- fail (printf "release %q: cluster %q is not a DNS label (lowercase letters, digits and inner '-'); set cluster to the parent tenant cluster's name" .Release.Name $cluster) -}}
{{- end -}}
{{- $prefix := printf "kubernetes-nodes-%s-" $cluster -}}
{{- $pool := trimPrefix $prefix .Release.Name -}}
{{- if or (not (hasPrefix $prefix .Release.Name)) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $pool)) -}}
{{- fail (printf "release %q does not match kubernetes-nodes-<cluster>-<pool> for cluster %q; install each pool as a release named %s<pool>, where <pool> is a DNS label" .Release.Name $cluster $prefix) -}}
{{- end -}}
{{- $pool -}}
{{- end -}}

{{/* kubernetes-<cluster>: the parent Cluster API Cluster. */}}
{{- define "kubernetes-nodes.clusterName" -}}
{{- printf "kubernetes-%s" (.Values.cluster | toString) -}}
{{- end -}}

{{/*
kubernetes-<cluster>-<pool>: the name of every object of the pool but the
machine template. Checked and built once per render: every message names it.
*/}}
{{- define "kubernetes-nodes.poolName" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- if not (hasKey ._kubernetesNodes "poolName") -}}
{{- $_ := set ._kubernetesNodes "poolName" (printf "%s-%s" (include "kubernetes-nodes.clusterName" .) (include "kubernetes-nodes.pool" .)) -}}
{{- end -}}
{{- ._kubernetesNodes.poolName -}}
{{- end -}}

{{/*
Renders the machine template body once into ._kubernetesNodes.machineTemplate: body, and name (the
first 6 hex of its sha256), which the object and the MachineDeployment's reference both use.
*/}}
{{- define "kubernetes-nodes.ensureMachineTemplate" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- if not (hasKey ._kubernetesNodes "machineTemplate") -}}
{{- $body := include "kubernetes-nodes.machineTemplateBody" . -}}
{{- $_ := set ._kubernetesNodes "machineTemplate" (dict "body" $body "name" (printf "%s-%s" (include "kubernetes-nodes.poolName" .) ($body | sha256sum | trunc 6))) -}}
{{- end -}}
{{- end -}}

{{- define "kubernetes-nodes.machineTemplateName" -}}
{{- include "kubernetes-nodes.ensureMachineTemplate" . -}}
{{- ._kubernetesNodes.machineTemplate.name -}}
{{- end -}}

{{/* Labels on every object outside the hashed body. */}}
{{- define "kubernetes-nodes.labels" -}}
cluster.x-k8s.io/cluster-name: {{ include "kubernetes-nodes.clusterName" . }}
{{- end -}}

{{/*
Explicit VM size: "true" when resources sets both cpu and memory, "" when it sets
neither; one without the other is refused.
*/}}
{{- define "kubernetes-nodes.explicitResources" -}}
{{- $r := .Values.resources | default dict -}}
{{- $hasCPU := and (hasKey $r "cpu") (ne (toString $r.cpu) "") (ne (toString $r.cpu) "<nil>") -}}
{{- $hasMemory := and (hasKey $r "memory") (ne (toString $r.memory) "") (ne (toString $r.memory) "<nil>") -}}
{{- if and $hasCPU $hasMemory -}}
true
{{- else if or $hasCPU $hasMemory -}}
{{- fail (printf "pool %s: resources sets only %s; set both resources.cpu and resources.memory to size the VM explicitly, or neither to use instanceType %q" (include "kubernetes-nodes.poolName" .) (ternary "cpu" "memory" $hasCPU) (.Values.instanceType | toString)) -}}
{{- end -}}
{{- end -}}

{{/*
Refuses an instanceType the cluster lacks, and keeps the one it has in ._kubernetesNodes.instanceType;
skipped when the list has no "items" (no cluster: a preview), since a reachable cluster always answers
with "items", even when empty. Called once, through kubernetes-nodes.ensureInstanceType.
*/}}
{{- define "kubernetes-nodes.assertInstanceType" -}}
{{- $name := .Values.instanceType | toString -}}
{{- if not $name -}}
{{- fail (printf "pool %s: instanceType is empty and resources is not set; set instanceType to a VirtualMachineClusterInstancetype (default u1.medium) or set both resources.cpu and resources.memory" (include "kubernetes-nodes.poolName" .)) -}}
{{- end -}}
{{- $list := lookup "instancetype.kubevirt.io/v1beta1" "VirtualMachineClusterInstancetype" "" "" -}}
{{- if hasKey $list "items" -}}
{{- $names := list -}}
{{- range $list.items -}}
{{- $names = append $names .metadata.name -}}
{{- if eq .metadata.name $name -}}
{{- $_ := set $._kubernetesNodes "instanceType" . -}}
{{- end -}}
{{- end -}}
{{- if not (has $name $names) -}}
{{- fail (printf "pool %s: instanceType %q is not a VirtualMachineClusterInstancetype of this cluster (it has: %s); set instanceType to one of them, or set resources.cpu and resources.memory instead" (include "kubernetes-nodes.poolName" .) $name (join ", " (sortAlpha $names) | default "none")) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
<installerRepository>/<schematicID>:<version>, the image Talos installs itself
from; schematicID and version are the disk's own, so the two never disagree.
*/}}
{{- define "kubernetes-nodes.installerImage" -}}
{{- include "kubernetes-nodes.ensureImage" . -}}
{{- include "kubernetes-nodes.ensureMachineConfigDefaults" . -}}
{{- $image := ._kubernetesNodes.image -}}
{{- printf "%s/%s:%s" (trimSuffix "/" ._kubernetesNodes.machineConfigDefaults.installerRepository) $image.schematicID $image.version -}}
{{- end -}}
