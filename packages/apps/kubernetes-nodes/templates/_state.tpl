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
