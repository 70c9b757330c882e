{{/*
Per-render memory: the machine template body is rendered several times (its
name is its hash) and the resolution asks the cluster, so each stage runs once
and later callers read its result as a map, never through a YAML round trip
that a hostile string could break. It lives on the render's root context, which
Helm shares between the chart's template files and which values cannot reach
(they sit under .Values): no value can pre-fill a resolved disk source.
*/}}
{{- define "kubernetes-nodes.ensureState" -}}
{{- if not (hasKey . "_kubernetesNodes") -}}
{{- $_ := set . "_kubernetesNodes" dict -}}
{{- end -}}
{{- end -}}

{{/*
The pool's own MachineDeployment (kubernetes-<cluster>-<pool>, in the release
namespace), read at most once per render into ._kubernetesNodes.machineDeployment
({} when there is none): the creation record and the clone path both ask. It
outputs "true" when the MachineDeployment exists. Takes the root context.
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
A table the chart keeps as YAML in a named template (the value patterns, the
built-in Talos sources, the Kubernetes releases, the support matrix), parsed at
most once per render into ._kubernetesNodes.tables. Takes a dict: root, name
(the named template); the caller reads (index root._kubernetesNodes.tables name).
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
