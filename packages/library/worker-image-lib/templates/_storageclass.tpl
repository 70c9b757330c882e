{{/*
The default class for a VM disk, as CDI resolves it (README), "" when none: the pool and the catalog
agree on where a golden is. Takes the list of StorageClass objects (a lookup's items).
*/}}
{{- define "worker-image-lib.defaultStorageClass" -}}
{{- $classes := . | default list -}}
{{- $found := "" -}}
{{- range $annotation := list "storageclass.kubevirt.io/is-default-virt-class" "storageclass.kubernetes.io/is-default-class" "storageclass.beta.kubernetes.io/is-default-class" -}}
{{- if not $found -}}
{{- $annotated := list -}}
{{- range $classes -}}
{{- if eq (get (.metadata.annotations | default dict) $annotation | toString) "true" -}}
{{- $annotated = append $annotated . -}}
{{- end -}}
{{- end -}}
{{- $found = include "worker-image-lib.newest" $annotated -}}
{{- end -}}
{{- end -}}
{{- $found -}}
{{- end -}}

{{/*
The name of the newest object of a list, a tie in creation time going to the name that sorts first
(never to list order); "" for an empty list.
*/}}
{{- define "worker-image-lib.newest" -}}
{{- $best := dict -}}
{{- range . -}}
{{- $created := .metadata.creationTimestamp | default "" | toString -}}
{{- if or (not $best.name) (gt $created $best.created) (and (eq $created $best.created) (lt .metadata.name $best.name)) -}}
{{- $best = dict "name" .metadata.name "created" $created -}}
{{- end -}}
{{- end -}}
{{- $best.name | default "" -}}
{{- end -}}
