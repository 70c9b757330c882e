{{/*
Patterns a tenant-set image field must match before it is interpolated into a
DataVolume name, a URL and the Talos machine config. The catalog chart applies
the same patterns, since both charts build the same golden name.
*/}}
{{- define "kubernetes-nodes.imagePatterns" -}}
schematicID: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'
version: '^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9a-z.]+)?$'
imageFactoryURL: '^https?://[a-zA-Z0-9]([-a-zA-Z0-9.]*[a-zA-Z0-9])?(:[0-9]{1,5})?(/[-a-zA-Z0-9._~%/]*)?$'
{{- end -}}

{{/* The golden DataVolume of a (schematicID, version): talos-worker-<schematicID>-<version>. */}}
{{- define "kubernetes-nodes.goldenName" -}}
{{- printf "talos-worker-%s-%s" .schematicID .version -}}
{{- end -}}

{{/*
Resolves the pool's OS image from osImage (the pool's own, else the platform's
recorded at creation) and talos.* without asking about goldens: which path
(clone or HTTP), and the schematicID, version and factory URL, each with where
it came from. Every resolved string is validated here, on both paths, so nothing
malformed reaches a name, a URL or the machine config.
Returns YAML; callers use fromYaml.
*/}}
{{- define "kubernetes-nodes.osImage" -}}
{{- $effective := include "kubernetes-nodes.effectiveOSImage" . | fromYaml -}}
{{- $os := $effective.value | default dict -}}
{{- $pool := include "kubernetes-nodes.poolName" . -}}
{{- if and (hasKey $os "builtin") (hasKey $os "factory") -}}
{{- fail (printf "pool %s: %s sets both builtin and factory; set osImage.builtin to clone the golden from cozy-public, or osImage.factory to import over HTTP, not both" $pool $effective.origin) -}}
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
{{- $factoryURL := include "kubernetes-nodes.effectiveImageFactoryURL" . | fromYaml -}}
{{- $fallbacks := dict
  "schematicID" (dict "value" (.Values.talos.schematicID | toString) "source" "talos.schematicID")
  "version" (dict "value" (.Values.talos.version | toString) "source" "talos.version")
  "imageFactoryURL" $factoryURL -}}
{{- $resolved := dict "clone" (eq $path "builtin") "osImageOrigin" $effective.origin -}}
{{- range $field := list "schematicID" "version" "imageFactoryURL" -}}
{{- $fallback := get $fallbacks $field -}}
{{- $value := $fallback.value -}}
{{- $source := $fallback.source -}}
{{- $chosenValue := get $chosen $field | toString -}}
{{- if and $path (ne $chosenValue "") (ne $chosenValue "<nil>") -}}
{{- $value = $chosenValue -}}
{{- $source = printf "%s.%s.%s" $effective.origin $path $field -}}
{{- if ne $effective.origin "osImage" -}}
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
{{- $resolved | toYaml -}}
{{- end -}}
