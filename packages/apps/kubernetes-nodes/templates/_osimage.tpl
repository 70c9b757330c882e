{{/*
Patterns a tenant-set image field must match before it is interpolated into a
DataVolume name, a URL and the Talos machine config. The catalog chart applies
the same patterns, since both charts build the same golden name.
*/}}
{{- define "kubernetes-nodes.imagePatterns" -}}
schematicID: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'
version: '^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9a-z]+(\.[0-9a-z]+)*)?$'
imageFactoryURL: '^https?://[a-zA-Z0-9]([-a-zA-Z0-9.]*[a-zA-Z0-9])?(:[0-9]{1,5})?(/[-a-zA-Z0-9._~%/]*)?$'
{{- end -}}

{{/* The golden DataVolume of a (schematicID, version): talos-worker-<schematicID>-<version>. */}}
{{- define "kubernetes-nodes.goldenName" -}}
{{- printf "talos-worker-%s-%s" .schematicID .version -}}
{{- end -}}

{{/*
Resolves the pool's OS image, once per render, into ._kubernetesNodes.image:
which path (clone or HTTP), and the schematicID, version and factory URL, each
with where it came from. osImage is the pool's own when the key is set (even to
{}), else the one recorded at creation; talos.imageFactoryURL is the pool's own,
else the recorded platform default, else the built-in. No golden is looked at.
Every resolved string is validated here, on both paths, so nothing malformed
reaches a name, a URL or the machine config.
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
{{- if hasKey .Values "osImage" -}}
{{- $os = .Values.osImage | default dict -}}
{{- else if hasKey $creation "osImage" -}}
{{- $origin = "_cluster.osImage" -}}
{{- $os = $creation.osImage | default dict -}}
{{- end -}}
{{- if not (kindIs "map" $os) -}}
{{- fail (printf "pool %s: %s is a %s; write it as a map with builtin or factory" $pool $origin (kindOf $os)) -}}
{{- end -}}
{{- include "kubernetes-nodes.assertKnownKeys" (dict "pool" $pool "field" $origin "value" $os "keys" (list "builtin" "factory")) -}}
{{- range $path, $fields := dict "builtin" (list "schematicID" "version") "factory" (list "schematicID" "version" "imageFactoryURL") -}}
{{- if hasKey $os $path -}}
{{- $chosen := get $os $path | default dict -}}
{{- if not (kindIs "map" $chosen) -}}
{{- fail (printf "pool %s: %s.%s is %s, not a map; write it as %s: {} to take talos.*, or set its fields (%s)" $pool $origin $path (include "kubernetes-nodes.describe" $chosen) $path (join ", " $fields)) -}}
{{- end -}}
{{- include "kubernetes-nodes.assertKnownKeys" (dict "pool" $pool "field" (printf "%s.%s" $origin $path) "value" $chosen "keys" $fields) -}}
{{- range $field := $fields -}}
{{- include "kubernetes-nodes.assertString" (dict "pool" $pool "field" (printf "%s.%s.%s" $origin $path $field) "value" (get $chosen $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey $os "builtin") (hasKey $os "factory") -}}
{{- fail (printf "pool %s: %s sets both builtin and factory; set osImage.builtin to clone the golden from cozy-public, or osImage.factory to import over HTTP, not both" $pool $origin) -}}
{{- end -}}
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
{{- $factoryURL = dict "value" $creation.imageFactoryURL "source" (include "kubernetes-nodes.recordedSource" (dict "root" . "field" "_cluster.talos.imageFactoryURL")) -}}
{{- else -}}
{{- $factoryURL = dict "value" (include "kubernetes-nodes.builtinTalos" . | fromYaml).imageFactoryURL "source" "the chart's built-in talos.imageFactoryURL" -}}
{{- end -}}
{{- end -}}
{{- $fallbacks := dict
  "schematicID" (dict "value" (.Values.talos.schematicID | toString) "source" "talos.schematicID")
  "version" (dict "value" (.Values.talos.version | toString) "source" "talos.version")
  "imageFactoryURL" $factoryURL -}}
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
{{- $source = include "kubernetes-nodes.recordedSource" (dict "root" $ "field" $source) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $resolved $field $value -}}
{{- $_ := set $resolved (printf "%sSource" $field) $source -}}
{{- end -}}
{{- $patterns := include "kubernetes-nodes.imagePatterns" . | fromYaml -}}
{{- range $field := list "schematicID" "version" "imageFactoryURL" -}}
{{- $value := get $resolved $field -}}
{{- if not (regexMatch (get $patterns $field) $value) -}}
{{- fail (printf "pool %s: %s %q (from %s) is malformed: it must match %s, because it is interpolated into the disk source, the golden's name and the Talos installer image; set %s to a plain value such as %s" $pool $field $value (get $resolved (printf "%sSource" $field)) (get $patterns $field) (get $resolved (printf "%sSource" $field)) (get (dict "schematicID" "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515" "version" "v1.13.6" "imageFactoryURL" "https://factory.talos.dev") $field)) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $resolved "golden" (include "kubernetes-nodes.goldenName" $resolved) -}}
{{- $_ := set $state "image" $resolved -}}
{{- end -}}
{{- end -}}

{{/* The resolved OS image as YAML, for tools that read what the chart resolved. */}}
{{- define "kubernetes-nodes.osImage" -}}
{{- include "kubernetes-nodes.ensureImage" . -}}
{{- ._kubernetesNodes.image | toYaml -}}
{{- end -}}
