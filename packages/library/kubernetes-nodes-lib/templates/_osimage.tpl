{{/*
Resolves the OS image once into ._kubernetesNodes.image (library README): path, schematicID, version
and factory URL, each with its source and checked on both paths. Reads no golden.
*/}}
{{- define "kubernetes-nodes.ensureImage" -}}
{{- include "kubernetes-nodes.validate" . -}}
{{- include "kubernetes-nodes.ensureCreationDefaults" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "image") -}}
{{- $creation := $state.creation -}}
{{- $pool := include "kubernetes-nodes.poolName" . -}}
{{- $origin := "osImage" -}}
{{- $os := dict -}}
{{- /* No default: a value that is not a map (false, "", null) is refused below, never read as {}. */ -}}
{{- if hasKey .Values "osImage" -}}
{{- $os = .Values.osImage -}}
{{- else if hasKey $creation "osImage" -}}
{{- $origin = "_cluster.osImage" -}}
{{- if has "osImage" $creation.fromCatalog -}}
{{- $origin = "the catalog's published osImage" -}}
{{- end -}}
{{- $os = $creation.osImage -}}
{{- end -}}
{{- include "worker-image-lib.assertOSImageShape" (dict "prefix" (printf "pool %s: " $pool) "field" $origin "value" $os) -}}
{{- $path := "" -}}
{{- $chosen := dict -}}
{{- if hasKey $os "builtin" -}}
{{- $path = "builtin" -}}
{{- $chosen = $os.builtin | default dict -}}
{{- else if hasKey $os "factory" -}}
{{- $path = "factory" -}}
{{- $chosen = $os.factory | default dict -}}
{{- end -}}
{{- $factoryURL := dict "value" (.Values.talos.imageFactoryURL | default "" | toString) "source" "talos.imageFactoryURL" -}}
{{- if not $factoryURL.value -}}
{{- if $creation.imageFactoryURL -}}
{{- $factoryURL = dict "value" $creation.imageFactoryURL "source" (include "kubernetes-nodes.recordedSource" (dict "root" . "field" "talos.imageFactoryURL" "catalog" (has "imageFactoryURL" $creation.fromCatalog))) -}}
{{- else -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.builtinTalos") -}}
{{- $factoryURL = dict "value" (index ._kubernetesNodes.tables "kubernetes-nodes.builtinTalos").imageFactoryURL "source" "the chart's built-in talos.imageFactoryURL" -}}
{{- end -}}
{{- end -}}
{{- /* talos.schematicID and talos.version: the pool's own, else the flavor it runs, else the chart's default. */ -}}
{{- $fallbacks := dict "imageFactoryURL" $factoryURL -}}
{{- range $field := list "schematicID" "version" -}}
{{- $own := get $.Values.talos $field | default "" | toString -}}
{{- $chosenValue := get $chosen $field | default "" | toString -}}
{{- if $own -}}
{{- $_ := set $fallbacks $field (dict "value" $own "source" (printf "talos.%s" $field)) -}}
{{- else -}}
{{- /* What the pool runs is read only when the value is needed: osImage's own field wins. */ -}}
{{- if not (and $path $chosenValue) -}}
{{- $_ := set $fallbacks $field (include "kubernetes-nodes.talosDefault" (dict "root" $ "field" $field) | fromYaml) -}}
{{- else -}}
{{- $_ := set $fallbacks $field (dict "value" "" "source" (printf "talos.%s" $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $resolved := dict "clone" (eq $path "builtin") "osImageOrigin" $origin -}}
{{- range $field := list "schematicID" "version" "imageFactoryURL" -}}
{{- $fallback := get $fallbacks $field -}}
{{- $value := $fallback.value -}}
{{- $source := $fallback.source -}}
{{- $chosenValue := get $chosen $field | toString -}}
{{- if and $path (ne $chosenValue "") (ne $chosenValue "<nil>") -}}
{{- $value = $chosenValue -}}
{{- $source = printf "%s.%s.%s" $origin $path $field -}}
{{- if ne $origin "osImage" -}}
{{- $source = include "kubernetes-nodes.recordedSource" (dict "root" $ "field" (printf "osImage.%s.%s" $path $field) "catalog" (has "osImage" $creation.fromCatalog)) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $resolved $field $value -}}
{{- $_ := set $resolved (printf "%sSource" $field) $source -}}
{{- end -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "worker-image-lib.patterns") -}}
{{- $patterns := index ._kubernetesNodes.tables "worker-image-lib.patterns" -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "worker-image-lib.maxLengths") -}}
{{- $maxLengths := index ._kubernetesNodes.tables "worker-image-lib.maxLengths" -}}
{{- range $field := list "schematicID" "version" "imageFactoryURL" -}}
{{- $value := get $resolved $field -}}
{{- if not (include "worker-image-lib.isImageField" (dict "field" $field "value" $value "patterns" $patterns "maxLengths" $maxLengths)) -}}
{{- fail (printf "pool %s: %s %q (from %s) is malformed: it must match %s and be at most %d characters, because it is interpolated into the disk source, the golden's name and the Talos installer image; set %s to a plain value such as %s" $pool $field (include "worker-image-lib.truncate" $value) (get $resolved (printf "%sSource" $field)) (get $patterns $field) (int (get $maxLengths $field)) (get $resolved (printf "%sSource" $field)) (get (dict "schematicID" "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515" "version" "v1.13.6" "imageFactoryURL" "https://factory.talos.dev") $field)) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $resolved "golden" (include "worker-image-lib.goldenName" $resolved) -}}
{{- $_ := set $state "image" $resolved -}}
{{- end -}}
{{- end -}}

{{/* The resolved OS image as YAML, for tools that read what the chart resolved. */}}
{{- define "kubernetes-nodes.osImage" -}}
{{- include "kubernetes-nodes.ensureImage" . -}}
{{- ._kubernetesNodes.image | toYaml -}}
{{- end -}}

{{/*
What an unset talos.schematicID or talos.version (field) resolves to, as YAML {value, source}: the flavor the
pool runs, read from its running KubevirtMachineTemplate (kubernetes-nodes.ensureRunningFlavor), so neither a
chart release nor a platform that moves the default re-images a running pool; else the one recorded when the
pool was created (kubernetes-nodes.ensureCreationDefaults: for a new pool, _cluster.talos's, else the
catalog's published one, which it records now); else the chart's default (kubernetes-nodes.builtinTalos).
Takes a dict: root, field.
*/}}
{{- define "kubernetes-nodes.talosDefault" -}}
{{- $root := .root -}}
{{- include "kubernetes-nodes.ensureRunningFlavor" $root -}}
{{- $flavor := $root._kubernetesNodes.runningFlavor -}}
{{- $creation := $root._kubernetesNodes.creation -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" $root "name" "kubernetes-nodes.builtinTalos") -}}
{{- $builtin := index $root._kubernetesNodes.tables "kubernetes-nodes.builtinTalos" -}}
{{- if get $flavor .field -}}
{{- dict "value" (get $flavor .field) "source" (printf "talos.%s unset: kept from what the pool runs, %s" .field $flavor.from) | toYaml -}}
{{- else if get $creation .field -}}
{{- dict "value" (get $creation .field) "source" (printf "talos.%s unset: %s" .field (include "kubernetes-nodes.recordedSource" (dict "root" $root "field" (printf "talos.%s" .field) "catalog" (has .field $creation.fromCatalog)))) | toYaml -}}
{{- else if eq (toString $root._kubernetesNodes.machineDeployment) "map[]" -}}
{{- dict "value" (get $builtin .field) "source" (printf "talos.%s unset: the chart's default for a new pool" .field) | toYaml -}}
{{- else -}}
{{- dict "value" (get $builtin .field) "source" (printf "talos.%s unset: the chart's default, since what the pool runs could not be read: %s" .field $flavor.why) | toYaml -}}
{{- end -}}
{{- end -}}
