{{/*
The pool's instancetype, read once into ._kubernetesNodes.instanceType: its spec, or absent when the
cluster could not be asked (a preview: the list has no "items"), and nothing read at all for a VM
sized by resources. Refuses a name the cluster does not have.
*/}}
{{- define "kubernetes-nodes.ensureInstanceType" -}}
{{- include "kubernetes-nodes.validate" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "instanceTypeRead") -}}
{{- $_ := set $state "instanceTypeRead" true -}}
{{- if not (include "kubernetes-nodes.explicitResources" .) -}}
{{- include "kubernetes-nodes.assertInstanceType" . -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
What the worker VM offers and what its kubelet keeps back, resolved once into ._kubernetesNodes.sizing:
memory and cpu (the guest's, "" when not known), known (false in a preview, where the instancetype
could not be read), the four reservations and two eviction thresholds as the kubelet configuration
takes them, and capacityMemory and capacityCpu, the allocatable figures the cluster-autoscaler reads
for a pool at zero workers ("" when not known). Reservations left out are 5% of the guest's memory
(256Mi to 1Gi) and CPU (50m to 500m), each for the system and for Kubernetes.
*/}}
{{- define "kubernetes-nodes.ensureSizing" -}}
{{- include "kubernetes-nodes.ensureInstanceType" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "sizing") -}}
{{- $pool := include "kubernetes-nodes.poolName" . -}}
{{- $sizing := dict "memory" "" "cpu" "" "known" true "capacityMemory" "" "capacityCpu" "" -}}
{{- if include "kubernetes-nodes.explicitResources" . -}}
{{- $_ := set $sizing "memory" (toString .Values.resources.memory) -}}
{{- $_ := set $sizing "cpu" (index $state.written "resources.cpu") -}}
{{- else if hasKey $state "instanceType" -}}
{{- $spec := $state.instanceType.spec | default dict -}}
{{- $what := printf "VirtualMachineClusterInstancetype %s" (toString .Values.instanceType) -}}
{{- with dig "memory" "guest" "" $spec -}}
{{- $q := dict -}}
{{- include "worker-image-lib.parseQuantity" (dict "value" . "out" $q) -}}
{{- if or $q.error (regexMatch "[num]$" (toString .)) -}}
{{- fail (printf "pool %s: %s has spec.memory.guest %s, which is not a memory quantity the chart can read (%s); fix the instancetype, or size the pool by resources.cpu and resources.memory" $pool $what (include "worker-image-lib.describe" (toString .)) ($q.error | default "a fraction of a byte")) -}}
{{- end -}}
{{- $_ := set $sizing "memory" (toString .) -}}
{{- end -}}
{{- with dig "cpu" "guest" "" $spec -}}
{{- $cores := dict -}}
{{- include "worker-image-lib.parseCount" (dict "value" . "min" 1 "max" 2147483647 "strings" true "out" $cores) -}}
{{- with $cores.error -}}
{{- fail (printf "pool %s: %s has spec.cpu.guest %s, which is not a whole number of cores (%s); fix the instancetype, or size the pool by resources.cpu and resources.memory" $pool $what (include "worker-image-lib.describe" (toString $spec.cpu.guest)) .) -}}
{{- end -}}
{{- $_ := set $sizing "cpu" (toString .) -}}
{{- end -}}
{{- else -}}
{{- $_ := set $sizing "known" false -}}
{{- end -}}
{{- /* Cozystack's own rule for reservations left out, to the same rounding. */ -}}
{{- $autoMi := 256 -}}
{{- with $sizing.memory -}}
{{- $mi := divf (include "kubernetes-nodes.quantityFloat" . | float64) 1048576.0 | int -}}
{{- $autoMi = min (max (mulf (float64 $mi) 0.05 | int) 256) 1024 -}}
{{- end -}}
{{- $autoMillis := 50 -}}
{{- with $sizing.cpu -}}
{{- $millis := include "kubernetes-nodes.cpuMillicores" . | int -}}
{{- $autoMillis = min (max (mulf (float64 $millis) 0.05 | int) 50) 500 -}}
{{- end -}}
{{- $kubelet := .Values.kubelet | default dict -}}
{{- $_ := set $sizing "systemReservedMemory" (get $kubelet "systemReservedMemory" | default (printf "%dMi" $autoMi)) -}}
{{- $_ := set $sizing "kubeReservedMemory" (get $kubelet "kubeReservedMemory" | default (printf "%dMi" $autoMi)) -}}
{{- $_ := set $sizing "systemReservedCpu" (get $kubelet "systemReservedCpu" | default (printf "%dm" $autoMillis)) -}}
{{- $_ := set $sizing "kubeReservedCpu" (get $kubelet "kubeReservedCpu" | default (printf "%dm" $autoMillis)) -}}
{{- $_ := set $sizing "evictionHardMemory" (get $kubelet "evictionHardMemory" | default "7%") -}}
{{- $_ := set $sizing "evictionSoftMemory" (get $kubelet "evictionSoftMemory" | default "10%") -}}
{{- if $sizing.known -}}
{{- $reserved := printf "systemReservedMemory %s + kubeReservedMemory %s + evictionHardMemory %s" $sizing.systemReservedMemory $sizing.kubeReservedMemory $sizing.evictionHardMemory -}}
{{- if $sizing.memory -}}
{{- $total := include "kubernetes-nodes.quantityFloat" $sizing.memory | float64 -}}
{{- $hard := 0.0 -}}
{{- if hasSuffix "%" $sizing.evictionHardMemory -}}
{{- $hard = mulf $total (divf (trimSuffix "%" $sizing.evictionHardMemory | float64) 100.0) -}}
{{- else -}}
{{- $hard = include "kubernetes-nodes.quantityFloat" $sizing.evictionHardMemory | float64 -}}
{{- end -}}
{{- $kept := addf (addf (include "kubernetes-nodes.quantityFloat" $sizing.systemReservedMemory | float64) (include "kubernetes-nodes.quantityFloat" $sizing.kubeReservedMemory | float64)) $hard -}}
{{- if ge $kept $total -}}
{{- fail (printf "pool %s: the kubelet keeps back %s, not less than the worker's %s of memory, so no pod could run; lower the kubelet reservations or give the worker more memory (instanceType or resources.memory)" $pool $reserved $sizing.memory) -}}
{{- end -}}
{{- $_ := set $sizing "capacityMemory" (printf "%.0fMi" (divf (subf $total $kept) 1048576.0 | floor)) -}}
{{- else if or (get $kubelet "systemReservedMemory") (get $kubelet "kubeReservedMemory") (get $kubelet "evictionHardMemory") (get $kubelet "evictionSoftMemory") -}}
{{- fail (printf "pool %s: kubelet sets memory reservations, but the worker's memory is not known (instancetype %q states no spec.memory.guest), so they cannot be checked against it; size the pool by resources.memory or by an instancetype that states its memory, or remove them" $pool (toString .Values.instanceType)) -}}
{{- end -}}
{{- if $sizing.cpu -}}
{{- $total := include "kubernetes-nodes.cpuMillicores" $sizing.cpu | int | float64 -}}
{{- $kept := addf (include "kubernetes-nodes.cpuMillicores" $sizing.systemReservedCpu | float64) (include "kubernetes-nodes.cpuMillicores" $sizing.kubeReservedCpu | float64) -}}
{{- if ge $kept $total -}}
{{- fail (printf "pool %s: the kubelet keeps back systemReservedCpu %s + kubeReservedCpu %s, not less than the worker's %s cores, so no pod could run; lower them or give the worker more CPU (instanceType or resources.cpu)" $pool $sizing.systemReservedCpu $sizing.kubeReservedCpu $sizing.cpu) -}}
{{- end -}}
{{- $_ := set $sizing "capacityCpu" (printf "%dm" (subf $total $kept | ceil | int)) -}}
{{- else if or (get $kubelet "systemReservedCpu") (get $kubelet "kubeReservedCpu") -}}
{{- fail (printf "pool %s: kubelet sets CPU reservations, but the worker's CPU is not known (instancetype %q states no spec.cpu.guest), so they cannot be checked against it; size the pool by resources.cpu or by an instancetype that states its CPU, or remove them" $pool (toString .Values.instanceType)) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $state "sizing" $sizing -}}
{{- end -}}
{{- end -}}
