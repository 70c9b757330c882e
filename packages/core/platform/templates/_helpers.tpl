{{/* Where every package's charts come from: the platform's package artifact. */}}
{{- define "platform.sourceRef" -}}
sourceRef:
  kind: OCIRepository
  name: cozystack-packages
  namespace: cozy-system
  path: /
{{- end -}}

{{/*
A Package of the named variant, unless bundles.disabledPackages lists it. Takes a dict: root, name,
variant, components (name -> values; empty ones left out, and no `components` when none is left).
*/}}
{{- define "platform.package" -}}
{{- $disabled := .root.Values.bundles.disabledPackages | default list -}}
{{- if not (has .name $disabled) -}}
{{- $components := dict -}}
{{- range $component, $values := .components | default dict -}}
{{- if $values -}}
{{- $_ := set $components $component (dict "values" $values) -}}
{{- end -}}
{{- end }}
---
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata:
  name: {{ .name }}
spec:
  variant: {{ .variant }}
  {{- with $components }}
  components:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
{{- end -}}

{{/*
An optional package: as platform.package, only when bundles.enabledPackages lists it. Every optional
package goes through it, so "not enabled" is "no Package" and nothing else changes.
*/}}
{{- define "platform.optionalPackage" -}}
{{- $enabled := .root.Values.bundles.enabledPackages | default list -}}
{{- if has .name $enabled -}}
{{- include "platform.package" . -}}
{{- end -}}
{{- end -}}

{{/*
The catalog's component values: only the kubernetesWorkerImage keys set, as maps (no YAML round trip
an odd string could break). Takes a dict: root, out (filled with those keys).
*/}}
{{- define "platform.kubernetesWorkerImage.values" -}}
{{- $set := .root.Values.kubernetesWorkerImage | default dict -}}
{{- range $key := list "imageFactoryURL" "imageFactoryCA" "storageClass" "storage" "images" -}}
{{- if and (hasKey $set $key) (not (kindIs "invalid" (get $set $key))) -}}
{{- $_ := set $.out $key (get $set $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The _cluster keys for tenant workers that are set (README, "Platform defaults for tenant workers").
Takes a dict: root, out (filled with those keys).
*/}}
{{- define "platform.clusterValues" -}}
{{- $talos := dict -}}
{{- $registries := .root.Values.registries | default dict -}}
{{- with $registries.mirrors -}}
{{- $_ := set $talos "registryMirrors" . -}}
{{- end -}}
{{- $config := dict -}}
{{- include "platform.registryConfig" (dict "root" .root "out" $config) -}}
{{- with $config -}}
{{- $_ := set $talos "registryConfig" . -}}
{{- end -}}
{{- $tenant := .root.Values.tenantWorkers | default dict -}}
{{- $tenantTalos := $tenant.talos | default dict -}}
{{- range $key := list "installerRepository" "imageFactoryURL" "imageFactoryCA" -}}
{{- with get $tenantTalos $key -}}
{{- $_ := set $talos $key . -}}
{{- end -}}
{{- end -}}
{{- if $talos -}}
{{- $_ := set .out "talos" $talos -}}
{{- end -}}
{{- if and (hasKey $tenant "osImage") (not (kindIs "invalid" $tenant.osImage)) -}}
{{- $_ := set .out "osImage" $tenant.osImage -}}
{{- end -}}
{{- end -}}

{{/*
registries.config keyed by host[:port], as Talos keys it; two keys naming one host would shadow each
other, so they are refused. Takes a dict: root, out (filled host -> config).
*/}}
{{- define "platform.registryConfig" -}}
{{- $out := .out -}}
{{- $from := dict -}}
{{- range $endpoint, $config := (.root.Values.registries | default dict).config | default dict -}}
{{- $host := regexReplaceAll "^[a-zA-Z][a-zA-Z0-9+.-]*://" $endpoint "" | splitList "/" | first -}}
{{- if not $host -}}
{{- fail (printf "registries.config: key %q names no registry host; key each entry by the mirror endpoint URL or its host[:port], e.g. registry.mirror.internal:5000" $endpoint) -}}
{{- end -}}
{{- if hasKey $out $host -}}
{{- fail (printf "registries.config: keys %q and %q both name registry host %s, and Talos keeps one config per host; merge them into one entry" (get $from $host) $endpoint $host) -}}
{{- end -}}
{{- $_ := set $out $host $config -}}
{{- $_ := set $from $host $endpoint -}}
{{- end -}}
{{- end -}}

{{/*
Checks what the platform forwards with the receiving charts' rules, once per render: the schema may
be off (README, "What the platform checks"). Every template file includes it first.
*/}}
{{- define "platform.validate" -}}
{{- if not (hasKey . "_platformValidated") -}}
{{- $v := .Values -}}
{{- $patterns := include "worker-image-lib.patterns" . | fromYaml -}}
{{- range $list := list "enabledPackages" "disabledPackages" -}}
{{- $names := get ($v.bundles | default dict) $list | default list -}}
{{- if not (kindIs "slice" $names) -}}
{{- fail (printf "bundles.%s is %s, not a list; list package names such as cozystack.kubernetes-worker-image" $list (include "worker-image-lib.describe" $names)) -}}
{{- end -}}
{{- include "worker-image-lib.assertAtMost" (dict "prefix" "" "field" (printf "bundles.%s" $list) "value" $names "max" 128 "items" "packages" "fix" "list each package once") -}}
{{- range $i, $name := $names -}}
{{- include "worker-image-lib.assertString" (dict "prefix" "" "field" (printf "bundles.%s[%d]" $list $i) "value" $name) -}}
{{- end -}}
{{- end -}}
{{- $catalog := $v.kubernetesWorkerImage | default dict -}}
{{- if not (kindIs "map" $catalog) -}}
{{- fail (printf "kubernetesWorkerImage is %s, not a map of catalog settings" (include "worker-image-lib.describe" $catalog)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" "" "field" "kubernetesWorkerImage" "value" $catalog "keys" (list "imageFactoryURL" "imageFactoryCA" "storageClass" "storage" "images")) -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" "" "field" "kubernetesWorkerImage.imageFactoryCA" "value" (get $catalog "imageFactoryCA")) -}}
{{- range $field, $pattern := dict "imageFactoryURL" $patterns.imageFactoryURL "storage" $patterns.quantity "storageClass" $patterns.storageClass -}}
{{- $value := get $catalog $field -}}
{{- include "worker-image-lib.assertString" (dict "prefix" "" "field" (printf "kubernetesWorkerImage.%s" $field) "value" $value) -}}
{{- if and (hasKey $catalog $field) (not (kindIs "invalid" $value)) (not (and (le (len $value) 253) (regexMatch $pattern $value))) -}}
{{- fail (printf "kubernetesWorkerImage.%s %q is malformed: it must match %s, because the catalog writes it into its goldens; set it as the catalog's values.yaml describes" $field (include "worker-image-lib.truncate" $value) $pattern) -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey $catalog "storage") (not (kindIs "invalid" $catalog.storage)) -}}
{{- include "worker-image-lib.assertQuantity" (dict "prefix" "" "field" "kubernetesWorkerImage.storage" "value" $catalog.storage "example" "a size such as 6Gi" "out" dict) -}}
{{- end -}}
{{- $images := get $catalog "images" | default list -}}
{{- if not (kindIs "slice" $images) -}}
{{- fail (printf "kubernetesWorkerImage.images is %s, not a list of {schematicID, version} entries" (include "worker-image-lib.describe" $images)) -}}
{{- end -}}
{{- include "worker-image-lib.assertAtMost" (dict "prefix" "" "field" "kubernetesWorkerImage.images" "value" $images "max" 32 "items" "entries" "fix" "retire the flavors no pool uses (retire: true, then drop the entry)") -}}
{{- range $i, $entry := $images -}}
{{- include "worker-image-lib.assertCatalogEntryShape" (dict "label" (printf "kubernetesWorkerImage.images[%d]" $i) "entry" $entry) -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" "" "field" (printf "kubernetesWorkerImage.images[%d].imageFactoryCA" $i) "value" (get $entry "imageFactoryCA")) -}}
{{- include "worker-image-lib.assertChecksum" (dict "prefix" "" "field" (printf "kubernetesWorkerImage.images[%d].checksum" $i) "value" (get $entry "checksum")) -}}
{{- end -}}
{{- $registries := $v.registries | default dict -}}
{{- if not (kindIs "map" $registries) -}}
{{- fail (printf "registries is %s, not a map of mirrors and config" (include "worker-image-lib.describe" $registries)) -}}
{{- end -}}
{{- include "worker-image-lib.assertRegistryMirrors" (dict "prefix" "" "field" "registries.mirrors" "value" $registries.mirrors) -}}
{{- if not (kindIs "map" ($registries.config | default dict)) -}}
{{- fail (printf "registries.config is %s, not a map of endpoint to auth/TLS config" (include "worker-image-lib.describe" $registries.config)) -}}
{{- end -}}
{{- $config := dict -}}
{{- include "platform.registryConfig" (dict "root" . "out" $config) -}}
{{- include "worker-image-lib.assertRegistryConfig" (dict "prefix" "" "field" "registries.config" "value" $config) -}}
{{- $tenant := $v.tenantWorkers | default dict -}}
{{- if not (kindIs "map" $tenant) -}}
{{- fail (printf "tenantWorkers is %s, not a map" (include "worker-image-lib.describe" $tenant)) -}}
{{- end -}}
{{- $talos := $tenant.talos | default dict -}}
{{- if not (kindIs "map" $talos) -}}
{{- fail (printf "tenantWorkers.talos is %s, not a map" (include "worker-image-lib.describe" $talos)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" "" "field" "tenantWorkers.talos" "value" $talos "keys" (list "installerRepository" "imageFactoryURL" "imageFactoryCA")) -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" "" "field" "tenantWorkers.talos.imageFactoryCA" "value" $talos.imageFactoryCA) -}}
{{- include "worker-image-lib.assertInstallerRepository" (dict "prefix" "" "field" "tenantWorkers.talos.installerRepository" "value" $talos.installerRepository) -}}
{{- include "worker-image-lib.assertString" (dict "prefix" "" "field" "tenantWorkers.talos.imageFactoryURL" "value" $talos.imageFactoryURL) -}}
{{- $maxURL := (include "worker-image-lib.maxLengths" . | fromYaml).imageFactoryURL | int -}}
{{- if and $talos.imageFactoryURL (or (gt (len $talos.imageFactoryURL) $maxURL) (not (regexMatch $patterns.imageFactoryURL $talos.imageFactoryURL))) -}}
{{- fail (printf "tenantWorkers.talos.imageFactoryURL %q is not a plain http(s) URL: it must match %s and be at most %d characters, because new pools write it into their disk source; set it to a URL such as https://factory.mirror.internal" (include "worker-image-lib.truncate" $talos.imageFactoryURL) $patterns.imageFactoryURL $maxURL) -}}
{{- end -}}
{{- if and (hasKey $tenant "osImage") (not (kindIs "invalid" $tenant.osImage)) -}}
{{- include "worker-image-lib.assertOSImageShape" (dict "prefix" "" "field" "tenantWorkers.osImage" "value" $tenant.osImage) -}}
{{- end -}}
{{- $_ := set . "_platformValidated" true -}}
{{- end -}}
{{- end -}}
