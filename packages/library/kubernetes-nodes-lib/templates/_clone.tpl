{{/*
The clone path, in the order the library README gives: which golden serves the pool's class, then
refusals 2 to 15. Takes a dict: root, image (resolved), out (filled with the disk source and report).
*/}}
{{- define "kubernetes-nodes.cloneSource" -}}
{{- $root := .root -}}
{{- $plain := dict -}}
{{- include "kubernetes-nodes.goldenState" (dict "root" $root "name" .image.golden "out" $plain) -}}
{{- $result := .out -}}
{{- $_ := set $result "clone" true -}}
{{- $_ := set $result "golden" .image.golden -}}
{{- $_ := set $result "storageClassName" ($root.Values.storageClass | toString) -}}
{{- $_ := set $result "preview" $plain.preview -}}
{{- if not $plain.preview -}}
{{- $ctx := dict "root" $root "image" .image "pool" (include "kubernetes-nodes.poolName" $root) "checks" list "noPoolClass" "the pool's class is not known (storageClass \"\" and no cluster default)" -}}
{{- include "kubernetes-nodes.cloneContext" $ctx -}}
{{- $running := dict -}}
{{- if or (not $plain.present) (eq $plain.phase "Failed") $plain.retiring (not $result.storageClassName) -}}
{{- include "kubernetes-nodes.runningTemplate" (dict "root" $root "golden" .image.golden "out" $running) -}}
{{- end -}}
{{- $poolSide := dict -}}
{{- include "kubernetes-nodes.poolClass" (dict "root" $root "running" $running "out" $poolSide) -}}
{{- $golden := $plain -}}
{{- $goldenSide := dict -}}
{{- $sideRead := false -}}
{{- $perClassName := "" -}}
{{- if $poolSide.class -}}
{{- $perClassName = include "worker-image-lib.perClassGoldenName" (dict "schematicID" .image.schematicID "version" .image.version "class" $poolSide.class) -}}
{{- end -}}
{{- /* The plain golden serves P when on it or a class is unknown; a pool running from a deleted plain golden keeps it. */ -}}
{{- $wantPerClass := false -}}
{{- $plainClass := "" -}}
{{- if $plain.present -}}
{{- include "kubernetes-nodes.goldenClassAndSize" (dict "root" $root "golden" $plain "out" $goldenSide) -}}
{{- $sideRead = true -}}
{{- $plainClass = $goldenSide.class -}}
{{- $wantPerClass = and $goldenSide.class (ne $goldenSide.class $poolSide.class) -}}
{{- else -}}
{{- $wantPerClass = not (and $running.ready (eq $running.source .image.golden)) -}}
{{- end -}}
{{- if and $wantPerClass $perClassName -}}
{{- $perClass := dict -}}
{{- include "kubernetes-nodes.goldenState" (dict "root" $root "name" $perClassName "out" $perClass) -}}
{{- if not $running.read -}}
{{- include "kubernetes-nodes.runningTemplate" (dict "root" $root "golden" .image.golden "out" $running) -}}
{{- end -}}
{{- if or $perClass.present (and $running.ready (eq $running.source $perClassName)) -}}
{{- $golden = $perClass -}}
{{- $goldenSide = dict -}}
{{- $sideRead = false -}}
{{- end -}}
{{- end -}}
{{- /* Which golden serves P and why, for the report: "none" only where a refusal follows. */ -}}
{{- $choice := "plain" -}}
{{- $why := printf "the plain golden %s is on the pool's class %q" .image.golden $poolSide.class -}}
{{- if not $plain.present -}}
{{- $why = printf "the plain golden %s is absent from cozy-public" .image.golden -}}
{{- else if not $poolSide.class -}}
{{- $why = printf "%s, so the plain golden %s is compared with no class" $ctx.noPoolClass .image.golden -}}
{{- else if not $plainClass -}}
{{- $why = printf "the plain golden %s has no class known (none on it or its PVC, and no cluster default), so no class is compared" .image.golden -}}
{{- else if $wantPerClass -}}
{{- $why = printf "the plain golden %s is on %q, not on the pool's class %q" .image.golden $plainClass $poolSide.class -}}
{{- end -}}
{{- if ne $golden.name .image.golden -}}
{{- $choice = "per-class" -}}
{{- else if and $wantPerClass (or (not $plain.present) $perClassName) -}}
{{- $choice = "none" -}}
{{- $why = printf "%s, and %s" $why (ternary (printf "there is no per-class golden %s" $perClassName) "the pool's class is not known, so no per-class golden is looked for" (ne $perClassName "")) -}}
{{- end -}}
{{- if and (not $golden.present) (ne $choice "none") -}}
{{- $why = printf "%s%s, but the pool already runs from it (template %s)" $why (ternary (printf "; the per-class golden %s is absent" $golden.name) "" (eq $choice "per-class")) $running.name -}}
{{- end -}}
{{- $_ := set $ctx "golden" $golden -}}
{{- $_ := set $ctx "name" $golden.name -}}
{{- $_ := set $ctx "perClassName" $perClassName -}}
{{- $_ := set $ctx "poolClass" $poolSide.class -}}
{{- $_ := set $ctx "running" $running -}}
{{- include "kubernetes-nodes.assertGoldenUsable" $ctx -}}
{{- if not $sideRead -}}
{{- include "kubernetes-nodes.goldenClassAndSize" (dict "root" $root "golden" $golden "out" $goldenSide) -}}
{{- end -}}
{{- $_ := set $ctx "poolSide" $poolSide -}}
{{- $_ := set $ctx "goldenSide" $goldenSide -}}
{{- include "kubernetes-nodes.cloneFacts" $ctx -}}
{{- include "kubernetes-nodes.assertCloneFits" $ctx -}}
{{- include "kubernetes-nodes.assertNoHostAssistedCopy" $ctx -}}
{{- include "kubernetes-nodes.assertCDIAccepts" $ctx -}}
{{- $_ := set $result "golden" $golden.name -}}
{{- $_ := set $result "storageClassName" $poolSide.class -}}
{{- $_ := set $result "report" (dict "goldenPhase" $golden.phase "goldenFoundAs" $golden.foundAs "runningTemplate" ($running.name | default "") "readyWorkers" ($running.readyReplicas | default 0) "poolClassSource" $poolSide.from "goldenClass" $goldenSide.class "goldenClassSource" $goldenSide.from "goldenSize" $goldenSide.size "goldenRetiring" $golden.retiring "goldenChoice" $choice "goldenChoiceReason" $why "perClassGolden" $perClassName "cloneStrategy" $ctx.cloneStrategy "cloneStrategySource" $ctx.cloneStrategySource "fallbackChecks" $ctx.checks) -}}
{{- end -}}
{{- end -}}

{{/*
A clone refusal: fails, or in the CLI's report-only render records it as check N's outcome and goes on.
Takes a list: the clone context, N (0 records nothing), message.
*/}}
{{- define "kubernetes-nodes.refuse" -}}
{{- $ctx := index . 0 -}}
{{- if not $ctx.root._kubernetesNodes.reportOnly -}}
{{- fail (index . 2) -}}
{{- end -}}
{{- if index . 1 -}}
{{- include "kubernetes-nodes.checked" (list $ctx (index . 1) "refused" (index . 2)) -}}
{{- end -}}
{{- end -}}

{{/*
Records for the report the outcome of the check behind refusal N: passed, skipped (its input is not
known), not needed, or refused. Takes a list: the clone context, N, outcome, detail.
*/}}
{{- define "kubernetes-nodes.checked" -}}
{{- $ctx := index . 0 -}}
{{- $_ := set $ctx "checks" (append $ctx.checks (dict "refusal" (index . 1) "outcome" (index . 2) "detail" (index . 3))) -}}
{{- end -}}

{{/*
A golden's state in cozy-public: its DataVolume, else its PVC; with neither, the StorageClass list
tells a preview. Takes a dict: root, name, out (dv, pvc, pvcRead, claimName, phase, retiring, present, foundAs, preview).
*/}}
{{- define "kubernetes-nodes.goldenState" -}}
{{- $out := .out -}}
{{- $_ := set $out "name" .name -}}
{{- $dv := lookup "cdi.kubevirt.io/v1beta1" "DataVolume" "cozy-public" .name -}}
{{- $_ := set $out "dv" $dv -}}
{{- $_ := set $out "pvc" dict -}}
{{- $_ := set $out "pvcRead" false -}}
{{- $_ := set $out "claimName" .name -}}
{{- $_ := set $out "phase" "" -}}
{{- $_ := set $out "preview" false -}}
{{- /* The catalog marks a golden it is about to delete (retire: true); a PVC alone carries no mark. */ -}}
{{- $_ := set $out "retiring" (eq (dig "metadata" "annotations" "kubernetes-worker-image.cozystack.io/retiring" "" ($dv | default dict) | toString) "true") -}}
{{- if $dv -}}
{{- $_ := set $out "claimName" (dig "status" "claimName" .name $dv | default .name) -}}
{{- $_ := set $out "phase" (dig "status" "phase" "" $dv) -}}
{{- else -}}
{{- $_ := set $out "pvc" (lookup "v1" "PersistentVolumeClaim" "cozy-public" .name) -}}
{{- $_ := set $out "pvcRead" true -}}
{{- if not $out.pvc -}}
{{- include "kubernetes-nodes.ensureStorageClasses" .root -}}
{{- $_ := set $out "preview" (not (hasKey .root._kubernetesNodes.storageClasses "items")) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $out "present" (or $dv $out.pvc) -}}
{{- $_ := set $out "foundAs" (ternary "DataVolume" (ternary "PersistentVolumeClaim" "absent" (not (empty $out.pvc))) (not (empty $dv))) -}}
{{- end -}}

{{/*
What every clone refusal says about where the golden's name came from (seen) and how to go back to
HTTP (toHTTP). Takes the clone context (root, image, ...) and adds both to it.
*/}}
{{- define "kubernetes-nodes.cloneContext" -}}
{{- $image := .image -}}
{{- $_ := set . "seen" (printf "%s.builtin resolved to schematicID %s (from %s), version %s (from %s)" $image.osImageOrigin $image.schematicID $image.schematicIDSource $image.version $image.versionSource) -}}
{{- $_ := set . "toHTTP" "remove osImage.builtin to import over HTTP" -}}
{{- if ne $image.osImageOrigin "osImage" -}}
{{- $recorded := "the platform default" -}}
{{- if ne $image.osImageOrigin "_cluster.osImage" -}}
{{- $recorded = printf "the default of %s" (include "worker-image-lib.tenantDefaultsChannel" .root) -}}
{{- end -}}
{{- $_ := set . "seen" (printf "%s, %s recorded when the pool was created" .seen $recorded) -}}
{{- $_ := set . "toHTTP" "set the pool's own osImage: {} to import over HTTP" -}}
{{- end -}}
{{- end -}}

{{/*
Refusals 2 and 3 (absent, failed) and a retiring golden, each waived for a pool already running from
it. Takes the clone context: pool, image, golden, name, perClassName, poolClass, seen, toHTTP, running.
*/}}
{{- define "kubernetes-nodes.assertGoldenUsable" -}}
{{- $name := .name -}}
{{- /* Exempt only when the running template clones the very golden chosen. */ -}}
{{- $exempt := and .running.name .running.ready (eq (.running.source | default "") $name) -}}
{{- $perClassFix := "" -}}
{{- if .perClassName -}}
{{- $perClassFix = printf " (if the entry exists for another class, add %q to its additionalStorageClasses: the golden %s)" .poolClass .perClassName -}}
{{- end -}}
{{- if and (not .golden.present) (not $exempt) -}}
{{- include "kubernetes-nodes.refuse" (list . 0 (printf "pool %s: golden %s is absent from cozy-public (no DataVolume and no PersistentVolumeClaim of that name); %s. Add the entry {schematicID: %s, version: %s} to the kubernetes-worker-image catalog's images%s and wait for it to import, or clone a golden that exists, or %s" .pool $name .seen .image.schematicID .image.version $perClassFix .toHTTP)) -}}
{{- end -}}
{{- if and .golden.retiring (not $exempt) -}}
{{- include "kubernetes-nodes.refuse" (list . 0 (printf "pool %s: golden %s in cozy-public is retiring (annotated kubernetes-worker-image.cozystack.io/retiring: \"true\"): the kubernetes-worker-image catalog entry {schematicID: %s, version: %s} sets retire: true, and once the entry is dropped the golden is deleted; %s. A pool cannot start cloning it. Point osImage.builtin at another flavor (a catalog entry that is not retiring), or %s" .pool $name .image.schematicID .image.version .seen .toHTTP)) -}}
{{- end -}}
{{- if and (eq .golden.phase "Failed") (not $exempt) -}}
{{- include "kubernetes-nodes.refuse" (list . 0 (printf "pool %s: golden %s in cozy-public failed to import (status.phase Failed); %s. Fix the import (kubectl -n cozy-public describe datavolume %s), or add a catalog entry for another (schematicID, version) and point osImage.builtin at it; a golden that is still importing is not refused" .pool $name .seen $name)) -}}
{{- end -}}
{{- end -}}

{{/*
The pool's class: declared, else frozen on its running template's disk, else today's default.
Takes a dict: root, running (kubernetes-nodes.runningTemplate), out (filled with class and from).
*/}}
{{- define "kubernetes-nodes.poolClass" -}}
{{- $class := .root.Values.storageClass | toString -}}
{{- $from := "storageClass" -}}
{{- if and (not $class) .running.class -}}
{{- $class = .running.class -}}
{{- $from = printf "storageClass \"\", frozen on the class written in the pool's current KubevirtMachineTemplate %s/%s" .root.Release.Namespace .running.name -}}
{{- end -}}
{{- if not $class -}}
{{- $class = include "kubernetes-nodes.defaultStorageClass" .root -}}
{{- $from = printf "storageClass \"\", resolved from the cluster default class %q" $class -}}
{{- end -}}
{{- $_ := set .out "class" $class -}}
{{- $_ := set .out "from" $from -}}
{{- end -}}

{{/*
The golden's class and size: from its spec, else its PVC (read only then), else the default class.
Takes a dict: root, golden (its state), out (filled with class, from, size).
*/}}
{{- define "kubernetes-nodes.goldenClassAndSize" -}}
{{- $golden := .golden -}}
{{- $dv := $golden.dv -}}
{{- $class := "" -}}
{{- $from := "" -}}
{{- $size := "" -}}
{{- $sizeFrom := "" -}}
{{- if $dv -}}
{{- $class = dig "spec" "storage" "storageClassName" (dig "spec" "pvc" "storageClassName" "" $dv) $dv -}}
{{- $from = printf "spec.storage.storageClassName of DataVolume cozy-public/%s" $dv.metadata.name -}}
{{- $size = dig "spec" "storage" "resources" "requests" "storage" (dig "spec" "pvc" "resources" "requests" "storage" "" $dv) $dv -}}
{{- $sizeFrom = printf "the storage request of DataVolume cozy-public/%s" $dv.metadata.name -}}
{{- end -}}
{{- if and $golden.present (or (not $class) (not $size)) (not $golden.pvcRead) -}}
{{- $_ := set $golden "pvc" (lookup "v1" "PersistentVolumeClaim" "cozy-public" $golden.claimName) -}}
{{- $_ := set $golden "pvcRead" true -}}
{{- end -}}
{{- if and (not $class) $golden.pvc -}}
{{- $class = dig "spec" "storageClassName" "" $golden.pvc -}}
{{- $from = printf "the golden's PersistentVolumeClaim cozy-public/%s" $golden.claimName -}}
{{- end -}}
{{- if and (not $size) $golden.pvc -}}
{{- $size = dig "spec" "resources" "requests" "storage" "" $golden.pvc -}}
{{- $sizeFrom = printf "the storage request of PersistentVolumeClaim cozy-public/%s" $golden.claimName -}}
{{- end -}}
{{- if and $golden.present (not $class) -}}
{{- $class = include "kubernetes-nodes.defaultStorageClass" .root -}}
{{- $from = printf "no class on the golden, resolved from the cluster default class %q" $class -}}
{{- end -}}
{{- $_ := set .out "class" $class -}}
{{- $_ := set .out "from" $from -}}
{{- $_ := set .out "size" $size -}}
{{- $_ := set .out "sizeFrom" $sizeFrom -}}
{{- end -}}

{{/*
What CDI reads to plan a worker disk's clone, a fixed number of lookups (library README), read once
into the clone context's facts. Takes the clone context with poolClass and golden.
*/}}
{{- define "kubernetes-nodes.cloneFacts" -}}
{{- $root := .root -}}
{{- $class := .poolClass -}}
{{- $golden := .golden -}}
{{- $facts := dict "storageClass" dict "profile" dict "csiDriver" dict "pv" dict "provisioner" "" "cdi" dict "cdiProblem" "" "cdiCount" 0 -}}
{{- if $class -}}
{{- include "kubernetes-nodes.ensureStorageClass" (dict "root" $root "name" $class) -}}
{{- $sc := get $root._kubernetesNodes.storageClassByName $class | default dict -}}
{{- $_ := set $facts "storageClass" $sc -}}
{{- $_ := set $facts "provisioner" (get $sc "provisioner" | default "" | toString) -}}
{{- $_ := set $facts "profile" (lookup "cdi.kubevirt.io/v1beta1" "StorageProfile" "" $class | default dict) -}}
{{- if $facts.provisioner -}}
{{- $_ := set $facts "csiDriver" (lookup "storage.k8s.io/v1" "CSIDriver" "" $facts.provisioner | default dict) -}}
{{- end -}}
{{- end -}}
{{- $cdis := (lookup "cdi.kubevirt.io/v1beta1" "CDI" "" "").items | default list -}}
{{- $_ := set $facts "cdiCount" (len $cdis) -}}
{{- $active := dict -}}
{{- include "worker-image-lib.activeCDI" (dict "items" $cdis "out" $active) -}}
{{- if $active.problem -}}
{{- $_ := set $facts "cdiProblem" (printf "%s, and CDI fails every clone unless exactly one is" $active.problem) -}}
{{- else if $active.cdi -}}
{{- $_ := set $facts "cdi" $active.cdi -}}
{{- end -}}
{{- $config := lookup "cdi.kubevirt.io/v1beta1" "CDIConfig" "" "config" | default dict -}}
{{- $_ := set $facts "cdiConfig" $config -}}
{{- if and $golden.present (not $golden.pvcRead) -}}
{{- $_ := set $golden "pvc" (lookup "v1" "PersistentVolumeClaim" "cozy-public" $golden.claimName) -}}
{{- $_ := set $golden "pvcRead" true -}}
{{- end -}}
{{- $volume := dig "spec" "volumeName" "" ($golden.pvc | default dict) | toString -}}
{{- if $volume -}}
{{- $_ := set $facts "pv" (lookup "v1" "PersistentVolume" "" $volume | default dict) -}}
{{- end -}}
{{- /* The golden has populated: CDI says Succeeded, or only its PVC is left (CDI collected the DataVolume). */ -}}
{{- $_ := set $facts "populated" (or (eq $golden.phase "Succeeded") (and (not $golden.dv) (not (empty $golden.pvc)))) -}}
{{- /* A worker disk's volume mode: the StorageProfile's first claim property set (unset means Filesystem); unknown without one. */ -}}
{{- $sets := dig "status" "claimPropertySets" list $facts.profile -}}
{{- $_ := set $facts "diskMode" "" -}}
{{- if and (kindIs "slice" $sets) $sets (kindIs "map" (first $sets)) -}}
{{- $_ := set $facts "diskMode" (get (first $sets) "volumeMode" | default "Filesystem" | toString) -}}
{{- $_ := set $facts "accessModes" (get (first $sets) "accessModes" | default list) -}}
{{- end -}}
{{- $_ := set . "facts" $facts -}}
{{- end -}}

{{/*
Refusals 4 to 6: other class, smaller disk, CDI's request above the golden's capacity on a class that
cannot expand (pool README). Takes the clone context with poolSide, goldenSide and facts.
*/}}
{{- define "kubernetes-nodes.assertCloneFits" -}}
{{- $poolClass := .poolSide.class -}}
{{- $goldenClass := .goldenSide.class -}}
{{- $goldenSize := .goldenSide.size -}}
{{- $name := .name -}}
{{- $diskSize := .root.Values.diskSize -}}
{{- $disk := (index .root._kubernetesNodes.written "diskSize").bytes -}}
{{- if not (and $poolClass $goldenClass) -}}
{{- include "kubernetes-nodes.checked" (list . 4 "skipped" (ternary .noPoolClass "the golden's class is not known (none on it or its PVC, and no cluster default)" (not $poolClass))) -}}
{{- else if ne $poolClass $goldenClass -}}
{{- $perClassFix := "" -}}
{{- if and .perClassName (ne .perClassName $name) -}}
{{- $perClassFix = printf ", or add %q to the additionalStorageClasses of the kubernetes-worker-image catalog entry {schematicID: %s, version: %s} (it then imports golden %s on that class)" $poolClass .image.schematicID .image.version .perClassName -}}
{{- end -}}
{{- /* CDI compares CSI drivers, not classes: it copies across drivers, and on one driver leaves the clone across classes to it. */ -}}
{{- $driver := dig "spec" "csi" "driver" "" .facts.pv | toString -}}
{{- $oneDriver := "ask that driver for a CSI clone across the classes, which only the driver decides (one that cannot, or an external-provisioner older than v3.1, leaves every worker disk pending)" -}}
{{- $why := printf "Across CSI drivers CDI would fall back to a host-assisted copy over the pod network; on one driver it would %s" $oneDriver -}}
{{- if and $driver .facts.provisioner (ne $driver .facts.provisioner) -}}
{{- $why = printf "The golden's volume is of the CSI driver %s and StorageClass %q provisions with %s, so CDI would fall back to a host-assisted copy over the pod network (\"Provisioners are incompatible\")" $driver $poolClass .facts.provisioner -}}
{{- else if and $driver (eq $driver .facts.provisioner) -}}
{{- $why = printf "Both classes are of the CSI driver %s, so CDI would not fall back but %s" $driver $oneDriver -}}
{{- end -}}
{{- include "kubernetes-nodes.refuse" (list . 4 (printf "pool %s: its disks would be on StorageClass %q (%s) but golden %s is on %q (%s); %s. %s. Set storageClass to %q%s, or clone a golden imported on %q" .pool $poolClass .poolSide.from $name $goldenClass .goldenSide.from .seen $why $goldenClass $perClassFix $poolClass)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 4 "passed" (printf "the worker disks and the golden are both on %q" $poolClass)) -}}
{{- end -}}
{{- if $goldenSize -}}
{{- $size := include "worker-image-lib.quantityBytes" (dict "value" $goldenSize "what" (printf "pool %s: golden %s's size, %s," .pool $name .goldenSide.sizeFrom) "fix" "the catalog writes sizes such as 6Gi: set that golden's storage request to the image's size, or clone another golden (osImage.builtin)") | float64 -}}
{{- if lt $disk $size -}}
{{- include "kubernetes-nodes.refuse" (list . 5 (printf "pool %s: diskSize %v is smaller than golden %s (%s); a clone cannot be smaller than its source. Set diskSize to %s or more" .pool $diskSize $name $goldenSize $goldenSize)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 5 "passed" (printf "diskSize %v is not smaller than the golden's %s" $diskSize $goldenSize)) -}}
{{- end -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 5 "skipped" "the golden's size is not known (no storage request on it or its PVC)") -}}
{{- end -}}
{{- $facts := .facts -}}
{{- $capacity := dig "status" "capacity" "storage" "" ($.golden.pvc | default dict) | toString -}}
{{- if not $poolClass -}}
{{- include "kubernetes-nodes.checked" (list . 6 "skipped" .noPoolClass) -}}
{{- else if not $capacity -}}
{{- include "kubernetes-nodes.checked" (list . 6 "skipped" (printf "the golden's PersistentVolumeClaim cozy-public/%s states no status.capacity%s, and CDI compares its request with that capacity" $.golden.claimName (ternary "" " yet (the golden is still importing)" $facts.populated))) -}}
{{- else -}}
{{- $capacityBytes := include "worker-image-lib.quantityBytes" (dict "value" $capacity "what" (printf "pool %s: golden %s's capacity, status.capacity.storage of PersistentVolumeClaim cozy-public/%s," .pool $name $.golden.claimName) "fix" "it is what the storage driver reported when the volume bound: check that driver, or clone another golden (osImage.builtin)") | float64 -}}
{{- /* The overhead CDI inflates a Filesystem disk by: CDIConfig's entry for the class, else its global one. A CDI
with no CDIConfig yet writes its default 0.06 before any disk exists; with no CDI at all, none. */ -}}
{{- $overheads := dig "status" "filesystemOverhead" dict $facts.cdiConfig -}}
{{- $overhead := get (get $overheads "storageClass" | default dict) $poolClass | default (get $overheads "global") | default "0" | toString -}}
{{- $overheadFrom := printf "the filesystem overhead %s of the CDIConfig config" $overhead -}}
{{- if empty $facts.cdiConfig -}}
{{- $overhead = ternary "0.06" "0" (gt $facts.cdiCount 0) -}}
{{- $overheadFrom = ternary "CDI's default filesystem overhead 0.06 (not read: the cluster has a CDI resource but no CDIConfig config yet, and CDI's config controller writes that default before any worker disk is created)" "no filesystem overhead (the cluster has no CDI resource and no CDIConfig config)" (gt $facts.cdiCount 0) -}}
{{- end -}}
{{- if not (regexMatch "^(0(\\.[0-9]{1,3})?|1)$" $overhead) -}}
{{- /* CDI parses the percentage and takes 0 when it does not read. */ -}}
{{- $overhead = "0" -}}
{{- end -}}
{{- $filesystem := mulf (ceil (divf $disk 1048576.0)) 1048576.0 | mulf (addf 1.0 ($overhead | float64)) | ceil -}}
{{- $block := $disk -}}
{{- $minimumSize := dig "metadata" "annotations" "cdi.kubevirt.io/minimumSupportedPvcSize" "" $facts.profile | toString -}}
{{- $minimumText := "" -}}
{{- if $minimumSize -}}
{{- $q := dict -}}
{{- include "worker-image-lib.parseQuantity" (dict "value" $minimumSize "out" $q) -}}
{{- if not $q.error -}}
{{- if lt $filesystem $q.bytes -}}
{{- $filesystem = $q.bytes -}}
{{- end -}}
{{- if lt $block $q.bytes -}}
{{- $block = $q.bytes -}}
{{- end -}}
{{- $minimumText = printf ", at least the StorageProfile %s's minimumSupportedPvcSize %s" $poolClass $minimumSize -}}
{{- end -}}
{{- end -}}
{{- $requests := dict "Filesystem" $filesystem "Block" $block -}}
{{- $expand := dict "Filesystem" (lt $capacityBytes $filesystem) "Block" (lt $capacityBytes $block) -}}
{{- $mode := $facts.diskMode -}}
{{- $needs := false -}}
{{- $known := true -}}
{{- if $mode -}}
{{- $needs = get $expand (ternary "Block" "Filesystem" (eq $mode "Block")) -}}
{{- else if eq $expand.Filesystem $expand.Block -}}
{{- $needs = $expand.Filesystem -}}
{{- else -}}
{{- $known = false -}}
{{- end -}}
{{- $request := printf "%.0f bytes (diskSize %v as a Block disk%s)" $block $diskSize $minimumText -}}
{{- if eq $mode "Filesystem" -}}
{{- $request = printf "%.0f bytes (diskSize %v aligned up to 1 MiB and grown by %s, as CDI does for a Filesystem disk%s)" $filesystem $diskSize $overheadFrom $minimumText -}}
{{- else if not $mode -}}
{{- $request = printf "at least %.0f bytes (diskSize %v; the volume mode is not known, and either mode needs the same)" $block $diskSize -}}
{{- end -}}
{{- if not $known -}}
{{- include "kubernetes-nodes.checked" (list . 6 "skipped" (printf "a worker disk's volume mode is not known (%s), and only as a Filesystem disk, grown by %s, would CDI's request exceed the golden's capacity %s" (ternary (printf "the StorageProfile %s states no status.claimPropertySets" $poolClass) (printf "the cluster has no StorageProfile %s" $poolClass) (not (empty $facts.profile))) $overheadFrom $capacity)) -}}
{{- else if not $needs -}}
{{- include "kubernetes-nodes.checked" (list . 6 "not needed" (printf "CDI's request for a worker disk, %s, is not larger than the golden's capacity %s: nothing to expand" $request $capacity)) -}}
{{- else if not $facts.storageClass -}}
{{- include "kubernetes-nodes.checked" (list . 6 "skipped" (printf "the cluster has no StorageClass %q to read allowVolumeExpansion from" $poolClass)) -}}
{{- else if ne (toString (get $facts.storageClass "allowVolumeExpansion")) "true" -}}
{{- include "kubernetes-nodes.refuse" (list . 6 (printf "pool %s: CDI would request %s for each worker disk, more than the capacity %s of golden %s (status.capacity of its PersistentVolumeClaim cozy-public/%s), and StorageClass %q (%s) does not set allowVolumeExpansion: true; CDI grows a CSI clone only on an expandable class and would otherwise take a host-assisted copy. Use a class with allowVolumeExpansion: true, or a diskSize whose request fits the golden's capacity" .pool $request $capacity $name $.golden.claimName $poolClass .poolSide.from)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 6 "passed" (printf "CDI's request for a worker disk, %s, is larger than the golden's capacity %s and StorageClass %q sets allowVolumeExpansion: true" $request $capacity $poolClass)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Refusals 7 to 9: the host-assisted copies CDI's clone planner would fall back to (pool README), each
skipped when the cluster does not show its input. Takes the clone context with poolClass, golden, name, facts.
*/}}
{{- define "kubernetes-nodes.assertNoHostAssistedCopy" -}}
{{- $root := .root -}}
{{- $class := .poolClass -}}
{{- $facts := .facts -}}
{{- $profile := $facts.profile -}}
{{- $_ := set . "cloneStrategy" "" -}}
{{- $_ := set . "cloneStrategySource" (printf "not known: %s" .noPoolClass) -}}
{{- if not $class -}}
{{- $ctx := . -}}
{{- range $n := list 7 8 9 -}}
{{- include "kubernetes-nodes.checked" (list $ctx $n "skipped" $ctx.noPoolClass) -}}
{{- end -}}
{{- else -}}
{{- if $facts.cdi -}}
{{- $cdi := $facts.cdi -}}
{{- $strategy := dig "spec" "cloneStrategyOverride" "" $cdi | toString -}}
{{- $from := printf "spec.cloneStrategyOverride of the CDI resource %s" $cdi.metadata.name -}}
{{- $fix := printf "remove spec.cloneStrategyOverride from the CDI resource %s (or set it to csi-clone or snapshot)" $cdi.metadata.name -}}
{{- if not $strategy -}}
{{- $strategy = dig "status" "cloneStrategy" "" $profile | toString -}}
{{- $from = printf "status.cloneStrategy of the StorageProfile %s" $class -}}
{{- $fix = printf "set spec.cloneStrategy of the StorageProfile %s to csi-clone (when its driver can CSI-clone) or snapshot" $class -}}
{{- end -}}
{{- if not $strategy -}}
{{- $strategy = "snapshot" -}}
{{- $from = printf "CDI's default: the CDI resource %s sets no spec.cloneStrategyOverride and the StorageProfile %s states no status.cloneStrategy" $cdi.metadata.name $class -}}
{{- end -}}
{{- $_ := set . "cloneStrategy" $strategy -}}
{{- $_ := set . "cloneStrategySource" $from -}}
{{- if eq $strategy "copy" -}}
{{- include "kubernetes-nodes.refuse" (list . 7 (printf "pool %s: CDI would clone golden %s onto StorageClass %q with the strategy \"copy\" (%s): a host-assisted copy of the whole image over the pod network for every worker disk; %s. To get a storage-layer clone, %s" .pool .name $class $from .seen $fix)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 7 "passed" (printf "the strategy is %s, not copy" $strategy)) -}}
{{- end -}}
{{- $provisioner := $facts.provisioner -}}
{{- $named := dig "status" "snapshotClass" "" $profile | toString -}}
{{- if ne $strategy "snapshot" -}}
{{- include "kubernetes-nodes.checked" (list . 8 "not needed" (printf "the strategy is %s, not snapshot" $strategy)) -}}
{{- else if not $provisioner -}}
{{- include "kubernetes-nodes.checked" (list . 8 "skipped" (printf "the cluster shows no StorageClass %q with a provisioner, so the VolumeSnapshotClass driver it needs is not known" $class)) -}}
{{- else -}}
{{- $missing := "" -}}
{{- $found := "" -}}
{{- if not ($root.Capabilities.APIVersions.Has "snapshot.storage.k8s.io/v1") -}}
{{- $missing = "the cluster does not serve snapshot.storage.k8s.io/v1, so there is no VolumeSnapshotClass at all" -}}
{{- else if $named -}}
{{- /* CDI takes the class the StorageProfile names, and only it: missing, the clone fails; of another driver, it copies. */ -}}
{{- $vsc := lookup "snapshot.storage.k8s.io/v1" "VolumeSnapshotClass" "" $named | default dict -}}
{{- if not $vsc -}}
{{- $missing = printf "the StorageProfile %s names VolumeSnapshotClass %s in status.snapshotClass, which does not exist (CDI then fails the clone)" $class $named -}}
{{- else if ne (get $vsc "driver" | default "" | toString) $provisioner -}}
{{- $missing = printf "the StorageProfile %s names VolumeSnapshotClass %s in status.snapshotClass, whose driver is %s" $class $named (get $vsc "driver" | default "" | toString) -}}
{{- else -}}
{{- $found = $named -}}
{{- end -}}
{{- else -}}
{{- range (lookup "snapshot.storage.k8s.io/v1" "VolumeSnapshotClass" "" "").items | default list -}}
{{- if and (not $found) (eq (get . "driver" | default "" | toString) $provisioner) -}}
{{- $found = .metadata.name -}}
{{- end -}}
{{- end -}}
{{- if not $found -}}
{{- $missing = printf "no VolumeSnapshotClass has driver %s" $provisioner -}}
{{- end -}}
{{- end -}}
{{- if $missing -}}
{{- include "kubernetes-nodes.refuse" (list . 8 (printf "pool %s: CDI would clone golden %s onto StorageClass %q with the strategy \"snapshot\" (%s), but %s (the provisioner of StorageClass %q is %s), so CDI would fall back to a host-assisted copy over the pod network; %s. Create a VolumeSnapshotClass with driver: %s (installing the snapshot CRDs and controller if the cluster lacks them)%s, or set spec.cloneStrategy of the StorageProfile %s to csi-clone when its driver can CSI-clone" .pool .name $class $from $missing $class $provisioner .seen $provisioner (ternary (printf " and name it in spec.snapshotClass of the StorageProfile %s" $class) "" (ne $named "")) $class)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 8 "passed" (printf "VolumeSnapshotClass %s has driver %s, the provisioner of StorageClass %q%s" $found $provisioner $class (ternary (printf ", and the StorageProfile %s names it" $class) "" (ne $named "")))) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- $_ := set . "cloneStrategySource" (printf "not known: %s" ($facts.cdiProblem | default "the cluster has no CDI resource")) -}}
{{- $noCDI := ternary $facts.cdiProblem "the cluster has no CDI resource, so CDI's clone strategy is not known" (ne $facts.cdiProblem "") -}}
{{- include "kubernetes-nodes.checked" (list . 7 "skipped" $noCDI) -}}
{{- include "kubernetes-nodes.checked" (list . 8 "skipped" $noCDI) -}}
{{- end -}}
{{- $want := $facts.diskMode -}}
{{- $golden := .golden -}}
{{- $have := "" -}}
{{- if $golden.pvc -}}
{{- $have = dig "spec" "volumeMode" "" $golden.pvc | default "Filesystem" | toString -}}
{{- end -}}
{{- if not $want -}}
{{- include "kubernetes-nodes.checked" (list . 9 "skipped" (printf "%s, so a worker disk's volume mode is not known" (ternary (printf "the StorageProfile %s states no status.claimPropertySets" $class) (printf "the cluster has no StorageProfile %s" $class) (not (empty $profile))))) -}}
{{- else if not $have -}}
{{- include "kubernetes-nodes.checked" (list . 9 "skipped" (printf "there is no PersistentVolumeClaim cozy-public/%s, so the golden's volume mode is not known" $golden.claimName)) -}}
{{- else if ne $have $want -}}
{{- include "kubernetes-nodes.refuse" (list . 9 (printf "pool %s: golden %s is a %s volume (spec.volumeMode of its PersistentVolumeClaim cozy-public/%s, unset meaning Filesystem) but a worker disk on StorageClass %q gets %s (status.claimPropertySets[0] of the StorageProfile %s, unset meaning Filesystem); CDI cannot CSI-clone between volume modes and would fall back to a host-assisted copy over the pod network; %s. Set the StorageProfile %s's spec.claimPropertySets to volumeMode %s, or clone a golden imported as %s on this class" .pool .name $have $golden.claimName $class $want $class .seen $class $have $want)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 9 "passed" (printf "the golden and a worker disk on %q are both %s volumes" $class $want)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Refusals 10 to 15: what CDI needs before any clone strategy runs (pool README), each skipped when
the render cannot read it. Takes the clone context with poolClass, golden, name, facts.
*/}}
{{- define "kubernetes-nodes.assertCDIAccepts" -}}
{{- $class := .poolClass -}}
{{- $facts := .facts -}}
{{- $golden := .golden -}}
{{- if not $class -}}
{{- include "kubernetes-nodes.checked" (list . 10 "skipped" .noPoolClass) -}}
{{- else if and $facts.profile $facts.accessModes -}}
{{- include "kubernetes-nodes.checked" (list . 10 "passed" (printf "the StorageProfile %s gives a worker disk the access modes %s" $class (join ", " $facts.accessModes))) -}}
{{- else if $facts.profile -}}
{{- include "kubernetes-nodes.refuse" (list . 10 (printf "pool %s: the StorageProfile %s states no status.claimPropertySets[0].accessModes, and a worker disk states none, so CDI fails each worker disk (\"no accessMode specified in StorageProfile %s\": CDI knows no access modes for this class's provisioner %s); %s. Set spec.claimPropertySets of the StorageProfile %s, e.g. [{accessModes: [ReadWriteMany], volumeMode: Block}], or use a class CDI knows" .pool $class $class ($facts.provisioner | default "(unknown)") .seen $class)) -}}
{{- else if and $facts.cdi $facts.storageClass -}}
{{- include "kubernetes-nodes.refuse" (list . 10 (printf "pool %s: the cluster has no StorageProfile %s, from which CDI takes a worker disk's access modes, so CDI fails each worker disk (\"cannot get StorageProfile\"); CDI creates a StorageProfile for every StorageClass: wait for it (kubectl get storageprofile %s), or check that CDI's controller runs" .pool $class $class)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 10 "skipped" (printf "the cluster has no StorageProfile %s%s" $class (ternary "" " and no CDI resource" (not (empty $facts.cdi))))) -}}
{{- end -}}
{{- if not $class -}}
{{- include "kubernetes-nodes.refuse" (list . 11 (printf "pool %s: its worker disks would have no StorageClass: storageClass is \"\" and the cluster has no default class (no StorageClass annotated storageclass.kubevirt.io/is-default-virt-class or storageclass.kubernetes.io/is-default-class \"true\"), and CDI fails a clone with no class; %s. Set storageClass to the class golden %s is on" .pool .seen .name)) -}}
{{- else if not $facts.storageClass -}}
{{- include "kubernetes-nodes.refuse" (list . 11 (printf "pool %s: StorageClass %q (%s) does not exist in the cluster, and CDI fails a clone whose class it cannot find (\"target storage class not found\"); %s. Set storageClass to an existing class, the one golden %s is on" .pool $class .poolSide.from .seen .name)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 11 "passed" (printf "StorageClass %q exists (provisioner %s)" $class $facts.provisioner)) -}}
{{- end -}}
{{- if not $facts.provisioner -}}
{{- include "kubernetes-nodes.checked" (list . 12 "skipped" (printf "the cluster shows no StorageClass %q with a provisioner" $class)) -}}
{{- include "kubernetes-nodes.checked" (list . 13 "skipped" (printf "the cluster shows no StorageClass %q with a provisioner" $class)) -}}
{{- else -}}
{{- if not $facts.csiDriver -}}
{{- include "kubernetes-nodes.refuse" (list . 12 (printf "pool %s: StorageClass %q's provisioner %s has no CSIDriver object (storage.k8s.io/v1 CSIDriver %s), so CDI takes it for in-tree storage and falls back to a host-assisted copy over the pod network (\"In tree storage class does not support snapshot/clone\"); %s. Install the CSI driver %s (its CSIDriver object), or use a class of a CSI driver" .pool $class $facts.provisioner $facts.provisioner .seen $facts.provisioner)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 12 "passed" (printf "the provisioner %s of StorageClass %q has a CSIDriver object" $facts.provisioner $class)) -}}
{{- end -}}
{{- $pv := $facts.pv -}}
{{- $claim := dig "spec" "claimRef" dict $pv -}}
{{- $driver := dig "spec" "csi" "driver" "" $pv | toString -}}
{{- if not $pv -}}
{{- include "kubernetes-nodes.checked" (list . 13 "skipped" (printf "%s, so CDI takes the golden's driver to be its class's provisioner" (ternary (printf "the golden's PersistentVolumeClaim cozy-public/%s is bound to no PersistentVolume the cluster shows" $golden.claimName) (printf "there is no PersistentVolumeClaim cozy-public/%s" $golden.claimName) (not (empty $golden.pvc))))) -}}
{{- else if not (and (eq (get $claim "namespace" | default "" | toString) "cozy-public") (eq (get $claim "name" | default "" | toString) $golden.claimName)) -}}
{{- include "kubernetes-nodes.refuse" (list . 13 (printf "pool %s: the PersistentVolume %s of golden %s's PersistentVolumeClaim cozy-public/%s is claimed by %s/%s (spec.claimRef), so CDI fails the clone (\"pvc does not match volume claim ref\"); %s. Repair the golden's binding, or re-import it (a new catalog entry)" .pool $pv.metadata.name .name $golden.claimName (get $claim "namespace" | default "" | toString) (get $claim "name" | default "" | toString) .seen)) -}}
{{- else if and $driver (ne $driver $facts.provisioner) -}}
{{- include "kubernetes-nodes.refuse" (list . 13 (printf "pool %s: golden %s is on a PersistentVolume of the CSI driver %s (spec.csi.driver of PersistentVolume %s) but StorageClass %q provisions with %s, so CDI would fall back to a host-assisted copy over the pod network (\"Provisioners are incompatible\"); %s. Clone a golden imported by %s (a catalog entry on a class of that driver), or move the pool to a class of %s" .pool .name $driver $pv.metadata.name $class $facts.provisioner .seen $facts.provisioner $driver)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 13 "passed" (ternary (printf "the golden's PersistentVolume %s is of the CSI driver %s, the provisioner of StorageClass %q" $pv.metadata.name $driver $class) (printf "the golden's PersistentVolume %s is not a CSI volume, so CDI takes its class's provisioner %s" $pv.metadata.name $facts.provisioner) (ne $driver ""))) -}}
{{- end -}}
{{- end -}}
{{- if $facts.cdiProblem -}}
{{- include "kubernetes-nodes.refuse" (list . 14 (printf "pool %s: %s (\"invalid number of active CDI resources\"); %s. Delete the CDI resources that are not in use, so that exactly one is not in phase Error" .pool $facts.cdiProblem .seen)) -}}
{{- else if $facts.cdi -}}
{{- include "kubernetes-nodes.checked" (list . 14 "passed" (printf "CDI reads the CDI resource %s%s" $facts.cdi.metadata.name (ternary "" (printf ", the only one of %d not in phase Error" (int $facts.cdiCount)) (eq (int $facts.cdiCount) 1)))) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 14 "skipped" "the cluster has no CDI resource") -}}
{{- end -}}
{{- $pvc := $golden.pvc | default dict -}}
{{- $content := dig "metadata" "annotations" "cdi.kubevirt.io/storage.contentType" "" $pvc | toString -}}
{{- if not $pvc -}}
{{- include "kubernetes-nodes.checked" (list . 15 "skipped" (printf "there is no PersistentVolumeClaim cozy-public/%s yet" $golden.claimName)) -}}
{{- else if eq $content "archive" -}}
{{- include "kubernetes-nodes.refuse" (list . 15 (printf "pool %s: golden %s's PersistentVolumeClaim cozy-public/%s holds archive content (annotation cdi.kubevirt.io/storage.contentType: archive), and CDI refuses to clone it into a disk image (\"Source contentType (archive) and target contentType (kubevirt) do not match\"); %s. Re-import the golden as a disk image (a catalog entry renders one)" .pool .name $golden.claimName .seen)) -}}
{{- else if and $facts.populated (not (dig "status" "capacity" "storage" "" $pvc)) -}}
{{- include "kubernetes-nodes.refuse" (list . 15 (printf "pool %s: golden %s has populated, but its PersistentVolumeClaim cozy-public/%s states no status.capacity, and CDI fails the clone (\"source/target size info missing\"); %s. Check that the golden's PVC is bound (kubectl -n cozy-public get pvc %s)" .pool .name $golden.claimName .seen $golden.claimName)) -}}
{{- else -}}
{{- include "kubernetes-nodes.checked" (list . 15 "passed" (printf "the golden's PersistentVolumeClaim cozy-public/%s holds a disk image%s" $golden.claimName (ternary " and states its capacity" " (still importing)" $facts.populated))) -}}
{{- end -}}
{{- end -}}

{{/*
A StorageClass by name, read at most once into ._kubernetesNodes.storageClassByName ({} when
absent), where callers read it. Takes a dict: root, name.
*/}}
{{- define "kubernetes-nodes.ensureStorageClass" -}}
{{- $state := .root._kubernetesNodes -}}
{{- if not (hasKey $state "storageClassByName") -}}
{{- $_ := set $state "storageClassByName" dict -}}
{{- end -}}
{{- if not (hasKey $state.storageClassByName .name) -}}
{{- $_ := set $state.storageClassByName .name (lookup "storage.k8s.io/v1" "StorageClass" "" .name) -}}
{{- end -}}
{{- end -}}

{{/*
The template the pool's MachineDeployment names, when its disk clones this golden or a per-class one.
Takes a dict: root, golden (plain name), out (read, name, source, class, readyReplicas, ready).
*/}}
{{- define "kubernetes-nodes.runningTemplate" -}}
{{- $root := .root -}}
{{- $_ := set .out "read" true -}}
{{- include "kubernetes-nodes.ensureRunningTemplate" $root -}}
{{- $md := $root._kubernetesNodes.machineDeployment -}}
{{- $ref := $root._kubernetesNodes.runningTemplate.name -}}
{{- if $ref -}}
{{- $template := $root._kubernetesNodes.runningTemplate.object -}}
{{- $disks := dig "spec" "template" "spec" "virtualMachineTemplate" "spec" "dataVolumeTemplates" list $template -}}
{{- if and (kindIs "slice" $disks) $disks (kindIs "map" (first $disks)) -}}
{{- $disk := first $disks -}}
{{- $source := dig "spec" "source" "pvc" dict $disk -}}
{{- $cloned := get $source "name" | toString -}}
{{- if and (kindIs "map" $source) (eq (get $source "namespace" | toString) "cozy-public") (or (eq $cloned .golden) (hasPrefix (printf "%s--" .golden) $cloned)) -}}
{{- $_ := set .out "name" $ref -}}
{{- $_ := set .out "source" $cloned -}}
{{- $_ := set .out "class" (dig "spec" "storage" "storageClassName" (dig "spec" "pvc" "storageClassName" "" $disk) $disk | toString) -}}
{{- $_ := set .out "readyReplicas" (dig "status" "readyReplicas" 0 $md | int64) -}}
{{- $_ := set .out "ready" (ge .out.readyReplicas 1) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The cluster's StorageClasses, listed at most once into ._kubernetesNodes.storageClasses (the
lookup's answer: {} with no cluster). Takes the root context.
*/}}
{{- define "kubernetes-nodes.ensureStorageClasses" -}}
{{- if not (hasKey ._kubernetesNodes "storageClasses") -}}
{{- $_ := set ._kubernetesNodes "storageClasses" (lookup "storage.k8s.io/v1" "StorageClass" "" "") -}}
{{- end -}}
{{- end -}}

{{/*
The cluster's default class for a VM disk (worker-image-lib.defaultStorageClass),
read once per render (both sides of refusal 4 may ask). Takes the root context.
*/}}
{{- define "kubernetes-nodes.defaultStorageClass" -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "defaultStorageClass") -}}
{{- include "kubernetes-nodes.ensureStorageClasses" . -}}
{{- $_ := set $state "defaultStorageClass" (include "worker-image-lib.defaultStorageClass" ($state.storageClasses.items | default list)) -}}
{{- end -}}
{{- $state.defaultStorageClass -}}
{{- end -}}
