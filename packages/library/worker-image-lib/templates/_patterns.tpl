{{/*
Patterns a value must match before it reaches a DataVolume name, a URL or the Talos machine config:
the charts check the same ones, and their schemas repeat them (README).
*/}}
{{- define "worker-image-lib.patterns" -}}
schematicID: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'
version: '^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9a-z]+(\.[0-9a-z]+)*)?$'
imageFactoryURL: '^https?://[a-zA-Z0-9]([-a-zA-Z0-9.]*[a-zA-Z0-9])?(:{{ include "worker-image-lib.portPattern" . }})?(/([-a-zA-Z0-9._~/]|%[0-9a-fA-F]{2})*)?$'
quantity: '^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]{1,2}|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$'
storageClass: '^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'
checksum: '^(sha256:[0-9a-fA-F]{64}|sha512:[0-9a-fA-F]{128})$'
alertDuration: '^(0|([0-9]{1,6}y)?([0-9]{1,6}w)?([0-9]{1,6}d)?([0-9]{1,6}h)?([0-9]{1,6}m)?([0-9]{1,6}s)?)$'
labelValue: '^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$'
imageFactoryCA: '^[ \t\r\n]*(-----BEGIN CERTIFICATE-----\r?\nMI[A-Za-z0-9+/=\r\n]*\n-----END CERTIFICATE-----(\r?\n[ \t\r\n]*|$))+$'
{{- end -}}

{{/*
A port as Go's HTTP client and Talos read it: its number from 1 to 65535, written in at most 5 digits,
leading zeros allowed (":0443" is 443, and rendered before ports were bounded, so a pool written so
keeps rendering, as written). Unanchored, for the URL and registry host patterns; the schemas repeat it.
*/}}
{{- define "worker-image-lib.portPattern" -}}
(0{0,4}[1-9]|0{0,3}[1-9][0-9]|0{0,2}[1-9][0-9]{2}|0?[1-9][0-9]{3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])
{{- end -}}

{{/*
The longest each image field may be, checked with the patterns before a value reaches a name, a URL
or a message, so no value can make a render large.
*/}}
{{- define "worker-image-lib.maxLengths" -}}
schematicID: 64
version: 64
imageFactoryURL: 2048
imageFactoryCA: 65536
{{- end -}}

{{/*
"true" when value is a string a pool takes for an image field (schematicID, version or imageFactoryURL):
at most its longest and matching its pattern (the two tables above). The one rule for an image field
wherever one is taken: the pool on what it resolves and what it records at creation, the catalog on its
entries and on what it publishes for new pools, the platform on its defaults for them; so nothing one
side takes is refused by another. Takes a dict: field, value, and optionally patterns and maxLengths
(the tables, parsed, for a caller that holds them already).
*/}}
{{- define "worker-image-lib.isImageField" -}}
{{- $patterns := .patterns -}}
{{- if not $patterns -}}
{{- $patterns = include "worker-image-lib.patterns" . | fromYaml -}}
{{- end -}}
{{- $maxLengths := .maxLengths -}}
{{- if not $maxLengths -}}
{{- $maxLengths = include "worker-image-lib.maxLengths" . | fromYaml -}}
{{- end -}}
{{- if and (kindIs "string" .value) (le (len .value) (int (get $maxLengths .field))) (regexMatch (get $patterns .field) .value) -}}true{{- end -}}
{{- end -}}

{{/* "true" for a DNS-1123 subdomain name of at most 253 characters (StorageClass, instancetype). */}}
{{- define "worker-image-lib.isDNSSubdomain" -}}
{{- if and (le (len .) 253) (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" .) -}}true{{- end -}}
{{- end -}}
