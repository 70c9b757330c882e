{{/*
The KubevirtMachineTemplate the pool's MachineDeployment runs (its spec.template.spec.infrastructureRef),
read at most once into ._kubernetesNodes.runningTemplate: name ("" when there is no MachineDeployment or
it names none) and object ({} when absent). One GET by name, shared by the frozen flavor and the clone
path; no list. Takes the root context.
*/}}
{{- define "kubernetes-nodes.ensureRunningTemplate" -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "runningTemplate") -}}
{{- $running := dict "name" "" "object" dict -}}
{{- if include "kubernetes-nodes.ensureMachineDeployment" . -}}
{{- $ref := dig "spec" "template" "spec" "infrastructureRef" "name" "" $state.machineDeployment | toString -}}
{{- if $ref -}}
{{- $_ := set $running "name" $ref -}}
{{- $_ := set $running "object" (lookup "infrastructure.cluster.x-k8s.io/v1alpha1" "KubevirtMachineTemplate" .Release.Namespace $ref | default dict) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $state "runningTemplate" $running -}}
{{- end -}}
{{- end -}}

{{/*
The Talos flavor the pool runs, read once into ._kubernetesNodes.runningFlavor from the disk of its running
template: schematicID and version (both "" when not readable), from (the template, for messages) and why
(when not readable: a new pool, or what is missing). The disk is an HTTP import of
<factory>/image/<schematicID>/<version>/openstack-amd64.raw.xz or a clone of the golden
talos-worker-<schematicID>-<version>[--<class>] from cozy-public, as this chart and Cozystack's write it.
The two fields are split out with worker-image-lib.patterns' schematicID and version written unanchored
and without capture groups (so ${1} and ${2} are the fields), then bounded by worker-image-lib.maxLengths:
nothing the cluster holds reaches a name unchecked. Takes the root context.
*/}}
{{- define "kubernetes-nodes.ensureRunningFlavor" -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "runningFlavor") -}}
{{- include "kubernetes-nodes.ensureRunningTemplate" . -}}
{{- $template := $state.runningTemplate -}}
{{- $flavor := dict "schematicID" "" "version" "" "from" "" "why" "" -}}
{{- $namespace := .Release.Namespace -}}
{{- if not $state.machineDeployment -}}
{{- $_ := set $flavor "why" "a new pool: it has no MachineDeployment yet" -}}
{{- else if not $template.name -}}
{{- $_ := set $flavor "why" (printf "its MachineDeployment %s/%s names no KubevirtMachineTemplate" $namespace (include "kubernetes-nodes.poolName" .)) -}}
{{- else if not $template.object -}}
{{- $_ := set $flavor "why" (printf "the KubevirtMachineTemplate %s/%s its MachineDeployment names is absent" $namespace (include "worker-image-lib.truncate" $template.name)) -}}
{{- else -}}
{{- $_ := set $flavor "from" (printf "KubevirtMachineTemplate %s/%s" $namespace $template.name) -}}
{{- $disks := dig "spec" "template" "spec" "virtualMachineTemplate" "spec" "dataVolumeTemplates" list $template.object -}}
{{- $source := dict -}}
{{- if and (kindIs "slice" $disks) $disks (kindIs "map" (first $disks)) -}}
{{- $source = dig "spec" "source" dict (first $disks) -}}
{{- end -}}
{{- $url := "" -}}
{{- $golden := "" -}}
{{- if kindIs "map" $source -}}
{{- $url = dig "http" "url" "" $source | toString -}}
{{- if eq (dig "pvc" "namespace" "" $source | toString) "cozy-public" -}}
{{- $golden = dig "pvc" "name" "" $source | toString -}}
{{- end -}}
{{- end -}}
{{- $version := "v[0-9]+\\.[0-9]+\\.[0-9]+(?:-[0-9a-z]+(?:\\.[0-9a-z]+)*)?" -}}
{{- $schematic := "[a-z0-9](?:[-a-z0-9]*[a-z0-9])?" -}}
{{- $httpPattern := printf "^.*/image/(%s)/(%s)/openstack-amd64\\.raw\\.xz$" $schematic $version -}}
{{- $clonePattern := printf "^talos-worker-(%s)-(%s)(?:--.+)?$" $schematic $version -}}
{{- $read := "" -}}
{{- if and $url (le (len $url) 4096) (regexMatch $httpPattern $url) -}}
{{- $read = $url -}}
{{- $_ := set $flavor "schematicID" (regexReplaceAll $httpPattern $url "${1}") -}}
{{- $_ := set $flavor "version" (regexReplaceAll $httpPattern $url "${2}") -}}
{{- else if and $golden (le (len $golden) 253) (regexMatch $clonePattern $golden) -}}
{{- $read = $golden -}}
{{- $_ := set $flavor "schematicID" (regexReplaceAll $clonePattern $golden "${1}") -}}
{{- $_ := set $flavor "version" (regexReplaceAll $clonePattern $golden "${2}") -}}
{{- end -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "worker-image-lib.maxLengths") -}}
{{- $maxLengths := index $state.tables "worker-image-lib.maxLengths" -}}
{{- if or (not $read) (gt (len $flavor.schematicID) (int $maxLengths.schematicID)) (gt (len $flavor.version) (int $maxLengths.version)) -}}
{{- $_ := set $flavor "schematicID" "" -}}
{{- $_ := set $flavor "version" "" -}}
{{- $_ := set $flavor "why" (printf "the disk of its KubevirtMachineTemplate %s/%s neither imports <factory>/image/<schematicID>/<version>/openstack-amd64.raw.xz nor clones a golden talos-worker-<schematicID>-<version> from cozy-public" $namespace $template.name) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $state "runningFlavor" $flavor -}}
{{- end -}}
{{- end -}}

{{/*
The platform's kubernetesWorkerImage.metrics, as it reaches pools (docs/monitoring.md): _cluster's
kubernetesWorkerImage.metrics when set, else the catalog's published one (a stock Cozystack writes no
_cluster key for it); off when neither is. Kept in ._kubernetesNodes.metrics. Takes a dict: root, pool,
platform (_cluster).
*/}}
{{- define "kubernetes-nodes.poolMetrics" -}}
{{- $on := include "kubernetes-nodes.metricsSwitch" (dict "prefix" (printf "pool %s: " .pool) "field" "_cluster.kubernetesWorkerImage" "value" .platform "writer" "the platform" "switch" "kubernetesWorkerImage.metrics.enabled" "where" " in the platform chart") -}}
{{- if not $on -}}
{{- include "kubernetes-nodes.ensurePublished" .root -}}
{{- $on = include "kubernetes-nodes.metricsSwitch" (dict "value" .root._kubernetesNodes.published) -}}
{{- end -}}
{{- $_ := set .root._kubernetesNodes "metrics" (eq $on "true") -}}
{{- end -}}

{{/*
One channel's metrics switch, checked: its kubernetesWorkerImage, a map holding only the boolean metrics;
null or absent is not set. "true" or "false" when set, else "". Takes a dict: prefix, field (the key's
path in messages), value (the channel's map), writer, switch and where (what writes it, for messages).
*/}}
{{- define "kubernetes-nodes.metricsSwitch" -}}
{{- $channel := index .value "kubernetesWorkerImage" -}}
{{- if and (hasKey .value "kubernetesWorkerImage") (not (kindIs "invalid" $channel)) -}}
{{- if not (kindIs "map" $channel) -}}
{{- fail (printf "%s%s is %s, not a map; it is set by %s (%s%s writes {metrics: true})" .prefix .field (include "worker-image-lib.describe" $channel) .writer .switch .where) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" .prefix "field" .field "value" $channel "keys" (list "metrics")) -}}
{{- if and (hasKey $channel "metrics") (not (kindIs "invalid" $channel.metrics)) -}}
{{- if not (kindIs "bool" $channel.metrics) -}}
{{- fail (printf "%s%s.metrics is %s, not a boolean; %s writes true while its %s is, and leaves it out otherwise" .prefix .field (include "worker-image-lib.describe" $channel.metrics) .writer .switch) -}}
{{- end -}}
{{- $channel.metrics -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The MachineDeployment annotations the platform's metrics read (docs/monitoring.md): the Talos flavor the
pool runs after this render (worker-image-lib.flavorAnnotations) and its disks' class, as YAML; "" while
the platform's metrics are off, so the MachineDeployment keeps its bytes. Metadata: nothing rolls.
*/}}
{{- define "kubernetes-nodes.metricsAnnotations" -}}
{{- if ._kubernetesNodes.metrics -}}
{{- include "kubernetes-nodes.ensureDiskSource" . -}}
{{- $disk := ._kubernetesNodes.disk -}}
{{- $annotations := include "worker-image-lib.flavorAnnotations" (dict "schematicID" $disk.schematicID "version" $disk.version) | fromYaml -}}
{{- with $disk.storageClassName -}}
{{- $_ := set $annotations "kubernetes-worker-image.cozystack.io/storage-class" (toString .) -}}
{{- end -}}
{{- $annotations | toYaml -}}
{{- end -}}
{{- end -}}
