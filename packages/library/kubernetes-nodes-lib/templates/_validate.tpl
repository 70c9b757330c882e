{{/*
Checks every value a template interpolates, once, before anything reads it: the schema may be off
(repository README, "Tenant values are data"). Every template file includes it first.
*/}}
{{- define "kubernetes-nodes.validate" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- if not (hasKey ._kubernetesNodes "validated") -}}
{{- $pool := include "kubernetes-nodes.poolName" . -}}
{{- $v := .Values -}}
{{- /* A value set to null removes the chart's default (Helm's rule), and would render as "<nil>". */ -}}
{{- range $key := list "storageClass" "instanceType" "diskSize" "version" "minReplicas" "maxReplicas" "maxUnhealthy" "nodeStartupTimeout" "readyUnknownTimeout" "readyFalseTimeout" "maxNodeProvisionTime" "logSerialConsole" -}}
{{- if kindIs "invalid" (index $v $key) -}}
{{- fail (printf "pool %s: %s is null, which removes the chart's default; remove the key to keep the default, or set it (values.yaml documents each value)" $pool $key) -}}
{{- end -}}
{{- end -}}
{{- /* Unknown keys: a typo (osimage:) would otherwise be ignored and silently take the HTTP import. Helm adds global and the libraries' keys. */ -}}
{{- $unknown := keys (omit $v "cluster" "storageClass" "diskSize" "instanceType" "resources" "podCpuLimit" "podCpuRequest" "gpus" "kubelet" "logSerialConsole" "roles" "minReplicas" "maxReplicas" "maxSurge" "maxUnhealthy" "nodeStartupTimeout" "readyUnknownTimeout" "readyFalseTimeout" "maxNodeProvisionTime" "version" "talos" "images" "osImage" "_cluster" "_namespace" "global" "worker-image-lib" "kubernetes-nodes-lib") -}}
{{- if $unknown -}}
{{- fail (printf "pool %s: the values have the key %q%s, which the chart does not take; it takes cluster, storageClass, diskSize, instanceType, resources, podCpuLimit, podCpuRequest, gpus, kubelet, logSerialConsole, roles, minReplicas, maxReplicas, maxSurge, maxUnhealthy, nodeStartupTimeout, readyUnknownTimeout, readyFalseTimeout, maxNodeProvisionTime, version, talos, images and osImage (values.yaml documents each). Fix the spelling or remove the key (an unknown key is refused rather than ignored, so a typo never changes what renders)" $pool (include "worker-image-lib.truncate" (first (sortAlpha $unknown))) (ternary (printf " and %d more" (sub (len $unknown) 1)) "" (gt (len $unknown) 1))) -}}
{{- end -}}
{{- /* osImage chooses the disk's path by which key it holds: only a map may choose one. */ -}}
{{- if hasKey $v "osImage" -}}
{{- include "worker-image-lib.assertOSImageShape" (dict "prefix" (printf "pool %s: " $pool) "field" "osImage" "value" $v.osImage) -}}
{{- end -}}
{{- /* talos: a map of known keys; null would drop every default. */ -}}
{{- if not (kindIs "map" $v.talos) -}}
{{- fail (printf "pool %s: talos is %s, not a map; remove the talos key to keep the chart's defaults, or write it as a map such as {version: v1.13.6}" $pool (include "worker-image-lib.describe" $v.talos)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" (printf "pool %s: " $pool) "field" "talos" "value" $v.talos "keys" (list "version" "schematicID" "imageFactoryURL" "installerRepository" "registryMirrors" "imageFactoryCA")) -}}
{{- range $field := list "version" "schematicID" "imageFactoryURL" "imageFactoryCA" "installerRepository" -}}
{{- include "worker-image-lib.assertString" (dict "prefix" (printf "pool %s: " $pool) "field" (printf "talos.%s" $field) "value" (get $v.talos $field)) -}}
{{- end -}}
{{- if not (kindIs "map" ($v.resources | default dict)) -}}
{{- fail (printf "pool %s: resources is %s, not a map; set resources to {cpu: 2, memory: 4Gi}, or {} to size the VM by instanceType" $pool (include "worker-image-lib.describe" $v.resources)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" (printf "pool %s: " $pool) "field" "resources" "value" ($v.resources | default dict) "keys" (list "cpu" "memory")) -}}
{{- /* Names written into objects: refused here before the API server would reject them. */ -}}
{{- $names := list
  (list "storageClass" $v.storageClass "a StorageClass name such as replicated, or \"\" for the cluster default")
  (list "instanceType" $v.instanceType "a VirtualMachineClusterInstancetype name such as u1.medium") -}}
{{- range $names -}}
{{- $field := index . 0 -}}
{{- $value := index . 1 -}}
{{- include "worker-image-lib.assertString" (dict "prefix" (printf "pool %s: " $pool) "field" $field "value" $value) -}}
{{- $s := $value | default "" | toString -}}
{{- if and $s (not (include "worker-image-lib.isDNSSubdomain" $s)) -}}
{{- fail (printf "pool %s: %s %q is not a DNS subdomain name (lowercase letters, digits, '-' and '.', at most 253 characters, starting and ending with a letter or digit); the API server would reject it, so set %s to %s" $pool $field (include "worker-image-lib.truncate" $s) $field (index . 2)) -}}
{{- end -}}
{{- end -}}
{{- /* Numbers as the API reads them exactly (a quantity's leading zero quoted), kept in ._kubernetesNodes.written. */ -}}
{{- $written := dict -}}
{{- $_ := set ._kubernetesNodes "written" $written -}}
{{- $quantities := list (list "diskSize" $v.diskSize "a quantity such as 20Gi") -}}
{{- if include "kubernetes-nodes.explicitResources" . -}}
{{- $quantities = append $quantities (list "resources.memory" $v.resources.memory "a quantity such as 4Gi") -}}
{{- $cores := dict -}}
{{- include "worker-image-lib.parseCount" (dict "value" $v.resources.cpu "min" 1 "max" 2147483647 "strings" true "out" $cores) -}}
{{- with $cores.error -}}
{{- fail (printf "pool %s: resources.cpu %s is not a whole number of cores (it is %s); it becomes the worker VM's domain.cpu.cores, which KubeVirt takes as a whole number, so set resources.cpu to one from 1 to 2147483647, such as 2 or \"2\"" $pool (include "worker-image-lib.describe" $v.resources.cpu) .) -}}
{{- end -}}
{{- $_ := set $written "resources.cpu" $cores.text -}}
{{- end -}}
{{- range $quantities -}}
{{- $q := dict -}}
{{- include "worker-image-lib.assertQuantity" (dict "prefix" (printf "pool %s: " $pool) "field" (index . 0) "value" (index . 1) "example" (index . 2) "out" $q) -}}
{{- $_ := set $written (index . 0) $q -}}
{{- end -}}
{{- /* Autoscaler bounds: whole numbers the API's int32 holds, min <= max. */ -}}
{{- range $field := list "minReplicas" "maxReplicas" -}}
{{- $value := get $v $field -}}
{{- $count := dict -}}
{{- include "worker-image-lib.parseCount" (dict "value" $value "min" 0 "max" 2147483647 "out" $count) -}}
{{- with $count.error -}}
{{- fail (printf "pool %s: %s %s is not a whole number of workers from 0 to 2147483647 (it is %s); set %s to a non-negative integer such as 3" $pool $field (include "worker-image-lib.describe" $value) . $field) -}}
{{- end -}}
{{- $_ := set $written $field $count.text -}}
{{- end -}}
{{- if gt (atoi $written.minReplicas) (atoi $written.maxReplicas) -}}
{{- fail (printf "pool %s: minReplicas %s is greater than maxReplicas %s; set minReplicas <= maxReplicas" $pool $written.minReplicas $written.maxReplicas) -}}
{{- end -}}
{{- /* The rolling update's surge: absent (or null) leaves maxReplicas there, as Cozystack's chart writes it; 0 is a value (delete first, one at a time). */ -}}
{{- if not (kindIs "invalid" $v.maxSurge) -}}
{{- $surge := dict -}}
{{- include "worker-image-lib.parseCount" (dict "value" $v.maxSurge "min" 0 "max" 2147483647 "strings" true "out" $surge) -}}
{{- with $surge.error -}}
{{- fail (printf "pool %s: maxSurge %s is not a whole number of workers from 0 to 2147483647 (it is %s); it becomes the MachineDeployment's rollingUpdate.maxSurge, the workers a roll creates at once beyond the pool's count, so set maxSurge to a non-negative integer such as 1 or \"1\" (0 replaces one worker at a time, deleting it first), or remove it to surge up to maxReplicas" $pool (include "worker-image-lib.describe" $v.maxSurge) . ) -}}
{{- end -}}
{{- $_ := set $written "maxSurge" $surge.text -}}
{{- end -}}
{{- /* Roles become label keys node-role.kubernetes.io/<role>: label-name rules. */ -}}
{{- $roles := $v.roles | default list -}}
{{- if not (kindIs "slice" $roles) -}}
{{- fail (printf "pool %s: roles is %s, not a list; write roles as a list of names such as [ingress-nginx], or [] for none" $pool (include "worker-image-lib.describe" $roles)) -}}
{{- end -}}
{{- include "worker-image-lib.assertAtMost" (dict "prefix" (printf "pool %s: " $pool) "field" "roles" "value" $roles "max" 32 "items" "roles" "fix" "label the pool's nodes with at most 32 roles") -}}
{{- $seenRoles := dict -}}
{{- range $i, $role := $roles -}}
{{- if not (and (kindIs "string" $role) (le (len $role) 63) (regexMatch "^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$" $role)) -}}
{{- fail (printf "pool %s: roles[%d] %s is not a label name (lowercase letters, digits, '-', '_' and '.', at most 63 characters, starting and ending with a letter or digit); it becomes the label node-role.kubernetes.io/<role>, so set it to a name such as ingress-nginx" $pool $i (include "worker-image-lib.describe" $role)) -}}
{{- end -}}
{{- if hasKey $seenRoles $role -}}
{{- fail (printf "pool %s: roles lists %q twice; each role is one label, so list it once" $pool $role) -}}
{{- end -}}
{{- $_ := set $seenRoles $role true -}}
{{- end -}}
{{- /* MachineHealthCheck values. */ -}}
{{- $timeout := dict -}}
{{- include "worker-image-lib.parseDuration" (dict "value" $v.nodeStartupTimeout "out" $timeout) -}}
{{- with $timeout.error -}}
{{- fail (printf "pool %s: nodeStartupTimeout %s is not a duration Cluster API reads (it is %s); write it as a Go duration such as 10m, 90s or 1h30m (at most 32 characters, at most 2562047h)" $pool (include "worker-image-lib.describe" $v.nodeStartupTimeout) .) -}}
{{- end -}}
{{- /* Timers the MachineHealthCheck webhook and the autoscaler do not check: whole s, m or h only. */ -}}
{{- range $field := list "readyUnknownTimeout" "readyFalseTimeout" "maxNodeProvisionTime" -}}
{{- $value := get $v $field -}}
{{- if not (and (kindIs "string" $value) (regexMatch "^[1-9][0-9]{0,4}[smh]([0-9]{1,5}[smh]){0,2}$" $value)) -}}
{{- fail (printf "pool %s: %s %s is not a duration the chart writes (whole seconds, minutes or hours, the first part above zero, at most three parts such as 1h30m or 20m0s); neither the MachineHealthCheck webhook nor the cluster-autoscaler refuses a bad one (a zero timeout remediates at once, an unparsable one silently falls back to the autoscaler's default), so set %s to a value such as %s" $pool $field (include "worker-image-lib.describe" $value) $field (get (dict "readyUnknownTimeout" "5m" "readyFalseTimeout" "10m" "maxNodeProvisionTime" "30m") $field)) -}}
{{- end -}}
{{- end -}}
{{- /* A count (a string of digits too, as it always was) as decimal digits, or a percentage quoted. */ -}}
{{- $unhealthy := dict -}}
{{- if and (kindIs "string" $v.maxUnhealthy) (regexMatch "^[0-9]{1,3}%$" $v.maxUnhealthy) (le (trimSuffix "%" $v.maxUnhealthy | atoi) 100) -}}
{{- $_ := set $unhealthy "text" ($v.maxUnhealthy | quote) -}}
{{- else -}}
{{- include "worker-image-lib.parseCount" (dict "value" $v.maxUnhealthy "min" 0 "max" 2147483647 "strings" true "out" $unhealthy) -}}
{{- end -}}
{{- if $unhealthy.error -}}
{{- fail (printf "pool %s: maxUnhealthy %s is neither a count nor a percentage; set it to a whole number from 0 to 2147483647 (e.g. 2) or a percentage from 0%% to 100%% (e.g. \"40%%\")" $pool (include "worker-image-lib.describe" $v.maxUnhealthy)) -}}
{{- end -}}
{{- $_ := set $written "maxUnhealthy" $unhealthy.text -}}
{{- /* Settings that reach the Talos machine config. */ -}}
{{- include "worker-image-lib.assertInstallerRepository" (dict "prefix" (printf "pool %s: " $pool) "field" "talos.installerRepository" "value" $v.talos.installerRepository) -}}
{{- include "worker-image-lib.assertRegistryMirrors" (dict "prefix" (printf "pool %s: " $pool) "field" "talos.registryMirrors" "value" $v.talos.registryMirrors) -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" (printf "pool %s: " $pool) "field" "talos.imageFactoryCA" "value" $v.talos.imageFactoryCA) -}}
{{- $platform := $v._cluster | default dict -}}
{{- if not (kindIs "map" $platform) -}}
{{- fail (printf "pool %s: _cluster is %s, not a map; _cluster is the platform's values channel: remove it from the pool's values" $pool (include "worker-image-lib.describe" $platform)) -}}
{{- end -}}
{{- $platformTalos := $platform.talos | default dict -}}
{{- if not (kindIs "map" $platformTalos) -}}
{{- fail (printf "pool %s: _cluster.talos is %s, not a map; it is set by the platform (tenantWorkers.talos and registries in the platform chart)" $pool (include "worker-image-lib.describe" $platformTalos)) -}}
{{- end -}}
{{- include "worker-image-lib.assertInstallerRepository" (dict "prefix" (printf "pool %s: " $pool) "field" "_cluster.talos.installerRepository" "value" (get $platformTalos "installerRepository")) -}}
{{- include "worker-image-lib.assertRegistryMirrors" (dict "prefix" (printf "pool %s: " $pool) "field" "_cluster.talos.registryMirrors" "value" (get $platformTalos "registryMirrors")) -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" (printf "pool %s: " $pool) "field" "_cluster.talos.imageFactoryCA" "value" (get $platformTalos "imageFactoryCA")) -}}
{{- $registryConfig := get $platformTalos "registryConfig" | default dict -}}
{{- if not (kindIs "map" $registryConfig) -}}
{{- fail (printf "pool %s: _cluster.talos.registryConfig is %s, not a map of registry host to auth/TLS config; it is set by the platform (registries.config in the platform chart)" $pool (include "worker-image-lib.describe" $registryConfig)) -}}
{{- end -}}
{{- include "worker-image-lib.assertRegistryConfig" (dict "prefix" (printf "pool %s: " $pool) "field" "_cluster.talos.registryConfig" "value" $registryConfig) -}}
{{- /* The catalog's published defaults, the channel after _cluster: read and checked once, whichever value needs them. */ -}}
{{- include "kubernetes-nodes.ensurePublished" . -}}
{{- /* The platform's switch for the pools' metrics annotations (docs/monitoring.md): a map of one boolean, or absent. */ -}}
{{- include "kubernetes-nodes.poolMetrics" (dict "root" . "pool" $pool "platform" $platform) -}}
{{- /* The platform's default for new pools: a map, or absent (null: not set). */ -}}
{{- if and (hasKey $platform "osImage") (not (kindIs "invalid" $platform.osImage)) -}}
{{- include "worker-image-lib.assertOSImageShape" (dict "prefix" (printf "pool %s: " $pool) "field" "_cluster.osImage" "value" $platform.osImage) -}}
{{- end -}}
{{- include "kubernetes-nodes.validateVM" (dict "root" . "pool" $pool "written" $written) -}}
{{- include "kubernetes-nodes.validateKubelet" (dict "root" . "pool" $pool) -}}
{{- include "kubernetes-nodes.validatePlatformScheduling" (dict "root" . "pool" $pool "platform" $platform "written" $written) -}}
{{- $_ := set ._kubernetesNodes "validated" true -}}
{{- end -}}
{{- end -}}

{{/*
A name as a plain scalar, quoted only where YAML would read another type (null, yes, on, 0123), so
plain names keep their bytes (library README).
*/}}
{{- define "kubernetes-nodes.scalar" -}}
{{- $s := toString . -}}
{{- if has $s (list "y" "n" "yes" "no" "on" "off" "true" "false" "null") -}}
{{- $s | quote -}}
{{- else if and (regexMatch "^[-+.0-9]" $s) (ne (toJson (fromYaml (printf "v: %s" $s)).v) (toJson $s)) -}}
{{- $s | quote -}}
{{- else -}}
{{- $s -}}
{{- end -}}
{{- end -}}
