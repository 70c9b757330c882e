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
operator set it. Resolved once per render into ._kubernetesNodes.creation:
- the pool's record exists: the defaults it recorded;
- no record but the pool's MachineDeployment exists: the pool predates records
  and was created with the built-in values;
- neither: a new pool, which takes today's platform defaults (_cluster).
Fields: imageFactoryURL, osImage (a map, absent when none), osImageText (as
recorded), origin ("platform" or "builtin").
*/}}
{{- define "kubernetes-nodes.ensureCreationDefaults" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "creation") -}}
{{- $namespace := .Release.Namespace -}}
{{- $recordName := include "kubernetes-nodes.recordName" . -}}
{{- $record := lookup "v1" "ConfigMap" $namespace $recordName -}}
{{- $creation := dict "imageFactoryURL" "" "osImageText" "" "origin" "platform" -}}
{{- if $record -}}
{{- $data := $record.data | default dict -}}
{{- $_ := set $creation "imageFactoryURL" (get $data "imageFactoryURL" | default "" | toString) -}}
{{- $_ := set $creation "origin" (get $data "origin" | default "platform" | toString) -}}
{{- $text := get $data "osImage" | default "" | toString -}}
{{- $_ := set $creation "osImageText" $text -}}
{{- /* Only a pool without its own osImage reads the recorded one. */ -}}
{{- if and $text (not (hasKey .Values "osImage")) -}}
{{- $parsed := fromYaml $text -}}
{{- if hasKey $parsed "Error" -}}
{{- fail (printf "pool %s: the osImage recorded in ConfigMap %s/%s does not parse (%s); set the pool's own osImage, or delete that ConfigMap to re-record today's platform defaults (which re-images the pool if they differ)" (include "kubernetes-nodes.poolName" .) $namespace $recordName $parsed.Error) -}}
{{- end -}}
{{- /* No valid osImage field holds these characters, so a record that does is not what the chart wrote: a "<<" key would read back as a YAML merge, "&" and "*" as an anchor and alias, "!" as a tag. */ -}}
{{- if regexMatch "[<&*!]" $text -}}
{{- fail (printf "pool %s: the osImage recorded in ConfigMap %s/%s holds a YAML merge key, anchor, alias or tag (one of < & * !), so it would not read back as it was written and no valid osImage holds one; set the pool's own osImage, or delete that ConfigMap to re-record today's platform defaults (which re-images the pool if they differ)" (include "kubernetes-nodes.poolName" .) $namespace $recordName) -}}
{{- end -}}
{{- $_ := set $creation "osImage" $parsed -}}
{{- end -}}
{{- else if include "kubernetes-nodes.ensureMachineDeployment" . -}}
{{- $_ := set $creation "origin" "builtin" -}}
{{- else -}}
{{- $platform := .Values._cluster | default dict -}}
{{- $_ := set $creation "imageFactoryURL" (get ($platform.talos | default dict) "imageFactoryURL" | default "" | toString) -}}
{{- if and (hasKey $platform "osImage") (not (kindIs "invalid" $platform.osImage)) -}}
{{- $_ := set $creation "osImage" $platform.osImage -}}
{{- /* kubernetes-nodes.validate took only known keys and strings, so the record reads back exactly this (no "<<" merge key can be among them). */ -}}
{{- $_ := set $creation "osImageText" ($platform.osImage | toYaml) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $state "creation" $creation -}}
{{- end -}}
{{- end -}}

{{/* The creation defaults as YAML, for tools that read what the chart resolved. */}}
{{- define "kubernetes-nodes.creationDefaults" -}}
{{- include "kubernetes-nodes.ensureCreationDefaults" . -}}
{{- $creation := ._kubernetesNodes.creation -}}
{{- dict "imageFactoryURL" $creation.imageFactoryURL "osImage" $creation.osImageText "origin" $creation.origin | toYaml -}}
{{- end -}}

{{/* How a recorded default is named in messages. */}}
{{- define "kubernetes-nodes.recordedSource" -}}
{{- printf "the platform default %s recorded when the pool was created (ConfigMap %s/%s)" .field .root.Release.Namespace (include "kubernetes-nodes.recordName" .root) -}}
{{- end -}}

{{/*
Settings that reach workers only through the TalosConfigTemplate (stable name,
nothing rolls): applied at render time to every pool, new and existing.
*/}}
{{- define "kubernetes-nodes.installerRepository" -}}
{{- $platformTalos := (.Values._cluster | default dict).talos | default dict -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.builtinTalos") -}}
{{- .Values.talos.installerRepository | default (get $platformTalos "installerRepository") | default (index ._kubernetesNodes.tables "kubernetes-nodes.builtinTalos").installerRepository -}}
{{- end -}}

{{/*
Talos machine.registries: the platform's mirrors with the pool's merged in per
registry host (the platform's hosts stay, the pool's entry for a host replaces
the platform's whole entry), and the platform's registry config. Takes a dict:
root, out (filled with mirrors and config when there are any).
*/}}
{{- define "kubernetes-nodes.registries" -}}
{{- $platformTalos := (.root.Values._cluster | default dict).talos | default dict -}}
{{- $mirrors := dict -}}
{{- range $host, $mirror := (get $platformTalos "registryMirrors" | default dict) -}}
{{- $_ := set $mirrors $host $mirror -}}
{{- end -}}
{{- range $host, $mirror := (.root.Values.talos.registryMirrors | default dict) -}}
{{- $_ := set $mirrors $host $mirror -}}
{{- end -}}
{{- if $mirrors -}}
{{- $_ := set .out "mirrors" $mirrors -}}
{{- end -}}
{{- with get $platformTalos "registryConfig" -}}
{{- $_ := set $.out "config" . -}}
{{- end -}}
{{- end -}}
