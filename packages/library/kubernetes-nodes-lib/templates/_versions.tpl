{{/*
The Kubernetes patch release the chart ships for each supported minor. Bumping
a patch here changes the MachineDeployment's version and rolls the pools on that
minor: do it in a chart release that says so.
*/}}
{{- define "kubernetes-nodes.kubernetesReleases" -}}
v1.31: v1.31.14
v1.32: v1.32.10
v1.33: v1.33.6
v1.34: v1.34.2
v1.35: v1.35.1
v1.36: v1.36.0
{{- end -}}

{{/* The full Kubernetes release for .Values.version, or a refusal naming the supported minors. */}}
{{- define "kubernetes-nodes.kubernetesRelease" -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.kubernetesReleases") -}}
{{- $releases := index ._kubernetesNodes.tables "kubernetes-nodes.kubernetesReleases" -}}
{{- $minor := .Values.version | toString -}}
{{- if not (hasKey $releases $minor) -}}
{{- fail (printf "pool %s: version %q is not a Kubernetes minor this chart ships; set version to one of %s" (include "kubernetes-nodes.poolName" .) $minor (keys $releases | sortAlpha | join ", ")) -}}
{{- end -}}
{{- get $releases $minor -}}
{{- end -}}

{{/*
Kubernetes minors each Talos minor supports (Talos support matrix). A Talos minor
not listed here passes: the chart cannot know a newer release's range, and
refusing it would block adopting one.
*/}}
{{- define "kubernetes-nodes.talosSupportMatrix" -}}
v1.11: {min: 29, max: 34}
v1.12: {min: 30, max: 35}
v1.13: {min: 31, max: 36}
{{- end -}}

{{/*
Refuses a Talos release that does not support the pool's Kubernetes minor.
Takes a dict: root (the chart context), talosVersion (the resolved Talos release),
source (where that release came from, for the message).
*/}}
{{- define "kubernetes-nodes.assertTalosSupportsKubernetes" -}}
{{- $root := .root -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" $root "name" "kubernetes-nodes.talosSupportMatrix") -}}
{{- $matrix := index $root._kubernetesNodes.tables "kubernetes-nodes.talosSupportMatrix" -}}
{{- $talosMinor := regexFind "^v[0-9]+\\.[0-9]+" (.talosVersion | toString) -}}
{{- $k8s := $root.Values.version | toString -}}
{{- if hasKey $matrix $talosMinor -}}
{{- $range := get $matrix $talosMinor -}}
{{- $k8sMinor := regexReplaceAll "^v1\\.([0-9]+)$" $k8s "${1}" | int -}}
{{- if or (lt $k8sMinor (int $range.min)) (gt $k8sMinor (int $range.max)) -}}
{{- fail (printf "pool %s: Talos %s (%s) does not support Kubernetes %s; Talos %s supports v1.%d to v1.%d: set version within that range, or pick a Talos release that supports %s" (include "kubernetes-nodes.poolName" $root) .talosVersion .source $k8s $talosMinor (int $range.min) (int $range.max) $k8s) -}}
{{- end -}}
{{- end -}}
{{- end -}}
