{{/*
The Image Factory CA in effect for the HTTP import, resolved once into ._kubernetesNodes.ca: text (the
PEM, "" when none), source, configMap (its name, "" when none). The pool's own talos.imageFactoryCA wins;
else the platform's (_cluster's, else the catalog's published one), only when its creation record says
it applied and the factory URL is not the pool's own (a CA belongs to the URL it came with). The clone path uses none.
*/}}
{{- define "kubernetes-nodes.ensureImageFactoryCA" -}}
{{- include "kubernetes-nodes.ensureImage" . -}}
{{- $state := ._kubernetesNodes -}}
{{- if not (hasKey $state "ca") -}}
{{- $image := $state.image -}}
{{- $ca := dict "text" "" "source" "" "configMap" "" -}}
{{- $own := .Values.talos.imageFactoryCA | default "" | toString -}}
{{- $ownURL := has $image.imageFactoryURLSource (list "talos.imageFactoryURL" "osImage.factory.imageFactoryURL") -}}
{{- $name := printf "%s-image-factory-ca" (include "kubernetes-nodes.poolName" .) -}}
{{- if $image.clone -}}
{{- else if $own -}}
{{- $ca = dict "text" $own "source" "talos.imageFactoryCA" "configMap" $name -}}
{{- else if and $state.creation.imageFactoryCA (not $ownURL) -}}
{{- /* The PEM at every render: _cluster's, else the catalog's published one (whichever the record names). */ -}}
{{- $platform := get ((.Values._cluster | default dict).talos | default dict) "imageFactoryCA" | default "" | toString -}}
{{- $fromCatalog := false -}}
{{- if not $platform -}}
{{- include "kubernetes-nodes.ensurePublished" . -}}
{{- $platform = get ($state.published.talos | default dict) "imageFactoryCA" | default "" | toString -}}
{{- $fromCatalog = true -}}
{{- end -}}
{{- if not $platform -}}
{{- if has "imageFactoryCA" $state.creation.fromCatalog -}}
{{- fail (printf "pool %s: it was created while %s set talos.imageFactoryCA (%s), so its worker disk names the ConfigMap %s/%s for the CA of %s, but neither they nor _cluster set an imageFactoryCA any more and CDI could not verify the import; set the catalog's tenantWorkers.talos.imageFactoryCA again (a new certificate rolls no worker), or set the pool's own talos.imageFactoryCA (same ConfigMap: nothing rolls), or set the pool's own talos.imageFactoryURL without a CA (which re-images the pool)" (include "kubernetes-nodes.poolName" .) (include "worker-image-lib.tenantDefaultsChannel" .) $state.creation.from .Release.Namespace $name $image.imageFactoryURL) -}}
{{- end -}}
{{- fail (printf "pool %s: it was created while the platform set _cluster.talos.imageFactoryCA (%s), so its worker disk names the ConfigMap %s/%s for the CA of %s, but the platform sets no imageFactoryCA any more and CDI could not verify the import; set the platform's tenantWorkers.talos.imageFactoryCA again (a new certificate rolls no worker), or set the pool's own talos.imageFactoryCA (same ConfigMap: nothing rolls), or set the pool's own talos.imageFactoryURL without a CA (which re-images the pool)" (include "kubernetes-nodes.poolName" .) $state.creation.from .Release.Namespace $name $image.imageFactoryURL) -}}
{{- end -}}
{{- $ca = dict "text" $platform "source" (include "kubernetes-nodes.recordedSource" (dict "root" . "field" "talos.imageFactoryCA" "catalog" $fromCatalog)) "configMap" $name -}}
{{- end -}}
{{- $_ := set $state "ca" $ca -}}
{{- end -}}
{{- end -}}

{{/*
The ConfigMap holding the CA in effect, in the pool's namespace; nothing when none is. Its name never
depends on the certificate, so a new certificate renames nothing and rolls no worker.
*/}}
{{- define "kubernetes-nodes.imageFactoryCAConfigMap" -}}
{{- include "kubernetes-nodes.ensureDiskSource" . -}}
{{- $ca := ._kubernetesNodes.ca | default dict -}}
{{- if $ca.configMap -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $ca.configMap }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "kubernetes-nodes.labels" . | nindent 4 }}
data:
  ca.pem: {{ $ca.text | toJson }}
{{- end -}}
{{- end -}}
