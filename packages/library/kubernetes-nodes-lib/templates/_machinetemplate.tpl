{{/*
The body of the KubevirtMachineTemplate. Its sha256 names the template, so every
byte here is part of the pool's identity: a change rolls every worker of the pool.
*/}}
{{- define "kubernetes-nodes.machineTemplateBody" -}}
{{- include "kubernetes-nodes.ensureDiskSource" . -}}
{{- $disk := ._kubernetesNodes.disk -}}
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
          name: {{ include "kubernetes-nodes.scalar" .Values.instanceType }}
        {{- end }}
        dataVolumeTemplates:
          - metadata:
              name: disk-system
              annotations:
                {{- if $disk.clone }}
                kubernetes-worker-image.cozystack.io/golden: {{ $disk.golden }}
                kubernetes-worker-image.cozystack.io/pool: {{ include "kubernetes-nodes.poolName" . }}
                {{- else }}
                cdi.kubevirt.io/storage.usePopulator: "false"
                {{- end }}
            spec:
              source:
                {{- if $disk.clone }}
                pvc:
                  namespace: cozy-public
                  name: {{ $disk.golden }}
                {{- else }}
                http:
                  url: {{ $disk.url }}
                  {{- with $disk.certConfigMap }}
                  certConfigMap: {{ . }}
                  {{- end }}
                {{- end }}
              storage:
                resources:
                  requests:
                    storage: {{ (index ._kubernetesNodes.written "diskSize").scalar }}
                {{- with $disk.storageClassName }}
                storageClassName: {{ include "kubernetes-nodes.scalar" . }}
                {{- end }}
        template:
          metadata:
            annotations:
              kubevirt.io/allow-pod-bridge-network-live-migration: "true"
          spec:
            domain:
              {{- if include "kubernetes-nodes.explicitResources" . }}
              cpu:
                cores: {{ index ._kubernetesNodes.written "resources.cpu" }}
              memory:
                guest: {{ (index ._kubernetesNodes.written "resources.memory").scalar }}
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
