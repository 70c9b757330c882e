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
an odd string could break); and tenantWorkers.talos.schematicID/version when set, so the catalog's
retirement guard counts the flavor new pools take (_cluster.talos carries it to the pools; the catalog
publishes the same, read after _cluster). Takes a dict: root, out (filled with those keys).
*/}}
{{- define "platform.kubernetesWorkerImage.values" -}}
{{- $set := .root.Values.kubernetesWorkerImage | default dict -}}
{{- range $key := list "imageFactoryURL" "imageFactoryCA" "storageClass" "storage" "images" "monitoring" -}}
{{- if and (hasKey $set $key) (not (kindIs "invalid" (get $set $key))) -}}
{{- $_ := set $.out $key (get $set $key) -}}
{{- end -}}
{{- end -}}
{{- $flavor := dict -}}
{{- $tenantTalos := (.root.Values.tenantWorkers | default dict).talos | default dict -}}
{{- range $key := list "schematicID" "version" -}}
{{- with get $tenantTalos $key -}}
{{- $_ := set $flavor $key . -}}
{{- end -}}
{{- end -}}
{{- with $flavor -}}
{{- $_ := set $.out "tenantWorkers" (dict "talos" .) -}}
{{- end -}}
{{- end -}}

{{/*
The _cluster keys for tenant workers that are set (README, "Platform defaults for tenant workers").
Takes a dict: root, out (filled with those keys).
*/}}
{{- define "platform.clusterValues" -}}
{{- $registries := .root.Values.registries | default dict -}}
{{- include "worker-image-lib.tenantDefaultsValues" (dict "tenantWorkers" .root.Values.tenantWorkers "mirrors" $registries.mirrors "metrics" (eq (include "platform.metricsEnabled" .root) "true") "out" .out) -}}
{{- /* Registry credentials go only into _cluster, which tenants do not read. */ -}}
{{- $config := dict -}}
{{- include "worker-image-lib.registryConfigByHost" (dict "field" "registries.config" "value" (.root.Values.registries | default dict).config "out" $config) -}}
{{- with $config -}}
{{- $_ := set $.out "talos" (merge ($.out.talos | default dict) (dict "registryConfig" .)) -}}
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
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" "" "field" "kubernetesWorkerImage" "value" $catalog "keys" (list "imageFactoryURL" "imageFactoryCA" "storageClass" "storage" "images" "monitoring" "metrics")) -}}
{{- if and (hasKey $catalog "monitoring") (not (kindIs "invalid" $catalog.monitoring)) -}}
{{- include "worker-image-lib.assertMonitoring" (dict "prefix" "" "field" "kubernetesWorkerImage.monitoring" "value" $catalog.monitoring) -}}
{{- end -}}
{{- $_ := include "platform.metricsEnabled" . -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" "" "field" "kubernetesWorkerImage.imageFactoryCA" "value" (get $catalog "imageFactoryCA")) -}}
{{- /* imageFactoryURL "" is the catalog's own default (its published factory, else the built-in), as storageClass "" is the cluster's. */ -}}
{{- range $field, $pattern := dict "imageFactoryURL" (printf "^$|%s" $patterns.imageFactoryURL) "storage" $patterns.quantity "storageClass" $patterns.storageClass -}}
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
{{- include "worker-image-lib.registryConfigByHost" (dict "field" "registries.config" "value" $registries.config "out" $config) -}}
{{- include "worker-image-lib.assertRegistryConfig" (dict "prefix" "" "field" "registries.config" "value" $config) -}}
{{- include "worker-image-lib.assertTenantWorkers" (dict "prefix" "" "field" "tenantWorkers" "value" $v.tenantWorkers) -}}
{{- $_ := set . "_platformValidated" true -}}
{{- end -}}
{{- end -}}

{{/*
"true" when kubernetesWorkerImage.metrics.enabled is true; refuses a metrics value of another shape, and
metrics while bundles.disabledPackages drops cozystack.monitoring-agents (nothing would export them).
*/}}
{{- define "platform.metricsEnabled" -}}
{{- $catalog := .Values.kubernetesWorkerImage | default dict -}}
{{- $metrics := index $catalog "metrics" -}}
{{- if and (hasKey $catalog "metrics") (not (kindIs "invalid" $metrics)) -}}
{{- if not (kindIs "map" $metrics) -}}
{{- fail (printf "kubernetesWorkerImage.metrics is %s, not a map; write it as {enabled: true}" (include "worker-image-lib.describe" $metrics)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" "" "field" "kubernetesWorkerImage.metrics" "value" $metrics "keys" (list "enabled")) -}}
{{- if and (hasKey $metrics "enabled") (not (kindIs "bool" $metrics.enabled)) -}}
{{- fail (printf "kubernetesWorkerImage.metrics.enabled is %s, not a boolean; write true to export the goldens' and worker disks' metrics through monitoring-agents, false (the default) for none" (include "worker-image-lib.describe" $metrics.enabled)) -}}
{{- end -}}
{{- if $metrics.enabled -}}
{{- if has "cozystack.monitoring-agents" (.Values.bundles.disabledPackages | default list) -}}
{{- fail "kubernetesWorkerImage.metrics.enabled is true, but bundles.disabledPackages lists cozystack.monitoring-agents, whose kube-state-metrics would export the metrics; remove it from disabledPackages, or set metrics.enabled to false and give your own kube-state-metrics the configuration in docs/monitoring.md" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The custom resources Cozystack's monitoring-agents already gives its kube-state-metrics: Flux's objects as
gotk_resource_info, which its Flux alerts read. The Cozystack operator hands a Package's component values
to the HelmRelease as they are, and Helm replaces a list rather than merging it, so values that add the
goldens to customResourceState.config.spec.resources (and a rule to rbac.extraRules) must carry these
too, or Flux's metrics and alerts would go. Each row: group, version, kind, whether it reports Ready, and
its own labels (name: path). Read from monitoring-agents' values.yaml at Cozystack 3c780acd4.
*/}}
{{- define "platform.monitoringAgents.fluxKinds" -}}
- [kustomize.toolkit.fluxcd.io, v1, Kustomization, true, {revision: [status, lastAppliedRevision], source_name: [spec, sourceRef, name]}]
- [helm.toolkit.fluxcd.io, v2, HelmRelease, true, {revision: [status, history, "0", chartVersion], chart_name: [status, history, "0", chartName], chart_app_version: [status, history, "0", appVersion], chart_ref_name: [spec, chartRef, name], chart_source_name: [spec, chart, spec, sourceRef, name]}]
- [source.toolkit.fluxcd.io, v1, GitRepository, true, {revision: [status, artifact, revision], url: [spec, url]}]
- [source.toolkit.fluxcd.io, v1beta2, Bucket, true, {revision: [status, artifact, revision], endpoint: [spec, endpoint], bucket_name: [spec, bucketName]}]
- [source.toolkit.fluxcd.io, v1, HelmRepository, true, {revision: [status, artifact, revision], url: [spec, url]}]
- [source.toolkit.fluxcd.io, v1, HelmChart, true, {revision: [status, artifact, revision], chart_name: [spec, chart], chart_version: [spec, version]}]
- [source.toolkit.fluxcd.io, v1beta2, OCIRepository, true, {revision: [status, artifact, revision], url: [spec, url]}]
- [notification.toolkit.fluxcd.io, v1beta3, Alert, false, {}]
- [notification.toolkit.fluxcd.io, v1beta3, Provider, false, {}]
- [notification.toolkit.fluxcd.io, v1, Receiver, true, {webhook_path: [status, webhookPath]}]
- [image.toolkit.fluxcd.io, v1beta2, ImageRepository, true, {image: [spec, image]}]
- [image.toolkit.fluxcd.io, v1beta2, ImagePolicy, true, {source_name: [spec, imageRepositoryRef, name]}]
- [image.toolkit.fluxcd.io, v1beta2, ImageUpdateAutomation, true, {source_name: [spec, sourceRef, name]}]
{{- end -}}

{{/*
The cozystack.monitoring-agents component values with the goldens' metrics (docs/monitoring.md): the
Package Cozystack's platform emits (global.target), its kube-state-metrics' custom resources and read
rule for Flux (above), and the catalog's, from the library. Takes the root context; a YAML map.
*/}}
{{- define "platform.monitoringAgents.values" -}}
{{- $resources := list -}}
{{- $groups := list -}}
{{- $plurals := list -}}
{{- range $row := include "platform.monitoringAgents.fluxKinds" . | fromYamlArray -}}
{{- $group := index $row 0 -}}
{{- $kind := index $row 2 -}}
{{- $labels := dict "exported_namespace" (list "metadata" "namespace") "suspended" (list "spec" "suspend") -}}
{{- if index $row 3 -}}
{{- $_ := set $labels "ready" (list "status" "conditions" "[type=Ready]" "status") -}}
{{- end -}}
{{- $metric := dict "name" "resource_info" "help" (printf "The state of a Flux %s." $kind) "each" (dict "type" "Info" "info" (dict "labelsFromPath" (dict "name" (list "metadata" "name")))) "labelsFromPath" (merge $labels (index $row 4)) -}}
{{- $resources = append $resources (dict "groupVersionKind" (dict "group" $group "version" (index $row 1) "kind" $kind) "metricNamePrefix" "gotk" "metrics" (list $metric)) -}}
{{- $groups = append $groups $group -}}
{{- $plurals = append $plurals (regexReplaceAll "ys$" (printf "%ss" (lower $kind)) "ies") -}}
{{- end -}}
{{- $resources = concat $resources (include "worker-image-lib.kubeStateMetricsResources" . | fromYamlArray) -}}
{{- $rules := concat (list (dict "apiGroups" ($groups | uniq) "resources" $plurals "verbs" (list "list" "watch"))) (include "worker-image-lib.kubeStateMetricsRules" . | fromYamlArray) -}}
{{- dict "global" (dict "target" "tenant-root") "kube-state-metrics" (dict "rbac" (dict "extraRules" $rules) "customResourceState" (dict "enabled" true "config" (dict "spec" (dict "resources" $resources)))) | toYaml -}}
{{- end -}}
