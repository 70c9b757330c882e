{{/*
Where the catalog publishes the platform defaults for tenant workers, for a Cozystack whose platform
writes no _cluster keys for them (docs/closed-networks.md): one ConfigMap in cozy-public, its one key
holding JSON of the _cluster keys set. maxBytes bounds what a pool reads before it parses: the Image
Factory's CA (at most 64 KiB), the mirrors and a registry CA or two, with room; the catalog refuses to
publish more, saying what takes the room.
*/}}
{{- define "worker-image-lib.tenantDefaults" -}}
namespace: cozy-public
name: kubernetes-worker-image-tenant-defaults
key: values.json
maxBytes: 163840
{{- end -}}

{{/* How messages and tools name that object: the channel beside _cluster. */}}
{{- define "worker-image-lib.tenantDefaultsChannel" -}}
{{- $where := include "worker-image-lib.tenantDefaults" . | fromYaml -}}
{{- printf "the catalog's published defaults (ConfigMap %s/%s)" $where.namespace $where.name -}}
{{- end -}}

{{/*
tenantWorkers, the platform defaults for tenant worker pools, as the platform chart and the catalog
both take them: talos.{installerRepository, imageFactoryURL, imageFactoryCA, schematicID, version} and
osImage. Takes a dict: prefix, field (its path in values), value (absent: none).
*/}}
{{- define "worker-image-lib.assertTenantWorkers" -}}
{{- $tenant := .value | default dict -}}
{{- if not (kindIs "map" $tenant) -}}
{{- fail (printf "%s%s is %s, not a map" .prefix .field (include "worker-image-lib.describe" $tenant)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" .prefix "field" .field "value" $tenant "keys" (list "talos" "osImage")) -}}
{{- $talos := $tenant.talos | default dict -}}
{{- if not (kindIs "map" $talos) -}}
{{- fail (printf "%s%s.talos is %s, not a map" .prefix .field (include "worker-image-lib.describe" $talos)) -}}
{{- end -}}
{{- include "worker-image-lib.assertKnownKeys" (dict "prefix" .prefix "field" (printf "%s.talos" .field) "value" $talos "keys" (list "installerRepository" "imageFactoryURL" "imageFactoryCA" "schematicID" "version")) -}}
{{- include "worker-image-lib.assertCA" (dict "prefix" .prefix "field" (printf "%s.talos.imageFactoryCA" .field) "value" $talos.imageFactoryCA) -}}
{{- include "worker-image-lib.assertInstallerRepository" (dict "prefix" .prefix "field" (printf "%s.talos.installerRepository" .field) "value" $talos.installerRepository) -}}
{{- include "worker-image-lib.assertString" (dict "prefix" .prefix "field" (printf "%s.talos.imageFactoryURL" .field) "value" $talos.imageFactoryURL) -}}
{{- $patterns := include "worker-image-lib.patterns" . | fromYaml -}}
{{- $maxLengths := include "worker-image-lib.maxLengths" . | fromYaml -}}
{{- if and $talos.imageFactoryURL (not (include "worker-image-lib.isImageField" (dict "field" "imageFactoryURL" "value" $talos.imageFactoryURL "patterns" $patterns "maxLengths" $maxLengths))) -}}
{{- fail (printf "%s%s.talos.imageFactoryURL %q is not a plain http(s) URL: it must match %s and be at most %d characters, because new pools write it into their disk source; set it to a URL such as https://factory.mirror.internal" .prefix .field (include "worker-image-lib.truncate" $talos.imageFactoryURL) $patterns.imageFactoryURL (int $maxLengths.imageFactoryURL)) -}}
{{- end -}}
{{- /* The flavor new pools take (recorded at creation): a pool would refuse a malformed one as its own. */ -}}
{{- $builtin := include "worker-image-lib.builtinFlavor" . | fromYaml -}}
{{- range $name := list "schematicID" "version" -}}
{{- $value := get $talos $name -}}
{{- include "worker-image-lib.assertString" (dict "prefix" $.prefix "field" (printf "%s.talos.%s" $.field $name) "value" $value) -}}
{{- if and $value (not (include "worker-image-lib.isImageField" (dict "field" $name "value" $value "patterns" $patterns "maxLengths" $maxLengths))) -}}
{{- fail (printf "%s%s.talos.%s %q is malformed: it must match %s and be at most %d characters, as a pool's own talos.%s must; every new pool that sets none takes it (and records it), so each would be refused. Set it to a value such as %s, or to \"\" so that new pools take the pool chart's built-in one" $.prefix $.field $name (include "worker-image-lib.truncate" $value) (get $patterns $name) (int (get $maxLengths $name)) $name (get $builtin $name)) -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey $tenant "osImage") (not (kindIs "invalid" $tenant.osImage)) -}}
{{- include "worker-image-lib.assertOSImageShape" (dict "prefix" .prefix "field" (printf "%s.osImage" .field) "value" $tenant.osImage) -}}
{{- /* Each field as a pool takes its own: every new pool without its own osImage takes (and records) these. */ -}}
{{- range $path := keys $tenant.osImage | sortAlpha -}}
{{- $chosen := get $tenant.osImage $path -}}
{{- range $name := keys $chosen | sortAlpha -}}
{{- $value := get $chosen $name -}}
{{- if and $value (not (include "worker-image-lib.isImageField" (dict "field" $name "value" $value "patterns" $patterns "maxLengths" $maxLengths))) -}}
{{- fail (printf "%s%s.osImage.%s.%s %q is malformed: it must match %s and be at most %d characters, as a pool's own value must; every new pool without its own osImage takes it, so each would be refused. Set it to a value such as %s, or remove it so that pools take their talos.%s" $.prefix $.field $path $name (include "worker-image-lib.truncate" $value) (get $patterns $name) (int (get $maxLengths $name)) (get (dict "schematicID" "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515" "version" "v1.13.6" "imageFactoryURL" "https://factory.mirror.internal") $name) $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The _cluster keys for tenant workers that are set, from tenantWorkers, registry mirrors, registry CAs
and the metrics switch: what the platform writes into _cluster and the catalog publishes. Takes a dict:
tenantWorkers, mirrors, registryCAs (optional, checked: host -> {tls: {ca: PEM}}, the catalog's only),
metrics (a boolean), out (filled with talos, osImage and kubernetesWorkerImage, only those set).
*/}}
{{- define "worker-image-lib.tenantDefaultsValues" -}}
{{- $talos := dict -}}
{{- with .mirrors -}}
{{- $_ := set $talos "registryMirrors" . -}}
{{- end -}}
{{- /* Written as the checks allow it and nothing more: each host's CA alone. */ -}}
{{- $cas := dict -}}
{{- range $host, $config := .registryCAs | default dict -}}
{{- $_ := set $cas $host (dict "tls" (dict "ca" $config.tls.ca)) -}}
{{- end -}}
{{- with $cas -}}
{{- $_ := set $talos "registryConfig" . -}}
{{- end -}}
{{- $tenant := .tenantWorkers | default dict -}}
{{- $tenantTalos := $tenant.talos | default dict -}}
{{- range $key := list "installerRepository" "imageFactoryURL" "imageFactoryCA" "schematicID" "version" -}}
{{- with get $tenantTalos $key -}}
{{- $_ := set $talos $key . -}}
{{- end -}}
{{- end -}}
{{- if $talos -}}
{{- $_ := set .out "talos" $talos -}}
{{- end -}}
{{- if and (hasKey $tenant "osImage") (not (kindIs "invalid" $tenant.osImage)) -}}
{{- $_ := set .out "osImage" $tenant.osImage -}}
{{- end -}}
{{- /* The pools then annotate their MachineDeployments with the flavor they run, for the metrics. */ -}}
{{- if .metrics -}}
{{- $_ := set .out "kubernetesWorkerImage" (dict "metrics" true) -}}
{{- end -}}
{{- end -}}
