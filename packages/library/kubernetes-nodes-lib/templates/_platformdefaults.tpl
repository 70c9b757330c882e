{{/*
The chart's Talos defaults, the last fallback: the sources, and the flavor a new pool gets. values.yaml
leaves the sources "" (Helm cannot tell unset from default), so a pool that writes the built-in value
still wins over a platform default.
*/}}
{{- define "kubernetes-nodes.builtinTalos" -}}
imageFactoryURL: https://factory.talos.dev
installerRepository: factory.talos.dev/installer
schematicID: ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515
version: v1.13.6
{{- end -}}

{{/*
The creation record (library README), read once into ._kubernetesNodes.creation: imageFactoryURL,
imageFactoryCA (whether the platform's CA applies; never the PEM), osImage (absent when none),
osImageText, origin (platform or builtin), from (where it was read).
*/}}
{{- define "kubernetes-nodes.ensureCreationDefaults" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "creation") -}}
{{- $namespace := .Release.Namespace -}}
{{- $pool := include "kubernetes-nodes.poolName" . -}}
{{- $creation := dict "imageFactoryURL" "" "imageFactoryCA" false "osImageText" "" "origin" "platform" -}}
{{- $recorded := dict -}}
{{- if include "kubernetes-nodes.ensureMachineDeployment" . -}}
{{- $text := dig "metadata" "annotations" "kubernetes-worker-image.cozystack.io/created-with" "" $state.machineDeployment | toString -}}
{{- if $text -}}
{{- $_ := set $creation "from" (printf "annotation kubernetes-worker-image.cozystack.io/created-with of MachineDeployment %s/%s" $namespace $pool) -}}
{{- $fix := "delete the annotation to take the built-in values (the pool's own talos.imageFactoryURL and osImage still win; without them the pool is re-imaged if the built-in values differ), or write it as this chart does, e.g. {\"imageFactoryURL\":\"https://factory.mirror.internal\",\"osImage\":{\"builtin\":{}}}" -}}
{{- include "kubernetes-nodes.assertRecordSize" (dict "pool" $pool "what" $creation.from "size" (len $text) "fix" $fix) -}}
{{- $nesting := include "kubernetes-nodes.recordNesting" (dict "text" $text "depth" 3 "json" true) -}}
{{- if eq $nesting "deeper" -}}
{{- fail (printf "pool %s: the %s nests deeper than the 3 levels this chart writes (record, osImage, builtin or factory), so it is refused before it is parsed; %s" $pool $creation.from $fix) -}}
{{- end -}}
{{- $parsed := dict "Error" "unclosed" -}}
{{- if not $nesting -}}
{{- $parsed = $text | fromJson -}}
{{- end -}}
{{- if or (hasKey $parsed "Error") (not (regexMatch "^[{]" $text)) -}}
{{- fail (printf "pool %s: the %s is not a JSON object as this chart writes it (%s); set the pool's own talos.imageFactoryURL and osImage, or delete the annotation to take the built-in values (which re-images the pool if they differ)" $pool $creation.from (include "worker-image-lib.describe" $text)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" (printf "pool %s: " $pool) "field" (printf "the %s" $creation.from) "value" $parsed "keys" (list "imageFactoryURL" "osImage" "imageFactoryCA")) -}}
{{- include "worker-image-lib.assertString" (dict "prefix" (printf "pool %s: " $pool) "field" (printf "imageFactoryURL in the %s" $creation.from) "value" (get $parsed "imageFactoryURL")) -}}
{{- if and (hasKey $parsed "imageFactoryCA") (not (eq (toJson (get $parsed "imageFactoryCA")) "true")) -}}
{{- fail (printf "pool %s: imageFactoryCA in the %s is %s, but the chart writes only true there (the platform's CA applied at creation); delete that key to stop taking the platform's CA, or set it back to true" $pool $creation.from (include "worker-image-lib.describe" (get $parsed "imageFactoryCA"))) -}}
{{- end -}}
{{- $recorded = $parsed -}}
{{- else -}}
{{- /* An earlier chart version's record; a lookup error fails the render rather than guessing. */ -}}
{{- $recordName := printf "%s-created-with" $pool -}}
{{- $record := lookup "v1" "ConfigMap" $namespace $recordName -}}
{{- $_ := set $creation "from" (printf "ConfigMap %s/%s, the record of an earlier chart version" $namespace $recordName) -}}
{{- if $record -}}
{{- $data := $record.data | default dict -}}
{{- $origin := get $data "origin" | default "platform" | toString -}}
{{- $url := get $data "imageFactoryURL" | default "" | toString -}}
{{- $text := get $data "osImage" | default "" | toString -}}
{{- include "kubernetes-nodes.assertRecordSize" (dict "pool" $pool "what" $creation.from "size" (add (len $origin) (len $url) (len $text)) "fix" "delete that ConfigMap to take the built-in values (the pool's own talos.imageFactoryURL and osImage still win; without them the pool is re-imaged if the built-in values differ)") -}}
{{- $_ := set $creation "origin" $origin -}}
{{- $_ := set $recorded "imageFactoryURL" $url -}}
{{- if $text -}}
{{- /* No valid osImage holds these: a record with a YAML merge key, anchor, alias or tag is not what the chart wrote. */ -}}
{{- $problem := "" -}}
{{- $nesting := include "kubernetes-nodes.recordNesting" (dict "text" $text "depth" 2 "json" false) -}}
{{- $parsed := dict -}}
{{- if regexMatch "[<&*!]" $text -}}
{{- $problem = "holds a YAML merge key, anchor, alias or tag (one of < & * !), so it would not read back as it was written and no valid osImage holds one" -}}
{{- else if eq $nesting "deeper" -}}
{{- $problem = "nests deeper than the 2 levels this chart writes (osImage, builtin or factory: indented at most 2 spaces, brackets at most 2 deep, no nested - or ? entries), so it is refused before it is parsed" -}}
{{- else if eq $nesting "unclosed" -}}
{{- $problem = "does not parse (its brackets do not close)" -}}
{{- else -}}
{{- $parsed = fromYaml $text -}}
{{- if hasKey $parsed "Error" -}}
{{- $problem = printf "does not parse (%s)" $parsed.Error -}}
{{- end -}}
{{- end -}}
{{- if not $problem -}}
{{- $_ := set $recorded "osImage" $parsed -}}
{{- else if not (hasKey .Values "osImage") -}}
{{- /* Only a pool without its own osImage reads the recorded one; the others drop a broken one. */ -}}
{{- fail (printf "pool %s: the osImage recorded in ConfigMap %s/%s %s; set the pool's own osImage, or delete that ConfigMap to take the built-in values (which re-images the pool if they differ)" $pool $namespace $recordName $problem) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- $_ := set $creation "origin" "builtin" -}}
{{- $_ := set $creation "from" (printf "MachineDeployment %s/%s, created with no platform default" $namespace $pool) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- $platform := .Values._cluster | default dict -}}
{{- $_ := set $creation "from" "today's platform defaults (_cluster), as for a new pool; its MachineDeployment records those that apply" -}}
{{- $_ := set $recorded "imageFactoryURL" (get ($platform.talos | default dict) "imageFactoryURL" | default "" | toString) -}}
{{- if get ($platform.talos | default dict) "imageFactoryCA" -}}
{{- $_ := set $recorded "imageFactoryCA" true -}}
{{- end -}}
{{- if and (hasKey $platform "osImage") (not (kindIs "invalid" $platform.osImage)) -}}
{{- $_ := set $recorded "osImage" $platform.osImage -}}
{{- end -}}
{{- end -}}
{{- $_ := set $creation "imageFactoryURL" (get $recorded "imageFactoryURL" | default "" | toString) -}}
{{- $_ := set $creation "imageFactoryCA" (hasKey $recorded "imageFactoryCA") -}}
{{- if hasKey $recorded "osImage" -}}
{{- $_ := set $creation "osImage" $recorded.osImage -}}
{{- $_ := set $creation "osImageText" ($recorded.osImage | toYaml) -}}
{{- end -}}
{{- $_ := set $state "creation" $creation -}}
{{- end -}}
{{- end -}}

{{/*
Refuses a creation record larger than the 8 KiB this chart writes, before it is parsed (a record is
read in the process that renders every tenant). Takes a dict: pool, what (the object), size, fix.
*/}}
{{- define "kubernetes-nodes.assertRecordSize" -}}
{{- if gt (int .size) 8192 -}}
{{- fail (printf "pool %s: %d bytes in the %s, more than the 8192 this chart writes, so it is refused before it is parsed; %s" .pool (int .size) .what .fix) -}}
{{- end -}}
{{- end -}}

{{/*
How a record's text nests, before it is parsed: "deeper" than depth levels, "unclosed" brackets, or "".
Takes a dict: text, depth, json. JSON strings are skipped; YAML's quoting depends on context, so every
bracket counts, and block nesting is read from indentation (at most 2 spaces) and nested - or ? entries.
*/}}
{{- define "kubernetes-nodes.recordNesting" -}}
{{- $text := .text -}}
{{- if .json -}}
{{- $text = regexReplaceAll "\"(?:[^\"\\\\]|\\\\.)*\"" $text "0" -}}
{{- end -}}
{{- if ne (len (regexFindAll "[\\[{]" $text -1)) (len (regexFindAll "[\\]}]" $text -1)) -}}
unclosed
{{- else -}}
{{- range until (int .depth) -}}
{{- $text = regexReplaceAll "[\\[{][^\\[\\]{}]*[\\]}]" $text "0" -}}
{{- end -}}
{{- if or (regexMatch "[\\[\\]{}]" $text) (and (not .json) (regexMatch "(?m)^(?: {3,}\\S| *[-?] +[-?](?: |$))" $text)) -}}
deeper
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The created-with annotation's value: JSON of the creation defaults that applied, "" when none did
(the annotation is then left out, and the MachineDeployment keeps its bytes).
*/}}
{{- define "kubernetes-nodes.creationAnnotation" -}}
{{- include "kubernetes-nodes.ensureCreationDefaults" . -}}
{{- $creation := ._kubernetesNodes.creation -}}
{{- $record := dict -}}
{{- with $creation.imageFactoryURL -}}
{{- $_ := set $record "imageFactoryURL" . -}}
{{- end -}}
{{- if $creation.imageFactoryCA -}}
{{- $_ := set $record "imageFactoryCA" true -}}
{{- end -}}
{{- if hasKey $creation "osImage" -}}
{{- $_ := set $record "osImage" $creation.osImage -}}
{{- end -}}
{{- if $record -}}
{{- $record | toJson -}}
{{- end -}}
{{- end -}}

{{/* The creation defaults as YAML, for tools that read what the chart resolved. */}}
{{- define "kubernetes-nodes.creationDefaults" -}}
{{- include "kubernetes-nodes.ensureCreationDefaults" . -}}
{{- $creation := ._kubernetesNodes.creation -}}
{{- dict "imageFactoryURL" $creation.imageFactoryURL "imageFactoryCA" $creation.imageFactoryCA "osImage" $creation.osImageText "origin" $creation.origin "from" $creation.from | toYaml -}}
{{- end -}}

{{/* How a recorded default is named in messages. */}}
{{- define "kubernetes-nodes.recordedSource" -}}
{{- printf "the platform default %s recorded when the pool was created (%s)" .field .root._kubernetesNodes.creation.from -}}
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
Talos machine.registries: the platform's mirrors, a pool's entry replacing the platform's for its host,
and the platform's registry config. Takes a dict: root, out (filled with mirrors and config, if any).
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
