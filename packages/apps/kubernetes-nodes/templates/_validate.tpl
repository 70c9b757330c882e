{{/*
Every value a template interpolates, checked once per render before anything
reads it. Tenants write these values and a platform may render with schema
validation off (helm --skip-schema-validation, Flux disableSchemaValidation), so
the schema is a first filter and this is the guard: each refusal names the pool,
the value seen and the fix, whichever path (HTTP or clone) the pool takes.
Every template file includes it first.
*/}}
{{- define "kubernetes-nodes.validate" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- if not (hasKey ._kubernetesNodes "validated") -}}
{{- $pool := include "kubernetes-nodes.poolName" . -}}
{{- $v := .Values -}}
{{- /* talos: a map of known keys; null would drop every default. */ -}}
{{- if not (kindIs "map" $v.talos) -}}
{{- fail (printf "pool %s: talos is %s, not a map; remove the talos key to keep the chart's defaults, or write it as a map such as {version: v1.13.6}" $pool (include "kubernetes-nodes.describe" $v.talos)) -}}
{{- end -}}
{{- include "kubernetes-nodes.assertKnownKeys" (dict "pool" $pool "field" "talos" "value" $v.talos "keys" (list "version" "schematicID" "imageFactoryURL" "installerRepository" "registryMirrors")) -}}
{{- range $field := list "version" "schematicID" "imageFactoryURL" "installerRepository" -}}
{{- include "kubernetes-nodes.assertString" (dict "pool" $pool "field" (printf "talos.%s" $field) "value" (get $v.talos $field)) -}}
{{- end -}}
{{- if not (kindIs "map" ($v.resources | default dict)) -}}
{{- fail (printf "pool %s: resources is %s, not a map; set resources to {cpu: 2, memory: 4Gi}, or {} to size the VM by instanceType" $pool (include "kubernetes-nodes.describe" $v.resources)) -}}
{{- end -}}
{{- include "kubernetes-nodes.assertKnownKeys" (dict "pool" $pool "field" "resources" "value" ($v.resources | default dict) "keys" (list "cpu" "memory")) -}}
{{- /* Names written into objects: refused here before the API server would reject them. */ -}}
{{- $names := list
  (list "storageClass" $v.storageClass "a StorageClass name such as replicated, or \"\" for the cluster default")
  (list "instanceType" $v.instanceType "a VirtualMachineClusterInstancetype name such as u1.medium") -}}
{{- range $names -}}
{{- $field := index . 0 -}}
{{- $value := index . 1 -}}
{{- include "kubernetes-nodes.assertString" (dict "pool" $pool "field" $field "value" $value) -}}
{{- $s := $value | default "" | toString -}}
{{- if and $s (not (include "kubernetes-nodes.isDNSSubdomain" $s)) -}}
{{- fail (printf "pool %s: %s %q is not a DNS subdomain name (lowercase letters, digits, '-' and '.', at most 253 characters, starting and ending with a letter or digit); the API server would reject it, so set %s to %s" $pool $field (include "kubernetes-nodes.truncate" $s) $field (index . 2)) -}}
{{- end -}}
{{- end -}}
{{- /* Quantities and counts written unquoted into the hashed machine template. */ -}}
{{- $quantity := "^[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$" -}}
{{- $checks := list (list "diskSize" $v.diskSize $quantity "a quantity such as 20Gi") -}}
{{- if include "kubernetes-nodes.explicitResources" . -}}
{{- $checks = append $checks (list "resources.memory" $v.resources.memory $quantity "a quantity such as 4Gi") -}}
{{- $checks = append $checks (list "resources.cpu" $v.resources.cpu "^[1-9][0-9]*$" "a whole number of cores such as 2") -}}
{{- end -}}
{{- range $checks -}}
{{- $value := index . 1 -}}
{{- if or (kindIs "map" $value) (kindIs "slice" $value) (not (regexMatch (index . 2) (toString $value))) -}}
{{- fail (printf "pool %s: %s %s is not a plain value; it is written into the worker VM template as it is, so set %s to %s" $pool (index . 0) (include "kubernetes-nodes.describe" $value) (index . 0) (index . 3)) -}}
{{- end -}}
{{- end -}}
{{- /* Autoscaler bounds: whole non-negative numbers, min <= max. */ -}}
{{- range $field := list "minReplicas" "maxReplicas" -}}
{{- $value := get $v $field -}}
{{- if not (and (or (kindIs "int" $value) (kindIs "int64" $value) (kindIs "float64" $value)) (regexMatch "^[0-9]+$" (toString $value))) -}}
{{- fail (printf "pool %s: %s %s is not a whole number of workers; set %s to a non-negative integer such as 3" $pool $field (include "kubernetes-nodes.describe" $value) $field) -}}
{{- end -}}
{{- end -}}
{{- if gt (int64 $v.minReplicas) (int64 $v.maxReplicas) -}}
{{- fail (printf "pool %s: minReplicas %v is greater than maxReplicas %v; set minReplicas <= maxReplicas" $pool $v.minReplicas $v.maxReplicas) -}}
{{- end -}}
{{- /* Roles become label keys node-role.kubernetes.io/<role>: label-name rules. */ -}}
{{- $roles := $v.roles | default list -}}
{{- if not (kindIs "slice" $roles) -}}
{{- fail (printf "pool %s: roles is %s, not a list; write roles as a list of names such as [ingress-nginx], or [] for none" $pool (include "kubernetes-nodes.describe" $roles)) -}}
{{- end -}}
{{- $seenRoles := dict -}}
{{- range $i, $role := $roles -}}
{{- if not (and (kindIs "string" $role) (le (len $role) 63) (regexMatch "^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$" $role)) -}}
{{- fail (printf "pool %s: roles[%d] %s is not a label name (lowercase letters, digits, '-', '_' and '.', at most 63 characters, starting and ending with a letter or digit); it becomes the label node-role.kubernetes.io/<role>, so set it to a name such as ingress-nginx" $pool $i (include "kubernetes-nodes.describe" $role)) -}}
{{- end -}}
{{- if hasKey $seenRoles $role -}}
{{- fail (printf "pool %s: roles lists %q twice; each role is one label, so list it once" $pool $role) -}}
{{- end -}}
{{- $_ := set $seenRoles $role true -}}
{{- end -}}
{{- /* MachineHealthCheck values. */ -}}
{{- $timeout := $v.nodeStartupTimeout -}}
{{- if not (and (kindIs "string" $timeout) (regexMatch "^(0|([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+)$" $timeout)) -}}
{{- fail (printf "pool %s: nodeStartupTimeout %s is not a duration; write it as a Go duration such as 10m, 90s or 1h30m" $pool (include "kubernetes-nodes.describe" $timeout)) -}}
{{- end -}}
{{- $unhealthy := toString $v.maxUnhealthy -}}
{{- if not (and (not (kindIs "map" $v.maxUnhealthy)) (not (kindIs "slice" $v.maxUnhealthy)) (or (regexMatch "^[0-9]+$" $unhealthy) (and (regexMatch "^[0-9]+%$" $unhealthy) (le (trimSuffix "%" $unhealthy | atoi) 100)))) -}}
{{- fail (printf "pool %s: maxUnhealthy %s is neither a count nor a percentage; set it to a non-negative integer (e.g. 2) or a percentage from 0%% to 100%% (e.g. \"40%%\")" $pool (include "kubernetes-nodes.describe" $v.maxUnhealthy)) -}}
{{- end -}}
{{- /* Settings that reach the Talos machine config. */ -}}
{{- include "kubernetes-nodes.assertInstallerRepository" (dict "pool" $pool "field" "talos.installerRepository" "value" $v.talos.installerRepository) -}}
{{- include "kubernetes-nodes.assertRegistryMirrors" (dict "pool" $pool "field" "talos.registryMirrors" "value" $v.talos.registryMirrors) -}}
{{- $platform := $v._cluster | default dict -}}
{{- if not (kindIs "map" $platform) -}}
{{- fail (printf "pool %s: _cluster is %s, not a map; _cluster is the platform's values channel: remove it from the pool's values" $pool (include "kubernetes-nodes.describe" $platform)) -}}
{{- end -}}
{{- $platformTalos := $platform.talos | default dict -}}
{{- if not (kindIs "map" $platformTalos) -}}
{{- fail (printf "pool %s: _cluster.talos is %s, not a map; it is set by the platform (tenantWorkers.talos and registries in the platform chart)" $pool (include "kubernetes-nodes.describe" $platformTalos)) -}}
{{- end -}}
{{- include "kubernetes-nodes.assertInstallerRepository" (dict "pool" $pool "field" "_cluster.talos.installerRepository" "value" (get $platformTalos "installerRepository")) -}}
{{- include "kubernetes-nodes.assertRegistryMirrors" (dict "pool" $pool "field" "_cluster.talos.registryMirrors" "value" (get $platformTalos "registryMirrors")) -}}
{{- $registryConfig := get $platformTalos "registryConfig" | default dict -}}
{{- if not (kindIs "map" $registryConfig) -}}
{{- fail (printf "pool %s: _cluster.talos.registryConfig is %s, not a map of registry host to auth/TLS config; it is set by the platform (registries.config in the platform chart)" $pool (include "kubernetes-nodes.describe" $registryConfig)) -}}
{{- end -}}
{{- /* Talos machine.registries.config: host -> {auth: {...}, tls: {...}}, copied into the machine config. */ -}}
{{- range $host := keys $registryConfig | sortAlpha -}}
{{- $at := printf "_cluster.talos.registryConfig[%s]" (include "kubernetes-nodes.truncate" $host) -}}
{{- $config := get $registryConfig $host -}}
{{- if not (and (le (len $host) 253) (regexMatch (printf "%s$" (include "kubernetes-nodes.registryHostPattern" .)) $host)) -}}
{{- fail (printf "pool %s: _cluster.talos.registryConfig has the key %q, which is not a registry host[:port]; it is set by the platform (registries.config in the platform chart)" $pool (include "kubernetes-nodes.truncate" $host)) -}}
{{- end -}}
{{- if not (kindIs "map" $config) -}}
{{- fail (printf "pool %s: %s is %s, not a map of auth and tls" $pool $at (include "kubernetes-nodes.describe" $config)) -}}
{{- end -}}
{{- include "kubernetes-nodes.assertKnownKeys" (dict "pool" $pool "field" $at "value" $config "keys" (list "auth" "tls")) -}}
{{- range $part, $fields := dict "auth" (list "username" "password" "auth" "identityToken") "tls" (list "insecureSkipVerify" "ca" "clientIdentity") -}}
{{- $section := get $config $part | default dict -}}
{{- if not (kindIs "map" $section) -}}
{{- fail (printf "pool %s: %s.%s is %s, not a map" $pool $at $part (include "kubernetes-nodes.describe" $section)) -}}
{{- end -}}
{{- include "kubernetes-nodes.assertKnownKeys" (dict "pool" $pool "field" (printf "%s.%s" $at $part) "value" $section "keys" $fields) -}}
{{- range $field := without $fields "insecureSkipVerify" "clientIdentity" -}}
{{- include "kubernetes-nodes.assertString" (dict "pool" $pool "field" (printf "%s.%s.%s" $at $part $field) "value" (get $section $field)) -}}
{{- end -}}
{{- end -}}
{{- $tls := get $config "tls" | default dict -}}
{{- if and (hasKey $tls "insecureSkipVerify") (not (kindIs "bool" $tls.insecureSkipVerify)) -}}
{{- fail (printf "pool %s: %s.tls.insecureSkipVerify is %s; set it to true or false" $pool $at (include "kubernetes-nodes.describe" $tls.insecureSkipVerify)) -}}
{{- end -}}
{{- $identity := get $tls "clientIdentity" | default dict -}}
{{- if not (kindIs "map" $identity) -}}
{{- fail (printf "pool %s: %s.tls.clientIdentity is %s, not a map of crt and key" $pool $at (include "kubernetes-nodes.describe" $identity)) -}}
{{- end -}}
{{- include "kubernetes-nodes.assertKnownKeys" (dict "pool" $pool "field" (printf "%s.tls.clientIdentity" $at) "value" $identity "keys" (list "crt" "key")) -}}
{{- range $field := list "crt" "key" -}}
{{- include "kubernetes-nodes.assertString" (dict "pool" $pool "field" (printf "%s.tls.clientIdentity.%s" $at $field) "value" (get $identity $field)) -}}
{{- end -}}
{{- end -}}
{{- $_ := set ._kubernetesNodes "validated" true -}}
{{- end -}}
{{- end -}}

{{/*
Refuses keys a map may not hold, so a typo never silently changes what renders.
Takes a dict: pool, field (its path in values), value (the map), keys (allowed).
*/}}
{{- define "kubernetes-nodes.assertKnownKeys" -}}
{{- range $key := keys .value | sortAlpha -}}
{{- if not (has $key $.keys) -}}
{{- fail (printf "pool %s: %s has no key %q; the keys it takes are %s. Fix the spelling or remove the key (an unknown key is refused rather than ignored, so a typo never changes the disk source)" $.pool $.field $key (join ", " $.keys)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Refuses a value that is set but not a string. Takes a dict: pool, field, value. */}}
{{- define "kubernetes-nodes.assertString" -}}
{{- if not (or (kindIs "invalid" .value) (kindIs "string" .value)) -}}
{{- fail (printf "pool %s: %s is %s, not a string; write it as a string" .pool .field (include "kubernetes-nodes.describe" .value)) -}}
{{- end -}}
{{- end -}}

{{/* A registry host[:port] as Talos keys mirrors and registry config by it: DNS labels of at most 63 characters (anchored at the start only). */}}
{{- define "kubernetes-nodes.registryHostPattern" -}}
^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*(:[0-9]{1,5})?
{{- end -}}

{{/* "true" for a DNS-1123 subdomain name of at most 253 characters. */}}
{{- define "kubernetes-nodes.isDNSSubdomain" -}}
{{- if and (le (len .) 253) (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" .) -}}true{{- end -}}
{{- end -}}

{{/*
Talos installer repository, <registry host[:port]>/<path>: it becomes
<repository>/<schematicID>:<version> in the machine config, where Talos pulls
it. Takes a dict: pool, field, value ("" or absent: not set).
*/}}
{{- define "kubernetes-nodes.assertInstallerRepository" -}}
{{- include "kubernetes-nodes.assertString" . -}}
{{- $s := .value | default "" -}}
{{- if and $s (not (and (le (len $s) 255) (regexMatch (printf "%s(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)+$" (include "kubernetes-nodes.registryHostPattern" .)) $s))) -}}
{{- fail (printf "pool %s: %s %q is not an image repository (registry host[:port]/path, lowercase path); it becomes <repository>/<schematicID>:<version> in the Talos machine config, so set it to a repository such as factory.talos.dev/installer" .pool .field (include "kubernetes-nodes.truncate" $s)) -}}
{{- end -}}
{{- end -}}

{{/*
Talos machine.registries.mirrors: registry host -> {endpoints: [http(s) URL],
overridePath?, skipFallback?}. Takes a dict: pool, field, value (absent: none).
*/}}
{{- define "kubernetes-nodes.assertRegistryMirrors" -}}
{{- $mirrors := .value | default dict -}}
{{- if not (kindIs "map" $mirrors) -}}
{{- fail (printf "pool %s: %s is %s, not a map of registry host to {endpoints: [URL, ...]}" .pool .field (include "kubernetes-nodes.describe" $mirrors)) -}}
{{- end -}}
{{- range $host := keys $mirrors | sortAlpha -}}
{{- $mirror := get $mirrors $host -}}
{{- $at := printf "%s[%s]" $.field $host -}}
{{- if not (or (eq $host "*") (and (le (len $host) 253) (regexMatch (printf "%s$" (include "kubernetes-nodes.registryHostPattern" .)) $host))) -}}
{{- fail (printf "pool %s: %s has the key %q, which is not a registry host[:port] (or \"*\"); key each mirror by the registry it stands in for, such as docker.io" $.pool $.field (include "kubernetes-nodes.truncate" $host)) -}}
{{- end -}}
{{- if not (kindIs "map" $mirror) -}}
{{- fail (printf "pool %s: %s is %s, not a map; write it as {endpoints: [https://mirror.example/v2/docker.io]}" $.pool $at (include "kubernetes-nodes.describe" $mirror)) -}}
{{- end -}}
{{- include "kubernetes-nodes.assertKnownKeys" (dict "pool" $.pool "field" $at "value" $mirror "keys" (list "endpoints" "overridePath" "skipFallback")) -}}
{{- $endpoints := $mirror.endpoints -}}
{{- if not (and (kindIs "slice" $endpoints) $endpoints) -}}
{{- fail (printf "pool %s: %s.endpoints is %s; list at least one mirror URL, such as [https://mirror.example/v2/docker.io]" $.pool $at (include "kubernetes-nodes.describe" $endpoints)) -}}
{{- end -}}
{{- range $i, $endpoint := $endpoints -}}
{{- if not (and (kindIs "string" $endpoint) (le (len $endpoint) 2048) (regexMatch "^https?://[a-zA-Z0-9]([-a-zA-Z0-9.]*[a-zA-Z0-9])?(:[0-9]{1,5})?(/[-a-zA-Z0-9._~%/]*)?$" $endpoint)) -}}
{{- fail (printf "pool %s: %s.endpoints[%d] %s is not a plain http(s) URL (no whitespace, quotes or YAML metacharacters); set it to the mirror's URL, such as https://mirror.example/v2/docker.io" $.pool $at $i (include "kubernetes-nodes.describe" $endpoint)) -}}
{{- end -}}
{{- end -}}
{{- range $flag := list "overridePath" "skipFallback" -}}
{{- if and (hasKey $mirror $flag) (not (kindIs "bool" (get $mirror $flag))) -}}
{{- fail (printf "pool %s: %s.%s is %s; set it to true or false" $.pool $at $flag (include "kubernetes-nodes.describe" (get $mirror $flag))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A value for a message: a string quoted (long ones cut), anything else by its kind. */}}
{{- define "kubernetes-nodes.describe" -}}
{{- if kindIs "string" . -}}
{{- include "kubernetes-nodes.truncate" . | quote -}}
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
{{- define "kubernetes-nodes.truncate" -}}
{{- if gt (len .) 80 -}}
{{- printf "%s...(%d characters)" (trunc 80 .) (len .) -}}
{{- else -}}
{{- . -}}
{{- end -}}
{{- end -}}

{{/*
A name written into YAML as a plain scalar, quoted only when YAML would read it
as something else (null, yes, on, 0123): plain names keep today's bytes, and a
class named "null" still reaches the API as the string "null". Names are DNS
names here, so only the YAML 1.1 words and what starts with a digit can be
misread; the latter is asked of the same parser Helm reads the manifest with.
*/}}
{{- define "kubernetes-nodes.scalar" -}}
{{- $s := toString . -}}
{{- if has $s (list "y" "n" "yes" "no" "on" "off" "true" "false" "null") -}}
{{- $s | quote -}}
{{- else if and (regexMatch "^[-+.0-9]" $s) (ne (toJson (fromYaml (printf "v: %s" $s)).v) (toJson $s)) -}}
{{- $s | quote -}}
{{- else -}}
{{- $s -}}
{{- end -}}
{{- end -}}
