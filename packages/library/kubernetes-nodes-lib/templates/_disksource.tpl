{{/*
The worker disk's source, resolved once per render into
._kubernetesNodes.disk: clone, golden, url (HTTP path), storageClassName
(what the disk is written with), the resolved image fields, and on the clone
path a "report" of what the guards saw (for `workerimage plan`; it is never
rendered into an object). The clone path's guards ask the cluster, so they must
run exactly once however often the body is rendered.
*/}}
{{- define "kubernetes-nodes.ensureDiskSource" -}}
{{- include "kubernetes-nodes.ensureImage" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "disk") -}}
{{- $image := $state.image -}}
{{- $source := dict -}}
{{- if $image.clone -}}
{{- include "kubernetes-nodes.cloneSource" (dict "root" . "image" $image "out" $source) -}}
{{- else -}}
{{- $_ := set $source "url" (include "worker-image-lib.imageURL" $image) -}}
{{- $_ := set $source "storageClassName" (.Values.storageClass | toString) -}}
{{- end -}}
{{- $_ := set $state "disk" (merge $source (deepCopy $image)) -}}
{{- end -}}
{{- end -}}

{{/* The disk source as YAML, for tools that read what the chart resolved. */}}
{{- define "kubernetes-nodes.diskSource" -}}
{{- include "kubernetes-nodes.ensureDiskSource" . -}}
{{- ._kubernetesNodes.disk | toYaml -}}
{{- end -}}
