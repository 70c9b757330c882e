{{/*
The chart's built-in Talos sources, the last fallback after the pool's own value
and the platform default. values.yaml leaves these keys empty because Helm cannot
tell "unset" from "set to the default": a pool that writes the built-in value
itself must still win over a platform default.
*/}}
{{- define "kubernetes-nodes.builtinTalos" -}}
imageFactoryURL: https://factory.talos.dev
installerRepository: factory.talos.dev/installer
{{- end -}}

{{/* The per-pool record of the platform defaults the pool was created with. */}}
{{- define "kubernetes-nodes.recordName" -}}
{{- printf "%s-created-with" (include "kubernetes-nodes.poolName" .) -}}
{{- end -}}

{{/*
The platform defaults that reach the disk source (imageFactoryURL and osImage)
apply when a pool is created and never afterwards: they sit inside the hashed
machine template, so a render-time default would roll every pool the day an
operator set it. Resolved once per render:
- the pool's record exists: the defaults it recorded;
- no record but the pool's MachineDeployment exists: the pool predates records
  and was created with the built-in values;
- neither: a new pool, which takes today's platform defaults (_cluster).
Returns YAML {imageFactoryURL, osImage (YAML text, "" when absent), origin}.
*/}}
{{- define "kubernetes-nodes.creationDefaults" -}}
{{- if not (hasKey .Values "_kubernetesNodesCreationDefaults") -}}
{{- $namespace := .Release.Namespace -}}
{{- $recordName := include "kubernetes-nodes.recordName" . -}}
{{- $record := lookup "v1" "ConfigMap" $namespace $recordName -}}
{{- $captured := dict -}}
{{- if $record -}}
{{- $data := $record.data | default dict -}}
{{- $captured = dict "imageFactoryURL" (get $data "imageFactoryURL" | default "") "osImage" (get $data "osImage" | default "") "origin" (get $data "origin" | default "platform") -}}
{{- else if lookup "cluster.x-k8s.io/v1beta1" "MachineDeployment" $namespace (include "kubernetes-nodes.poolName" .) -}}
{{- $captured = dict "imageFactoryURL" "" "osImage" "" "origin" "builtin" -}}
{{- else -}}
{{- $platform := .Values._cluster | default dict -}}
{{- $platformTalos := $platform.talos | default dict -}}
{{- $osImage := "" -}}
{{- if hasKey $platform "osImage" -}}
{{- $osImage = $platform.osImage | default dict | toYaml -}}
{{- end -}}
{{- $captured = dict "imageFactoryURL" (get $platformTalos "imageFactoryURL" | default "" | toString) "osImage" $osImage "origin" "platform" -}}
{{- end -}}
{{- $_ := set .Values "_kubernetesNodesCreationDefaults" ($captured | toYaml) -}}
{{- end -}}
{{- get .Values "_kubernetesNodesCreationDefaults" -}}
{{- end -}}

{{/* How a recorded default is named in messages. */}}
{{- define "kubernetes-nodes.recordedSource" -}}
{{- printf "the platform default %s recorded when the pool was created (ConfigMap %s/%s)" .field .root.Release.Namespace (include "kubernetes-nodes.recordName" .root) -}}
{{- end -}}

{{/*
The pool's osImage: its own when the key is set (even to {}), else the one
recorded at creation. Returns YAML {set, value, origin} where origin prefixes
field names in messages.
*/}}
{{- define "kubernetes-nodes.effectiveOSImage" -}}
{{- if hasKey .Values "osImage" -}}
{{- dict "set" true "value" (.Values.osImage | default dict) "origin" "osImage" | toYaml -}}
{{- else -}}
{{- $recorded := (include "kubernetes-nodes.creationDefaults" . | fromYaml).osImage -}}
{{- if $recorded -}}
{{- dict "set" true "value" ($recorded | fromYaml) "origin" "_cluster.osImage" | toYaml -}}
{{- else -}}
{{- dict "set" false "value" dict "origin" "osImage" | toYaml -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
talos.imageFactoryURL as the pool resolves it: its own value, else the one
recorded at creation, else the built-in. Returns YAML {value, source}.
*/}}
{{- define "kubernetes-nodes.effectiveImageFactoryURL" -}}
{{- $own := .Values.talos.imageFactoryURL | default "" | toString -}}
{{- if $own -}}
{{- dict "value" $own "source" "talos.imageFactoryURL" | toYaml -}}
{{- else -}}
{{- $recorded := (include "kubernetes-nodes.creationDefaults" . | fromYaml).imageFactoryURL | default "" -}}
{{- if $recorded -}}
{{- dict "value" $recorded "source" (include "kubernetes-nodes.recordedSource" (dict "root" . "field" "_cluster.talos.imageFactoryURL")) | toYaml -}}
{{- else -}}
{{- dict "value" (include "kubernetes-nodes.builtinTalos" . | fromYaml).imageFactoryURL "source" "the chart's built-in talos.imageFactoryURL" | toYaml -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Settings that reach workers only through the TalosConfigTemplate (stable name,
nothing rolls): applied at render time to every pool, new and existing.
*/}}
{{- define "kubernetes-nodes.installerRepository" -}}
{{- $platformTalos := (.Values._cluster | default dict).talos | default dict -}}
{{- .Values.talos.installerRepository | default (get $platformTalos "installerRepository") | default (include "kubernetes-nodes.builtinTalos" . | fromYaml).installerRepository -}}
{{- end -}}

{{/*
Talos machine.registries: the platform's mirrors with the pool's merged in per
registry host (the platform's hosts stay, the pool's entry for a host replaces
the platform's whole entry), and the platform's registry config.
*/}}
{{- define "kubernetes-nodes.registries" -}}
{{- $platformTalos := (.Values._cluster | default dict).talos | default dict -}}
{{- $mirrors := dict -}}
{{- range $host, $mirror := (get $platformTalos "registryMirrors" | default dict) -}}
{{- $_ := set $mirrors $host $mirror -}}
{{- end -}}
{{- range $host, $mirror := (.Values.talos.registryMirrors | default dict) -}}
{{- $_ := set $mirrors $host $mirror -}}
{{- end -}}
{{- $registries := dict -}}
{{- if $mirrors -}}
{{- $_ := set $registries "mirrors" $mirrors -}}
{{- end -}}
{{- with get $platformTalos "registryConfig" -}}
{{- $_ := set $registries "config" . -}}
{{- end -}}
{{- if $registries -}}
{{- $registries | toYaml -}}
{{- end -}}
{{- end -}}
