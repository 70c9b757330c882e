{{/*
The namespace every golden lives in. Pools clone from it by this fixed name, so
it never follows the release namespace.
*/}}
{{- define "kubernetes-worker-image.namespace" -}}
cozy-public
{{- end -}}

{{/*
"true" when the map (index . 0) sets the key (index . 1) to anything but null: an explicit "" is an
override (storageClass "" asks for the cluster default).
*/}}
{{- define "kubernetes-worker-image.sets" -}}
{{- $m := index . 0 -}}
{{- $k := index . 1 -}}
{{- if and (hasKey $m $k) (not (kindIs "invalid" (get $m $k))) -}}true{{- end -}}
{{- end -}}

{{/*
Where the goldens import from when an entry sets no imageFactoryURL of its own, as YAML: url, urlFrom
(the value it came from, for messages), explicit (imageFactoryURL is set), ca and caFrom (the published
factory's CA, for the goldens that import from that factory, when the catalog's own imageFactoryCA is
unset). The catalog's own imageFactoryURL; else the factory it publishes for new pools
(tenantWorkers.talos.imageFactoryURL: one setting for a closed network); else the built-in. A CA belongs
to the URL it was given with, so the published one follows the published URL only.
*/}}
{{- define "kubernetes-worker-image.chartWideSource" -}}
{{- include "worker-image-lib.assertTenantWorkers" (dict "prefix" "" "field" "tenantWorkers" "value" .Values.tenantWorkers) -}}
{{- $published := (.Values.tenantWorkers | default dict).talos | default dict -}}
{{- $own := .Values.imageFactoryURL | default "" | toString -}}
{{- $out := dict "explicit" false "ca" "" "caFrom" "" -}}
{{- if $own -}}
{{- $_ := set $out "url" $own -}}
{{- $_ := set $out "urlFrom" "imageFactoryURL" -}}
{{- $_ := set $out "explicit" true -}}
{{- else if $published.imageFactoryURL -}}
{{- $_ := set $out "url" $published.imageFactoryURL -}}
{{- $_ := set $out "urlFrom" "tenantWorkers.talos.imageFactoryURL" -}}
{{- with $published.imageFactoryCA -}}
{{- $_ := set $out "ca" . -}}
{{- $_ := set $out "caFrom" "tenantWorkers.talos.imageFactoryCA" -}}
{{- end -}}
{{- else -}}
{{- $_ := set $out "url" (include "worker-image-lib.builtinImageFactoryURL" .) -}}
{{- $_ := set $out "urlFrom" "the built-in default (neither imageFactoryURL nor tenantWorkers.talos.imageFactoryURL is set)" -}}
{{- end -}}
{{- $out | toYaml -}}
{{- end -}}

{{/*
Every images[] entry resolved and checked once, on the root context (README, "Inside the templates"):
._kubernetesWorkerImageEntries (a list of maps), ._kubernetesWorkerImageGoldens and ._kubernetesWorkerImageCAs.
*/}}
{{- define "kubernetes-worker-image.entries" -}}
{{- if not (hasKey . "_kubernetesWorkerImageEntries") -}}
{{- $images := .Values.images | default list -}}
{{- if not (kindIs "slice" $images) -}}
{{- fail (printf "images is a %s, not a list; write images as a list of {schematicID, version} entries, or [] for no golden" (kindOf $images)) -}}
{{- end -}}
{{- include "worker-image-lib.assertAtMost" (dict "prefix" "" "field" "images" "value" $images "max" 32 "items" "entries" "fix" "retire the flavors no pool uses (retire: true, then drop the entry)") -}}
{{- $patterns := include "worker-image-lib.patterns" . | fromYaml -}}
{{- $maxLengths := include "worker-image-lib.maxLengths" . | fromYaml -}}
{{- $source := include "kubernetes-worker-image.chartWideSource" . | fromYaml -}}
{{- $chartWide := dict "imageFactoryURL" $source.url "storage" (.Values.storage | default "" | toString) "storageClass" (.Values.storageClass | default "" | toString) -}}
{{- $chartWideFrom := dict "imageFactoryURL" $source.urlFrom "storage" "storage" "storageClass" "storageClass" -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" "" "field" "imageFactoryCA" "value" .Values.imageFactoryCA) -}}
{{- $chartWideCA := .Values.imageFactoryCA | default "" | toString -}}
{{- /* The CA ConfigMaps in cozy-public: named by what they serve, never by the certificate. */ -}}
{{- $cas := list -}}
{{- if $chartWideCA -}}
{{- $cas = append $cas (dict "name" "kubernetes-worker-image-ca" "text" $chartWideCA "from" "imageFactoryCA") -}}
{{- else if $source.ca -}}
{{- /* The published factory's CA, for the goldens that import from it (it belongs to that URL). */ -}}
{{- $cas = append $cas (dict "name" "kubernetes-worker-image-ca" "text" $source.ca "from" $source.caFrom) -}}
{{- end -}}
{{- $entries := list -}}
{{- $byName := dict -}}
{{- range $i, $e := $images -}}
{{- include "worker-image-lib.assertCatalogEntryShape" (dict "label" (printf "images[%d]" $i) "entry" $e) -}}
{{- $r := dict "index" $i "from" dict -}}
{{- range $field := list "schematicID" "version" -}}
{{- $_ := set $r $field (ternary (get $e $field | toString) "" (eq (include "kubernetes-worker-image.sets" (list $e $field)) "true")) -}}
{{- end -}}
{{- $label := printf "images[%d] (schematicID %q, version %q)" $i $r.schematicID $r.version -}}
{{- $_ := set $r "label" $label -}}
{{- $_ := set $r "retire" (and (kindIs "bool" (get $e "retire")) (get $e "retire")) -}}
{{- range $field := list "schematicID" "version" -}}
{{- if eq (get $r $field) "" -}}
{{- fail (printf "%s has no %s; every entry needs both schematicID (an Image Factory schematic ID) and version (a Talos release such as v1.13.6): set %s or remove the entry" $label $field $field) -}}
{{- end -}}
{{- end -}}
{{- range $field := list "imageFactoryURL" "storage" "storageClass" -}}
{{- if include "kubernetes-worker-image.sets" (list $e $field) -}}
{{- $_ := set $r $field (get $e $field | toString) -}}
{{- $_ := set $r.from $field (printf "images[%d].%s" $i $field) -}}
{{- else -}}
{{- $_ := set $r $field (get $chartWide $field) -}}
{{- $_ := set $r.from $field (get $chartWideFrom $field) -}}
{{- end -}}
{{- end -}}
{{- /* A URL nobody set for this catalog (the published factory's, else the built-in): an existing golden keeps the one it is stored with. */ -}}
{{- $_ := set $r "urlDefault" (and (not (include "kubernetes-worker-image.sets" (list $e "imageFactoryURL"))) (not $source.explicit)) -}}
{{- if not (include "worker-image-lib.isImageField" (dict "field" "schematicID" "value" $r.schematicID "patterns" $patterns "maxLengths" $maxLengths)) -}}
{{- fail (printf "%s: schematicID %q is malformed: it must match %s (lowercase letters, digits, inner \"-\") and be at most %d characters, because it becomes part of the DataVolume name and the image URL; set it to the schematic ID the Image Factory printed, such as ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515" $label (include "worker-image-lib.truncate" $r.schematicID) $patterns.schematicID (int $maxLengths.schematicID)) -}}
{{- end -}}
{{- if not (include "worker-image-lib.isImageField" (dict "field" "version" "value" $r.version "patterns" $patterns "maxLengths" $maxLengths)) -}}
{{- fail (printf "%s: version %q is not a Talos release: it must match %s (vMAJOR.MINOR.PATCH, optional -pre.release suffix) and be at most %d characters, because it becomes part of the DataVolume name and the image URL; set it to a release such as v1.13.6" $label (include "worker-image-lib.truncate" $r.version) $patterns.version (int $maxLengths.version)) -}}
{{- end -}}
{{- if not (include "worker-image-lib.isImageField" (dict "field" "imageFactoryURL" "value" $r.imageFactoryURL "patterns" $patterns "maxLengths" $maxLengths)) -}}
{{- fail (printf "%s: imageFactoryURL %q (from %s) is not a plain http(s) URL: it must match %s (no whitespace, quotes, backticks, $ or YAML metacharacters) and be at most %d characters, because it is written into the golden's source URL; set %s to a URL such as https://factory.talos.dev" $label (include "worker-image-lib.truncate" $r.imageFactoryURL) (get $r.from "imageFactoryURL") $patterns.imageFactoryURL (int $maxLengths.imageFactoryURL) (get $r.from "imageFactoryURL")) -}}
{{- end -}}
{{- $storage := dict -}}
{{- include "worker-image-lib.parseQuantity" (dict "value" $r.storage "out" $storage) -}}
{{- if or $storage.error (not (regexMatch $patterns.quantity $r.storage)) -}}
{{- fail (printf "%s: storage %q (from %s) is not a Kubernetes quantity the API server stores as written (it is %s), so the golden's DataVolume would be rejected or hold another size; set %s to a size such as 6Gi (at most 32 characters, below 8Ei, no finer than 1n)" $label (include "worker-image-lib.truncate" $r.storage) (get $r.from "storage") ($storage.error | default "not in the form digits[.digits] and a suffix such as Gi") (get $r.from "storage")) -}}
{{- end -}}
{{- if not (or (eq $r.storageClass "") (include "worker-image-lib.isDNSSubdomain" $r.storageClass)) -}}
{{- fail (printf "%s: storageClass %q (from %s) is not a StorageClass name; set %s to a class such as replicated, or \"\" for the cluster default" $label $r.storageClass (get $r.from "storageClass") (get $r.from "storageClass")) -}}
{{- end -}}
{{- /* The entry's own imageFactoryCA wins, "" included (no CA for it); checksum is per entry only. */ -}}
{{- $_ := set $r "caConfigMap" (ternary "kubernetes-worker-image-ca" "" (ne $chartWideCA "")) -}}
{{- $_ := set $r.from "imageFactoryCA" "imageFactoryCA" -}}
{{- if and (not $chartWideCA) $source.ca $r.urlDefault -}}
{{- $_ := set $r "caConfigMap" "kubernetes-worker-image-ca" -}}
{{- $_ := set $r.from "imageFactoryCA" $source.caFrom -}}
{{- end -}}
{{- if include "kubernetes-worker-image.sets" (list $e "imageFactoryCA") -}}
{{- $own := get $e "imageFactoryCA" -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" (printf "%s: " $label) "field" "imageFactoryCA" "value" $own) -}}
{{- $_ := set $r.from "imageFactoryCA" (printf "images[%d].imageFactoryCA" $i) -}}
{{- $_ := set $r "caConfigMap" "" -}}
{{- if $own -}}
{{- $_ := set $r "caConfigMap" (printf "kubernetes-worker-image-ca-%s-%s" $r.schematicID $r.version) -}}
{{- $cas = append $cas (dict "name" $r.caConfigMap "text" $own "from" (get $r.from "imageFactoryCA")) -}}
{{- end -}}
{{- end -}}
{{- include "worker-image-lib.assertChecksum" (dict "prefix" (printf "%s: " $label) "field" "checksum" "value" (get $e "checksum")) -}}
{{- $_ := set $r "checksum" (get $e "checksum" | default "" | toString) -}}
{{- $name := include "worker-image-lib.goldenName" $r -}}
{{- /* Under the patterns above only the same pair can give the same name (a schematicID has no dot). */ -}}
{{- if hasKey $byName $name -}}
{{- fail (printf "%s resolves to the DataVolume %s, as images[%v] already does; one (schematicID, version) is one golden: remove one of the two entries (a second copy with other storage or storageClass cannot exist under the same name)" $label $name (get $byName $name)) -}}
{{- end -}}
{{- $_ := set $byName $name $i -}}
{{- $_ := set $r "name" $name -}}
{{- $_ := set $r "url" (include "worker-image-lib.imageURL" $r) -}}
{{- /* Per-class goldens are entries of their own (same url, storage, retire), so every check handles them too. */ -}}
{{- $perClass := list -}}
{{- $seen := dict -}}
{{- range $j, $class := get $e "additionalStorageClasses" | default list -}}
{{- $field := printf "images[%d].additionalStorageClasses[%d]" $i $j -}}
{{- if not (include "worker-image-lib.isDNSSubdomain" $class) -}}
{{- fail (printf "%s: %s %s is not a StorageClass name (a DNS subdomain: lowercase letters, digits, inner \"-\" and \".\", at most 253 characters), because it becomes the class and part of the name of a golden; set it to a class such as ceph-rbd" $label $field (include "worker-image-lib.describe" $class)) -}}
{{- end -}}
{{- if hasKey $seen $class -}}
{{- fail (printf "%s: %s %q is listed already (as [%v]); one class holds one golden of a flavor: remove the second %q" $label $field $class (get $seen $class) $class) -}}
{{- end -}}
{{- $_ := set $seen $class $j -}}
{{- if and (ne $r.storageClass "") (eq $class $r.storageClass) -}}
{{- fail (printf "%s: %s %q is the class the entry's own golden %s is on (from %s), so it would be a second copy on the same class; remove %q from additionalStorageClasses" $label $field $class $name (get $r.from "storageClass") $class) -}}
{{- end -}}
{{- $pcName := include "worker-image-lib.perClassGoldenName" (dict "schematicID" $r.schematicID "version" $r.version "class" $class) -}}
{{- if gt (len $pcName) 253 -}}
{{- fail (printf "%s: %s %q gives the golden name %s...(%d characters), longer than the 253 a DataVolume name may have; use a StorageClass with a shorter name" $label $field (include "worker-image-lib.truncate" $class) (trunc 80 $pcName) (len $pcName)) -}}
{{- end -}}
{{- $pc := dict "index" $i "label" (printf "%s, additional class %q" $label $class) "schematicID" $r.schematicID "version" $r.version "imageFactoryURL" $r.imageFactoryURL "storage" $r.storage "storageClass" $class "retire" $r.retire "name" $pcName "url" $r.url "urlDefault" $r.urlDefault "caConfigMap" $r.caConfigMap "checksum" $r.checksum "perClassOf" $name "from" (dict "imageFactoryURL" (get $r.from "imageFactoryURL") "imageFactoryCA" (get $r.from "imageFactoryCA") "storage" (get $r.from "storage") "storageClass" $field) -}}
{{- $perClass = append $perClass $pc -}}
{{- end -}}
{{- $_ := set $r "perClass" $perClass -}}
{{- $entries = append $entries $r -}}
{{- end -}}
{{- $_ := set . "_kubernetesWorkerImageEntries" $entries -}}
{{- $_ := set . "_kubernetesWorkerImageCAs" $cas -}}
{{- $goldens := list -}}
{{- range $entries -}}
{{- $goldens = concat $goldens (list .) .perClass -}}
{{- end -}}
{{- /* Every golden the catalog renders, each entry's own first, then its per-class ones. */ -}}
{{- $_ := set . "_kubernetesWorkerImageGoldens" $goldens -}}
{{- end -}}
{{- end -}}

{{/*
Refuses an entry whose golden (its DataVolume, else its PVC) exists with another spec, which cannot be
patched in place (README), and records on the entry the CA ConfigMap and checksum it is stored with
(stored: certConfigMap, checksum, phase). Takes one resolved entry.
*/}}
{{- define "kubernetes-worker-image.assertUnchanged" -}}
{{- $ns := include "kubernetes-worker-image.namespace" . -}}
{{- $found := dict -}}
{{- $where := "" -}}
{{- $dv := lookup "cdi.kubevirt.io/v1beta1" "DataVolume" $ns .name -}}
{{- $stored := dict -}}
{{- if $dv -}}
{{- $where = printf "DataVolume %s/%s" $ns .name -}}
{{- $stored = dict "certConfigMap" (dig "spec" "source" "http" "certConfigMap" "" $dv | toString) "checksum" (dig "spec" "source" "http" "checksum" "" $dv | toString) "phase" (dig "status" "phase" "" $dv | toString) -}}
{{- $_ := set $found "imageFactoryURL" (dig "spec" "source" "http" "url" "" $dv | toString) -}}
{{- $_ := set $found "storage" (dig "spec" "storage" "resources" "requests" "storage" "" $dv | toString) -}}
{{- $_ := set $found "storageClass" (dig "spec" "storage" "storageClassName" "" $dv | toString) -}}
{{- else -}}
{{- $pvc := lookup "v1" "PersistentVolumeClaim" $ns .name -}}
{{- if $pvc -}}
{{- $where = printf "PersistentVolumeClaim %s/%s (its DataVolume is gone)" $ns .name -}}
{{- $_ := set $found "storage" (dig "spec" "resources" "requests" "storage" "" $pvc | toString) -}}
{{- /* A PVC shows the class it bound to, not whether the golden asked for the default. */ -}}
{{- if ne .storageClass "" -}}
{{- $_ := set $found "storageClass" (dig "spec" "storageClassName" "" $pvc | toString) -}}
{{- end -}}
{{- $stored = dict "certConfigMap" (dig "metadata" "annotations" "cdi.kubevirt.io/storage.import.certConfigMap" "" $pvc | toString) "checksum" (dig "metadata" "annotations" "cdi.kubevirt.io/storage.import.checksum" "" $pvc | toString) "phase" "Succeeded" -}}
{{- $endpoint := dig "metadata" "annotations" "cdi.kubevirt.io/storage.import.endpoint" "" $pvc | toString -}}
{{- if $endpoint -}}
{{- $_ := set $found "imageFactoryURL" $endpoint -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- /* An existing golden keeps the CA and checksum it was imported with (README, "Trusted imports: a CA and a checksum"). */ -}}
{{- if $stored -}}
{{- $_ := set . "stored" $stored -}}
{{- end -}}
{{- $want := dict "imageFactoryURL" .url "storage" .storage "storageClass" .storageClass -}}
{{- $what := dict "imageFactoryURL" "source URL" "storage" "storage" "storageClass" "storageClass" -}}
{{- $diffs := list -}}
{{- range $field := list "imageFactoryURL" "storage" "storageClass" -}}
{{- if and (hasKey $found $field) (ne (get $found $field) (get $want $field)) -}}
{{- if and (eq $field "imageFactoryURL") $.urlDefault -}}
{{- /* Nobody set this URL: the published factory moved (or went), which applies to goldens imported after it. */ -}}
{{- $_ := set $ "url" (get $found $field) -}}
{{- else -}}
{{- $diffs = append $diffs (printf "%s %q there, %q now (from %s)" (get $what $field) (get $found $field) (get $want $field) (get $.from $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $diffs -}}
{{- fail (printf "%s was edited after its golden was created: %s has %s. A DataVolume's spec cannot be changed in place. Put the entry back as it was; to get a golden with the new settings, add a new (schematicID, version) entry, move the pools to it (osImage.builtin), then retire this one (the chart README, \"Retiring an entry\")" .label $where (join "; " $diffs)) -}}
{{- end -}}
{{- end -}}

{{/*
For an entry without a class, refuses an additional class its golden is on (its DataVolume, else its
PVC, else the default class); a declared class is checked with the entry. Takes a dict: root, entry.
*/}}
{{- define "kubernetes-worker-image.assertPerClassDiffers" -}}
{{- $e := .entry -}}
{{- if and (eq $e.storageClass "") $e.perClass -}}
{{- $ns := include "kubernetes-worker-image.namespace" .root -}}
{{- $class := "" -}}
{{- $from := "" -}}
{{- $dv := lookup "cdi.kubevirt.io/v1beta1" "DataVolume" $ns $e.name -}}
{{- if $dv -}}
{{- $class = dig "spec" "storage" "storageClassName" (dig "spec" "pvc" "storageClassName" "" $dv) $dv | toString -}}
{{- $from = printf "its DataVolume %s/%s" $ns $e.name -}}
{{- end -}}
{{- if not $class -}}
{{- $claim := dig "status" "claimName" $e.name ($dv | default dict) | default $e.name | toString -}}
{{- $pvc := lookup "v1" "PersistentVolumeClaim" $ns $claim -}}
{{- if $pvc -}}
{{- $class = dig "spec" "storageClassName" "" $pvc | toString -}}
{{- $from = printf "its PersistentVolumeClaim %s/%s" $ns $claim -}}
{{- end -}}
{{- end -}}
{{- if not $class -}}
{{- $class = include "worker-image-lib.defaultStorageClass" ((lookup "storage.k8s.io/v1" "StorageClass" "" "").items | default list) -}}
{{- $from = "the cluster default class, where a golden without a class is imported" -}}
{{- end -}}
{{- range $pc := $e.perClass -}}
{{- if and $class (eq $pc.storageClass $class) -}}
{{- fail (printf "%s: %s %q is the class the entry's own golden %s is on (storageClass \"\", resolved from %s), so it would be a second copy on the same class; remove %q from additionalStorageClasses" $e.label $pc.from.storageClass $class $e.name $from $class) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The clone RoleBinding's cloneSubjects: toYaml keeps each in its string, but an odd subject would be
rejected by the API server or bind something else than meant, so each is checked.
*/}}
{{- define "kubernetes-worker-image.assertCloneSubjects" -}}
{{- $subjects := .Values.cloneSubjects | default list -}}
{{- if not (kindIs "slice" $subjects) -}}
{{- fail "cloneSubjects is not a list; write it as a list of RBAC subjects such as [{kind: Group, apiGroup: rbac.authorization.k8s.io, name: system:serviceaccounts}], or [] for no RoleBinding" -}}
{{- end -}}
{{- include "worker-image-lib.assertAtMost" (dict "prefix" "" "field" "cloneSubjects" "value" $subjects "max" 32 "items" "subjects" "fix" "bind a group (such as system:serviceaccounts) rather than many single subjects") -}}
{{- range $i, $s := $subjects -}}
{{- if not (kindIs "map" $s) -}}
{{- fail (printf "cloneSubjects[%d] is not a map; write it as {kind: Group|User|ServiceAccount, name: ..., namespace: ... (ServiceAccount only), apiGroup: ...}" $i) -}}
{{- end -}}
{{- range $key := keys $s | sortAlpha -}}
{{- if not (has $key (list "kind" "name" "namespace" "apiGroup")) -}}
{{- fail (printf "cloneSubjects[%d] has no key %q; a subject takes kind, name, namespace and apiGroup" $i $key) -}}
{{- end -}}
{{- end -}}
{{- if not (has $s.kind (list "Group" "User" "ServiceAccount")) -}}
{{- fail (printf "cloneSubjects[%d].kind %q is not Group, User or ServiceAccount; set it to one of them" $i (toString $s.kind)) -}}
{{- end -}}
{{- range $key := list "name" "namespace" "apiGroup" -}}
{{- $value := get $s $key -}}
{{- if not (or (kindIs "invalid" $value) (and (kindIs "string" $value) (regexMatch "^[-a-zA-Z0-9_.:@]{0,253}$" $value))) -}}
{{- fail (printf "cloneSubjects[%d].%s is not a plain name (letters, digits and - _ . : @, at most 253 characters); set it to the subject's %s" $i $key $key) -}}
{{- end -}}
{{- end -}}
{{- if not $s.name -}}
{{- fail (printf "cloneSubjects[%d] has no name; set name to the group, user or ServiceAccount that may clone goldens" $i) -}}
{{- end -}}
{{- if ne (eq $s.kind "ServiceAccount") (not (empty $s.namespace)) -}}
{{- fail (printf "cloneSubjects[%d] (%s %s): a ServiceAccount subject needs its namespace, and a Group or User has none; set namespace on ServiceAccount subjects only" $i $s.kind $s.name) -}}
{{- end -}}
{{- /* The API server fills an empty apiGroup in for the kind, and refuses any other. */ -}}
{{- $apiGroup := ternary "" "rbac.authorization.k8s.io" (eq $s.kind "ServiceAccount") -}}
{{- if not (has ($s.apiGroup | default "") (list "" $apiGroup)) -}}
{{- fail (printf "cloneSubjects[%d] (%s %s): apiGroup %q does not belong to the kind; a ServiceAccount takes apiGroup \"\" and a Group or User takes rbac.authorization.k8s.io. Set apiGroup to %q, or leave it out and the API server fills it in" $i $s.kind $s.name $s.apiGroup $apiGroup) -}}
{{- end -}}
{{- end -}}
{{- end -}}


{{/*
The Talos flavors new pools take by default, from what this catalog publishes (tenantWorkers), as YAML,
kept on the root context as ._kubernetesWorkerImageDefaults: talos (the flavor a pool with osImage.builtin
and no schematicID or version of its own clones: per field tenantWorkers.talos's, else the pool chart's
built-in, worker-image-lib.builtinFlavor) and, when tenantWorkers.osImage is builtin, cloned (the flavor
every new pool without its own osImage clones: osImage.builtin's own fields over talos). Each holds
schematicID, version, name (its golden) and from (where each field came from, for messages).
*/}}
{{- define "kubernetes-worker-image.ensureDefaults" -}}
{{- if not (hasKey . "_kubernetesWorkerImageDefaults") -}}
{{- include "worker-image-lib.assertTenantWorkers" (dict "prefix" "" "field" "tenantWorkers" "value" .Values.tenantWorkers) -}}
{{- $tenant := .Values.tenantWorkers | default dict -}}
{{- $talos := $tenant.talos | default dict -}}
{{- $builtin := include "worker-image-lib.builtinFlavor" . | fromYaml -}}
{{- $defaults := dict -}}
{{- $flavor := dict -}}
{{- $fromField := dict -}}
{{- range $field := list "schematicID" "version" -}}
{{- if get $talos $field -}}
{{- $_ := set $flavor $field (get $talos $field) -}}
{{- $_ := set $fromField $field (printf "%s from tenantWorkers.talos.%s" $field $field) -}}
{{- else -}}
{{- $_ := set $flavor $field (get $builtin $field) -}}
{{- $_ := set $fromField $field (printf "%s from the pool chart's built-in default (tenantWorkers.talos.%s is not set)" $field $field) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $flavor "from" (printf "%s, %s" $fromField.schematicID $fromField.version) -}}
{{- $_ := set $flavor "name" (include "worker-image-lib.goldenName" $flavor) -}}
{{- $_ := set $defaults "talos" $flavor -}}
{{- $os := $tenant.osImage -}}
{{- if and (kindIs "map" $os) (hasKey $os "builtin") -}}
{{- $own := $os.builtin | default dict -}}
{{- $cloned := dict -}}
{{- range $field := list "schematicID" "version" -}}
{{- if get $own $field -}}
{{- $_ := set $cloned $field (get $own $field) -}}
{{- $_ := set $fromField $field (printf "%s from tenantWorkers.osImage.builtin.%s" $field $field) -}}
{{- else -}}
{{- $_ := set $cloned $field (get $flavor $field) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $cloned "from" (printf "%s, %s" $fromField.schematicID $fromField.version) -}}
{{- $_ := set $cloned "name" (include "worker-image-lib.goldenName" $cloned) -}}
{{- $_ := set $defaults "cloned" $cloned -}}
{{- end -}}
{{- $_ := set . "_kubernetesWorkerImageDefaults" $defaults -}}
{{- end -}}
{{- end -}}

{{/*
Refuses a published osImage.builtin whose flavor no images[] entry that is not retiring imports: every
new pool without its own osImage would clone a golden the catalog does not make, and be refused. Reads
nothing from the cluster. Takes the root context.
*/}}
{{- define "kubernetes-worker-image.assertDefaultImported" -}}
{{- include "kubernetes-worker-image.entries" . -}}
{{- include "kubernetes-worker-image.ensureDefaults" . -}}
{{- with ._kubernetesWorkerImageDefaults.cloned -}}
{{- $cloned := . -}}
{{- $imported := false -}}
{{- range $e := $._kubernetesWorkerImageEntries -}}
{{- if and (eq $e.name $cloned.name) (not $e.retire) -}}
{{- $imported = true -}}
{{- end -}}
{{- end -}}
{{- if not $imported -}}
{{- fail (printf "tenantWorkers.osImage is {builtin: ...}, so every new pool without its own osImage clones the golden of Talos %s, schematic %s (%s), but no images[] entry imports that flavor, so the catalog makes no golden cozy-public/%s and each such pool would be refused; add the entry {schematicID: %s, version: %s} to images, or publish a flavor an entry imports (tenantWorkers.talos.schematicID and version, or osImage.builtin's own), or remove tenantWorkers.osImage so that new pools import over HTTP" $cloned.version $cloned.schematicID $cloned.from $cloned.name $cloned.schematicID $cloned.version) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Refuses to retire a golden something still uses (README, "Retiring an entry"): each retire: true
entry's, and each live golden marked retiring whose entry is gone. Takes the root context.
*/}}
{{- define "kubernetes-worker-image.assertRetirable" -}}
{{- include "kubernetes-worker-image.entries" . -}}
{{- $ns := include "kubernetes-worker-image.namespace" . -}}
{{- $check := dict -}}
{{- $kept := dict -}}
{{- /* New pools take the default flavor: in use before any pool runs it, whatever the cluster holds. */ -}}
{{- include "kubernetes-worker-image.ensureDefaults" . -}}
{{- $inUse := dict -}}
{{- range $key := list "talos" "cloned" -}}
{{- with get $._kubernetesWorkerImageDefaults $key -}}
{{- $_ := set $inUse .name . -}}
{{- end -}}
{{- end -}}
{{- range ._kubernetesWorkerImageGoldens -}}
{{- if .retire -}}
{{- $_ := set $check .name (dict "subject" (printf "%s sets retire: true, but its golden %s/%s" .label $ns .name) "fix" "or remove retire to keep the golden") -}}
{{- else -}}
{{- $_ := set $kept .name true -}}
{{- end -}}
{{- end -}}
{{- /* Goldens marked retiring whose entry is gone: this render deletes them (no keep), so they are checked too. */ -}}
{{- include "kubernetes-worker-image.ensureLive" . -}}
{{- range $dv := ._kubernetesWorkerImageLive.dataVolumes -}}
{{- $name := $dv.metadata.name -}}
{{- if and (eq (dig "metadata" "annotations" "kubernetes-worker-image.cozystack.io/retiring" "" $dv | toString) "true") (not (hasKey $kept $name)) (not (hasKey $check $name)) -}}
{{- $_ := set $check $name (dict "subject" (printf "the golden %s/%s is marked retiring and this render no longer lists its entry, so Helm would delete it, but it" $ns $name) "fix" "until then keep its entry in images with retire: true (or without retire, to keep the golden)") -}}
{{- end -}}
{{- end -}}
{{- /* A golden of the default flavor (its per-class ones too) is refused first, whatever uses it. */ -}}
{{- range $name := keys $check | sortAlpha -}}
{{- $plain := regexReplaceAll "--.*$" $name "" -}}
{{- if hasKey $inUse $plain -}}
{{- $d := get $inUse $plain -}}
{{- $c := get $check $name -}}
{{- fail (printf "%s is in use: new pools take it by default (Talos %s, schematic %s: %s), so a new pool that clones it (osImage.builtin) would be refused once it retires, and pools would find it gone. Publish another default first (tenantWorkers.talos.schematicID and version, with an images[] entry that imports it), then retire this one; %s" $c.subject $d.version $d.schematicID $d.from $c.fix) -}}
{{- end -}}
{{- end -}}
{{- if $check -}}
{{- $users := dict -}}
{{- $noPool := dict -}}
{{- include "kubernetes-worker-image.goldenUsers" (dict "root" . "names" $check "out" $users "noPool" $noPool) -}}
{{- range $name := keys $check | sortAlpha -}}
{{- $found := keys (get $users $name) | sortAlpha -}}
{{- if $found -}}
{{- $c := get $check $name -}}
{{- $strays := keys (get $noPool $name | default dict) | sortAlpha -}}
{{- $strayNote := "" -}}
{{- if $strays -}}
{{- $strayNote = printf " Of those, %d belong to no pool using the golden: %s (a worker disk whose namespace holds no MachineDeployment named by its kubernetes-worker-image.cozystack.io/pool annotation, so no pool there made it or its pool is gone; anyone who can create a DataVolume or PVC can annotate one). They still keep the golden, so nothing is lost: delete them if nothing needs them." (len $strays) (include "kubernetes-worker-image.firstFive" $strays) -}}
{{- end -}}
{{- fail (printf "%s is still used by %d object(s): %s.%s A golden in use cannot be deleted: a worker disk cloning it or a pool scaling up from it would lose its source. Move those pools to another golden (osImage.builtin with another flavor) or to HTTP (remove osImage.builtin), wait until their old KubevirtMachineTemplates and worker disks are gone (workerimage pins lists what is left), then render again; %s" $c.subject (len $found) (include "kubernetes-worker-image.firstFive" $found) $strayNote $c.fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
What cozy-public holds, listed once per render into ._kubernetesWorkerImageLive: dataVolumes (every
DataVolume there), and cloneable, sorted: the names of the catalog's goldens there that are not
retiring: a DataVolume named talos-worker-... carrying the catalog's label (app.kubernetes.io/part-of:
kubernetes-worker-image) and not annotated retiring, or, once CDI collected such a DataVolume, its
PersistentVolumeClaim (CDI copies the DataVolume's labels onto it). Two lists of the catalog's own
namespace, whatever the tenants hold. Takes the root context.
*/}}
{{- define "kubernetes-worker-image.ensureLive" -}}
{{- if not (hasKey . "_kubernetesWorkerImageLive") -}}
{{- $ns := include "kubernetes-worker-image.namespace" . -}}
{{- $dataVolumes := (lookup "cdi.kubevirt.io/v1beta1" "DataVolume" $ns "").items | default list -}}
{{- $cloneable := dict -}}
{{- $seen := dict -}}
{{- range $o := $dataVolumes -}}
{{- $_ := set $seen $o.metadata.name true -}}
{{- if and (include "kubernetes-worker-image.isCatalogGolden" $o) (ne (dig "metadata" "annotations" "kubernetes-worker-image.cozystack.io/retiring" "" $o | toString) "true") -}}
{{- $_ := set $cloneable $o.metadata.name true -}}
{{- end -}}
{{- end -}}
{{- range $o := (lookup "v1" "PersistentVolumeClaim" $ns "").items | default list -}}
{{- if and (not (hasKey $seen $o.metadata.name)) (include "kubernetes-worker-image.isCatalogGolden" $o) -}}
{{- $_ := set $cloneable $o.metadata.name true -}}
{{- end -}}
{{- end -}}
{{- $_ := set . "_kubernetesWorkerImageLive" (dict "dataVolumes" $dataVolumes "cloneable" (keys $cloneable | sortAlpha)) -}}
{{- end -}}
{{- end -}}

{{/* "true" for an object named as a golden and labelled as the catalog labels its goldens. */}}
{{- define "kubernetes-worker-image.isCatalogGolden" -}}
{{- if and (hasPrefix "talos-worker-" (.metadata.name | toString)) (eq (dig "metadata" "labels" "app.kubernetes.io/part-of" "" . | toString) "kubernetes-worker-image") -}}true{{- end -}}
{{- end -}}

{{/*
A sorted list as "a, b, c, d, e and N more": a refusal names at most five.
*/}}
{{- define "kubernetes-worker-image.firstFive" -}}
{{- $shown := join ", " (slice . 0 (min 5 (len .))) -}}
{{- if gt (len .) 5 -}}
{{- $shown = printf "%s and %d more" $shown (sub (len .) 5) -}}
{{- end -}}
{{- $shown -}}
{{- end -}}

{{/*
Who uses the goldens named by the keys of names (README): out[<golden>] and noPool[<golden>] (its disks
of no pool) are sets of "<namespace>/<kind>/<name>". Takes a dict: root, names, out, noPool.
*/}}
{{- define "kubernetes-worker-image.goldenUsers" -}}
{{- $ns := include "kubernetes-worker-image.namespace" .root -}}
{{- $names := .names -}}
{{- $out := .out -}}
{{- range $golden := keys $names -}}
{{- $_ := set $out $golden dict -}}
{{- end -}}
{{- $disks := dict -}}
{{- range $kind := list (list "cdi.kubevirt.io/v1beta1" "DataVolume") (list "v1" "PersistentVolumeClaim") -}}
{{- range $o := (lookup (index $kind 0) (index $kind 1) "" "").items | default list -}}
{{- $golden := dig "metadata" "annotations" "kubernetes-worker-image.cozystack.io/golden" "" $o | toString -}}
{{- if hasKey $names $golden -}}
{{- $user := printf "%s/%s/%s" $o.metadata.namespace (index $kind 1) $o.metadata.name -}}
{{- $_ := set (get $out $golden) $user true -}}
{{- $_ := set $disks $user (dict "golden" $golden "namespace" $o.metadata.namespace "pool" (dig "metadata" "annotations" "kubernetes-worker-image.cozystack.io/pool" "" $o | toString)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $disks -}}
{{- $pools := dict -}}
{{- range $md := (lookup "cluster.x-k8s.io/v1beta1" "MachineDeployment" "" "").items | default list -}}
{{- $_ := set $pools (printf "%s/%s" $md.metadata.namespace $md.metadata.name) true -}}
{{- end -}}
{{- $noPool := .noPool -}}
{{- range $user, $d := $disks -}}
{{- /* No namespace or name holds a "/": only the disk's own namespace can match. */ -}}
{{- if not (and $d.pool (hasKey $pools (printf "%s/%s" $d.namespace $d.pool))) -}}
{{- if not (hasKey $noPool $d.golden) -}}
{{- $_ := set $noPool $d.golden dict -}}
{{- end -}}
{{- $_ := set (get $noPool $d.golden) $user true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $t := (lookup "infrastructure.cluster.x-k8s.io/v1alpha1" "KubevirtMachineTemplate" "" "").items | default list -}}
{{- range $d := dig "spec" "template" "spec" "virtualMachineTemplate" "spec" "dataVolumeTemplates" list $t -}}
{{- $src := dig "spec" "source" "pvc" dict $d -}}
{{- $golden := dig "name" "" $src | toString -}}
{{- if and (eq (dig "namespace" "" $src | toString) $ns) (hasKey $names $golden) -}}
{{- $_ := set (get $out $golden) (printf "%s/KubevirtMachineTemplate/%s" $t.metadata.namespace $t.metadata.name) true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Each golden's source as rendered (stored on the entry as source): a golden that exists keeps the CA
ConfigMap and checksum it was imported with; a new one takes its entry's. Refuses a new checksum on a
CDI older than v1.65.0, and an importing golden whose CA ConfigMap this render would drop. Takes root.
*/}}
{{- define "kubernetes-worker-image.sources" -}}
{{- $ns := include "kubernetes-worker-image.namespace" . -}}
{{- $rendered := dict -}}
{{- range ._kubernetesWorkerImageCAs -}}
{{- $_ := set $rendered .name true -}}
{{- end -}}
{{- $checksummed := list -}}
{{- range ._kubernetesWorkerImageGoldens -}}
{{- if .stored -}}
{{- $_ := set . "source" (dict "certConfigMap" .stored.certConfigMap "checksum" .stored.checksum) -}}
{{- $cm := .stored.certConfigMap -}}
{{- if and (hasPrefix "kubernetes-worker-image-ca" $cm) (not (hasKey $rendered $cm)) (ne .stored.phase "Succeeded") -}}
{{- fail (printf "%s: its golden %s/%s is still importing (phase %q) with the CA in ConfigMap %s/%s, which this render no longer holds (%s is not set any more), so Helm would delete it and the import could not verify the mirror; set %s back until the golden's phase is Succeeded, then remove it" .label $ns .name .stored.phase $ns $cm (get .from "imageFactoryCA") (get .from "imageFactoryCA")) -}}
{{- end -}}
{{- else -}}
{{- $_ := set . "source" (dict "certConfigMap" .caConfigMap "checksum" .checksum) -}}
{{- if .checksum -}}
{{- $checksummed = append $checksummed .name -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $checksummed -}}
{{- $list := lookup "cdi.kubevirt.io/v1beta1" "CDI" "" "" -}}
{{- $cdi := dict -}}
{{- include "worker-image-lib.activeCDI" (dict "items" ($list.items | default list) "out" $cdi) -}}
{{- $subject := printf "the goldens %s would be imported with a checksum, which CDI verifies from v1.65.0 on" (join ", " $checksummed) -}}
{{- if $cdi.problem -}}
{{- fail (printf "%s, but %s, and CDI works only when exactly one is, so its version is not known; fix the CDI resources first, or remove checksum from those entries" $subject $cdi.problem) -}}
{{- else if $cdi.cdi -}}
{{- $version := dig "status" "observedVersion" "" $cdi.cdi | toString -}}
{{- $release := regexFind "^v?[0-9]+[.][0-9]+[.][0-9]+" $version -}}
{{- if not $release -}}
{{- fail (printf "%s, but the CDI resource %s states no version it runs (status.observedVersion %s): CDI has not finished deploying; render again once it has, or remove checksum from those entries" $subject $cdi.cdi.metadata.name (include "worker-image-lib.describe" $version)) -}}
{{- end -}}
{{- if not (semverCompare ">=1.65.0" (trimPrefix "v" $release)) -}}
{{- fail (printf "%s, but the CDI resource %s runs CDI %s (status.observedVersion), older than v1.65.0: that CDI would not verify the checksum. Upgrade CDI to v1.65.0 or later, or remove checksum from those entries until then" $subject $cdi.cdi.metadata.name (include "worker-image-lib.truncate" $version)) -}}
{{- end -}}
{{- else -}}
{{- /* No CDI resource readable (helm template, a preview): rendered, said so on each golden. */ -}}
{{- $_ := set . "_kubernetesWorkerImageChecksumUnchecked" true -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
KubernetesWorkerImagePoolBehind's expression (docs/monitoring.md): a pool (its MachineDeployment's
annotations, exported by kube-state-metrics while the platform's metrics are on) whose Talos patch is
below the newest of the goldens in cozy-public of its schematic and minor that are Succeeded and not
retiring, on its class: the value is how many patches behind. Classes compare as written, and a side
that writes none (an HTTP pool or a golden on the cluster's default) takes any: three arms, joined with
or. A patch counts only as a whole number from 0 to maxPatch (worker-image-lib.wellFormed): a golden's
other value is left out, a pool's reads as -1, below every patch, so "+Inf" or "NaN" written on a
MachineDeployment raises the alert instead of hiding it; a pool's class that is no StorageClass name is
compared as none (with every golden), so it neither hides the alert nor reaches its labels. Takes a dict:
metrics (worker-image-lib.metrics), ns (cozy-public).
*/}}
{{- define "kubernetes-worker-image.poolBehindExpr" -}}
{{- $shape := include "worker-image-lib.wellFormed" . | fromYaml -}}
{{- $max := $shape.maxPatch | int -}}
{{- /* Only the series of a whole patch in range; NaN compares false to everything. */ -}}
{{- $whole := "(%[1]s >= 0 <= %[2]d == floor(%[1]s))" -}}
{{- $golden := printf "%s{exported_namespace=\"%s\"%%[1]s}" .metrics.goldenPatch .ns -}}
{{- $succeeded := printf "%s * on (exported_namespace, name) group_left () max by (exported_namespace, name) (%s{exported_namespace=\"%s\", phase=\"Succeeded\"}) unless on (exported_namespace, name) %s{exported_namespace=\"%s\", retiring=\"true\"}" (printf $whole $golden $max) .metrics.goldenStatus .ns .metrics.goldenInfo .ns -}}
{{- $anyGolden := printf $succeeded "" -}}
{{- $noClassGolden := printf $succeeded ", storage_class=\"\"" -}}
{{- /* A pool's patch, whole, else -1: (x > bool x) is 0 for every x, NaN and Inf included. */ -}}
{{- $pool := printf "%s{%%[1]s}" .metrics.poolPatch -}}
{{- $read := printf "(%s or (%s > bool %s) - 1)" (printf $whole $pool $max) $pool $pool -}}
{{- $withClass := printf $read (printf "storage_class=~\"%s\"" $shape.objectName) -}}
{{- $noClass := printf $read (printf "storage_class!~\"%s\"" $shape.objectName) -}}
{{- $arms := list
  (printf "(max by (schematic_id, talos_minor, storage_class) (%s) - on (schematic_id, talos_minor, storage_class) group_right () max by (exported_namespace, name, schematic_id, talos_minor, storage_class) %s) > 0" $anyGolden $withClass)
  (printf "(max by (schematic_id, talos_minor) (%s) - on (schematic_id, talos_minor) group_right () max by (exported_namespace, name, schematic_id, talos_minor) %s) > 0" $anyGolden $noClass)
  (printf "(max by (schematic_id, talos_minor) (%s) - on (schematic_id, talos_minor) group_right () max by (exported_namespace, name, schematic_id, talos_minor, storage_class) %s) > 0" $noClassGolden $withClass) -}}
{{- join "\nor\n" $arms -}}
{{- end -}}
