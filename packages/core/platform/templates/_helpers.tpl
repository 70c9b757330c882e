{{/* Where every package's charts come from: the platform's package artifact. */}}
{{- define "platform.sourceRef" -}}
sourceRef:
  kind: OCIRepository
  name: cozystack-packages
  namespace: cozy-system
  path: /
{{- end -}}

{{/*
A Package: the operator installs the named package's variant, with per-component
values. Takes a dict: root (the top context), name, variant, and components
(component name -> values; a component with empty values is left out, and with
none left there is no `components` at all). bundles.disabledPackages wins over
everything: a disabled package renders nothing.
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
An optional package: the same arguments as platform.package, rendered only when
bundles.enabledPackages lists its name (and disabledPackages does not). Every
optional package is registered through this helper, so "not enabled" always
means "no Package", and nothing else changes.
*/}}
{{- define "platform.optionalPackage" -}}
{{- $enabled := .root.Values.bundles.enabledPackages | default list -}}
{{- if has .name $enabled -}}
{{- include "platform.package" . -}}
{{- end -}}
{{- end -}}

{{/*
The catalog's component values: exactly the kubernetesWorkerImage keys the
operator set, so every other key keeps the catalog chart's default. Takes a
dict: root, out (filled with those keys). Values are handed over as maps, never
through a YAML round trip that an odd string could break.
*/}}
{{- define "platform.kubernetesWorkerImage.values" -}}
{{- $set := .root.Values.kubernetesWorkerImage | default dict -}}
{{- range $key := list "imageFactoryURL" "storageClass" "storage" "images" -}}
{{- if and (hasKey $set $key) (not (kindIs "invalid" (get $set $key))) -}}
{{- $_ := set $.out $key (get $set $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The _cluster keys for tenant workers, only those set: talos.registryMirrors,
talos.registryConfig (keyed by host[:port], as Talos wants it),
talos.installerRepository, talos.imageFactoryURL, and osImage. Takes a dict:
root, out (filled with those keys).
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
{{- range $key := list "installerRepository" "imageFactoryURL" -}}
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
registries.config in Talos's shape: Talos keys machine.registries.config by
registry host[:port], so an endpoint URL key loses its scheme and path. Two keys
that name one host would silently shadow each other, so they are refused.
Takes a dict: root, out (filled host -> config).
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
