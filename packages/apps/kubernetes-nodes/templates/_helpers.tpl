{{/*
Pool identity. The release name is the only place the pool name comes from, so a
release named otherwise is refused rather than guessed at.
*/}}
{{- define "kubernetes-nodes.pool" -}}
{{- $cluster := .Values.cluster | toString -}}
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

{{/* kubernetes-<cluster>-<pool>: the name of every object of the pool but the machine template. */}}
{{- define "kubernetes-nodes.poolName" -}}
{{- printf "%s-%s" (include "kubernetes-nodes.clusterName" .) (include "kubernetes-nodes.pool" .) -}}
{{- end -}}

{{/*
The machine template is named by the first 6 hex of the sha256 of its body, so
the body is rendered once here and both the name and the object use it.
*/}}
{{- define "kubernetes-nodes.machineTemplateName" -}}
{{- printf "%s-%s" (include "kubernetes-nodes.poolName" .) (include "kubernetes-nodes.machineTemplateBody" . | sha256sum | trunc 6) -}}
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
The instancetype must exist in the cluster. With no cluster (helm template) the
list lookup returns no "items" key at all, and the check is skipped so previews
still render; a reachable cluster always answers with "items", even when empty.
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
{{- end -}}
{{- if not (has $name $names) -}}
{{- fail (printf "pool %s: instanceType %q is not a VirtualMachineClusterInstancetype of this cluster (it has: %s); set instanceType to one of them, or set resources.cpu and resources.memory instead" (include "kubernetes-nodes.poolName" .) $name (join ", " (sortAlpha $names) | default "none")) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Go duration as Kubernetes metav1.Duration accepts it, for nodeStartupTimeout.
*/}}
{{- define "kubernetes-nodes.nodeStartupTimeout" -}}
{{- $t := .Values.nodeStartupTimeout | toString -}}
{{- if not (regexMatch "^(0|([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+)$" $t) -}}
{{- fail (printf "pool %s: nodeStartupTimeout %q is not a duration; write it as a Go duration such as 10m, 90s or 1h30m" (include "kubernetes-nodes.poolName" .) $t) -}}
{{- end -}}
{{- $t -}}
{{- end -}}

{{/*
maxUnhealthy as Cluster API reads an IntOrString: a bare count renders as an
integer, a percentage as a quoted string.
*/}}
{{- define "kubernetes-nodes.maxUnhealthy" -}}
{{- $v := .Values.maxUnhealthy -}}
{{- $s := $v | toString -}}
{{- if regexMatch "^[0-9]+$" $s -}}
{{- $s -}}
{{- else if and (regexMatch "^[0-9]+%$" $s) (le (trimSuffix "%" $s | atoi) 100) -}}
{{- $s | quote -}}
{{- else -}}
{{- fail (printf "pool %s: maxUnhealthy %q is neither a count nor a percentage; set it to a non-negative integer (e.g. 2) or a percentage from 0%% to 100%% (e.g. \"40%%\")" (include "kubernetes-nodes.poolName" .) $s) -}}
{{- end -}}
{{- end -}}

{{/* Autoscaler bounds; min above max would leave the autoscaler nothing to do. */}}
{{- define "kubernetes-nodes.assertReplicaBounds" -}}
{{- if gt (int .Values.minReplicas) (int .Values.maxReplicas) -}}
{{- fail (printf "pool %s: minReplicas %v is greater than maxReplicas %v; set minReplicas <= maxReplicas" (include "kubernetes-nodes.poolName" .) .Values.minReplicas .Values.maxReplicas) -}}
{{- end -}}
{{- end -}}

{{/*
<installerRepository>/<schematicID>:<version>, the image Talos installs itself
from; schematicID and version are the disk's own, so the two never disagree.
*/}}
{{- define "kubernetes-nodes.installerImage" -}}
{{- include "kubernetes-nodes.ensureImage" . -}}
{{- $image := .Values._kubernetesNodes.image -}}
{{- printf "%s/%s:%s" (trimSuffix "/" (include "kubernetes-nodes.installerRepository" .)) $image.schematicID $image.version -}}
{{- end -}}

{{/*
Values written unquoted into the hashed machine template must be plain names
and quantities: quoting them now would change the bytes of every existing pool,
so what could break out of the YAML is refused instead. The schema says the
same; this holds when it is skipped.
*/}}
{{- define "kubernetes-nodes.assertPlainValues" -}}
{{- $pool := include "kubernetes-nodes.poolName" . -}}
{{- $checks := list
  (list "storageClass" (.Values.storageClass | toString) "^$|^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$" "a StorageClass name such as replicated, or \"\" for the cluster default")
  (list "instanceType" (.Values.instanceType | toString) "^$|^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$" "a VirtualMachineClusterInstancetype name such as u1.medium")
  (list "diskSize" (.Values.diskSize | toString) "^[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$" "a quantity such as 20Gi") -}}
{{- if include "kubernetes-nodes.explicitResources" . -}}
{{- $checks = append $checks (list "resources.memory" (.Values.resources.memory | toString) "^[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$" "a quantity such as 4Gi") -}}
{{- $checks = append $checks (list "resources.cpu" (.Values.resources.cpu | toString) "^[1-9][0-9]*$" "a whole number of cores such as 2") -}}
{{- end -}}
{{- range $checks -}}
{{- if not (regexMatch (index . 2) (index . 1)) -}}
{{- fail (printf "pool %s: %s %q is not %s; it is written into the worker VM template as it is, so set %s to %s" $pool (index . 0) (index . 1) "a plain value" (index . 0) (index . 3)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
