{{/*
talos-worker-<schematicID>-<version> in cozy-public: the one rule by which the catalog names a golden
and pools clone it. Takes a dict with schematicID and version.
*/}}
{{- define "worker-image-lib.goldenName" -}}
{{- printf "talos-worker-%s-%s" .schematicID .version -}}
{{- end -}}

{{/*
A flavor's golden on an additional class: <goldenName>--<class> ("--" is in no version, so it never
names another flavor's golden). Takes a dict with schematicID, version and class.
*/}}
{{- define "worker-image-lib.perClassGoldenName" -}}
{{- printf "%s--%s" (include "worker-image-lib.goldenName" .) .class -}}
{{- end -}}

{{/*
<factory>/image/<schematicID>/<version>/openstack-amd64.raw.xz, no double slash after a trailing "/".
Takes a dict with imageFactoryURL, schematicID and version.
*/}}
{{- define "worker-image-lib.imageURL" -}}
{{- printf "%s/image/%s/%s/openstack-amd64.raw.xz" (trimSuffix "/" .imageFactoryURL) .schematicID .version -}}
{{- end -}}

{{/*
The public Talos Image Factory, the last fallback of every factory URL: values.yaml leaves the charts'
URLs "" (Helm cannot tell an unset value from its default), so a value that spells this URL still wins
over a platform default, and this is the one place it is written.
*/}}
{{- define "worker-image-lib.builtinImageFactoryURL" -}}
https://factory.talos.dev
{{- end -}}

{{/*
The Talos flavor a new pool gets when neither the platform (_cluster.talos) nor the catalog (its
published tenantWorkers.talos) names one: the pool chart's built-in default. The one place it is
written: the pool chart resolves an unset talos.schematicID/version of a new pool to it, and the
catalog counts its golden as in use while nothing else is published (new pools clone it by default).
*/}}
{{- define "worker-image-lib.builtinFlavor" -}}
schematicID: ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515
version: v1.13.6
{{- end -}}

{{/*
The keys a catalog images[] entry takes: retire is a boolean,
additionalStorageClasses a list of strings, every other one a string.
*/}}
{{- define "worker-image-lib.catalogEntryFields" -}}
{{- list "schematicID" "version" "imageFactoryURL" "storage" "storageClass" "additionalStorageClasses" "retire" "imageFactoryCA" "checksum" | toJson -}}
{{- end -}}

{{/*
Refuses an unknown key, a non-boolean retire or another non-string value in a catalog entry (README),
so a typo never changes a golden. Takes a dict: label (how messages name the entry), entry.
*/}}
{{- define "worker-image-lib.assertCatalogEntryShape" -}}
{{- $fields := include "worker-image-lib.catalogEntryFields" . | fromJsonArray -}}
{{- if not (kindIs "map" .entry) -}}
{{- fail (printf "%s is %s, not an entry; write it as {schematicID: <schematic ID>, version: <Talos release>}" .label (toJson .entry)) -}}
{{- end -}}
{{- range $key := keys .entry | sortAlpha -}}
{{- if not (has $key $fields) -}}
{{- fail (printf "%s has no key %q; an entry takes %s. Fix the spelling or remove the key (an unknown key is refused rather than ignored, so a typo never changes a golden)" $.label $key (join ", " $fields)) -}}
{{- end -}}
{{- $value := get $.entry $key -}}
{{- if eq $key "retire" -}}
{{- if not (or (kindIs "invalid" $value) (kindIs "bool" $value)) -}}
{{- fail (printf "%s.retire is %s, not a boolean; write retire: true to retire the entry's golden, or leave it out to keep it" $.label (include "worker-image-lib.describe" $value)) -}}
{{- end -}}
{{- else if eq $key "additionalStorageClasses" -}}
{{- if not (or (kindIs "invalid" $value) (kindIs "slice" $value)) -}}
{{- fail (printf "%s.additionalStorageClasses is %s, not a list; write it as a list of StorageClass names such as [ceph-rbd], or leave it out for no per-class golden" $.label (include "worker-image-lib.describe" $value)) -}}
{{- end -}}
{{- include "worker-image-lib.assertAtMost" (dict "prefix" $.label "field" ".additionalStorageClasses" "value" $value "max" 8 "items" "classes" "fix" "list the classes pools of this flavor run on, at most 8 (each holds a copy of the image)") -}}
{{- range $i, $class := $value | default list -}}
{{- if not (kindIs "string" $class) -}}
{{- fail (printf "%s.additionalStorageClasses[%d] is %s, not a string; write each entry as a StorageClass name such as ceph-rbd" $.label $i (include "worker-image-lib.describe" $class)) -}}
{{- end -}}
{{- end -}}
{{- else if not (or (kindIs "invalid" $value) (kindIs "string" $value)) -}}
{{- fail (printf "%s.%s is %s, not a string; write it as a string (quote a number such as a size)" $.label $key (ternary "a map or list" (printf "%v" $value) (or (kindIs "map" $value) (kindIs "slice" $value)))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
