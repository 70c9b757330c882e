{{/*
The worker disk's source, resolved once per render into
._kubernetesNodes.disk: clone, golden, url (HTTP path), storageClassName
(what the disk is written with), the resolved image fields, and on the clone
path a "report" of what the guards saw (for `workerimage plan`; it is never
rendered into an object). The clone path's guards ask the cluster, so they must
run exactly once however often the body is rendered.
*/}}
{{- define "kubernetes-nodes.ensureDiskSource" -}}
{{- include "kubernetes-nodes.ensureImage" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "disk") -}}
{{- $image := $state.image -}}
{{- $source := dict -}}
{{- if $image.clone -}}
{{- include "kubernetes-nodes.cloneSource" (dict "root" . "image" $image "out" $source) -}}
{{- else -}}
{{- $_ := set $source "url" (include "worker-image-lib.imageURL" $image) -}}
{{- $_ := set $source "storageClassName" (.Values.storageClass | toString) -}}
{{- end -}}
{{- $_ := set $state "disk" (merge $source (deepCopy $image)) -}}
{{- end -}}
{{- end -}}

{{/* The disk source as YAML, for tools that read what the chart resolved. */}}
{{- define "kubernetes-nodes.diskSource" -}}
{{- include "kubernetes-nodes.ensureDiskSource" . -}}
{{- ._kubernetesNodes.disk | toYaml -}}
{{- end -}}

{{/*
The clone path: finds the golden in cozy-public and refuses every arrangement
in which CDI could not do a plain CSI clone of it (DESIGN.md refusals 2 to 6).
Lookups are made only when an answer depends on them, so a pool with a declared
class and a healthy golden never lists its own namespace.
Takes a dict: root, image (the resolved image), out (filled with the result).
*/}}
{{- define "kubernetes-nodes.cloneSource" -}}
{{- $root := .root -}}
{{- $image := .image -}}
{{- $pool := include "kubernetes-nodes.poolName" $root -}}
{{- $namespace := $root.Release.Namespace -}}
{{- $golden := $image.golden -}}
{{- $seen := printf "%s.builtin resolved to schematicID %s (from %s), version %s (from %s)" $image.osImageOrigin $image.schematicID $image.schematicIDSource $image.version $image.versionSource -}}
{{- $toHTTP := "remove osImage.builtin to import over HTTP" -}}
{{- if ne $image.osImageOrigin "osImage" -}}
{{- $seen = printf "%s, the platform default recorded when the pool was created" $seen -}}
{{- $toHTTP = "set the pool's own osImage: {} to import over HTTP" -}}
{{- end -}}
{{- $dv := lookup "cdi.kubevirt.io/v1beta1" "DataVolume" "cozy-public" $golden -}}
{{- $claimName := $golden -}}
{{- $pvc := dict -}}
{{- $pvcRead := false -}}
{{- $phase := "" -}}
{{- $preview := false -}}
{{- if $dv -}}
{{- $claimName = dig "status" "claimName" $golden $dv | default $golden -}}
{{- $phase = dig "status" "phase" "" $dv -}}
{{- else -}}
{{- /* CDI garbage-collects completed DataVolumes and keeps their PVCs: a PVC alone is a populated golden. */ -}}
{{- $pvc = lookup "v1" "PersistentVolumeClaim" "cozy-public" $golden -}}
{{- $pvcRead = true -}}
{{- if not $pvc -}}
{{- /* A reachable cluster answers a list with "items"; helm template answers {}. */ -}}
{{- $preview = not (hasKey (lookup "cdi.kubevirt.io/v1beta1" "DataVolume" "cozy-public" "") "items") -}}
{{- end -}}
{{- end -}}
{{- $present := or $dv $pvc -}}
{{- $poolClass := $root.Values.storageClass | toString -}}
{{- $result := .out -}}
{{- $_ := set $result "clone" true -}}
{{- $_ := set $result "golden" $golden -}}
{{- $_ := set $result "storageClassName" $poolClass -}}
{{- $_ := set $result "preview" $preview -}}
{{- if not $preview -}}
{{- $cloned := dict -}}
{{- if or (not $present) (eq $phase "Failed") (not $poolClass) -}}
{{- include "kubernetes-nodes.clonedDisk" (dict "namespace" $namespace "pool" $pool "golden" $golden "out" $cloned) -}}
{{- end -}}
{{- if and (not $present) (not $cloned.name) -}}
{{- fail (printf "pool %s: golden %s is absent from cozy-public (no DataVolume and no PersistentVolumeClaim of that name); %s. Add the entry {schematicID: %s, version: %s} to the kubernetes-worker-image catalog's images and wait for it to import, or clone a golden that exists, or %s" $pool $golden $seen $image.schematicID $image.version $toHTTP) -}}
{{- end -}}
{{- if and (eq $phase "Failed") (not $cloned.name) -}}
{{- fail (printf "pool %s: golden %s in cozy-public failed to import (status.phase Failed); %s. Fix the import (kubectl -n cozy-public describe datavolume %s), or add a catalog entry for another (schematicID, version) and point osImage.builtin at it; a golden that is still importing is not refused" $pool $golden $seen $golden) -}}
{{- end -}}
{{- $defaultClass := "" -}}
{{- $defaultRead := false -}}
{{- /* Pool side: declared, else the class its cloned disk bound to, else today's default. */ -}}
{{- $poolFrom := "storageClass" -}}
{{- if and (not $poolClass) $cloned.name -}}
{{- $clonedPVC := lookup "v1" "PersistentVolumeClaim" $namespace $cloned.name -}}
{{- $poolClass = dig "spec" "storageClassName" "" $clonedPVC -}}
{{- $poolFrom = printf "the PersistentVolumeClaim %s/%s of the pool's cloned disk" $namespace $cloned.name -}}
{{- end -}}
{{- if not $poolClass -}}
{{- $defaultClass = include "kubernetes-nodes.defaultStorageClass" . -}}
{{- $defaultRead = true -}}
{{- $poolClass = $defaultClass -}}
{{- $poolFrom = printf "storageClass \"\", resolved from the cluster default class %q" $defaultClass -}}
{{- end -}}
{{- /* Golden side: its spec, else the class its PVC bound to, else today's default. */ -}}
{{- $goldenClass := "" -}}
{{- $goldenFrom := "" -}}
{{- if $dv -}}
{{- $goldenClass = dig "spec" "storage" "storageClassName" (dig "spec" "pvc" "storageClassName" "" $dv) $dv -}}
{{- $goldenFrom = printf "spec.storage.storageClassName of DataVolume cozy-public/%s" $golden -}}
{{- end -}}
{{- $goldenSize := "" -}}
{{- if $dv -}}
{{- $goldenSize = dig "spec" "storage" "resources" "requests" "storage" (dig "spec" "pvc" "resources" "requests" "storage" "" $dv) $dv -}}
{{- end -}}
{{- if and $present (or (not $goldenClass) (not $goldenSize)) (not $pvcRead) -}}
{{- $pvc = lookup "v1" "PersistentVolumeClaim" "cozy-public" $claimName -}}
{{- end -}}
{{- if and (not $goldenClass) $pvc -}}
{{- $goldenClass = dig "spec" "storageClassName" "" $pvc -}}
{{- $goldenFrom = printf "the golden's PersistentVolumeClaim cozy-public/%s" $claimName -}}
{{- end -}}
{{- if and (not $goldenSize) $pvc -}}
{{- $goldenSize = dig "spec" "resources" "requests" "storage" "" $pvc -}}
{{- end -}}
{{- if and $present (not $goldenClass) -}}
{{- if not $defaultRead -}}
{{- $defaultClass = include "kubernetes-nodes.defaultStorageClass" . -}}
{{- end -}}
{{- $goldenClass = $defaultClass -}}
{{- $goldenFrom = printf "no class on the golden, resolved from the cluster default class %q" $defaultClass -}}
{{- end -}}
{{- if and $poolClass $goldenClass (ne $poolClass $goldenClass) -}}
{{- fail (printf "pool %s: its disks would be on StorageClass %q (%s) but golden %s is on %q (%s); %s. CDI cannot CSI-clone across StorageClasses and would fall back to a host-assisted copy over the pod network. Set storageClass to %q, or clone a golden imported on %q" $pool $poolClass $poolFrom $golden $goldenClass $goldenFrom $seen $goldenClass $poolClass) -}}
{{- end -}}
{{- if $goldenSize -}}
{{- $disk := include "worker-image-lib.quantityBytes" $root.Values.diskSize | float64 -}}
{{- $size := include "worker-image-lib.quantityBytes" $goldenSize | float64 -}}
{{- if lt $disk $size -}}
{{- fail (printf "pool %s: diskSize %v is smaller than golden %s (%s); a clone cannot be smaller than its source. Set diskSize to %s or more" $pool $root.Values.diskSize $golden $goldenSize $goldenSize) -}}
{{- end -}}
{{- if and (gt $disk $size) $poolClass -}}
{{- $class := lookup "storage.k8s.io/v1" "StorageClass" "" $poolClass -}}
{{- if and $class (ne (toString (get $class "allowVolumeExpansion")) "true") -}}
{{- fail (printf "pool %s: diskSize %v is larger than golden %s (%s) and StorageClass %q (%s) does not set allowVolumeExpansion: true; CDI grows a CSI clone only on an expandable class and would otherwise take a host-assisted copy. Set diskSize to %s, or use a class with allowVolumeExpansion: true" $pool $root.Values.diskSize $golden $goldenSize $poolClass $poolFrom $goldenSize) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $_ := set $result "storageClassName" $poolClass -}}
{{- $_ := set $result "report" (dict "goldenPhase" $phase "goldenFoundAs" (ternary "DataVolume" (ternary "PersistentVolumeClaim" "absent" (not (empty $pvc))) (not (empty $dv))) "clonedDisk" ($cloned.name | default "") "poolClassSource" $poolFrom "goldenClass" $goldenClass "goldenClassSource" $goldenFrom "goldenSize" $goldenSize) -}}
{{- end -}}
{{- end -}}

{{/*
The pool's own finished clone of this golden, if any: a DataVolume in the pool's
namespace annotated with this pool and this golden whose status.phase is
Succeeded. The newest one wins (ties: the name that sorts first). Another
pool's disk, or an unfinished clone, does not count.
Takes a dict: namespace, pool, golden, out (given its name when there is one).
*/}}
{{- define "kubernetes-nodes.clonedDisk" -}}
{{- $best := dict -}}
{{- range (lookup "cdi.kubevirt.io/v1beta1" "DataVolume" .namespace "").items | default list -}}
{{- $annotations := .metadata.annotations | default dict -}}
{{- if and (eq (get $annotations "kubernetes-worker-image.cozystack.io/pool" | toString) $.pool) (eq (get $annotations "kubernetes-worker-image.cozystack.io/golden" | toString) $.golden) (eq (dig "status" "phase" "" .) "Succeeded") -}}
{{- $created := .metadata.creationTimestamp | default "" | toString -}}
{{- if or (not $best.name) (gt $created $best.created) (and (eq $created $best.created) (lt .metadata.name $best.name)) -}}
{{- $best = dict "name" .metadata.name "created" $created -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $best.name -}}
{{- $_ := set .out "name" $best.name -}}
{{- end -}}
{{- end -}}

{{/*
The cluster's default class for a VM disk, as CDI resolves it: the newest class
annotated storageclass.kubevirt.io/is-default-virt-class "true"; else the newest
with storageclass.kubernetes.io/is-default-class "true"; else the newest with
only the beta annotation. A tie in creation time goes to the name that sorts
first, so the answer never depends on list order. "" when there is none.
*/}}
{{- define "kubernetes-nodes.defaultStorageClass" -}}
{{- $classes := (lookup "storage.k8s.io/v1" "StorageClass" "" "").items | default list -}}
{{- $found := "" -}}
{{- range $annotation := list "storageclass.kubevirt.io/is-default-virt-class" "storageclass.kubernetes.io/is-default-class" "storageclass.beta.kubernetes.io/is-default-class" -}}
{{- if not $found -}}
{{- $best := dict -}}
{{- range $classes -}}
{{- if eq (get (.metadata.annotations | default dict) $annotation | toString) "true" -}}
{{- $created := .metadata.creationTimestamp | default "" | toString -}}
{{- if or (not $best.name) (gt $created $best.created) (and (eq $created $best.created) (lt .metadata.name $best.name)) -}}
{{- $best = dict "name" .metadata.name "created" $created -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $found = $best.name | default "" -}}
{{- end -}}
{{- end -}}
{{- $found -}}
{{- end -}}
