{{/*
The Kubernetes patch release shipped per minor. A bump rolls every pool on that minor (it is the
MachineDeployment's version): ship it in a chart release that says so.
*/}}
{{- define "kubernetes-nodes.kubernetesReleases" -}}
v1.31: v1.31.14
v1.32: v1.32.13
v1.33: v1.33.13
v1.34: v1.34.9
v1.35: v1.35.6
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
Kubernetes minors each Talos minor supports. An unlisted Talos minor passes: its range is not
known, and refusing it would block adopting a new release.
*/}}
{{- define "kubernetes-nodes.talosSupportMatrix" -}}
v1.11: {min: 29, max: 34}
v1.12: {min: 30, max: 35}
v1.13: {min: 31, max: 36}
{{- end -}}

{{/*
Refuses a Talos release that does not support the pool's Kubernetes minor. Takes a dict: root,
talosVersion (the resolved release), source (where it came from, for the message).
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


{{/*
The Kubernetes release the pool's MachineDeployment runs, resolved once into ._kubernetesNodes.kubernetes
without refusing (tools read it from refused pools too): minor (the pool's version), release (""
when the chart ships no such minor) and source. kubernetes-nodes.kubernetesRelease refuses a "".
*/}}
{{- define "kubernetes-nodes.ensureKubernetes" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- if not (hasKey ._kubernetesNodes "kubernetes") -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.kubernetesReleases") -}}
{{- $releases := index ._kubernetesNodes.tables "kubernetes-nodes.kubernetesReleases" -}}
{{- $minor := .Values.version | toString -}}
{{- $release := "" -}}
{{- if hasKey $releases $minor -}}
{{- $release = get $releases $minor -}}
{{- end -}}
{{- $_ := set ._kubernetesNodes "kubernetes" (dict "minor" $minor "release" $release "source" (printf "the chart's patch release for version %s" $minor)) -}}
{{- end -}}
{{- end -}}

{{/*
What a pool runs against what the chart and the platform give a new pool now, as YAML, for tools that
judge whether a pool is behind (workerimage plan, pins, rollcheck, rollout): kubernetes (the release
resolved), and defaults (the chart's Talos flavor, the platform's current factory URL, else the
built-in, and the Kubernetes release per minor). Never refuses.
*/}}
{{- define "kubernetes-nodes.behindFacts" -}}
{{- include "kubernetes-nodes.ensureKubernetes" . -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.builtinTalos") -}}
{{- $builtin := index ._kubernetesNodes.tables "kubernetes-nodes.builtinTalos" -}}
{{- $platform := .Values._cluster | default dict -}}
{{- $platformTalos := dict -}}
{{- if and (kindIs "map" $platform) (kindIs "map" (get $platform "talos")) -}}
{{- $platformTalos = get $platform "talos" -}}
{{- end -}}
{{- $url := get $platformTalos "imageFactoryURL" | default "" | toString | default $builtin.imageFactoryURL -}}
{{- $defaults := dict "schematicID" $builtin.schematicID "version" $builtin.version "imageFactoryURL" $url "kubernetesReleases" (index ._kubernetesNodes.tables "kubernetes-nodes.kubernetesReleases") -}}
{{- dict "kubernetes" ._kubernetesNodes.kubernetes "defaults" $defaults | toYaml -}}
{{- end -}}
