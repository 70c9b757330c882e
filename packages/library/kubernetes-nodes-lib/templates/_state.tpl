{{/*
Per-render state, ._kubernetesNodes on the root context, which values cannot reach: each stage runs
once and later callers read its result as a map (library README).
*/}}
{{- define "kubernetes-nodes.ensureState" -}}
{{- if not (hasKey . "_kubernetesNodes") -}}
{{- $_ := set . "_kubernetesNodes" dict -}}
{{- end -}}
{{- end -}}

{{/*
The pool's MachineDeployment, read at most once into ._kubernetesNodes.machineDeployment ({} when none)
for the creation record and the clone path; outputs "true" when it exists. Takes the root context.
*/}}
{{- define "kubernetes-nodes.ensureMachineDeployment" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "machineDeployment") -}}
{{- $_ := set $state "machineDeployment" (lookup "cluster.x-k8s.io/v1beta1" "MachineDeployment" .Release.Namespace (include "kubernetes-nodes.poolName" .)) -}}
{{- end -}}
{{- if $state.machineDeployment -}}true{{- end -}}
{{- end -}}

{{/*
A YAML table kept in a named template, parsed at most once into ._kubernetesNodes.tables. Takes a
dict: root, name (the template); the caller reads (index root._kubernetesNodes.tables name).
*/}}
{{- define "kubernetes-nodes.ensureTable" -}}
{{- include "kubernetes-nodes.ensureState" .root -}}
{{- $state := .root._kubernetesNodes -}}
{{- if not (hasKey $state "tables") -}}
{{- $_ := set $state "tables" dict -}}
{{- end -}}
{{- if not (hasKey $state.tables .name) -}}
{{- $_ := set $state.tables .name (include .name .root | fromYaml) -}}
{{- end -}}
{{- end -}}
