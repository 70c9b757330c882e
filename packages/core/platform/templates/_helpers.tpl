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
operator set, so every other key keeps the catalog chart's default. YAML; an
empty map when none is set.
*/}}
{{- define "platform.kubernetesWorkerImage.values" -}}
{{- $set := .Values.kubernetesWorkerImage | default dict -}}
{{- $out := dict -}}
{{- range $key := list "imageFactoryURL" "storageClass" "storage" "images" -}}
{{- if and (hasKey $set $key) (not (kindIs "invalid" (get $set $key))) -}}
{{- $_ := set $out $key (get $set $key) -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
The _cluster keys for tenant workers, only those set: talos.registryMirrors,
talos.registryConfig (keyed by host[:port], as Talos wants it),
talos.installerRepository, talos.imageFactoryURL, and osImage.
*/}}
{{- define "platform.clusterValues" -}}
{{- $talos := dict -}}
{{- $registries := .Values.registries | default dict -}}
{{- with $registries.mirrors -}}
{{- $_ := set $talos "registryMirrors" . -}}
{{- end -}}
{{- with include "platform.registryConfig" . | fromYaml -}}
{{- $_ := set $talos "registryConfig" . -}}
{{- end -}}
{{- $tenant := .Values.tenantWorkers | default dict -}}
{{- $tenantTalos := $tenant.talos | default dict -}}
{{- range $key := list "installerRepository" "imageFactoryURL" -}}
{{- with get $tenantTalos $key -}}
{{- $_ := set $talos $key . -}}
{{- end -}}
{{- end -}}
{{- $cluster := dict -}}
{{- if $talos -}}
{{- $_ := set $cluster "talos" $talos -}}
{{- end -}}
{{- if and (hasKey $tenant "osImage") (not (kindIs "invalid" $tenant.osImage)) -}}
{{- $_ := set $cluster "osImage" $tenant.osImage -}}
{{- end -}}
{{- toYaml $cluster -}}
{{- end -}}

{{/*
registries.config in Talos's shape: Talos keys machine.registries.config by
registry host[:port], so an endpoint URL key loses its scheme and path. Two keys
that name one host would silently shadow each other, so they are refused.
*/}}
{{- define "platform.registryConfig" -}}
{{- $out := dict -}}
{{- $from := dict -}}
{{- range $endpoint, $config := (.Values.registries | default dict).config | default dict -}}
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
{{- toYaml $out -}}
{{- end -}}
