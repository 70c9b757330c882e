{{/*
Value checks the charts share. Each takes a prefix that starts its messages ("pool
kubernetes-<cluster>-<pool>: ", or the platform's key path): one rule, each chart's own subject.
*/}}

{{/*
Refuses keys a map may not hold, so a typo never changes what renders. Takes a dict: prefix, field
(its path in values), value (the map), keys (allowed).
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

{{/* A registry host[:port] as Talos keys mirrors and registry config by it: DNS labels of at most 63 characters, a port from 1 to 65535 (anchored at the start only). */}}
{{- define "worker-image-lib.registryHostPattern" -}}
^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*(:{{ include "worker-image-lib.portPattern" . }})?
{{- end -}}

{{/*
A Talos installer repository, <registry host[:port]>/<path>, pulled as <repository>/<schematicID>:<version>.
Takes a dict: prefix, field, value ("" or absent: not set).
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
{{- include "worker-image-lib.assertAtMost" (dict "prefix" .prefix "field" .field "value" $mirrors "max" 64 "items" "registry hosts" "fix" "mirror only the registries the workers pull from") -}}
{{- $hostPattern := printf "%s$" (include "worker-image-lib.registryHostPattern" .) -}}
{{- /* An endpoint is an http(s) URL like the Image Factory's: one pattern for both. */ -}}
{{- $url := (include "worker-image-lib.patterns" . | fromYaml).imageFactoryURL -}}
{{- $hostsValid := include "worker-image-lib.allMatch" (dict "pattern" $hostPattern "maxLength" 253 "items" (without (keys $mirrors) "*")) -}}
{{- range $host := keys $mirrors | sortAlpha -}}
{{- $mirror := get $mirrors $host -}}
{{- $at := printf "%s[%s]" $.field (include "worker-image-lib.truncate" $host) -}}
{{- if not (or $hostsValid (eq $host "*") (and (le (len $host) 253) (regexMatch $hostPattern $host))) -}}
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
{{- include "worker-image-lib.assertAtMost" (dict "prefix" $.prefix "field" (printf "%s.endpoints" $at) "value" $endpoints "max" 16 "items" "endpoints" "fix" "list the mirrors Talos should try, at most 16") -}}
{{- $endpointsValid := include "worker-image-lib.allMatch" (dict "pattern" $url "maxLength" 2048 "items" $endpoints) -}}
{{- range $i, $endpoint := $endpoints -}}
{{- if not (or $endpointsValid (and (kindIs "string" $endpoint) (le (len $endpoint) 2048) (regexMatch $url $endpoint))) -}}
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
Talos machine.registries.config: host[:port] -> {auth: {username, password, auth, identityToken},
tls: {insecureSkipVerify, ca, clientIdentity: {crt, key}}}. Takes a dict: prefix, field, value (a map).
*/}}
{{- define "worker-image-lib.assertRegistryConfig" -}}
{{- include "worker-image-lib.assertRegistryConfigHosts" . -}}
{{- range $host := keys $.value | sortAlpha -}}
{{- $at := printf "%s[%s]" $.field (include "worker-image-lib.truncate" $host) -}}
{{- $config := get $.value $host -}}
{{- if not (kindIs "map" $config) -}}
{{- fail (printf "%s%s is %s, not a map of auth and tls" $.prefix $at (include "worker-image-lib.describe" $config)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $.prefix "field" $at "value" $config "keys" (list "auth" "tls")) -}}
{{- range $part, $fields := dict "auth" (list "username" "password" "auth" "identityToken") "tls" (list "insecureSkipVerify" "ca" "clientIdentity") -}}
{{- /* null is absent, as Talos reads it; any other non-map ("", false, 0, []) Talos refuses, so no worker would boot. */ -}}
{{- $section := (hasKey $config $part) | ternary (get $config $part) nil -}}
{{- if kindIs "invalid" $section -}}
{{- $section = dict -}}
{{- else if not (kindIs "map" $section) -}}
{{- fail (printf "%s%s.%s is %s, not a map, and Talos refuses the whole machine config for it (no worker would boot); write it as a map of %s, or remove the key" $.prefix $at $part (include "worker-image-lib.describe" $section) (join ", " $fields)) -}}
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
{{- $identity := (hasKey $tls "clientIdentity") | ternary (get $tls "clientIdentity") nil -}}
{{- if kindIs "invalid" $identity -}}
{{- $identity = dict -}}
{{- else if not (kindIs "map" $identity) -}}
{{- fail (printf "%s%s.tls.clientIdentity is %s, not a map of crt and key, and Talos refuses the whole machine config for it (no worker would boot); write it as {crt: ..., key: ...}, or remove the key" $.prefix $at (include "worker-image-lib.describe" $identity)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $.prefix "field" (printf "%s.tls.clientIdentity" $at) "value" $identity "keys" (list "crt" "key")) -}}
{{- range $field := list "crt" "key" -}}
{{- include "worker-image-lib.assertString" (dict "prefix" $.prefix "field" (printf "%s.tls.clientIdentity.%s" $at $field) "value" (get $identity $field)) -}}
{{- include "worker-image-lib.assertTalosPEMBase64" (dict "prefix" $.prefix "field" (printf "%s.tls.clientIdentity.%s" $at $field) "value" (get $identity $field) "fix" "write it base64-encoded, as Talos reads it: the output of base64 -w0 <PEM file>") -}}
{{- end -}}
{{- include "worker-image-lib.assertTalosPEMBase64" (dict "prefix" $.prefix "field" (printf "%s.tls.ca" $at) "value" (get $tls "ca") "certificates" true "fix" "write it base64-encoded, as Talos reads it: the output of base64 -w0 <PEM file>; or publish the CA as PEM in the catalog's registries.config.<host>.tls.ca, which encodes it for every pool") -}}
{{- end -}}
{{- end -}}

{{/*
A certificate or key in Talos's machine.registries.config (tls.ca, tls.clientIdentity.crt and .key):
Talos reads each as base64 of the PEM (line breaks skipped), and a machine config holding anything else
does not load, so no worker of the pool would get one. Bounded before it is read: at most 87384
characters, the base64 of the catalog's 64 KiB bound on a CA's PEM. Takes a dict: prefix, field, value
(a string; empty or absent is none), fix, and certificates (true for a CA: every PEM block in it must be
a certificate by its DER, so no key reaches a tenant-readable machine config).
*/}}
{{- define "worker-image-lib.assertTalosPEMBase64" -}}
{{- $value := .value | default "" -}}
{{- if $value -}}
{{- if gt (len $value) 87384 -}}
{{- fail (printf "%s%s is %d characters, more than the 87384 of base64 of 64 KiB of PEM; give only the certificates (or key) this registry needs" .prefix .field (len $value)) -}}
{{- end -}}
{{- if contains "-----BEGIN" $value -}}
{{- fail (printf "%s%s is PEM text, %q, but Talos reads it as base64 of the PEM and refuses the whole machine config otherwise; %s" .prefix .field (include "worker-image-lib.truncate" (trim $value)) .fix) -}}
{{- end -}}
{{- $joined := $value | replace "\n" "" | replace "\r" "" -}}
{{- if not (and (regexMatch "^[A-Za-z0-9+/]*={0,2}$" $joined) (eq (mod (len $joined) 4) 0)) -}}
{{- fail (printf "%s%s is %q, not base64, which Talos reads it as; %s" .prefix .field (include "worker-image-lib.truncate" $value) .fix) -}}
{{- end -}}
{{- $pem := b64dec $joined -}}
{{- if not (contains "-----BEGIN " $pem) -}}
{{- fail (printf "%s%s is base64 of no PEM block (%s decoded), so it holds no certificate or key; %s" .prefix .field (include "worker-image-lib.truncate" $value) .fix) -}}
{{- end -}}
{{- if .certificates -}}
{{- with include "worker-image-lib.pemCertificatesProblem" $pem -}}
{{- fail (printf "%s%s (%s) is base64 of PEM that is not CA certificates: %s; Talos adds it to the roots a worker trusts when it pulls from that registry and the machine config is readable in the tenant's namespace, so %s" $.prefix $.field (include "worker-image-lib.truncate" $value | quote) . $.fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The keys of a Talos machine.registries.config map: at most 64, each a registry host[:port]. Takes a
dict: prefix, field, value (a map).
*/}}
{{- define "worker-image-lib.assertRegistryConfigHosts" -}}
{{- include "worker-image-lib.assertAtMost" (dict "prefix" $.prefix "field" $.field "value" $.value "max" 64 "items" "registry hosts" "fix" "configure only the registries the workers pull from") -}}
{{- $hostPattern := printf "%s$" (include "worker-image-lib.registryHostPattern" .) -}}
{{- $hostsValid := include "worker-image-lib.allMatch" (dict "pattern" $hostPattern "maxLength" 253 "items" (keys $.value)) -}}
{{- if not $hostsValid -}}
{{- range $host := keys $.value | sortAlpha -}}
{{- if not (and (le (len $host) 253) (regexMatch $hostPattern $host)) -}}
{{- fail (printf "%s%s has the key %q, which is not a registry host[:port]; key each entry by the registry host[:port] it is for" $.prefix $.field (include "worker-image-lib.truncate" $host)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
A registry config keyed as the platform chart's registries.config is: by an endpoint URL as written in
the mirrors, or by its host[:port]. Talos keys machine.registries.config by host[:port], so the scheme
and any path are dropped, and two keys naming one host (which would shadow each other) are refused.
Takes a dict: field (its path in values, for messages), value (the map; absent: none), out (filled
host -> config).
*/}}
{{- define "worker-image-lib.registryConfigByHost" -}}
{{- $out := .out -}}
{{- $field := .field -}}
{{- $from := dict -}}
{{- /* Bounded before each key is parsed; the same bound as the hosts it gives. */ -}}
{{- include "worker-image-lib.assertAtMost" (dict "prefix" "" "field" $field "value" .value "max" 64 "items" "registry hosts" "fix" "configure only the registries the workers pull from") -}}
{{- range $endpoint, $config := .value | default dict -}}
{{- $host := regexReplaceAll "^[a-zA-Z][a-zA-Z0-9+.-]*://" $endpoint "" | splitList "/" | first -}}
{{- if not $host -}}
{{- fail (printf "%s: key %q names no registry host; key each entry by the mirror endpoint URL or its host[:port], e.g. registry.mirror.internal:5000" $field $endpoint) -}}
{{- end -}}
{{- if hasKey $out $host -}}
{{- fail (printf "%s: keys %q and %q both name registry host %s, and Talos keeps one config per host; merge them into one entry" $field (get $from $host) $endpoint $host) -}}
{{- end -}}
{{- $_ := set $out $host $config -}}
{{- $_ := set $from $host $endpoint -}}
{{- end -}}
{{- end -}}

{{/*
A registry's CA as the catalog publishes it for tenant workers (its registries.config; talos.registryConfig
in the published object): registry host[:port] -> {tls: {ca: <PEM certificates>}}, and nothing else.
The object is one every tenant may read (worker-image-lib.tenantDefaults), so no credential and no
other registry setting goes into it. Takes a dict: prefix, field, value (a map, keyed by host).
*/}}
{{- define "worker-image-lib.assertRegistryCAs" -}}
{{- $where := include "worker-image-lib.tenantDefaults" . | fromYaml -}}
{{- include "worker-image-lib.assertRegistryConfigHosts" . -}}
{{- range $host := keys $.value | sortAlpha -}}
{{- $at := printf "%s[%s]" $.field (include "worker-image-lib.truncate" $host) -}}
{{- $config := get $.value $host -}}
{{- if not (kindIs "map" $config) -}}
{{- fail (printf "%s%s is %s, not a map; write it as {tls: {ca: <PEM of the CA that signs the registry's certificate>}}" $.prefix $at (include "worker-image-lib.describe" $config)) -}}
{{- end -}}
{{- $tls := get $config "tls" -}}
{{- $extra := list -}}
{{- range $key := without (keys $config | sortAlpha) "tls" -}}
{{- $extra = append $extra $key -}}
{{- end -}}
{{- if and (not $extra) (kindIs "map" $tls) -}}
{{- range $key := without (keys $tls | sortAlpha) "ca" -}}
{{- $extra = append $extra (printf "tls.%s" $key) -}}
{{- end -}}
{{- end -}}
{{- with $extra -}}
{{- fail (printf "%s%s.%s is set, but only a registry's CA (tls.ca) is published: the catalog writes its registries.config into ConfigMap %s/%s, which every tenant may read, so no credential (auth, tls.clientIdentity) and no other registry setting (tls.insecureSkipVerify) goes there. Remove it; give the workers pull credentials through the platform's _cluster.talos.registryConfig where the platform carries that channel (docs/cozystack.md), or serve the mirror to the tenants' networks without credentials; to trust a mirror served by your own CA, set tls.ca to that CA's PEM" $.prefix $at (include "worker-image-lib.truncate" (first .)) $where.namespace $where.name) -}}
{{- end -}}
{{- if not (kindIs "map" $tls) -}}
{{- fail (printf "%s%s.tls is %s, not a map; write it as {ca: <PEM of the CA that signs the registry's certificate>}" $.prefix $at (include "worker-image-lib.describe" $tls)) -}}
{{- end -}}
{{- if not (hasKey $tls "ca") -}}
{{- fail (printf "%s%s.tls has no ca; set tls.ca to the PEM of the CA that signs the registry's certificate (-----BEGIN CERTIFICATE----- blocks), or remove the host" $.prefix $at) -}}
{{- end -}}
{{- $ca := index $tls "ca" -}}
{{- if not (and (kindIs "string" $ca) $ca) -}}
{{- fail (printf "%s%s.tls.ca is %s; set it to the PEM of the CA that signs the registry's certificate (-----BEGIN CERTIFICATE----- blocks), or remove the host" $.prefix $at (include "worker-image-lib.describe" $ca)) -}}
{{- end -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" $.prefix "field" (printf "%s.tls.ca" $at) "value" $ca "use" "Talos adds it to the roots a worker trusts when it pulls from that registry, so set it to the PEM of the CA that signs the registry mirror's certificate") -}}
{{- end -}}
{{- end -}}

{{/*
An osImage: a map of at most builtin or factory, each a map of its string fields; any other kind is
refused, since the key present picks the path. Takes a dict: prefix, field, value.
*/}}
{{- define "worker-image-lib.assertOSImageShape" -}}
{{- if not (kindIs "map" $.value) -}}
{{- fail (printf "%s%s is %s, not a map; write it as a map with builtin or factory" $.prefix $.field (include "worker-image-lib.describe" $.value)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" $.prefix "field" $.field "value" $.value "keys" (list "builtin" "factory")) -}}
{{- range $path, $fields := dict "builtin" (list "schematicID" "version") "factory" (list "schematicID" "version" "imageFactoryURL") -}}
{{- if hasKey $.value $path -}}
{{- /* No default here: false, "", [] or 0 must not pass as {} and pick the path. */ -}}
{{- $chosen := get $.value $path -}}
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

{{/*
"true" when every item is a string of at most maxLength matching pattern, as one regexp over the items
joined by newlines (sprig compiles per call; README). Takes a dict: pattern, maxLength, items.
*/}}
{{- define "worker-image-lib.allMatch" -}}
{{- $plain := true -}}
{{- range .items -}}
{{- if or (not (kindIs "string" .)) (gt (len .) (int $.maxLength)) (contains "\n" .) -}}
{{- $plain = false -}}
{{- end -}}
{{- end -}}
{{- $inner := .pattern | trimPrefix "^" | trimSuffix "$" -}}
{{- if and $plain (or (not .items) (regexMatch (printf "^(?:%s)(?:\n(?:%s))*$" $inner $inner) (join "\n" .items))) -}}true{{- end -}}
{{- end -}}

{{/*
Refuses a list or map longer than max before anything iterates it (anything else passes). Takes a
dict: prefix, field, value, max, items (what the elements are, plural), fix.
*/}}
{{- define "worker-image-lib.assertAtMost" -}}
{{- if and (or (kindIs "slice" .value) (kindIs "map" .value)) (gt (len .value) (int .max)) -}}
{{- fail (printf "%s%s has %d %s, more than the %d the chart takes (a bound that keeps every render cheap for the process that renders all tenants); %s" .prefix .field (len .value) .items (int .max) .fix) -}}
{{- end -}}
{{- end -}}

{{/*
A count from min to max, as a number, or where strings is true up to ten digits. Takes a dict:
value, min, max, strings, out (filled with text, the decimal digits to write, or error).
*/}}
{{- define "worker-image-lib.parseCount" -}}
{{- $v := .value -}}
{{- if and .strings (kindIs "string" $v) (regexMatch "^[0-9]{1,10}$" $v) -}}
{{- /* atoi, not int: int reads a leading 0 as octal. */ -}}
{{- $v = atoi $v -}}
{{- end -}}
{{- if not (or (kindIs "int" $v) (kindIs "int64" $v) (kindIs "float64" $v)) -}}
{{- $_ := set .out "error" "not a number" -}}
{{- else -}}
{{- $f := float64 $v -}}
{{- if ne (floor $f) $f -}}
{{- $_ := set .out "error" "not a whole number" -}}
{{- else if or (lt $f (float64 .min)) (gt $f (float64 .max)) -}}
{{- $_ := set .out "error" (printf "outside %d to %d" (int64 .min) (int64 .max)) -}}
{{- else -}}
{{- $_ := set .out "text" (printf "%d" (int64 $f)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
A Go duration as Cluster API reads it, within bounds (README). Takes a dict: value, out (filled with
error when refused).
*/}}
{{- define "worker-image-lib.parseDuration" -}}
{{- $s := .value -}}
{{- if not (kindIs "string" $s) -}}
{{- $_ := set .out "error" "not a string" -}}
{{- else if gt (len $s) 32 -}}
{{- $_ := set .out "error" (printf "%d characters long, more than the 32 a duration may have here" (len $s)) -}}
{{- else if not (regexMatch "^(0|([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+)$" $s) -}}
{{- $_ := set .out "error" "not a Go duration" -}}
{{- else -}}
{{- $units := dict "ns" 1 "us" 1000 "ms" 1000000 "s" 1000000000 "m" 60000000000 "h" 3600000000000 -}}
{{- $total := 0.0 -}}
{{- range $part := regexFindAll "[0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h)" $s -1 -}}
{{- $unit := regexFind "(ns|us|ms|s|m|h)$" $part -}}
{{- $total = addf $total (mulf (trimSuffix $unit $part | float64) (get $units $unit)) -}}
{{- end -}}
{{- if gt $total 9223369200000000000.0 -}}
{{- $_ := set .out "error" "longer than 2562047h, beyond the durations Go reads" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
A CA CDI's importer trusts for an Image Factory mirror (or, with use, what else trusts it): one or more
PEM CERTIFICATE blocks of base64 DER and nothing else (no key, no other text), at most 64 KiB. Takes a
dict: prefix, field, value ("": none), use (optional: who adds it to which roots, and which certificate
it must sign, for the message).
*/}}
{{- define "worker-image-lib.assertCA" -}}
{{- include "worker-image-lib.assertString" . -}}
{{- $s := .value | default "" -}}
{{- if $s -}}
{{- $max := int (include "worker-image-lib.maxLengths" . | fromYaml).imageFactoryCA -}}
{{- $problem := "" -}}
{{- if gt (len $s) $max -}}
{{- $problem = printf "%d bytes long, more than the %d (64 KiB) the chart takes" (len $s) $max -}}
{{- else if not (regexMatch (include "worker-image-lib.patterns" . | fromYaml).imageFactoryCA $s) -}}
{{- $problem = "not PEM certificates: it must hold only -----BEGIN CERTIFICATE----- ... -----END CERTIFICATE----- blocks of base64 (no private key, no other text between them)" -}}
{{- else -}}
{{- with include "worker-image-lib.pemCertificatesProblem" $s -}}
{{- $problem = printf "not PEM certificates: %s" . -}}
{{- end -}}
{{- end -}}
{{- if $problem -}}
{{- fail (printf "%s%s (%s) is %s; %s (openssl x509 -in ca.crt prints one), or remove it" .prefix .field (include "worker-image-lib.truncate" $s | quote) $problem (.use | default "CDI's importer adds it to the roots it trusts when it imports the image over https, so set it to the PEM of the CA that signs the Image Factory mirror's certificate")) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
"" when every PEM block of a text is a CERTIFICATE block whose DER is a whole X.509 certificate as its
first bytes tell, else why not, naming the block. Text outside the blocks is the caller's rule. The CLI
runs the full X.509 check; a template cannot, so it reads what no key passes: the outer SEQUENCE's
length (DER's shortest form) is the block's decoded length (a certificate cut at a line boundary is
shorter), and it opens with a tbsCertificate SEQUENCE whose first element is the explicit version tag
[0] (0xA0), where a PKCS#1, PKCS#8 or SEC1 key has an INTEGER and a public key an AlgorithmIdentifier
SEQUENCE. Callers bound the text (64 KiB); the blocks are bounded (128) before any is read, and a
render pays a few plain operations per block: the patterns that name a fault run over all blocks at
once, or over one block only when it is refused (sprig compiles a regexp per call). Takes the text.
*/}}
{{- define "worker-image-lib.pemCertificatesProblem" -}}
{{- $labels := regexFindAll "-----BEGIN [^\r\n]*" . -1 -}}
{{- $problem := "" -}}
{{- if gt (len $labels) 128 -}}
{{- $problem = printf "it holds %d PEM blocks, more than the 128 certificates the chart reads in one value (a bound that keeps every render cheap for the process that renders all tenants); give only the CAs this value needs" (len $labels) -}}
{{- else if not $labels -}}
{{- $problem = "it holds no -----BEGIN CERTIFICATE----- block" -}}
{{- else if not (regexMatch "^(?:-----BEGIN CERTIFICATE-----\r?(?:\n|$))+$" (join "\n" $labels)) -}}
{{- range $i, $label := $labels -}}
{{- if and (not $problem) (ne (trimSuffix "\r" $label) "-----BEGIN CERTIFICATE-----") -}}
{{- $problem = printf "block %d of %d is %q, not a certificate (never publish a key: every tenant may read where a CA goes)" (add1 $i) (len $labels) (include "worker-image-lib.truncate" (trimSuffix "\r" $label)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $blocks := list -}}
{{- if not $problem -}}
{{- $blocks = regexFindAll "-----BEGIN CERTIFICATE-----[^-]*-----END CERTIFICATE-----" . -1 -}}
{{- if ne (len $blocks) (len $labels) -}}
{{- $problem = printf "of its %d -----BEGIN CERTIFICATE----- lines, %d open a block of base64 closed by -----END CERTIFICATE-----" (len $labels) (len $blocks) -}}
{{- end -}}
{{- end -}}
{{- if not $problem -}}
{{- /* Every block's base64 on a line of its own (a comma, outside base64, parts them first). */ -}}
{{- $joined := join "," $blocks | replace "-----BEGIN CERTIFICATE-----" "" | replace "-----END CERTIFICATE-----" "" | replace "\n" "" | replace "\r" "" | replace " " "" | replace "\t" "" | replace "," "\n" -}}
{{- $bodies := splitList "\n" $joined -}}
{{- /* Cheap checks over all blocks (one state each); a block they do not clear is read by the exact patterns. */ -}}
{{- $plain := and (eq (len $bodies) (len $blocks)) (regexMatch "^[A-Za-z0-9+/=\n]*$" $joined) (not (regexMatch "=[^=\n]|===" $joined)) -}}
{{- $line := "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)" -}}
{{- range $i, $body := $bodies -}}
{{- if not $problem -}}
{{- $at := "" -}}
{{- $n := len $body -}}
{{- if not (and $plain (eq (mod $n 4) 0) (ge $n 20)) -}}
{{- $at = printf "certificate block %d of %d" (add1 $i) (len $bodies) -}}
{{- if not (regexMatch (printf "^%s$" $line) $body) -}}
{{- $problem = printf "%s's base64 is cut or padded wrongly" $at -}}
{{- else if not (regexMatch "^[A-Za-z0-9+/]{16}" $body) -}}
{{- $problem = printf "%s holds %d bytes of DER, too few for a certificate" $at (len (b64dec $body)) -}}
{{- end -}}
{{- end -}}
{{- if not $problem -}}
{{- /* The first 12 bytes (16 base64 characters) as hex: both headers (at most 5 bytes each) and the version tag. */ -}}
{{- $h := printf "%x" (b64dec (substr 0 16 $body)) -}}
{{- $size := len (b64dec $body) -}}
{{- /* The outer header DER writes (shortest form) for the block's decoded length. */ -}}
{{- $want := "" -}}
{{- if lt $size 130 -}}
{{- $want = printf "30%02x" (sub $size 2) -}}
{{- else if lt $size 259 -}}
{{- $want = printf "3081%02x" (sub $size 3) -}}
{{- else if lt $size 65540 -}}
{{- $want = printf "3082%04x" (sub $size 4) -}}
{{- else -}}
{{- $want = printf "3083%06x" (sub $size 5) -}}
{{- end -}}
{{- $rest := trimPrefix $want $h -}}
{{- $form := substr 2 4 $rest -}}
{{- $tag := int (get (dict "81" 6 "82" 8 "83" 10) $form | default 4) -}}
{{- if not (and (hasPrefix $want $h) (hasPrefix "30" $rest) (or (lt $form "80") (ne $tag 4)) (eq (substr $tag (int (add $tag 2)) $rest) "a0")) -}}
{{- $at = printf "certificate block %d of %d" (add1 $i) (len $bodies) -}}
{{- end -}}
{{- if not $at -}}
{{- else if ne (substr 0 2 $h) "30" -}}
{{- $problem = printf "%s's DER does not open with a SEQUENCE, as a certificate does: it is not an X.509 certificate" $at -}}
{{- else if not (hasPrefix $want $h) -}}
{{- $problem = printf "%s's DER declares a certificate of another length than the %d bytes the block holds (its outer SEQUENCE starts %s, where %s would hold them): it is cut (or has bytes after it), not a whole X.509 certificate" $at $size (regexFind "^30(?:[0-7].|81..|82.{4}|83.{6})" $h | default (substr 0 4 $h)) $want -}}
{{- else if or (ne (substr 0 2 $rest) "30") (and (ge $form "80") (eq $tag 4)) (ne (substr $tag (int (add $tag 2)) $rest) "a0") -}}
{{- $problem = printf "%s's DER does not open as an X.509 certificate does (a tbsCertificate SEQUENCE starting with its explicit version [0]): it is not a certificate, and a private key (PKCS#1, PKCS#8 or SEC1) or a public key labelled CERTIFICATE reads like this; never publish a key" $at -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $problem -}}
{{- end -}}

{{/*
A checksum CDI verifies an HTTP import against (DataVolume spec.source.http.checksum, CDI v1.65.0 on):
<sha256|sha512>:<hex digest of that length>. CDI also takes md5 and sha1, which are refused: collisions
of both can be made, and a golden is the image every tenant's workers boot. Takes a dict: prefix,
field, value ("": none).
*/}}
{{- define "worker-image-lib.assertChecksum" -}}
{{- include "worker-image-lib.assertString" . -}}
{{- $s := .value | default "" -}}
{{- if and $s (le (len $s) 135) (regexMatch "^(?i)[ \t]*(md5|sha1)[ \t]*:" $s) -}}
{{- fail (printf "%s%s %s uses %s, whose collisions can be made: it cannot prove that the image is the one published, and a golden is the image every tenant's workers boot; set it to the image's sha256 (sha256:<the 64 hex digits sha256sum prints for openstack-amd64.raw.xz>) or sha512 digest, or remove it" .prefix .field (include "worker-image-lib.describe" $s) (regexFind "(?i)md5|sha1" $s | lower)) -}}
{{- end -}}
{{- if and $s (not (and (le (len $s) 135) (regexMatch (include "worker-image-lib.patterns" . | fromYaml).checksum $s))) -}}
{{- fail (printf "%s%s %s is not a checksum the catalog takes: it must be <algorithm>:<hex digest>, with sha256 (64 hex digits) or sha512 (128), as CDI verifies it; set it to the image's digest, such as sha256:<the 64 hex digits sha256sum prints for openstack-amd64.raw.xz>, or remove it" .prefix .field (include "worker-image-lib.describe" $s)) -}}
{{- end -}}
{{- end -}}

{{/*
The CDI resource CDI itself reads (its GetActiveCDI): the only one, or of several the only one not in
phase Error. Takes a dict: items (the listed CDI resources), out (filled with cdi, or problem: which
resources there are, for the caller to say what that stops).
*/}}
{{- define "worker-image-lib.activeCDI" -}}
{{- $active := list -}}
{{- range .items -}}
{{- if or (eq (len $.items) 1) (ne (dig "status" "phase" "" . | toString) "Error") -}}
{{- $active = append $active . -}}
{{- end -}}
{{- end -}}
{{- if eq (len $active) 1 -}}
{{- $_ := set .out "cdi" (first $active) -}}
{{- else if .items -}}
{{- $names := list -}}
{{- range $active -}}
{{- $names = append $names .metadata.name -}}
{{- end -}}
{{- $_ := set .out "problem" (printf "the cluster has %d CDI resources and %d of them not in phase Error (%s)" (len .items) (len $active) (join ", " (sortAlpha $names) | default "none")) -}}
{{- end -}}
{{- end -}}
