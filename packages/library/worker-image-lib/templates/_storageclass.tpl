{{/*
The cluster's default class for a VM disk, as CDI resolves it: the newest class
annotated storageclass.kubevirt.io/is-default-virt-class "true"; else the newest
with storageclass.kubernetes.io/is-default-class "true"; else the newest with
only the beta annotation. "" when there is none. The pool and the catalog both
resolve "no class" this way, so they agree on where a golden is. Takes the
list of StorageClass objects (a lookup's items).
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
The name of the most recently created object of a list, as Kubernetes picks
among several defaults: a tie in creation time goes to the name that sorts
first, so the answer never depends on list order. "" for an empty list.
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
