{{/*
The golden DataVolume of a (schematicID, version): talos-worker-<schematicID>-<version>
in cozy-public. The catalog creates it under this name and pools clone it by
this name: the one copy of the rule. Takes a dict with schematicID and version.
*/}}
{{- define "worker-image-lib.goldenName" -}}
{{- printf "talos-worker-%s-%s" .schematicID .version -}}
{{- end -}}

{{/*
The golden of a flavor on one more StorageClass (an entry's
additionalStorageClasses): <goldenName>--<class>. Two hyphens, because no
version holds them, so a per-class name never equals another flavor's golden.
Takes a dict with schematicID, version and class.
*/}}
{{- define "worker-image-lib.perClassGoldenName" -}}
{{- printf "%s--%s" (include "worker-image-lib.goldenName" .) .class -}}
{{- end -}}

{{/*
<factory>/image/<schematicID>/<version>/openstack-amd64.raw.xz, with no double
slash when the factory URL ends in "/". Takes a dict with imageFactoryURL,
schematicID and version.
*/}}
{{- define "worker-image-lib.imageURL" -}}
{{- printf "%s/image/%s/%s/openstack-amd64.raw.xz" (trimSuffix "/" .imageFactoryURL) .schematicID .version -}}
{{- end -}}

{{/*
The keys a catalog images[] entry takes: retire is a boolean,
additionalStorageClasses a list of strings, every other one a string.
*/}}
{{- define "worker-image-lib.catalogEntryFields" -}}
{{- list "schematicID" "version" "imageFactoryURL" "storage" "storageClass" "additionalStorageClasses" "retire" | toJson -}}
{{- end -}}

{{/*
Refuses a catalog entry with a key it does not take, a retire that is not a
boolean or another value that is not a string, so a typo never silently
changes a golden and no structure hides in a value (a retire: "false" that
meant false must not read as true). The catalog checks its images[] with it,
and the platform the images it forwards to the catalog. Takes a dict: label (how the entry is named in the
message), entry.
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
