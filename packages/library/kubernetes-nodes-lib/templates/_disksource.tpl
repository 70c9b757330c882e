{{/*
The worker disk's source, resolved once into ._kubernetesNodes.disk (the clone guards ask the cluster):
clone, golden, url, certConfigMap (a CA in effect), storageClassName, the image fields, and on the
clone path the CLI's report.
*/}}
{{- define "kubernetes-nodes.ensureDiskSource" -}}
{{- include "kubernetes-nodes.ensureImage" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "disk") -}}
{{- $image := $state.image -}}
{{- $source := dict -}}
{{- if $image.clone -}}
{{- include "kubernetes-nodes.cloneSource" (dict "root" . "image" $image "out" $source) -}}
{{- else -}}
{{- include "kubernetes-nodes.assertDiskHoldsTheImage" . -}}
{{- $_ := set $source "url" (include "worker-image-lib.imageURL" $image) -}}
{{- $_ := set $source "storageClassName" (.Values.storageClass | toString) -}}
{{- include "kubernetes-nodes.ensureImageFactoryCA" . -}}
{{- with $state.ca.configMap -}}
{{- $_ := set $source "certConfigMap" . -}}
{{- $_ := set $source "imageFactoryCASource" $state.ca.source -}}
{{- end -}}
{{- end -}}
{{- $_ := set $state "disk" (merge $source (deepCopy $image)) -}}
{{- end -}}
{{- end -}}

{{/* The disk source as YAML, for tools that read what the chart resolved. */}}
{{- define "kubernetes-nodes.diskSource" -}}
{{- include "kubernetes-nodes.ensureDiskSource" . -}}
{{- ._kubernetesNodes.disk | toYaml -}}
{{- end -}}

{{/*
The least a worker disk imported over HTTP may be: the Talos raw disk image CDI writes into it,
openstack-amd64.raw as Talos's imager builds it for the pool's Talos release, each floor that exact
figure, so every pool that could boot before still renders. From v1.10 on (dualBoot): a 1246 MiB disk
plus the BIOS boot and the larger EFI partitions of its dual-boot layout, 4453302272 bytes, 4247Mi, the
"about 4.15 GiB" of the README. Before v1.10 (v1.8, v1.9 and older): the 1246 MiB disk alone,
1306525696 bytes. The clone path needs none: a clone is never smaller than its golden (refusal 5).
*/}}
{{- define "kubernetes-nodes.imageDiskFloor" -}}
dualBoot:
  bytes: 4453302272
  quantity: 4247Mi
beforeDualBoot:
  bytes: 1306525696
  quantity: 1246Mi
{{- end -}}

{{/*
Refuses a diskSize smaller than the Talos image the HTTP import writes into the disk: CDI's importer
cannot fit it and no worker boots (diskSize: 20M, a typo for 20Gi, would re-image the pool onto such
disks). Takes the root context; diskSize is parsed already (kubernetes-nodes.validate).
*/}}
{{- define "kubernetes-nodes.assertDiskHoldsTheImage" -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.imageDiskFloor") -}}
{{- $floors := index ._kubernetesNodes.tables "kubernetes-nodes.imageDiskFloor" -}}
{{- $version := ._kubernetesNodes.image.version -}}
{{- /* Read as text, not numbers: a version's digits may be more than an int holds. v0.x, v1.0 to v1.9 build the smaller image. */ -}}
{{- $floor := regexMatch "^v0*(0\\.|1\\.0*[0-9]\\.)" $version | ternary $floors.beforeDualBoot $floors.dualBoot -}}
{{- $disk := index ._kubernetesNodes.written "diskSize" -}}
{{- if lt $disk.bytes (float64 $floor.bytes) -}}
{{- fail (printf "pool %s: diskSize %s (%.0f bytes) is smaller than the Talos disk image the pool imports over HTTP (%s, %d bytes: openstack-amd64.raw as the Image Factory builds it for Talos %s), so CDI cannot write the image into the disk and no worker boots; set diskSize to %s or more, such as the chart's default 20Gi (what the image leaves free holds the kubelet's state, container images and local volumes)" (include "kubernetes-nodes.poolName" .) ($disk.text | quote) $disk.bytes $floor.quantity (int64 $floor.bytes) $version $floor.quantity) -}}
{{- end -}}
{{- end -}}
