{{/*
Value checks the charts share. Each takes a dict whose prefix starts its
messages (for a pool "pool kubernetes-<cluster>-<pool>: ", for the platform the
key path), so every chart refuses with its own subject and the same rule.
*/}}

{{/*
Refuses keys a map may not hold, so a typo never silently changes what renders.
Takes a dict: prefix (how messages start, e.g. "pool kubernetes-acme-workers: "),
field (its path in values), value (the map), keys (allowed).
*/}}
{{- define "worker-image-lib.assertKnownKeys" -}}
{{- range $key := keys .value | sortAlpha -}}
{{- if not (has $key $.keys) -}}
{{- fail (printf "%s%s has no key %q; the keys it takes are %s. Fix the spelling or remove the key (an unknown key is refused rather than ignored, so a typo never changes what renders)" $.prefix $.field $key (join ", " $.keys)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Refuses a value that is set but not a string. Takes a dict: prefix, field, value. */}}
{{- define "worker-image-lib.assertString" -}}
{{- if not (or (kindIs "invalid" .value) (kindIs "string" .value)) -}}
{{- fail (printf "%s%s is %s, not a string; write it as a string" .prefix .field (include "worker-image-lib.describe" .value)) -}}
{{- end -}}
{{- end -}}

{{/* A registry host[:port] as Talos keys mirrors and registry config by it: DNS labels of at most 63 characters (anchored at the start only). */}}
{{- define "worker-image-lib.registryHostPattern" -}}
^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*(:[0-9]{1,5})?
{{- end -}}

{{/*
Talos installer repository, <registry host[:port]>/<path>: it becomes
<repository>/<schematicID>:<version> in the machine config, where Talos pulls
it. Takes a dict: prefix, field, value ("" or absent: not set).
*/}}
{{- define "worker-image-lib.assertInstallerRepository" -}}
{{- include "worker-image-lib.assertString" . -}}
{{- $s := .value | default "" -}}
{{- if and $s (not (and (le (len $s) 255) (regexMatch (printf "%s(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)+$" (include "worker-image-lib.registryHostPattern" .)) $s))) -}}
{{- fail (printf "%s%s %q is not an image repository (registry host[:port]/path, lowercase path); it becomes <repository>/<schematicID>:<version> in the Talos machine config, so set it to a repository such as factory.talos.dev/installer" .prefix .field (include "worker-image-lib.truncate" $s)) -}}
{{- end -}}
{{- end -}}

{{/*
Talos machine.registries.mirrors: registry host -> {endpoints: [http(s) URL],
overridePath?, skipFallback?}. Takes a dict: prefix, field, value (absent: none).
*/}}
{{- define "worker-image-lib.assertRegistryMirrors" -}}
{{- $mirrors := .value | default dict -}}
{{- if not (kindIs "map" $mirrors) -}}
{{- fail (printf "%s%s is %s, not a map of registry host to {endpoints: [URL, ...]}" .prefix .field (include "worker-image-lib.describe" $mirrors)) -}}
{{- end -}}
{{- range $host := keys $mirrors | sortAlpha -}}
{{- $mirror := get $mirrors $host -}}
{{- $at := printf "%s[%s]" $.field $host -}}
{{- if not (or (eq $host "*") (and (le (len $host) 253) (regexMatch (printf "%s$" (include "worker-image-lib.registryHostPattern" .)) $host))) -}}
{{- fail (printf "%s%s has the key %q, which is not a registry host[:port] (or \"*\"); key each mirror by the registry it stands in for, such as docker.io" $.prefix $.field (include "worker-image-lib.truncate" $host)) -}}
{{- end -}}
{{- if not (kindIs "map" $mirror) -}}
{{- fail (printf "%s%s is %s, not a map; write it as {endpoints: [https://mirror.example/v2/docker.io]}" $.prefix $at (include "worker-image-lib.describe" $mirror)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $.prefix "field" $at "value" $mirror "keys" (list "endpoints" "overridePath" "skipFallback")) -}}
{{- $endpoints := $mirror.endpoints -}}
{{- if not (and (kindIs "slice" $endpoints) $endpoints) -}}
{{- fail (printf "%s%s.endpoints is %s; list at least one mirror URL, such as [https://mirror.example/v2/docker.io]" $.prefix $at (include "worker-image-lib.describe" $endpoints)) -}}
{{- end -}}
{{- /* An endpoint is an http(s) URL like the Image Factory's: one pattern for both. */ -}}
{{- $url := (include "worker-image-lib.patterns" . | fromYaml).imageFactoryURL -}}
{{- range $i, $endpoint := $endpoints -}}
{{- if not (and (kindIs "string" $endpoint) (le (len $endpoint) 2048) (regexMatch $url $endpoint)) -}}
{{- fail (printf "%s%s.endpoints[%d] %s is not a plain http(s) URL (no whitespace, quotes or YAML metacharacters); set it to the mirror's URL, such as https://mirror.example/v2/docker.io" $.prefix $at $i (include "worker-image-lib.describe" $endpoint)) -}}
{{- end -}}
{{- end -}}
{{- range $flag := list "overridePath" "skipFallback" -}}
{{- if and (hasKey $mirror $flag) (not (kindIs "bool" (get $mirror $flag))) -}}
{{- fail (printf "%s%s.%s is %s; set it to true or false" $.prefix $at $flag (include "worker-image-lib.describe" (get $mirror $flag))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A value for a message: a string quoted (long ones cut), anything else by its kind. */}}
{{- define "worker-image-lib.describe" -}}
{{- if kindIs "string" . -}}
{{- include "worker-image-lib.truncate" . | quote -}}
{{- else if kindIs "invalid" . -}}
null
{{- else if kindIs "map" . -}}
a map
{{- else if kindIs "slice" . -}}
a list
{{- else if kindIs "bool" . -}}
{{- printf "%v (a boolean)" . -}}
{{- else -}}
{{- printf "%v (a number)" . -}}
{{- end -}}
{{- end -}}

{{/* A string cut to 80 characters for a message, so a hostile value cannot flood it. */}}
{{- define "worker-image-lib.truncate" -}}
{{- if gt (len .) 80 -}}
{{- printf "%s...(%d characters)" (trunc 80 .) (len .) -}}
{{- else -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{/*
Talos machine.registries.config: registry host[:port] -> {auth: {username,
password, auth, identityToken}, tls: {insecureSkipVerify, ca, clientIdentity:
{crt, key}}}, copied into every worker's machine config. Takes a dict: prefix,
field, value (a map; the caller refuses anything else).
*/}}
{{- define "worker-image-lib.assertRegistryConfig" -}}
{{- range $host := keys $.value | sortAlpha -}}
{{- $at := printf "%s[%s]" $.field (include "worker-image-lib.truncate" $host) -}}
{{- $config := get $.value $host -}}
{{- if not (and (le (len $host) 253) (regexMatch (printf "%s$" (include "worker-image-lib.registryHostPattern" .)) $host)) -}}
{{- fail (printf "%s%s has the key %q, which is not a registry host[:port]; key each entry by the registry host[:port] it is for" $.prefix $.field (include "worker-image-lib.truncate" $host)) -}}
{{- end -}}
{{- if not (kindIs "map" $config) -}}
{{- fail (printf "%s%s is %s, not a map of auth and tls" $.prefix $at (include "worker-image-lib.describe" $config)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $.prefix "field" $at "value" $config "keys" (list "auth" "tls")) -}}
{{- range $part, $fields := dict "auth" (list "username" "password" "auth" "identityToken") "tls" (list "insecureSkipVerify" "ca" "clientIdentity") -}}
{{- $section := get $config $part | default dict -}}
{{- if not (kindIs "map" $section) -}}
{{- fail (printf "%s%s.%s is %s, not a map" $.prefix $at $part (include "worker-image-lib.describe" $section)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $.prefix "field" (printf "%s.%s" $at $part) "value" $section "keys" $fields) -}}
{{- range $field := without $fields "insecureSkipVerify" "clientIdentity" -}}
{{- include "worker-image-lib.assertString" (dict "prefix" $.prefix "field" (printf "%s.%s.%s" $at $part $field) "value" (get $section $field)) -}}
{{- end -}}
{{- end -}}
{{- $tls := get $config "tls" | default dict -}}
{{- if and (hasKey $tls "insecureSkipVerify") (not (kindIs "bool" $tls.insecureSkipVerify)) -}}
{{- fail (printf "%s%s.tls.insecureSkipVerify is %s; set it to true or false" $.prefix $at (include "worker-image-lib.describe" $tls.insecureSkipVerify)) -}}
{{- end -}}
{{- $identity := get $tls "clientIdentity" | default dict -}}
{{- if not (kindIs "map" $identity) -}}
{{- fail (printf "%s%s.tls.clientIdentity is %s, not a map of crt and key" $.prefix $at (include "worker-image-lib.describe" $identity)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $.prefix "field" (printf "%s.tls.clientIdentity" $at) "value" $identity "keys" (list "crt" "key")) -}}
{{- range $field := list "crt" "key" -}}
{{- include "worker-image-lib.assertString" (dict "prefix" $.prefix "field" (printf "%s.tls.clientIdentity.%s" $at $field) "value" (get $identity $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
An osImage (a pool's own, or the platform default for new pools): at most
builtin {schematicID, version} or factory {schematicID, version,
imageFactoryURL}, each a map of strings. Takes a dict: prefix, field, value.
*/}}
{{- define "worker-image-lib.assertOSImageShape" -}}
{{- if not (kindIs "map" $.value) -}}
{{- fail (printf "%s%s is %s, not a map; write it as a map with builtin or factory" $.prefix $.field (include "worker-image-lib.describe" $.value)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $.prefix "field" $.field "value" $.value "keys" (list "builtin" "factory")) -}}
{{- range $path, $fields := dict "builtin" (list "schematicID" "version") "factory" (list "schematicID" "version" "imageFactoryURL") -}}
{{- if hasKey $.value $path -}}
{{- $chosen := get $.value $path | default dict -}}
{{- if not (kindIs "map" $chosen) -}}
{{- fail (printf "%s%s.%s is %s, not a map; write it as %s: {} to take talos.*, or set its fields (%s)" $.prefix $.field $path (include "worker-image-lib.describe" $chosen) $path (join ", " $fields)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $.prefix "field" (printf "%s.%s" $.field $path) "value" $chosen "keys" $fields) -}}
{{- range $field := $fields -}}
{{- include "worker-image-lib.assertString" (dict "prefix" $.prefix "field" (printf "%s.%s.%s" $.field $path $field) "value" (get $chosen $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey $.value "builtin") (hasKey $.value "factory") -}}
{{- fail (printf "%s%s sets both builtin and factory; set osImage.builtin to clone the golden from cozy-public, or osImage.factory to import over HTTP, not both" $.prefix $.field) -}}
{{- end -}}
{{- end -}}
