{{/*
Golden health in the platform's monitoring (docs/monitoring.md): the metric names kube-state-metrics
exports from the goldens and the worker disks, the custom-resource-state configuration that makes it
export them, and the checks of the catalog's monitoring values. The platform writes the configuration,
the catalog writes the alert rules over the same names: both read them here.
*/}}
{{- define "worker-image-lib.metrics" -}}
prefix: kubernetes_worker_image
goldenInfo: kubernetes_worker_image_golden_info
goldenStatus: kubernetes_worker_image_golden_status_info
workerDisk: kubernetes_worker_image_worker_disk_info
goldenPatch: kubernetes_worker_image_golden_talos_patch
poolPatch: kubernetes_worker_image_pool_talos_patch
{{- end -}}

{{/*
What the alert rules take from series a tenant can write (docs/monitoring.md, "What a tenant can
write"). kube-state-metrics exports annotations and spec fields as they are written: its custom-resource-
state configuration has no pattern or length check (a path step matches one exact value at most), and
reads "+Inf", "NaN", "1e9" or "3.5" as numbers. So the rules read a Talos patch only as a whole number
from 0 to maxPatch (the charts write none above it) and a name only in the shape the charts write: pool,
kubernetes-<cluster>-<pool> (a DNS label); objectName, a golden or a StorageClass (a DNS-1123 subdomain of
at most 253 characters). Both are PromQL regular expressions, anchored by PromQL.
*/}}
{{- define "worker-image-lib.wellFormed" -}}
maxPatch: 999
pool: '[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?'
objectName: '[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?'
{{- end -}}

{{/*
The annotations that carry a Talos flavor as series can compare it (docs/monitoring.md): the schematic
ID, the minor (vMAJOR.MINOR) and, for a release without a pre-release suffix, the patch as a number
(kube-state-metrics reads it as the value; a pre-release, and a patch above the rules' maxPatch, is
compared with nothing). The catalog writes them on each golden, a pool with the platform's metrics on its
MachineDeployment: metadata only, which renames nothing and rolls no worker. Takes a dict: schematicID,
version (checked already); outputs the annotations as YAML.
*/}}
{{- define "worker-image-lib.flavorAnnotations" -}}
{{- $annotations := dict "kubernetes-worker-image.cozystack.io/talos-schematic-id" .schematicID "kubernetes-worker-image.cozystack.io/talos-minor" (regexFind "^v[0-9]+\\.[0-9]+" .version) -}}
{{- $maxPatch := (include "worker-image-lib.wellFormed" . | fromYaml).maxPatch | int -}}
{{- if and (regexMatch "^v[0-9]+\\.[0-9]+\\.[0-9]{1,9}$" .version) (le (regexReplaceAll "^v[0-9]+\\.[0-9]+\\.([0-9]+)$" .version "${1}" | atoi) $maxPatch) -}}
{{- $_ := set $annotations "kubernetes-worker-image.cozystack.io/talos-patch" (regexReplaceAll "^v[0-9]+\\.[0-9]+\\.([0-9]+)$" .version "${1}") -}}
{{- end -}}
{{- $annotations | toYaml -}}
{{- end -}}

{{/*
kube-state-metrics' customResourceState resources for the goldens and the worker disks (a YAML list).
Every DataVolume of the cluster is read, but a series is written only for a golden (the catalog's
app.kubernetes.io/part-of label: the "key=value" path step yields nothing on any other) or a worker disk
(the .../golden annotation a pool writes): an Info metric with no label from its own path writes none.
CDI writes progress as text such as "45.20%", which kube-state-metrics reads as no number, so it is a
label. The retiring label comes from a "key=value" step too: only "true" is exported, whatever else a
look-alike's annotation holds. CDI records the clone strategy it took in the cdi.kubevirt.io/cloneType
annotation of the target PVC and copies it to the DataVolume ("copy" is its host-assisted copy).
*/}}
{{- define "worker-image-lib.kubeStateMetricsResources" -}}
{{- $names := include "worker-image-lib.metrics" . | fromYaml -}}
{{- $golden := dict "type" "Info" "info" (dict "path" (list "metadata" "labels") "labelsFromPath" (dict "part_of" (list "app.kubernetes.io/part-of=kubernetes-worker-image"))) -}}
{{- $object := dict "exported_namespace" (list "metadata" "namespace") "name" (list "metadata" "name") -}}
{{- /* A Gauge over the annotations map: only the talos-patch key yields a value; other keys and objects none. */ -}}
{{- $patch := dict "type" "Gauge" "gauge" (dict "path" (list "metadata" "annotations") "valueFrom" (list "kubernetes-worker-image.cozystack.io/talos-patch")) -}}
{{- $metrics := list
  (dict "name" (trimPrefix (printf "%s_" $names.prefix) $names.goldenInfo)
    "help" "A golden DataVolume of the kubernetes-worker-image catalog: its StorageClass, source URL and whether it retires."
    "each" $golden
    "labelsFromPath" (merge (dict
      "storage_class" (list "spec" "storage" "storageClassName")
      "source_url" (list "spec" "source" "http" "url")
      "retiring" (list "metadata" "annotations" "kubernetes-worker-image.cozystack.io/retiring=true")) $object))
  (dict "name" (trimPrefix (printf "%s_" $names.prefix) $names.goldenStatus)
    "help" "A golden DataVolume's import as CDI reports it: its phase and progress (no phase: CDI has not reconciled it)."
    "each" $golden
    "labelsFromPath" (merge (dict
      "phase" (list "status" "phase")
      "progress" (list "status" "progress")) $object))
  (dict "name" (trimPrefix (printf "%s_" $names.prefix) $names.workerDisk)
    "help" "A worker disk cloned from a golden: its golden, its pool, and the clone strategy CDI took (copy is a host-assisted copy over the pod network)."
    "each" (dict "type" "Info" "info" (dict "path" (list "metadata" "annotations") "labelsFromPath" (dict "golden" (list "kubernetes-worker-image.cozystack.io/golden"))))
    "labelsFromPath" (merge (dict
      "pool" (list "metadata" "annotations" "kubernetes-worker-image.cozystack.io/pool")
      "clone_type" (list "metadata" "annotations" "cdi.kubevirt.io/cloneType")) $object))
  (dict "name" (trimPrefix (printf "%s_" $names.prefix) $names.goldenPatch)
    "help" "A golden's Talos patch release (the value), with its schematic ID, minor and StorageClass, from the annotations the catalog writes on it."
    "each" $patch
    "errorLogV" 4
    "labelsFromPath" (merge (dict
      "schematic_id" (list "metadata" "annotations" "kubernetes-worker-image.cozystack.io/talos-schematic-id")
      "talos_minor" (list "metadata" "annotations" "kubernetes-worker-image.cozystack.io/talos-minor")
      "storage_class" (list "spec" "storage" "storageClassName")) $object))
-}}
{{- $pools := list
  (dict "name" (trimPrefix (printf "%s_" $names.prefix) $names.poolPatch)
    "help" "The Talos patch release a worker pool runs (the value), with its schematic ID, minor and its disks' StorageClass, from the annotations the pool chart writes on its MachineDeployment while the platform's metrics are on."
    "each" $patch
    "errorLogV" 4
    "labelsFromPath" (merge (dict
      "schematic_id" (list "metadata" "annotations" "kubernetes-worker-image.cozystack.io/talos-schematic-id")
      "talos_minor" (list "metadata" "annotations" "kubernetes-worker-image.cozystack.io/talos-minor")
      "storage_class" (list "metadata" "annotations" "kubernetes-worker-image.cozystack.io/storage-class")) $object))
-}}
{{- list
  (dict "groupVersionKind" (dict "group" "cdi.kubevirt.io" "version" "v1beta1" "kind" "DataVolume") "metricNamePrefix" $names.prefix "metrics" $metrics)
  (dict "groupVersionKind" (dict "group" "cluster.x-k8s.io" "version" "v1beta1" "kind" "MachineDeployment") "metricNamePrefix" $names.prefix "metrics" $pools)
  | toYaml -}}
{{- end -}}

{{/* The ClusterRole rules kube-state-metrics needs to read them (a YAML list). */}}
{{- define "worker-image-lib.kubeStateMetricsRules" -}}
{{- list
  (dict "apiGroups" (list "cdi.kubevirt.io") "resources" (list "datavolumes") "verbs" (list "list" "watch"))
  (dict "apiGroups" (list "cluster.x-k8s.io") "resources" (list "machinedeployments") "verbs" (list "list" "watch"))
  | toYaml -}}
{{- end -}}

{{/*
The catalog's monitoring keys, and the bounds of its thresholds in seconds: below goldenNotSucceededFor's
minimum an import that is merely running would page; past the maxima an alert says nothing useful.
*/}}
{{- define "worker-image-lib.monitoringKeys" -}}
keys: [enabled, ruleKind, goldenFailedFor, goldenNotSucceededFor, poolBehindFor, runbookURL, labels]
ruleKinds: [VMRule, PrometheusRule]
durations:
  goldenFailedFor: {min: 0, max: 86400, range: "0s to 1d"}
  goldenNotSucceededFor: {min: 300, max: 604800, range: "5m to 7d", early: "a golden that is merely importing would alert"}
  poolBehindFor: {min: 3600, max: 7776000, range: "1h to 90d", early: "a pool would alert while a rollout is still moving it"}
maxLabels: 16
{{- end -}}

{{/*
A Prometheus rule duration ("for:") as this chart takes it: units y, w, d, h, m, s in that order, each
at most once with at most 6 digits, or 0; at most 32 characters. Takes a dict: value, out (filled with
seconds, or error).
*/}}
{{- define "worker-image-lib.parsePromDuration" -}}
{{- $s := .value -}}
{{- if not (kindIs "string" $s) -}}
{{- $_ := set .out "error" (printf "%s, not a string" (include "worker-image-lib.describe" $s)) -}}
{{- else if or (gt (len $s) 32) (eq $s "") (not (regexMatch (include "worker-image-lib.patterns" . | fromYaml).alertDuration $s)) -}}
{{- $_ := set .out "error" (printf "%s, not a Prometheus duration such as 30m or 1h30m (units y, w, d, h, m, s in that order, whole numbers of at most 6 digits)" (include "worker-image-lib.describe" $s)) -}}
{{- else -}}
{{- $units := dict "y" 31536000 "w" 604800 "d" 86400 "h" 3600 "m" 60 "s" 1 -}}
{{- $total := 0 -}}
{{- range $part := regexFindAll "[0-9]+[ywdhms]" $s -1 -}}
{{- $unit := substr (int (sub (len $part) 1)) (len $part) $part -}}
{{- $total = add $total (mul (atoi (trimSuffix $unit $part)) (get $units $unit)) -}}
{{- end -}}
{{- $_ := set .out "seconds" $total -}}
{{- end -}}
{{- end -}}

{{/*
Refuses monitoring values the catalog cannot render into a rule object, with schema validation off too.
Only the keys present are checked (the platform forwards only the keys set). Takes a dict: prefix (the
subject of messages), field ("monitoring" or "kubernetesWorkerImage.monitoring"), value.
*/}}
{{- define "worker-image-lib.assertMonitoring" -}}
{{- $m := .value -}}
{{- $rules := include "worker-image-lib.monitoringKeys" . | fromYaml -}}
{{- if not (kindIs "map" $m) -}}
{{- fail (printf "%s%s is %s, not a map; write it as {enabled: true, ruleKind: VMRule} (the catalog's values.yaml lists its keys)" .prefix .field (include "worker-image-lib.describe" $m)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" .prefix "field" .field "value" $m "keys" $rules.keys) -}}
{{- if and (hasKey $m "enabled") (not (kindIs "bool" $m.enabled)) -}}
{{- fail (printf "%s%s.enabled is %s, not a boolean; write true to render the alert rules, false (the default) for none" .prefix .field (include "worker-image-lib.describe" $m.enabled)) -}}
{{- end -}}
{{- if and (hasKey $m "ruleKind") (not (and (kindIs "string" $m.ruleKind) (has $m.ruleKind $rules.ruleKinds))) -}}
{{- fail (printf "%s%s.ruleKind is %s; it takes VMRule (VictoriaMetrics operator, as Cozystack's monitoring runs) or PrometheusRule (prometheus-operator)" .prefix .field (include "worker-image-lib.describe" $m.ruleKind)) -}}
{{- end -}}
{{- range $key := keys $rules.durations | sortAlpha -}}
{{- if hasKey $m $key -}}
{{- $bound := get $rules.durations $key -}}
{{- $d := dict -}}
{{- include "worker-image-lib.parsePromDuration" (dict "value" (get $m $key) "out" $d) -}}
{{- if $d.error -}}
{{- fail (printf "%s%s.%s is %s; set it to a duration from %s" $.prefix $.field $key $d.error $bound.range) -}}
{{- end -}}
{{- if or (lt (int64 $d.seconds) (int64 $bound.min)) (gt (int64 $d.seconds) (int64 $bound.max)) -}}
{{- fail (printf "%s%s.%s %q is outside %s: %s; set it within those bounds" $.prefix $.field $key (get $m $key) $bound.range (ternary ($bound.early | default "") "an alert that late says nothing useful" (lt (int64 $d.seconds) (int64 $bound.min)))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if hasKey $m "runbookURL" -}}
{{- $url := $m.runbookURL -}}
{{- $patterns := include "worker-image-lib.patterns" . | fromYaml -}}
{{- if not (and (kindIs "string" $url) (le (len $url) 2048) (regexMatch $patterns.imageFactoryURL $url)) -}}
{{- fail (printf "%s%s.runbookURL is %s, not a plain http(s) URL of at most 2048 characters (host, optional port, a path of letters, digits, - . _ ~ / and %%XX escapes; no fragment: each alert adds its own #section); set it to where docs/runbooks.md is served" .prefix .field (include "worker-image-lib.describe" $url)) -}}
{{- end -}}
{{- end -}}
{{- if hasKey $m "labels" -}}
{{- $labels := $m.labels -}}
{{- if not (kindIs "map" $labels) -}}
{{- fail (printf "%s%s.labels is %s, not a map of label names to values" .prefix .field (include "worker-image-lib.describe" $labels)) -}}
{{- end -}}
{{- include "worker-image-lib.assertAtMost" (dict "prefix" .prefix "field" (printf "%s.labels" .field) "value" $labels "max" $rules.maxLabels "items" "labels" "fix" "keep the labels your rule selector needs") -}}
{{- $patterns := include "worker-image-lib.patterns" . | fromYaml -}}
{{- range $key := keys $labels | sortAlpha -}}
{{- $value := get $labels $key -}}
{{- $parts := splitList "/" $key -}}
{{- $name := last $parts -}}
{{- $prefixOK := or (eq (len $parts) 1) (and (eq (len $parts) 2) (include "worker-image-lib.isDNSSubdomain" (first $parts))) -}}
{{- if not (and $prefixOK (le (len $name) 63) (regexMatch "^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$" $name)) -}}
{{- fail (printf "%s%s.labels: %q is not a label name ([prefix/]name, the name at most 63 letters, digits, - _ . starting and ending alphanumeric); fix the key" $.prefix $.field (include "worker-image-lib.truncate" $key)) -}}
{{- end -}}
{{- if eq $key "app.kubernetes.io/part-of" -}}
{{- fail (printf "%s%s.labels sets app.kubernetes.io/part-of, which the catalog sets on the rule object itself (kubernetes-worker-image); remove it" $.prefix $.field) -}}
{{- end -}}
{{- if not (and (kindIs "string" $value) (le (len $value) 63) (regexMatch $patterns.labelValue $value)) -}}
{{- fail (printf "%s%s.labels[%q] is %s, not a label value (a string of at most 63 letters, digits, - _ . starting and ending alphanumeric); quote numbers and booleans" $.prefix $.field $key (include "worker-image-lib.describe" $value)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
