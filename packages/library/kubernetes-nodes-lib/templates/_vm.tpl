{{/*
The worker VM's shape beyond its disk: GPUs, the virt-launcher pod's CPU request and limit, the
serial console and the image the reconcile Job runs. Called by kubernetes-nodes.validate with a dict:
root, pool, written (filled with podCpuLimit and podCpuRequest as written, when set).
*/}}
{{- define "kubernetes-nodes.validateVM" -}}
{{- $v := .root.Values -}}
{{- $prefix := printf "pool %s: " .pool -}}
{{- $gpus := $v.gpus | default list -}}
{{- if not (kindIs "slice" $gpus) -}}
{{- fail (printf "%sgpus is %s, not a list; write gpus as a list of {name: <device resource name>}, such as [{name: nvidia.com/AD102GL_L40S}], or [] for none" $prefix (include "worker-image-lib.describe" $gpus)) -}}
{{- end -}}
{{- include "worker-image-lib.assertAtMost" (dict "prefix" $prefix "field" "gpus" "value" $gpus "max" 16 "items" "GPUs" "fix" "attach at most 16 GPUs to a worker") -}}
{{- range $i, $gpu := $gpus -}}
{{- if not (kindIs "map" $gpu) -}}
{{- fail (printf "%sgpus[%d] is %s, not a map; write it as {name: nvidia.com/AD102GL_L40S}" $prefix $i (include "worker-image-lib.describe" $gpu)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $prefix "field" (printf "gpus[%d]" $i) "value" $gpu "keys" (list "name")) -}}
{{- if not (and (kindIs "string" $gpu.name) (le (len $gpu.name) 253) (regexMatch "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$" $gpu.name)) -}}
{{- fail (printf "%sgpus[%d].name %s is not a device resource name (an optional DNS-subdomain prefix and '/', then letters, digits, '-', '_' and '.', at most 253 characters); it becomes the VM's deviceName, the resource KubeVirt's device plugin advertises, so set it to one such as nvidia.com/AD102GL_L40S" $prefix $i (include "worker-image-lib.describe" $gpu.name)) -}}
{{- end -}}
{{- end -}}
{{- if not (kindIs "bool" $v.logSerialConsole) -}}
{{- fail (printf "%slogSerialConsole is %s, not true or false; a string such as \"false\" would read as true, so write it as a boolean" $prefix (include "worker-image-lib.describe" $v.logSerialConsole)) -}}
{{- end -}}
{{- /* The pod's CPU: present means set and not null, since zero is a value a pool can mean. */ -}}
{{- $cpu := dict -}}
{{- range $field := list "podCpuLimit" "podCpuRequest" -}}
{{- $value := index $v $field -}}
{{- if not (kindIs "invalid" $value) -}}
{{- $q := dict -}}
{{- include "worker-image-lib.parseQuantity" (dict "value" $value "out" $q) -}}
{{- with $q.error -}}
{{- fail (printf "%s%s %s is not a CPU quantity the chart writes (it is %s); set it to a non-negative quantity such as 2, \"1.5\" or 1500m, or remove it to let KubeVirt derive it from the vCPU count" $prefix $field (include "worker-image-lib.describe" $value) .) -}}
{{- end -}}
{{- $_ := set $cpu $field $q.bytes -}}
{{- $_ := set $.written $field (toString $value) -}}
{{- end -}}
{{- end -}}
{{- if and $cpu (not (include "kubernetes-nodes.explicitResources" .root)) -}}
{{- $field := ternary "podCpuLimit" "podCpuRequest" (hasKey $cpu "podCpuLimit") -}}
{{- fail (printf "%s%s is set while the VM is sized by instanceType %q; KubeVirt refuses a VirtualMachine that names an instancetype and also sets domain.resources.%s.cpu, so set both resources.cpu and resources.memory (the VM then names no instancetype) or remove %s" $prefix $field (toString $v.instanceType) (ternary "limits" "requests" (eq $field "podCpuLimit")) $field) -}}
{{- end -}}
{{- if and (hasKey $cpu "podCpuLimit") (eq $cpu.podCpuLimit 0.0) (not (hasKey $cpu "podCpuRequest")) -}}
{{- fail (printf "%spodCpuLimit is 0 without podCpuRequest; a zero limit means no ceiling, but KubeVirt still derives a CPU request from the vCPU count and the API server refuses a request above a limit of zero when the worker's pod is created, so set podCpuRequest: 0 beside it, or give podCpuLimit a value above zero" $prefix) -}}
{{- end -}}
{{- if and (hasKey $cpu "podCpuLimit") (hasKey $cpu "podCpuRequest") -}}
{{- if and (eq $cpu.podCpuRequest 0.0) (ne $cpu.podCpuLimit 0.0) -}}
{{- fail (printf "%spodCpuRequest is 0 beside podCpuLimit %s; KubeVirt treats a zero request as none and replaces it with the limit, so each worker would ask the scheduler for its whole ceiling; give podCpuRequest a value above zero, or remove it to take that outcome on purpose" $prefix $.written.podCpuLimit) -}}
{{- end -}}
{{- if gt $cpu.podCpuRequest $cpu.podCpuLimit -}}
{{- fail (printf "%spodCpuRequest %s is above podCpuLimit %s; a container cannot request more CPU than its limit, so lower podCpuRequest or raise podCpuLimit" $prefix $.written.podCpuRequest $.written.podCpuLimit) -}}
{{- end -}}
{{- end -}}
{{- /* The reconcile Job's image. */ -}}
{{- $images := $v.images | default dict -}}
{{- if not (kindIs "map" $images) -}}
{{- fail (printf "%simages is %s, not a map; write it as {kubectl: <image>}, or remove it to use the chart's image" $prefix (include "worker-image-lib.describe" $images)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $prefix "field" "images" "value" $images "keys" (list "kubectl")) -}}
{{- include "worker-image-lib.assertString" (dict "prefix" $prefix "field" "images.kubectl" "value" $images.kubectl) -}}
{{- with $images.kubectl -}}
{{- if not (and (le (len .) 512) (regexMatch (printf "%s(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?$" (include "worker-image-lib.registryHostPattern" .)) .)) -}}
{{- fail (printf "%simages.kubectl %q is not an image reference ([registry/]path[:tag][@sha256:digest], at most 512 characters); the reconcile Job runs it, so set it to an image that holds sh, sed and kubectl, such as docker.io/alpine/k8s:1.33.4, or \"\" for the chart's" $prefix (include "worker-image-lib.truncate" .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Kubelet reservations, each checked on its own (the checks that need the worker's size are in
kubernetes-nodes.ensureSizing). Takes a dict: root, pool.
*/}}
{{- define "kubernetes-nodes.validateKubelet" -}}
{{- $prefix := printf "pool %s: " .pool -}}
{{- $kubelet := .root.Values.kubelet | default dict -}}
{{- if not (kindIs "map" $kubelet) -}}
{{- fail (printf "%skubelet is %s, not a map; write it as a map such as {systemReservedMemory: 512Mi}, or {} for reservations computed from the worker's size" $prefix (include "worker-image-lib.describe" $kubelet)) -}}
{{- end -}}
{{- $memory := list "systemReservedMemory" "kubeReservedMemory" -}}
{{- $cpu := list "systemReservedCpu" "kubeReservedCpu" -}}
{{- $eviction := list "evictionHardMemory" "evictionSoftMemory" -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $prefix "field" "kubelet" "value" $kubelet "keys" (concat $memory $cpu $eviction)) -}}
{{- range $field := concat $memory $cpu $eviction -}}
{{- $value := get $kubelet $field -}}
{{- include "worker-image-lib.assertString" (dict "prefix" $prefix "field" (printf "kubelet.%s" $field) "value" $value) -}}
{{- if $value -}}
{{- $percent := and (has $field $eviction) (hasSuffix "%" $value) -}}
{{- $problem := "" -}}
{{- if gt (len $value) 32 -}}
{{- $problem = "longer than 32 characters" -}}
{{- else if $percent -}}
{{- if not (regexMatch "^[0-9]{1,3}(\\.[0-9]{1,6})?%$" $value) -}}
{{- $problem = "not a percentage such as 7%" -}}
{{- else if or (le (trimSuffix "%" $value | float64) 0.0) (gt (trimSuffix "%" $value | float64) 100.0) -}}
{{- $problem = "a percentage outside (0%, 100%]" -}}
{{- end -}}
{{- else if has $field $cpu -}}
{{- if not (regexMatch "^([0-9]{1,12}m|[0-9]{1,9}(\\.[0-9]{1,3})?)$" $value) -}}
{{- $problem = "not a CPU quantity in whole millicores (100m) or cores (0.5, 1)" -}}
{{- else if eq (include "kubernetes-nodes.cpuMillicores" $value | float64) 0.0 -}}
{{- $problem = "zero" -}}
{{- end -}}
{{- else -}}
{{- $q := dict -}}
{{- include "worker-image-lib.parseQuantity" (dict "value" $value "out" $q) -}}
{{- if or $q.error (regexMatch "[num]$" $value) -}}
{{- $problem = printf "not a memory quantity%s" (ternary "" (printf " (%s)" ($q.error | default "")) (not $q.error)) -}}
{{- else if eq $q.bytes 0.0 -}}
{{- $problem = "zero" -}}
{{- end -}}
{{- end -}}
{{- if $problem -}}
{{- fail (printf "%skubelet.%s %q is %s; it is written into the worker's kubelet configuration, so set it to %s, or remove it to have it computed from the worker's size" $prefix $field (include "worker-image-lib.truncate" $value) $problem (get (dict "systemReservedMemory" "a memory quantity above zero such as 512Mi" "kubeReservedMemory" "a memory quantity above zero such as 512Mi" "systemReservedCpu" "a CPU quantity above zero such as 100m or 0.5" "kubeReservedCpu" "a CPU quantity above zero such as 100m or 0.5" "evictionHardMemory" "a percentage such as 7% or a memory quantity such as 500Mi" "evictionSoftMemory" "a percentage such as 10% or a memory quantity such as 1Gi") $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $hard := get $kubelet "evictionHardMemory" | default "7%" -}}
{{- $soft := get $kubelet "evictionSoftMemory" | default "10%" -}}
{{- if ne (hasSuffix "%" $hard) (hasSuffix "%" $soft) -}}
{{- fail (printf "%skubelet.evictionHardMemory %q and kubelet.evictionSoftMemory %q mix a percentage and a quantity (the defaults are 7%% and 10%%); the kubelet compares them, so write both as percentages or both as quantities" $prefix $hard $soft) -}}
{{- end -}}
{{- $hardValue := ternary (trimSuffix "%" $hard | float64) (include "kubernetes-nodes.quantityFloat" $hard | float64) (hasSuffix "%" $hard) -}}
{{- $softValue := ternary (trimSuffix "%" $soft | float64) (include "kubernetes-nodes.quantityFloat" $soft | float64) (hasSuffix "%" $soft) -}}
{{- if ge $hardValue $softValue -}}
{{- fail (printf "%skubelet.evictionHardMemory %q is not below kubelet.evictionSoftMemory %q (the defaults are 7%% and 10%%); the soft threshold must be reached first for its grace period to mean anything, so lower the hard one or raise the soft one" $prefix $hard $soft) -}}
{{- end -}}
{{- end -}}

{{/*
The platform's scheduling policy and the allocation ratio that sizes the pod's ephemeral-storage
request, both from _cluster. Takes a dict: root, pool, platform (the _cluster map, checked), written
(filled with ephemeralStorageRatio, a float, and topologySpread, the policy's YAML or "").
*/}}
{{- define "kubernetes-nodes.validatePlatformScheduling" -}}
{{- $prefix := printf "pool %s: " .pool -}}
{{- $ratio := index .platform "ephemeral-storage-allocation-ratio" -}}
{{- if kindIs "invalid" $ratio -}}
{{- $ratio = "40" -}}
{{- end -}}
{{- $text := toString $ratio -}}
{{- if not (and (or (kindIs "string" $ratio) (kindIs "float64" $ratio) (kindIs "int64" $ratio) (kindIs "int" $ratio)) (regexMatch "^[0-9]{1,9}(\\.[0-9]{1,9})?$" $text) (gt (float64 $text) 0.0)) -}}
{{- fail (printf "%s_cluster.ephemeral-storage-allocation-ratio is %s, not a number above zero; the worker pod's ephemeral-storage request is 2Gi divided by it, so the platform must set it to a ratio such as \"40\" (the platform chart's resources.ephemeralStorageAllocationRatio)" $prefix (include "worker-image-lib.describe" $ratio)) -}}
{{- end -}}
{{- $_ := set .written "ephemeralStorageRatio" (float64 $text) -}}
{{- $_ := set .written "topologySpread" "" -}}
{{- $scheduling := .platform.scheduling -}}
{{- if $scheduling -}}
{{- if not (kindIs "map" $scheduling) -}}
{{- fail (printf "%s_cluster.scheduling is %s, not a map; it is set by the platform (the platform chart's scheduling)" $prefix (include "worker-image-lib.describe" $scheduling)) -}}
{{- end -}}
{{- $policy := get $scheduling "globalAppTopologySpreadConstraints" -}}
{{- if $policy -}}
{{- $problem := "" -}}
{{- if not (kindIs "string" $policy) -}}
{{- $problem = printf "is %s, not YAML text" (include "worker-image-lib.describe" $policy) -}}
{{- else if gt (len $policy) 16384 -}}
{{- $problem = printf "is %d bytes long, more than the 16384 the chart takes" (len $policy) -}}
{{- else -}}
{{- $parsed := fromYaml $policy -}}
{{- $constraints := $parsed.topologySpreadConstraints -}}
{{- if or (hasKey $parsed "Error") (ne (len $parsed) 1) (not (kindIs "slice" $constraints)) -}}
{{- $problem = "does not hold exactly one key, topologySpreadConstraints, with a list" -}}
{{- else if or (eq (len $constraints) 0) (gt (len $constraints) 16) -}}
{{- $problem = printf "lists %d constraints, not 1 to 16" (len $constraints) -}}
{{- else -}}
{{- range $constraints -}}
{{- if not (kindIs "map" .) -}}
{{- $problem = "lists a constraint that is not a map" -}}
{{- end -}}
{{- end -}}
{{- if and (not $problem) (hasKey (last $constraints) "labelSelector") -}}
{{- $problem = "sets labelSelector on its last constraint, where the chart writes the pool's own selector" -}}
{{- end -}}
{{- end -}}
{{- if not $problem -}}
{{- $_ := set $.written "topologySpread" ($parsed | toYaml) -}}
{{- end -}}
{{- end -}}
{{- with $problem -}}
{{- fail (printf "%s_cluster.scheduling.globalAppTopologySpreadConstraints %s; it is written into every worker VM's spec, so the platform must set it (the platform chart's scheduling.globalAppTopologySpreadConstraints) to YAML such as \"topologySpreadConstraints:\\n- maxSkew: 1\\n  topologyKey: topology.kubernetes.io/zone\\n  whenUnsatisfiable: ScheduleAnyway\"" $prefix .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $domain := index .platform "cluster-domain" | default "cozy.local" -}}
{{- if not (and (kindIs "string" $domain) (include "worker-image-lib.isDNSSubdomain" $domain)) -}}
{{- fail (printf "%s_cluster.cluster-domain is %s, not a DNS name; workers resolve the platform's services under it, so the platform must set it to its cluster domain, such as cozy.local" $prefix (include "worker-image-lib.describe" $domain)) -}}
{{- end -}}
{{- $_ := set .written "platformClusterDomain" $domain -}}
{{- end -}}

{{/*
A validated quantity as a float, computed as Cozystack's own charts compute it (the number times its
suffix's unit), so the figures derived from it match theirs to the last digit.
*/}}
{{- define "kubernetes-nodes.quantityFloat" -}}
{{- $text := toString . -}}
{{- $unit := 1.0 -}}
{{- with regexFind "(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])$" $text -}}
{{- $unit = get (dict "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 "n" 1e-9 "u" 1e-6 "m" 1e-3 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18) . -}}
{{- $text = trimSuffix . $text -}}
{{- end -}}
{{- mulf (float64 $text) $unit -}}
{{- end -}}

{{/* A validated CPU quantity in millicores: "100m" as 100, "0.5" as 500. */}}
{{- define "kubernetes-nodes.cpuMillicores" -}}
{{- $text := toString . -}}
{{- if hasSuffix "m" $text -}}
{{- trimSuffix "m" $text -}}
{{- else -}}
{{- mulf (float64 $text) 1000.0 | int | toString -}}
{{- end -}}
{{- end -}}

{{/*
The virt-launcher pod's resources, as YAML: 2Gi of ephemeral storage (the worker's disk is a
DataVolume, not counted there) requested at the platform's allocation ratio, and the pool's own
podCpuLimit and podCpuRequest when set.
*/}}
{{- define "kubernetes-nodes.podResources" -}}
{{- $written := ._kubernetesNodes.written -}}
{{- $limits := dict "ephemeral-storage" "2Gi" -}}
{{- $requests := dict "ephemeral-storage" (divf (mulf 2.0 1073741824.0) $written.ephemeralStorageRatio | int | toString) -}}
{{- with $written.podCpuLimit -}}
{{- $_ := set $limits "cpu" . -}}
{{- end -}}
{{- with $written.podCpuRequest -}}
{{- $_ := set $requests "cpu" . -}}
{{- end -}}
{{- dict "limits" $limits "requests" $requests | toYaml -}}
{{- end -}}
