{{/*
The body of the KubevirtMachineTemplate. Its sha256 names the template, so every
byte here is part of the pool's identity: a change rolls every worker of the pool.
*/}}
{{- define "kubernetes-nodes.machineTemplateBody" -}}
template:
  spec:
    virtualMachineBootstrapCheck:
      checkStrategy: none
    virtualMachineTemplate:
      metadata:
        namespace: {{ .Release.Namespace }}
      spec:
        runStrategy: Always
        {{- if not (include "kubernetes-nodes.explicitResources" .) }}
        instancetype:
          kind: VirtualMachineClusterInstancetype
          name: {{ .Values.instanceType }}
        {{- end }}
        dataVolumeTemplates:
          - metadata:
              name: disk-system
              annotations:
                cdi.kubevirt.io/storage.usePopulator: "false"
            spec:
              source:
                http:
                  url: {{ include "kubernetes-nodes.diskImageURL" . }}
              storage:
                resources:
                  requests:
                    storage: {{ .Values.diskSize }}
                {{- with .Values.storageClass }}
                storageClassName: {{ . }}
                {{- end }}
        template:
          metadata:
            annotations:
              kubevirt.io/allow-pod-bridge-network-live-migration: "true"
          spec:
            domain:
              {{- if include "kubernetes-nodes.explicitResources" . }}
              cpu:
                cores: {{ .Values.resources.cpu }}
              memory:
                guest: {{ .Values.resources.memory }}
              {{- end }}
              devices:
                disks:
                  - name: system
                    disk:
                      bus: virtio
                interfaces:
                  - name: default
                    bridge: {}
                networkInterfaceMultiqueue: true
            evictionStrategy: External
            networks:
              - name: default
                pod: {}
            volumes:
              - name: system
                dataVolume:
                  name: disk-system
{{- end -}}

{{/* <factory>/image/<schematicID>/<version>/openstack-amd64.raw.xz, with no double slash. */}}
{{- define "kubernetes-nodes.diskImageURL" -}}
{{- printf "%s/image/%s/%s/openstack-amd64.raw.xz" (trimSuffix "/" (.Values.talos.imageFactoryURL | toString)) .Values.talos.schematicID .Values.talos.version -}}
{{- end -}}
