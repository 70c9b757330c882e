{{/*
The Kubernetes patch release shipped per minor: what a new pool of that minor runs, and the newest patch
a pool may name in version. A bump reaches no running pool (kubernetes-nodes.ensureKubernetes keeps the
release it runs); workerimage rollout moves pools to it.
*/}}
{{- define "kubernetes-nodes.kubernetesReleases" -}}
v1.31: v1.31.14
v1.32: v1.32.13
v1.33: v1.33.13
v1.34: v1.34.9
v1.35: v1.35.6
v1.36: v1.36.0
{{- end -}}

{{/* The full Kubernetes release the pool runs (kubernetes-nodes.ensureKubernetes), or a refusal. */}}
{{- define "kubernetes-nodes.kubernetesRelease" -}}
{{- include "kubernetes-nodes.ensureKubernetes" . -}}
{{- $k := ._kubernetesNodes.kubernetes -}}
{{- with $k.refusal -}}
{{- fail (printf "pool %s: %s" (include "kubernetes-nodes.poolName" $) .) -}}
{{- end -}}
{{- $k.release -}}
{{- end -}}

{{/*
Kubernetes minors each Talos minor supports. An unlisted Talos minor passes: its range is not
known, and refusing it would block adopting a new release.
*/}}
{{- define "kubernetes-nodes.talosSupportMatrix" -}}
v1.11: {min: 29, max: 34}
v1.12: {min: 30, max: 35}
v1.13: {min: 31, max: 36}
{{- end -}}

{{/*
Refuses a Talos release that does not support the pool's Kubernetes minor. Takes a dict: root,
talosVersion (the resolved release), source (where it came from, for the message).
*/}}
{{- define "kubernetes-nodes.assertTalosSupportsKubernetes" -}}
{{- $root := .root -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" $root "name" "kubernetes-nodes.talosSupportMatrix") -}}
{{- $matrix := index $root._kubernetesNodes.tables "kubernetes-nodes.talosSupportMatrix" -}}
{{- $talosMinor := regexFind "^v[0-9]+\\.[0-9]+" (.talosVersion | toString) -}}
{{- include "kubernetes-nodes.ensureKubernetes" $root -}}
{{- $k8s := $root._kubernetesNodes.kubernetes.minor -}}
{{- if hasKey $matrix $talosMinor -}}
{{- $range := get $matrix $talosMinor -}}
{{- $k8sMinor := regexReplaceAll "^v1\\.([0-9]+)$" $k8s "${1}" | int -}}
{{- if or (lt $k8sMinor (int $range.min)) (gt $k8sMinor (int $range.max)) -}}
{{- fail (printf "pool %s: Talos %s (%s) does not support Kubernetes %s; Talos %s supports v1.%d to v1.%d: set version within that range, or pick a Talos release that supports %s" (include "kubernetes-nodes.poolName" $root) .talosVersion .source $k8s $talosMinor (int $range.min) (int $range.max) $k8s) -}}
{{- end -}}
{{- end -}}
{{- end -}}


{{/*
Refuses a Talos release that does not support the pool's Kubernetes minor: the disk's (and installer's)
resolved version, and the pool's own talos.version when osImage names another (as Cozystack's chart
checks it). Takes the root context.
*/}}
{{- define "kubernetes-nodes.assertTalosSupports" -}}
{{- $own := .Values.talos.version | default "" | toString -}}
{{- if $own -}}
{{- include "kubernetes-nodes.assertTalosSupportsKubernetes" (dict "root" . "talosVersion" $own "source" "talos.version") -}}
{{- end -}}
{{- include "kubernetes-nodes.ensureImage" . -}}
{{- $image := ._kubernetesNodes.image -}}
{{- if ne $image.version $own -}}
{{- include "kubernetes-nodes.assertTalosSupportsKubernetes" (dict "root" . "talosVersion" $image.version "source" $image.versionSource) -}}
{{- end -}}
{{- end -}}

{{/*
The Kubernetes release the pool's MachineDeployment runs, resolved once into ._kubernetesNodes.kubernetes
without refusing (tools read it from refused pools too): minor, release, source, and refusal (the
message when the release cannot be resolved; release is then ""). version is a minor (v1.35) or a
release (v1.35.6). A release is taken as written when the chart ships its minor and it is no newer than
the chart's patch. A minor keeps the release of that minor the pool's MachineDeployment runs (its
spec.template.spec.version, read with the creation record: no other GET), so a chart release that bumps
the patch table rolls no running pool; else, for a new pool or another minor, the chart's patch.
*/}}
{{- define "kubernetes-nodes.ensureKubernetes" -}}
{{- include "kubernetes-nodes.ensureState" . -}}
{{- if not (hasKey ._kubernetesNodes "kubernetes") -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.kubernetesReleases") -}}
{{- $releases := index ._kubernetesNodes.tables "kubernetes-nodes.kubernetesReleases" -}}
{{- $value := .Values.version | toString -}}
{{- $minor := regexReplaceAll "^(v1\\.[0-9]{1,4})\\.(0|[1-9][0-9]{0,3})$" $value "${1}" -}}
{{- $k := dict "minor" $minor "release" "" "source" "" "refusal" "" -}}
{{- $supported := keys $releases | sortAlpha | join ", " -}}
{{- if not (hasKey $releases $minor) -}}
{{- $_ := set $k "refusal" (printf "version %q is not a Kubernetes minor this chart ships; set version to one of %s, or to a release of one no newer than the chart's (such as %s)" (include "worker-image-lib.truncate" $value) $supported (get $releases (last (keys $releases | sortAlpha)))) -}}
{{- else if ne $minor $value -}}
{{- $shipped := get $releases $minor -}}
{{- $patch := regexReplaceAll "^v1\\.[0-9]+\\.([0-9]+)$" $value "${1}" | atoi -}}
{{- $newest := regexReplaceAll "^v1\\.[0-9]+\\.([0-9]+)$" $shipped "${1}" | atoi -}}
{{- if gt $patch $newest -}}
{{- $_ := set $k "refusal" (printf "version %s is newer than the newest %s release this chart ships (%s), so its kubelet image may not exist; set version to %s or older, or to %s for the chart's" $value $minor $shipped $shipped $minor) -}}
{{- else -}}
{{- $_ := set $k "release" (printf "%s.%d" $minor $patch) -}}
{{- $_ := set $k "source" "version" -}}
{{- end -}}
{{- else -}}
{{- $_ := set $k "release" (get $releases $minor) -}}
{{- $_ := set $k "source" (printf "version %s: the chart's release of it for a new pool" $minor) -}}
{{- if include "kubernetes-nodes.ensureMachineDeployment" . -}}
{{- $running := dig "spec" "template" "spec" "version" "" ._kubernetesNodes.machineDeployment | toString -}}
{{- if and (le (len $running) 16) (regexMatch (printf "^%s\\.[0-9]{1,4}$" (replace "." "\\." $minor)) $running) -}}
{{- $_ := set $k "release" (printf "%s.%d" $minor (regexReplaceAll "^v1\\.[0-9]+\\.([0-9]+)$" $running "${1}" | atoi)) -}}
{{- $_ := set $k "source" (printf "version %s: kept from what the pool runs, MachineDeployment %s/%s" $minor .Release.Namespace (include "kubernetes-nodes.poolName" .)) -}}
{{- else if $running -}}
{{- $_ := set $k "source" (printf "version %s: the chart's release of it, since the pool runs %s, not a release of %s" $minor (include "worker-image-lib.truncate" $running) $minor) -}}
{{- else -}}
{{- $_ := set $k "source" (printf "version %s: the chart's release of it, since the pool's MachineDeployment states no version" $minor) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $_ := set ._kubernetesNodes "kubernetes" $k -}}
{{- end -}}
{{- end -}}

{{/*
What a pool runs against what the chart and the platform give a new pool now, as YAML, for tools that
judge whether a pool is behind (workerimage plan, pins, rollcheck, rollout): kubernetes (the release
resolved), and defaults: the Talos flavor a new pool that sets none takes now (per field: the platform's
osImage default's own field, _cluster's, else the catalog's published one; else talos.<field> of
_cluster, else of the catalog's published defaults; else the chart's built-in), each named in
schematicIDFrom and versionFrom ("" for the chart's built-in); the platform's current factory URL
(_cluster's, else the catalog's published one, named in imageFactoryURLFrom, else the built-in); the
Kubernetes release per minor; and talosMinors, the Talos minors the support rows list (the table
kubernetes-nodes.assertTalosSupportsKubernetes reads), so tools learn them from a render, never from
this source. Refuses nothing beyond the published defaults' own checks.
*/}}
{{- define "kubernetes-nodes.behindFacts" -}}
{{- include "kubernetes-nodes.ensureKubernetes" . -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.builtinTalos") -}}
{{- $builtin := index ._kubernetesNodes.tables "kubernetes-nodes.builtinTalos" -}}
{{- $platform := .Values._cluster | default dict -}}
{{- $platformTalos := dict -}}
{{- if and (kindIs "map" $platform) (kindIs "map" (get $platform "talos")) -}}
{{- $platformTalos = get $platform "talos" -}}
{{- end -}}
{{- include "kubernetes-nodes.ensurePublished" . -}}
{{- $published := ._kubernetesNodes.published -}}
{{- $publishedTalos := $published.talos | default dict -}}
{{- $channel := include "worker-image-lib.tenantDefaultsChannel" . -}}
{{- $url := get $platformTalos "imageFactoryURL" | default "" | toString -}}
{{- $urlFrom := "" -}}
{{- if not $url -}}
{{- $url = get $publishedTalos "imageFactoryURL" | default "" | toString -}}
{{- if $url -}}
{{- $urlFrom = $channel -}}
{{- end -}}
{{- end -}}
{{- /* The osImage a new pool takes: _cluster's as a whole, else the published one; its own fields win. */ -}}
{{- $os := dict -}}
{{- $osFrom := "" -}}
{{- if and (kindIs "map" $platform) (kindIs "map" (get $platform "osImage")) -}}
{{- $os = get $platform "osImage" -}}
{{- $osFrom = "the platform default _cluster.osImage.%s.%s" -}}
{{- else if kindIs "map" (get $published "osImage") -}}
{{- $os = get $published "osImage" -}}
{{- $osFrom = printf "the default osImage.%%s.%%s of %s" $channel -}}
{{- end -}}
{{- $path := "" -}}
{{- range $p := list "builtin" "factory" -}}
{{- if and (not $path) (hasKey $os $p) -}}
{{- $path = $p -}}
{{- end -}}
{{- end -}}
{{- $chosen := dict -}}
{{- if and $path (kindIs "map" (get $os $path)) -}}
{{- $chosen = get $os $path -}}
{{- end -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.talosSupportMatrix") -}}
{{- $talosMinors := keys (index ._kubernetesNodes.tables "kubernetes-nodes.talosSupportMatrix") | sortAlpha -}}
{{- $defaults := dict "imageFactoryURL" ($url | default $builtin.imageFactoryURL) "imageFactoryURLFrom" $urlFrom "kubernetesReleases" (index ._kubernetesNodes.tables "kubernetes-nodes.kubernetesReleases") "talosMinors" $talosMinors -}}
{{- range $field := list "schematicID" "version" -}}
{{- $value := get $builtin $field -}}
{{- $from := "" -}}
{{- if get $chosen $field -}}
{{- $value = get $chosen $field -}}
{{- $from = printf $osFrom $path $field -}}
{{- else if get $platformTalos $field -}}
{{- $value = get $platformTalos $field -}}
{{- $from = printf "the platform default _cluster.talos.%s" $field -}}
{{- else if get $publishedTalos $field -}}
{{- $value = get $publishedTalos $field -}}
{{- $from = printf "the default talos.%s of %s" $field $channel -}}
{{- end -}}
{{- $_ := set $defaults $field ($value | toString) -}}
{{- $_ := set $defaults (printf "%sFrom" $field) $from -}}
{{- end -}}
{{- dict "kubernetes" ._kubernetesNodes.kubernetes "defaults" $defaults | toYaml -}}
{{- end -}}
