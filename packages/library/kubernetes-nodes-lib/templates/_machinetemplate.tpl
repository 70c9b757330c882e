{{/*
The KubevirtMachineTemplate's spec.template. Its sha256 names the template, so every byte here is part
of the pool's identity: a change rolls every worker of the pool. Without osImage and the platform's new
defaults it is, byte for byte, the body Cozystack's own kubernetes-nodes chart renders for the same
values, spaces and quoting included (docs/upstream.md): a platform that switches to this chart keeps
every template name. The clone path (osImage.builtin) changes the disk, as a re-image does.
*/}}
{{- define "kubernetes-nodes.machineTemplateBody" -}}
{{- include "kubernetes-nodes.ensureDiskSource" . -}}
{{- $disk := ._kubernetesNodes.disk -}}
{{- $written := ._kubernetesNodes.written -}}
{{- $pool := include "kubernetes-nodes.poolName" . -}}
{{- $explicit := include "kubernetes-nodes.explicitResources" . -}}
spec:
  virtualMachineBootstrapCheck:
    checkStrategy: none
  virtualMachineTemplate:
    metadata:
      namespace: {{ .Release.Namespace }}
      labels:
        {{- range .Values.roles }}
        node-role.kubernetes.io/{{ . }}: ""
        {{- end }}
    spec:
      {{- if not $explicit }}
      instancetype:
        kind: VirtualMachineClusterInstancetype
        name: {{ include "kubernetes-nodes.scalar" .Values.instanceType }}
      {{- end }}
      runStrategy: Always
      dataVolumeTemplates:
      - metadata:
          name: disk-system
          annotations:
            {{- if $disk.clone }}
            kubernetes-worker-image.cozystack.io/golden: {{ $disk.golden }}
            kubernetes-worker-image.cozystack.io/pool: {{ $pool }}
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
                storage: {{ (index $written "diskSize").text | quote }}
            {{- with $disk.storageClassName }}
            storageClassName: {{ . | quote }}
            {{- end }}
      template:
        metadata:
          annotations:
            kubevirt.io/allow-pod-bridge-network-live-migration: "true"
          labels:
            apps.cozystack.io/application.group: apps.cozystack.io
            apps.cozystack.io/application.kind: Kubernetes
            apps.cozystack.io/application.name: {{ .Values.cluster | toString | quote }}
            {{- range .Values.roles }}
            node-role.kubernetes.io/{{ . }}: ""
            {{- end }}
            cluster.x-k8s.io/deployment-name: {{ $pool }}
        spec:
          {{- with $written.topologySpread }}
          {{- . | nindent 10 }}
            {{- /* Appended to the platform policy's last constraint. */}}
            labelSelector:
              matchLabels:
                cluster.x-k8s.io/cluster-name: {{ include "kubernetes-nodes.clusterName" $ }}
          {{- end }}
          domain:
            {{- if $explicit }}
            cpu:
              threads: 1
              cores: {{ index $written "resources.cpu" }}
              sockets: 1
            {{- end }}
            devices:
              {{- with .Values.gpus }}
              gpus:
              {{- range $i, $gpu := . }}
              - name: gpu{{ add $i 1 }}
                deviceName: {{ $gpu.name }}
              {{- end }}
              {{- end }}
              disks:
              - name: system
                disk:
                  bus: virtio
                  pciAddress: 0000:07:00.0
                blockSize:
                  custom:
                    logical: 512
                    physical: 4096
              interfaces:
              - name: default
                bridge: {}
              {{- if .Values.logSerialConsole }}
              logSerialConsole: true
              {{- end }}
            {{- if $explicit }}
            memory:
              guest: {{ (index $written "resources.memory").scalar }}
            {{- end }}
            resources:
            {{- /* Cozystack's body holds a line of 14 spaces here, and the name hashes it. */}}
            {{- printf "\n%14s" "" }}
              {{- include "kubernetes-nodes.podResources" . | nindent 14 }}
          evictionStrategy: External
          volumes:
          - name: system
            dataVolume:
              name: disk-system
          networks:
          - name: default
            pod: {}
{{- end -}}
