{{/*
The chart's Talos defaults, the last fallback: the sources, and the flavor a new pool gets. values.yaml
leaves the sources "" (Helm cannot tell unset from default), so a pool that writes the built-in value
still wins over a platform default.
*/}}
{{- define "kubernetes-nodes.builtinTalos" -}}
imageFactoryURL: {{ include "worker-image-lib.builtinImageFactoryURL" . }}
installerRepository: factory.talos.dev/installer
{{ include "worker-image-lib.builtinFlavor" . }}
{{- end -}}

{{/*
The creation record (library README), read once into ._kubernetesNodes.creation: imageFactoryURL,
imageFactoryCA (whether the platform's CA applies; never the PEM), schematicID and version (the Talos
flavor the platform gave new pools, "" when none: a pool that sets neither and whose running flavor
cannot be read takes them), osImage (absent when none), osImageText, origin (platform or builtin), from
(where it was read), fromCatalog (the fields that came from the catalog's published defaults rather
than _cluster; absent from the record when none did).
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
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" (printf "pool %s: " $pool) "field" (printf "the %s" $creation.from) "value" $parsed "keys" (list "imageFactoryURL" "osImage" "imageFactoryCA" "schematicID" "version" "fromCatalog")) -}}
{{- include "kubernetes-nodes.assertFromCatalog" (dict "pool" $pool "from" $creation.from "record" $parsed) -}}
{{- include "worker-image-lib.assertString" (dict "prefix" (printf "pool %s: " $pool) "field" (printf "imageFactoryURL in the %s" $creation.from) "value" (get $parsed "imageFactoryURL")) -}}
{{- if and (hasKey $parsed "imageFactoryCA") (not (eq (toJson (get $parsed "imageFactoryCA")) "true")) -}}
{{- fail (printf "pool %s: imageFactoryCA in the %s is %s, but the chart writes only true there (the platform's CA applied at creation); delete that key to stop taking the platform's CA, or set it back to true" $pool $creation.from (include "worker-image-lib.describe" (get $parsed "imageFactoryCA"))) -}}
{{- end -}}
{{- /* Read only where what the pool runs cannot be: checked as the pool's own value would be. */ -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "worker-image-lib.patterns") -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "worker-image-lib.maxLengths") -}}
{{- $patterns := index $state.tables "worker-image-lib.patterns" -}}
{{- $maxLengths := index $state.tables "worker-image-lib.maxLengths" -}}
{{- range $field := list "schematicID" "version" -}}
{{- if hasKey $parsed $field -}}
{{- $value := get $parsed $field -}}
{{- if not (include "worker-image-lib.isImageField" (dict "field" $field "value" $value "patterns" $patterns "maxLengths" $maxLengths)) -}}
{{- fail (printf "pool %s: %s in the %s is %s, not a Talos %s as this chart records it (it must match %s and be at most %d characters); set the pool's own talos.%s to the one it runs, or delete that key so that the pool keeps what it runs (the chart's default where that cannot be read)" $pool $field $creation.from (include "worker-image-lib.describe" $value) (ternary "schematic ID" "release" (eq $field "schematicID")) (get $patterns $field) (int (get $maxLengths $field)) $field) -}}
{{- end -}}
{{- end -}}
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
{{- /* A new pool: per field, _cluster's default, else the catalog's published one (fromCatalog names those). */ -}}
{{- $platformTalos := (.Values._cluster | default dict).talos | default dict -}}
{{- $platform := .Values._cluster | default dict -}}
{{- include "kubernetes-nodes.ensurePublished" . -}}
{{- $published := $state.published -}}
{{- $publishedTalos := $published.talos | default dict -}}
{{- $fromCatalog := list -}}
{{- $url := get $platformTalos "imageFactoryURL" | default "" | toString -}}
{{- if and (not $url) (get $publishedTalos "imageFactoryURL") -}}
{{- $url = get $publishedTalos "imageFactoryURL" -}}
{{- $fromCatalog = append $fromCatalog "imageFactoryURL" -}}
{{- end -}}
{{- $_ := set $recorded "imageFactoryURL" $url -}}
{{- if get $platformTalos "imageFactoryCA" -}}
{{- $_ := set $recorded "imageFactoryCA" true -}}
{{- else if get $publishedTalos "imageFactoryCA" -}}
{{- $_ := set $recorded "imageFactoryCA" true -}}
{{- $fromCatalog = append $fromCatalog "imageFactoryCA" -}}
{{- end -}}
{{- /* The Talos flavor new pools take, per field: what the pool runs never comes from here, so moving it rolls nothing. */ -}}
{{- range $field := list "schematicID" "version" -}}
{{- if get $platformTalos $field -}}
{{- $_ := set $recorded $field (get $platformTalos $field) -}}
{{- else if get $publishedTalos $field -}}
{{- $_ := set $recorded $field (get $publishedTalos $field) -}}
{{- $fromCatalog = append $fromCatalog $field -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey $platform "osImage") (not (kindIs "invalid" $platform.osImage)) -}}
{{- $_ := set $recorded "osImage" $platform.osImage -}}
{{- else if and (hasKey $published "osImage") (not (kindIs "invalid" $published.osImage)) -}}
{{- $_ := set $recorded "osImage" $published.osImage -}}
{{- $fromCatalog = append $fromCatalog "osImage" -}}
{{- end -}}
{{- include "kubernetes-nodes.assertRecordable" (dict "root" . "pool" $pool "record" $recorded "fromCatalog" $fromCatalog) -}}
{{- if $fromCatalog -}}
{{- $_ := set $recorded "fromCatalog" $fromCatalog -}}
{{- $_ := set $creation "from" "today's platform defaults (_cluster, then the catalog's published ones), as for a new pool; its MachineDeployment records those that apply and which came from the catalog" -}}
{{- else -}}
{{- $_ := set $creation "from" "today's platform defaults (_cluster), as for a new pool; its MachineDeployment records those that apply" -}}
{{- end -}}
{{- end -}}
{{- $_ := set $creation "imageFactoryURL" (get $recorded "imageFactoryURL" | default "" | toString) -}}
{{- $_ := set $creation "imageFactoryCA" (hasKey $recorded "imageFactoryCA") -}}
{{- $_ := set $creation "fromCatalog" (get $recorded "fromCatalog" | default list) -}}
{{- $_ := set $creation "schematicID" (get $recorded "schematicID" | default "" | toString) -}}
{{- $_ := set $creation "version" (get $recorded "version" | default "" | toString) -}}
{{- if hasKey $recorded "osImage" -}}
{{- $_ := set $creation "osImage" $recorded.osImage -}}
{{- $_ := set $creation "osImageText" ($recorded.osImage | toYaml) -}}
{{- end -}}
{{- $_ := set $state "creation" $creation -}}
{{- end -}}
{{- end -}}

{{/*
Refuses, when a new pool is created, a default it would record that a later render would refuse to read:
each image field of the record (the factory URL, the Talos schematic and version, osImage's fields) is bounded as the pool bounds its own
(worker-image-lib.isImageField), so the record is always one the chart reads back (under 4.5 KiB, well
within the 8 KiB read bound) and never one that fails every later upgrade, even once the default is fixed.
Shapes, kinds and unknown keys were refused with _cluster's and the published object's checks already.
Takes a dict: root, pool, record (the fields to record), fromCatalog (the fields the catalog published).
*/}}
{{- define "kubernetes-nodes.assertRecordable" -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" .root "name" "worker-image-lib.patterns") -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" .root "name" "worker-image-lib.maxLengths") -}}
{{- $patterns := index .root._kubernetesNodes.tables "worker-image-lib.patterns" -}}
{{- $maxLengths := index .root._kubernetesNodes.tables "worker-image-lib.maxLengths" -}}
{{- $fields := list -}}
{{- range $name := list "imageFactoryURL" "schematicID" "version" -}}
{{- with get $.record $name -}}
{{- $fields = append $fields (list (printf "talos.%s" $name) $name . (has $name $.fromCatalog)) -}}
{{- end -}}
{{- end -}}
{{- $os := get .record "osImage" | default dict -}}
{{- range $path := keys $os | sortAlpha -}}
{{- $chosen := get $os $path | default dict -}}
{{- range $name := keys $chosen | sortAlpha -}}
{{- with get $chosen $name -}}
{{- $fields = append $fields (list (printf "osImage.%s.%s" $path $name) $name . (has "osImage" $.fromCatalog)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $fields -}}
{{- $path := index . 0 -}}
{{- $name := index . 1 -}}
{{- $value := index . 2 -}}
{{- if not (include "worker-image-lib.isImageField" (dict "field" $name "value" $value "patterns" $patterns "maxLengths" $maxLengths)) -}}
{{- $channel := printf "the platform default _cluster.%s" $path -}}
{{- $fix := printf "fix the platform's default (tenantWorkers in the platform chart writes _cluster.%s)" $path -}}
{{- if index . 3 -}}
{{- $channel = printf "the default %s of %s" $path (include "worker-image-lib.tenantDefaultsChannel" $.root) -}}
{{- $fix = "fix the catalog's tenantWorkers, which publish it (the catalog refuses such a value from this release on)" -}}
{{- end -}}
{{- fail (printf "pool %s: %s %q is malformed for a pool: it must match %s and be at most %d characters. A new pool records the platform's defaults at creation (annotation kubernetes-worker-image.cozystack.io/created-with on its MachineDeployment), and a record holding this value is one the chart refuses at later renders (a pool without its own value reads it; past 8 KiB the whole record is refused) even once the default is fixed, so the pool is not created with it; %s, then render the pool again" $.pool $channel (include "worker-image-lib.truncate" (toString $value)) (get $patterns $name) (int (get $maxLengths $name)) $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The most a creation record may hold, in bytes: what the chart writes, and reads back. */}}
{{- define "kubernetes-nodes.maxRecordBytes" -}}
8192
{{- end -}}

{{/*
Refuses a creation record larger than the 8 KiB this chart writes, before it is parsed (a record is
read in the process that renders every tenant). Takes a dict: pool, what (the object), size, fix.
*/}}
{{- define "kubernetes-nodes.assertRecordSize" -}}
{{- $max := include "kubernetes-nodes.maxRecordBytes" . | int -}}
{{- if gt (int .size) $max -}}
{{- fail (printf "pool %s: %d bytes in the %s, more than the %d this chart writes, so it is refused before it is parsed; %s" .pool (int .size) .what $max .fix) -}}
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
{{- range $field := list "schematicID" "version" -}}
{{- with get $creation $field -}}
{{- $_ := set $record $field . -}}
{{- end -}}
{{- end -}}
{{- if hasKey $creation "osImage" -}}
{{- $_ := set $record "osImage" $creation.osImage -}}
{{- end -}}
{{- with $creation.fromCatalog -}}
{{- $_ := set $record "fromCatalog" . -}}
{{- end -}}
{{- if $record -}}
{{- $text := $record | toJson -}}
{{- /* Never one the next render refuses: an earlier version's record is carried in as JSON, which escapes < > & as six bytes each. */ -}}
{{- $max := include "kubernetes-nodes.maxRecordBytes" . | int -}}
{{- if gt (len $text) $max -}}
{{- fail (printf "pool %s: the creation record this render would write onto its MachineDeployment (annotation kubernetes-worker-image.cozystack.io/created-with, carried from %s) is %d bytes as JSON, more than the %d the chart reads back, so every later render would refuse it and it is not written; delete that record to take the built-in values (the pool's own talos.imageFactoryURL and osImage still win), or write its values as this chart does (a plain http(s) URL, and an osImage with builtin or factory)" (include "kubernetes-nodes.poolName" .) $creation.from (len $text) $max) -}}
{{- end -}}
{{- $text -}}
{{- end -}}
{{- end -}}

{{/* The creation defaults as YAML, for tools that read what the chart resolved. */}}
{{- define "kubernetes-nodes.creationDefaults" -}}
{{- include "kubernetes-nodes.ensureCreationDefaults" . -}}
{{- $creation := ._kubernetesNodes.creation -}}
{{- dict "imageFactoryURL" $creation.imageFactoryURL "imageFactoryCA" $creation.imageFactoryCA "schematicID" $creation.schematicID "version" $creation.version "osImage" $creation.osImageText "origin" $creation.origin "from" $creation.from "fromCatalog" $creation.fromCatalog | toYaml -}}
{{- end -}}

{{/*
How a recorded default is named in messages, with its channel. Takes a dict: root, field (its path in
_cluster, such as talos.imageFactoryURL), catalog (true: it came from the catalog's published defaults).
*/}}
{{- define "kubernetes-nodes.recordedSource" -}}
{{- if .catalog -}}
{{- printf "the default %s of %s, recorded when the pool was created (%s)" .field (include "worker-image-lib.tenantDefaultsChannel" .root) .root._kubernetesNodes.creation.from -}}
{{- else -}}
{{- printf "the platform default _cluster.%s recorded when the pool was created (%s)" .field .root._kubernetesNodes.creation.from -}}
{{- end -}}
{{- end -}}

{{/*
Settings that reach workers only through the TalosConfigTemplate (stable name, nothing rolls), applied at
render time to every pool, new and existing; resolved once into ._kubernetesNodes.machineConfigDefaults,
which the machine config (_talosconfig.tpl) and the facts tools read (machineConfigFacts) both take, so
the two never disagree:
- installerRepository, with installerRepositorySource: the pool's own, else _cluster's, else the catalog's
  published one, else the built-in.
- registries (Talos machine.registries; {} when none): mirrors merged per host, the catalog's published
  ones, then _cluster's, then the pool's own, each replacing the one before for its host; config merged per
  host, the catalog's published CAs (PEM, written base64 as Talos reads tls.ca), then _cluster's entry for
  a host replacing it (Talos's own shape, as written).
- mirrorSources and configSources: per host, the channel its entry came from.
Reads nothing the render does not read already (the published defaults are read once). Takes the root.
*/}}
{{- define "kubernetes-nodes.ensureMachineConfigDefaults" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "machineConfigDefaults") -}}
{{- $platformTalos := (.Values._cluster | default dict).talos | default dict -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.builtinTalos") -}}
{{- include "kubernetes-nodes.ensurePublished" . -}}
{{- $publishedTalos := $state.published.talos | default dict -}}
{{- $published := "" -}}
{{- if $publishedTalos -}}
{{- $published = include "worker-image-lib.tenantDefaultsChannel" . -}}
{{- end -}}
{{- $installer := dict "value" (.Values.talos.installerRepository | default "") "source" "talos.installerRepository" -}}
{{- if not $installer.value -}}
{{- if get $platformTalos "installerRepository" -}}
{{- $installer = dict "value" (get $platformTalos "installerRepository") "source" "the platform default _cluster.talos.installerRepository" -}}
{{- else if get $publishedTalos "installerRepository" -}}
{{- $installer = dict "value" (get $publishedTalos "installerRepository") "source" (printf "the default talos.installerRepository of %s" $published) -}}
{{- else -}}
{{- $installer = dict "value" (index $state.tables "kubernetes-nodes.builtinTalos").installerRepository "source" "the chart's built-in talos.installerRepository" -}}
{{- end -}}
{{- end -}}
{{- $mirrors := dict -}}
{{- $mirrorSources := dict -}}
{{- range $host, $mirror := (get $publishedTalos "registryMirrors" | default dict) -}}
{{- $_ := set $mirrors $host $mirror -}}
{{- $_ := set $mirrorSources $host (printf "the default talos.registryMirrors of %s" $published) -}}
{{- end -}}
{{- range $host, $mirror := (get $platformTalos "registryMirrors" | default dict) -}}
{{- $_ := set $mirrors $host $mirror -}}
{{- $_ := set $mirrorSources $host "the platform default _cluster.talos.registryMirrors" -}}
{{- end -}}
{{- range $host, $mirror := (.Values.talos.registryMirrors | default dict) -}}
{{- $_ := set $mirrors $host $mirror -}}
{{- $_ := set $mirrorSources $host "talos.registryMirrors" -}}
{{- end -}}
{{- $config := dict -}}
{{- $configSources := dict -}}
{{- range $host, $entry := (get $publishedTalos "registryConfig" | default dict) -}}
{{- $_ := set $config $host (dict "tls" (dict "ca" ($entry.tls.ca | b64enc))) -}}
{{- $_ := set $configSources $host (printf "the default talos.registryConfig of %s" $published) -}}
{{- end -}}
{{- range $host, $entry := (get $platformTalos "registryConfig" | default dict) -}}
{{- $_ := set $config $host $entry -}}
{{- $_ := set $configSources $host "the platform default _cluster.talos.registryConfig" -}}
{{- end -}}
{{- $registries := dict -}}
{{- if $mirrors -}}
{{- $_ := set $registries "mirrors" $mirrors -}}
{{- end -}}
{{- if $config -}}
{{- $_ := set $registries "config" $config -}}
{{- end -}}
{{- $_ := set $state "machineConfigDefaults" (dict "installerRepository" $installer.value "installerRepositorySource" $installer.source "registries" $registries "mirrorSources" $mirrorSources "configSources" $configSources) -}}
{{- end -}}
{{- end -}}

{{/*
What the worker's machine config takes from the pool's values and the platform defaults, as YAML, for tools
that read what the chart resolved (workerimage plan): installer (image, repository, source), registryMirrors
(per host, in order: endpoints, overridePath and skipFallback as written, source) and registryConfig (per
host: whether it trusts a CA, source; never the CA or a credential). Read from ensureMachineConfigDefaults,
which the machine config is written from.
*/}}
{{- define "kubernetes-nodes.machineConfigFacts" -}}
{{- include "kubernetes-nodes.ensureMachineConfigDefaults" . -}}
{{- $defaults := ._kubernetesNodes.machineConfigDefaults -}}
{{- $mirrors := list -}}
{{- range $host, $mirror := ($defaults.registries.mirrors | default dict) -}}
{{- $fact := dict "host" $host "endpoints" $mirror.endpoints "source" (get $defaults.mirrorSources $host) -}}
{{- range $flag := list "overridePath" "skipFallback" -}}
{{- if hasKey $mirror $flag -}}
{{- $_ := set $fact $flag (get $mirror $flag) -}}
{{- end -}}
{{- end -}}
{{- $mirrors = append $mirrors $fact -}}
{{- end -}}
{{- $config := list -}}
{{- range $host, $entry := ($defaults.registries.config | default dict) -}}
{{- $config = append $config (dict "host" $host "ca" (not (empty (get (get $entry "tls" | default dict) "ca"))) "source" (get $defaults.configSources $host)) -}}
{{- end -}}
{{- dict "installer" (dict "image" (include "kubernetes-nodes.installerImage" .) "repository" $defaults.installerRepository "source" $defaults.installerRepositorySource) "registryMirrors" $mirrors "registryConfig" $config | toYaml -}}
{{- end -}}

{{/*
Refuses a record's fromCatalog that is not what this chart writes: a list of the record's own fields,
each once. Takes a dict: pool, from (the record), record (parsed).
*/}}
{{- define "kubernetes-nodes.assertFromCatalog" -}}
{{- if hasKey .record "fromCatalog" -}}
{{- $list := get .record "fromCatalog" -}}
{{- $fix := "delete that key if those fields came from _cluster, or write it as this chart does, a list of the record's own imageFactoryURL, imageFactoryCA, schematicID, version and osImage that came from the catalog's published defaults, e.g. [\"imageFactoryURL\"]" -}}
{{- if not (and (kindIs "slice" $list) $list (le (len $list) 5)) -}}
{{- fail (printf "pool %s: fromCatalog in the %s is %s, not a list of one to five field names; %s" .pool .from (include "worker-image-lib.describe" $list) $fix) -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $field := $list -}}
{{- if not (and (kindIs "string" $field) (has $field (list "imageFactoryURL" "imageFactoryCA" "schematicID" "version" "osImage")) (hasKey $.record $field) (not (hasKey $seen $field))) -}}
{{- fail (printf "pool %s: fromCatalog in the %s lists %s, which is not a field the record holds (once); %s" $.pool $.from (include "worker-image-lib.describe" $field) $fix) -}}
{{- end -}}
{{- $_ := set $seen $field true -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The catalog's published defaults for tenant workers (worker-image-lib.tenantDefaults), read at most once
into ._kubernetesNodes.published ({} when there is none): one GET by name in cozy-public, which only the
platform writes, refused before it is parsed when it is larger than maxBytes or nested deeper than the
catalog writes it, and checked as _cluster is. A lookup error fails the render. Takes the root context.
*/}}
{{- define "kubernetes-nodes.ensurePublished" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "published") -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "worker-image-lib.tenantDefaults") -}}
{{- $where := index $state.tables "worker-image-lib.tenantDefaults" -}}
{{- $pool := include "kubernetes-nodes.poolName" . -}}
{{- $published := dict -}}
{{- $object := lookup "v1" "ConfigMap" $where.namespace $where.name -}}
{{- if $object -}}
{{- $what := printf "pool %s: ConfigMap %s/%s, the catalog's published defaults for new pools," $pool $where.namespace $where.name -}}
{{- $fix := "the catalog (kubernetes-worker-image) writes it: set the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values and let it write the object again, rather than editing the object" -}}
{{- $data := $object.data | default dict -}}
{{- if not (hasKey $data $where.key) -}}
{{- fail (printf "%s has no key %s (its keys: %s); %s" $what $where.key (include "worker-image-lib.truncate" (keys $data | sortAlpha | join ", " | default "none")) $fix) -}}
{{- end -}}
{{- $text := get $data $where.key -}}
{{- if gt (len $text) (int $where.maxBytes) -}}
{{- fail (printf "%s holds %d bytes in %s, more than the %d a pool reads, so it is refused before it is parsed; %s (the catalog refuses defaults that large)" $what (len $text) $where.key (int $where.maxBytes) $fix) -}}
{{- end -}}
{{- $nesting := include "kubernetes-nodes.recordNesting" (dict "text" $text "depth" 5 "json" true) -}}
{{- if eq $nesting "deeper" -}}
{{- fail (printf "%s nests deeper in %s than the 5 levels the catalog writes (talos, registryMirrors, a host, endpoints; or talos, registryConfig, a host, tls), so it is refused before it is parsed; %s" $what $where.key $fix) -}}
{{- end -}}
{{- $parsed := dict "Error" "unclosed" -}}
{{- if not $nesting -}}
{{- $parsed = $text | fromJson -}}
{{- end -}}
{{- if or (hasKey $parsed "Error") (not (regexMatch "^[{]" $text)) -}}
{{- fail (printf "%s holds in %s %s, not a JSON object as the catalog writes it; %s" $what $where.key (include "worker-image-lib.describe" $text) $fix) -}}
{{- end -}}
{{- include "kubernetes-nodes.assertPublished" (dict "root" . "pool" $pool "prefix" (printf "%s %s (fix the catalog's tenantWorkers, registries.mirrors, registries.config and monitoring.enabled values, which write it): " $what $where.key) "value" $parsed) -}}
{{- $published = $parsed -}}
{{- end -}}
{{- $_ := set $state "published" $published -}}
{{- end -}}
{{- end -}}

{{/*
The catalog's published defaults, parsed, checked with the rules _cluster's keys are checked with: only
the keys the catalog writes (of registryConfig only each host's tls.ca, the catalog's rule: no
credential, since tenants may read the object). Takes a dict: root, pool, prefix (names the object), value.
*/}}
{{- define "kubernetes-nodes.assertPublished" -}}
{{- $prefix := .prefix -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $prefix "field" "the object" "value" .value "keys" (list "talos" "osImage" "kubernetesWorkerImage")) -}}
{{- $talos := dict -}}
{{- if hasKey .value "talos" -}}
{{- $talos = get .value "talos" -}}
{{- end -}}
{{- if not (kindIs "map" $talos) -}}
{{- fail (printf "%stalos is %s, not a map; the catalog writes it from its tenantWorkers.talos and registries.mirrors" $prefix (include "worker-image-lib.describe" $talos)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $prefix "field" "talos" "value" $talos "keys" (list "imageFactoryURL" "imageFactoryCA" "installerRepository" "schematicID" "version" "registryMirrors" "registryConfig")) -}}
{{- include "worker-image-lib.assertString" (dict "prefix" $prefix "field" "talos.imageFactoryURL" "value" (get $talos "imageFactoryURL")) -}}
{{- include "worker-image-lib.assertInstallerRepository" (dict "prefix" $prefix "field" "talos.installerRepository" "value" (get $talos "installerRepository")) -}}
{{- include "worker-image-lib.assertRegistryMirrors" (dict "prefix" $prefix "field" "talos.registryMirrors" "value" (get $talos "registryMirrors")) -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" $prefix "field" "talos.imageFactoryCA" "value" (get $talos "imageFactoryCA")) -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" .root "name" "worker-image-lib.patterns") -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" .root "name" "worker-image-lib.maxLengths") -}}
{{- $patterns := index .root._kubernetesNodes.tables "worker-image-lib.patterns" -}}
{{- $maxLengths := index .root._kubernetesNodes.tables "worker-image-lib.maxLengths" -}}
{{- range $field := list "schematicID" "version" -}}
{{- $value := get $talos $field -}}
{{- if and (hasKey $talos $field) (not (include "worker-image-lib.isImageField" (dict "field" $field "value" $value "patterns" $patterns "maxLengths" $maxLengths))) -}}
{{- fail (printf "%stalos.%s is %s, not a Talos %s the catalog publishes (it must match %s and be at most %d characters), and new pools would take it; the catalog writes it from its tenantWorkers.talos.%s" $prefix $field (include "worker-image-lib.describe" $value) (ternary "schematic ID" "release" (eq $field "schematicID")) (get $patterns $field) (int (get $maxLengths $field)) $field) -}}
{{- end -}}
{{- end -}}
{{- if hasKey $talos "registryConfig" -}}
{{- $registryConfig := get $talos "registryConfig" -}}
{{- if not (kindIs "map" $registryConfig) -}}
{{- fail (printf "%stalos.registryConfig is %s, not a map; the catalog writes it from its registries.config, registry host -> {tls: {ca: <PEM>}}" $prefix (include "worker-image-lib.describe" $registryConfig)) -}}
{{- end -}}
{{- include "worker-image-lib.assertRegistryCAs" (dict "prefix" $prefix "field" "talos.registryConfig" "value" $registryConfig) -}}
{{- end -}}
{{- if and (hasKey .value "osImage") (not (kindIs "invalid" .value.osImage)) -}}
{{- include "worker-image-lib.assertOSImageShape" (dict "prefix" $prefix "field" "osImage" "value" .value.osImage) -}}
{{- end -}}
{{- $_ := include "kubernetes-nodes.metricsSwitch" (dict "prefix" $prefix "field" "kubernetesWorkerImage" "value" .value "writer" "the catalog" "switch" "monitoring.enabled" "where" " in its values") -}}
{{- end -}}
