{{/*
The worker disk's source, resolved once into ._kubernetesNodes.disk (the clone guards ask the cluster):
clone, golden, url, certConfigMap (a CA in effect), storageClassName, the image fields, and on the
clone path the CLI's report.
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
{{- include "kubernetes-nodes.ensureImageFactoryCA" . -}}
{{- with $state.ca.configMap -}}
{{- $_ := set $source "certConfigMap" . -}}
{{- $_ := set $source "imageFactoryCASource" $state.ca.source -}}
{{- end -}}
{{- end -}}
{{- $_ := set $state "disk" (merge $source (deepCopy $image)) -}}
{{- end -}}
{{- end -}}

{{/* The disk source as YAML, for tools that read what the chart resolved. */}}
{{- define "kubernetes-nodes.diskSource" -}}
{{- include "kubernetes-nodes.ensureDiskSource" . -}}
{{- ._kubernetesNodes.disk | toYaml -}}
{{- end -}}
