{{/*
How a worker joins. The Talos machine config a worker boots with must carry what only the parent
cluster's live objects hold: the control plane's Service address (Kamaji allocates it), the cluster's
Kubernetes CA (Kamaji), the Talos CA (cert-manager) and the cluster's tokens (the parent release's
Secret), and the management cluster's DNS address. None exists when a pool is first rendered, and the
tokens are secrets, which must not land in any Helm release record. So the release carries the config
with placeholders for those values (a ConfigMap) and a Job that waits for the parent's objects, checks
each value's shape, patches the control plane's certificate names with the Service address, and applies
the TalosConfigTemplate kubernetes-<cluster>-<pool> (a stable name: its content rolls no worker) with
the values filled in. The chart README, "How workers join", has the whole story.
*/}}

{{/* The name of the pool's talos-config objects: ConfigMap, ServiceAccount, Role, RoleBinding. */}}
{{- define "kubernetes-nodes.talosConfigName" -}}
{{- printf "%s-talos-config" (include "kubernetes-nodes.poolName" .) -}}
{{- end -}}

{{/*
Placeholders the Job fills with the parent's live values, each written single-quoted in the YAML (the
'@' start forces the quotes), so a value of the checked shape stays a string wherever it lands.
*/}}
{{- define "kubernetes-nodes.talosConfigPlaceholders" -}}
talosToken: "@TALOS_TOKEN@"
talosCA: "@TALOS_CA@"
clusterID: "@CLUSTER_ID@"
clusterSecret: "@CLUSTER_SECRET@"
bootstrapToken: "@BOOTSTRAP_TOKEN@"
kubernetesCA: "@KUBERNETES_CA@"
serviceIP: "@SERVICE_IP@"
dnsIP: "@DNS_IP@"
controlPlaneUID: "@CONTROL_PLANE_UID@"
{{- end -}}

{{/*
The tenant cluster's network as the parent cluster's Kamaji control plane runs it (Cozystack's own
values): a worker's config must name the same.
*/}}
{{- define "kubernetes-nodes.tenantNetwork" -}}
dnsDomain: cluster.local
podSubnets: [10.243.0.0/16]
serviceSubnets: [10.95.0.0/16]
{{- end -}}

{{/* The worker's Talos machine config (v1alpha1), placeholders in place, as a map. Takes the root. */}}
{{- define "kubernetes-nodes.workerMachineConfig" -}}
{{- include "kubernetes-nodes.ensureSizing" . -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.talosConfigPlaceholders") -}}
{{- include "kubernetes-nodes.ensureTable" (dict "root" . "name" "kubernetes-nodes.tenantNetwork") -}}
{{- $p := index ._kubernetesNodes.tables "kubernetes-nodes.talosConfigPlaceholders" -}}
{{- $network := index ._kubernetesNodes.tables "kubernetes-nodes.tenantNetwork" -}}
{{- $sizing := ._kubernetesNodes.sizing -}}
{{- $cluster := include "kubernetes-nodes.clusterName" . -}}
{{- $service := printf "%s.%s.svc" $cluster .Release.Namespace -}}
{{- $platformDomain := ._kubernetesNodes.written.platformClusterDomain -}}
{{- $search := list (printf "svc.%s" $platformDomain) $platformDomain -}}
{{- if ne $platformDomain "cluster.local" -}}
{{- $search = concat $search (list "svc.cluster.local" "cluster.local") -}}
{{- end -}}
{{- $machine := dict
  "type" "worker"
  "token" $p.talosToken
  "ca" (dict "crt" $p.talosCA)
  "network" (dict
    "nameservers" (list $p.dnsIP)
    "searchDomains" $search
    "extraHostEntries" (list (dict "ip" $p.serviceIP "aliases" (list $service (printf "%s.%s" $service $network.dnsDomain)))))
  "kubelet" (dict
    "image" (printf "ghcr.io/siderolabs/kubelet:%s" (include "kubernetes-nodes.kubernetesRelease" .))
    "extraConfig" (dict
      "systemReserved" (dict "cpu" $sizing.systemReservedCpu "memory" $sizing.systemReservedMemory)
      "kubeReserved" (dict "cpu" $sizing.kubeReservedCpu "memory" $sizing.kubeReservedMemory)
      "evictionHard" (dict "memory.available" $sizing.evictionHardMemory "nodefs.available" "10%" "imagefs.available" "15%" "nodefs.inodesFree" "5%")
      "evictionSoft" (dict "memory.available" $sizing.evictionSoftMemory "nodefs.available" "15%" "imagefs.available" "20%")
      "evictionSoftGracePeriod" (dict "memory.available" "1m30s" "nodefs.available" "1m30s" "imagefs.available" "1m30s")
      "evictionMinimumReclaim" (dict "memory.available" "256Mi")))
  "install" (dict "disk" "/dev/vda" "image" (include "kubernetes-nodes.installerImage" .) "wipe" false)
  "features" (dict "rbac" true "kubePrism" (dict "enabled" false)) -}}
{{- /* The GPU device plugin schedules on nodes labelled gpu=on. */ -}}
{{- if .Values.gpus -}}
{{- $_ := set $machine "nodeLabels" (dict "gpu" "on") -}}
{{- end -}}
{{- include "kubernetes-nodes.ensureMachineConfigDefaults" . -}}
{{- with ._kubernetesNodes.machineConfigDefaults.registries -}}
{{- $_ := set $machine "registries" . -}}
{{- end -}}
{{- $config := dict
  "version" "v1alpha1"
  "persist" true
  "machine" $machine
  "cluster" (dict
    "id" $p.clusterID
    "secret" $p.clusterSecret
    "clusterName" $cluster
    "controlPlane" (dict "endpoint" (printf "https://%s:6443" $service))
    "network" $network
    "token" $p.bootstrapToken
    "ca" (dict "crt" $p.kubernetesCA)
    "discovery" (dict "enabled" true "registries" (dict "kubernetes" (dict "disabled" true) "service" (dict "disabled" true)))) -}}
{{- $config | toYaml -}}
{{- end -}}

{{/* The TalosConfigTemplate's metadata: named for the pool, owned by the parent's control plane. */}}
{{- define "kubernetes-nodes.talosConfigTemplateMetadata" -}}
{{- $cluster := include "kubernetes-nodes.clusterName" . -}}
{{- $p := index ._kubernetesNodes.tables "kubernetes-nodes.talosConfigPlaceholders" -}}
{{- dict
  "name" (include "kubernetes-nodes.poolName" .)
  "namespace" .Release.Namespace
  "labels" (dict "cluster.x-k8s.io/cluster-name" $cluster)
  "annotations" (dict "helm.sh/resource-policy" "keep")
  "ownerReferences" (list (dict "apiVersion" "controlplane.cluster.x-k8s.io/v1alpha1" "kind" "KamajiControlPlane" "name" $cluster "uid" $p.controlPlaneUID "controller" true "blockOwnerDeletion" true))
  | toYaml -}}
{{- end -}}

{{/*
The Job's script: POSIX sh, sed, base64 and kubectl, nothing else. It reads the parent's objects by
name, waits for them (ATTEMPTS times INTERVAL seconds, then fails and the Job retries), refuses a value
of the wrong shape rather than writing it into a machine config, and substitutes only checked values,
so nothing a tenant or an object holds is ever run by the shell.
*/}}
{{- define "kubernetes-nodes.talosConfigScript" -}}
#!/bin/sh
set -eu
say() { printf '%s talos-config %s/%s: %s\n' "$(date -u +%H:%M:%S)" "$NAMESPACE" "$POOL" "$*"; }
field() { kubectl get "$@" 2>/dev/null || true; }
newline='
'
# shape NAME VALUE ERE: the value is one line that matches the ERE whole.
shape() {
  case "$2" in
    '' | *"$newline"*) ok= ;;
    *) if printf '%s\n' "$2" | grep -Eqx "$3"; then ok=1; else ok=; fi ;;
  esac
  if [ -z "$ok" ] || [ "${#2}" -gt 65536 ]; then
    say "$1 does not have the shape the parent cluster writes ($3); it is not written into a machine config: fix or recreate that object"
    exit 1
  fi
}
attempt=1
while :; do
  service_ip=$(field -n "$NAMESPACE" service "$CLUSTER" -o 'jsonpath={.spec.clusterIP}')
  control_plane_uid=$(field -n "$NAMESPACE" kamajicontrolplane "$CLUSTER" -o 'jsonpath={.metadata.uid}')
  kubernetes_ca=$(field -n "$NAMESPACE" secret "$CLUSTER-ca" -o 'jsonpath={.data.ca\.crt}')
  talos_ca=$(field -n "$NAMESPACE" secret "$CLUSTER-talos-ca" -o 'jsonpath={.data.tls\.crt}')
  tokens=$(field -n "$NAMESPACE" secret "$CLUSTER-talos-secrets" -o 'jsonpath={.data.token} {.data.clusterId} {.data.clusterSecret} {.data.bootstrapToken}')
  dns_ip=$(field -n kube-system service kube-dns -o 'jsonpath={.spec.clusterIP}')
  missing=
  [ -n "$service_ip" ] || missing="$missing service/$CLUSTER"
  [ -n "$control_plane_uid" ] || missing="$missing kamajicontrolplane/$CLUSTER"
  [ -n "$kubernetes_ca" ] || missing="$missing secret/$CLUSTER-ca"
  [ -n "$talos_ca" ] || missing="$missing secret/$CLUSTER-talos-ca"
  set -- $tokens
  [ "$#" -eq 4 ] || missing="$missing secret/$CLUSTER-talos-secrets"
  [ -n "$dns_ip" ] || missing="$missing kube-system/service/kube-dns"
  [ -n "$missing" ] || break
  if [ "$attempt" -ge "$ATTEMPTS" ]; then
    say "the parent cluster's objects are still missing after $ATTEMPTS tries:$missing; exiting for the Job to retry"
    exit 1
  fi
  [ "$attempt" -gt 1 ] || say "waiting for the parent cluster's objects:$missing"
  attempt=$((attempt + 1))
  sleep "$INTERVAL"
done
talos_token=$(printf '%s' "$1" | base64 -d)
cluster_id=$(printf '%s' "$2" | base64 -d)
cluster_secret=$(printf '%s' "$3" | base64 -d)
bootstrap_token=$(printf '%s' "$4" | base64 -d)
ip='[0-9A-Fa-f.:]{2,45}'
base64='[A-Za-z0-9+/]+={0,2}'
token='[a-z0-9]{6}[.][a-z0-9]{16}'
shape "service/$CLUSTER spec.clusterIP" "$service_ip" "$ip"
shape "kube-system/service/kube-dns spec.clusterIP" "$dns_ip" "$ip"
shape "kamajicontrolplane/$CLUSTER metadata.uid" "$control_plane_uid" '[0-9a-f-]{36}'
shape "secret/$CLUSTER-ca data.ca.crt" "$kubernetes_ca" "$base64"
shape "secret/$CLUSTER-talos-ca data.tls.crt" "$talos_ca" "$base64"
shape "secret/$CLUSTER-talos-secrets data.token" "$talos_token" "$token"
shape "secret/$CLUSTER-talos-secrets data.bootstrapToken" "$bootstrap_token" "$token"
shape "secret/$CLUSTER-talos-secrets data.clusterId" "$cluster_id" "$base64"
shape "secret/$CLUSTER-talos-secrets data.clusterSecret" "$cluster_secret" "$base64"
# Workers reach the control plane at the Service address under these names;
# its certificate must name them (Kamaji reissues it on this change).
kubectl -n "$NAMESPACE" patch kamajicontrolplane "$CLUSTER" --type=merge \
  -p "{\"spec\":{\"network\":{\"certSANs\":[\"$CLUSTER.$NAMESPACE.svc\",\"$CLUSTER.$NAMESPACE.svc.$TENANT_DNS_DOMAIN\",\"$service_ip\"]}}}"
filled=$(sed -e "s|@TALOS_TOKEN@|$talos_token|g" \
  -e "s|@TALOS_CA@|$talos_ca|g" \
  -e "s|@CLUSTER_ID@|$cluster_id|g" \
  -e "s|@CLUSTER_SECRET@|$cluster_secret|g" \
  -e "s|@BOOTSTRAP_TOKEN@|$bootstrap_token|g" \
  -e "s|@KUBERNETES_CA@|$kubernetes_ca|g" \
  -e "s|@SERVICE_IP@|$service_ip|g" \
  -e "s|@DNS_IP@|$dns_ip|g" \
  -e "s|@CONTROL_PLANE_UID@|$control_plane_uid|g" \
  "$CONFIG_DIR/talosconfigtemplate.yaml")
apply() { printf '%s\n' "$filled" | kubectl apply --server-side --field-manager=talos-config --force-conflicts -f - 2>&1; }
if ! out=$(apply); then
  case "$out" in
    *"TalosConfigTemplate.Spec is immutable"*)
      # The Talos bootstrap provider's webhook refuses every change to a template's spec. The
      # template keeps its name (its content rolls no worker): replaced, it serves new workers;
      # each running worker keeps the TalosConfig it was created with.
      say "the bootstrap provider refuses changes to a TalosConfigTemplate's spec: replacing $POOL"
      kubectl -n "$NAMESPACE" delete talosconfigtemplate "$POOL" --wait=true
      out=$(apply) || { printf '%s\n' "$out" >&2; exit 1; }
      ;;
    *) printf '%s\n' "$out" >&2; exit 1 ;;
  esac
fi
printf '%s\n' "$out"
say "TalosConfigTemplate $POOL written (control plane at $service_ip)"
{{- end -}}

{{/* Every object of the join: the config, the Job that writes it, and the Job's permissions. */}}
{{- define "kubernetes-nodes.talosConfigObjects" -}}
{{- $pool := include "kubernetes-nodes.poolName" . -}}
{{- $cluster := include "kubernetes-nodes.clusterName" . -}}
{{- $name := include "kubernetes-nodes.talosConfigName" . -}}
{{- $namespace := .Release.Namespace -}}
{{- include "kubernetes-nodes.ensureImage" . -}}
{{- $machineConfig := include "kubernetes-nodes.workerMachineConfig" . -}}
{{- $metadata := include "kubernetes-nodes.talosConfigTemplateMetadata" . -}}
{{- $talosVersion := ._kubernetesNodes.image.version -}}
{{- $script := include "kubernetes-nodes.talosConfigScript" . -}}
{{- /* The config's identity, hashed part by part: a pool's mirrors may be large, and a joined copy would double them. */ -}}
{{- $configHash := printf "%s %s %s %s" (sha256sum $metadata) $talosVersion (sha256sum $machineConfig) (sha256sum $script) | sha256sum -}}
{{- $labels := dict "cluster.x-k8s.io/cluster-name" $cluster -}}
{{- $image := .Values.images.kubectl | default "docker.io/alpine/k8s:1.33.4@sha256:b0523f0a244ddc4c8e055aa335c040d3d78b3ead5528f4544395f7f9f69c7b68" -}}
{{- $configDir := "/etc/talos-config" -}}
{{- $jobSpec := dict
  "backoffLimit" 30
  "ttlSecondsAfterFinished" 600
  "template" (dict
    "metadata" (dict
      "labels" (dict "kubernetes-worker-image.cozystack.io/talos-config" $pool)
      "annotations" (dict "kubernetes-worker-image.cozystack.io/config-sha256" $configHash))
    "spec" (dict
      "restartPolicy" "OnFailure"
      "serviceAccountName" $name
      "containers" (list (dict
        "name" "talos-config"
        "image" $image
        "command" (list "sh" (printf "%s/write-talos-config.sh" $configDir))
        "env" (list
          (dict "name" "NAMESPACE" "value" $namespace)
          (dict "name" "CLUSTER" "value" $cluster)
          (dict "name" "POOL" "value" $pool)
          (dict "name" "TENANT_DNS_DOMAIN" "value" "cluster.local")
          (dict "name" "CONFIG_DIR" "value" $configDir)
          (dict "name" "ATTEMPTS" "value" "120")
          (dict "name" "INTERVAL" "value" "5"))
        "volumeMounts" (list (dict "name" "config" "mountPath" $configDir "readOnly" true))
        "resources" (dict "requests" (dict "cpu" "10m" "memory" "64Mi") "limits" (dict "cpu" "100m" "memory" "256Mi"))
        "securityContext" (dict
          "allowPrivilegeEscalation" false
          "capabilities" (dict "drop" (list "ALL"))
          "readOnlyRootFilesystem" true
          "runAsNonRoot" true
          "runAsUser" 65532
          "seccompProfile" (dict "type" "RuntimeDefault"))))
      "volumes" (list (dict "name" "config" "configMap" (dict "name" $name))))) -}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  {{- dict "name" $name "namespace" $namespace "labels" $labels | toYaml | nindent 2 }}
data:
  {{- /* The TalosConfigTemplate the Job applies, its placeholders in place; written as text around
         the machine config, which is serialized once however large the pool's mirrors are. */}}
  talosconfigtemplate.yaml: |
    apiVersion: bootstrap.cluster.x-k8s.io/v1alpha3
    kind: TalosConfigTemplate
    metadata:
      {{- $metadata | nindent 6 }}
    spec:
      template:
        spec:
          generateType: none
          talosVersion: {{ $talosVersion }}
          data: |
            {{- $machineConfig | nindent 12 }}
  write-talos-config.sh: |
    {{- $script | nindent 4 }}
{{- $objects := list
  (dict "apiVersion" "v1" "kind" "ServiceAccount" "metadata" (dict "name" $name "namespace" $namespace "labels" $labels))
  (dict "apiVersion" "rbac.authorization.k8s.io/v1" "kind" "Role" "metadata" (dict "name" $name "namespace" $namespace "labels" $labels)
    "rules" (list
      (dict "apiGroups" (list "") "resources" (list "services") "resourceNames" (list $cluster) "verbs" (list "get"))
      (dict "apiGroups" (list "") "resources" (list "secrets") "resourceNames" (list (printf "%s-ca" $cluster) (printf "%s-talos-ca" $cluster) (printf "%s-talos-secrets" $cluster)) "verbs" (list "get"))
      (dict "apiGroups" (list "controlplane.cluster.x-k8s.io") "resources" (list "kamajicontrolplanes") "resourceNames" (list $cluster) "verbs" (list "get" "patch"))
      (dict "apiGroups" (list "bootstrap.cluster.x-k8s.io") "resources" (list "talosconfigtemplates") "resourceNames" (list $pool) "verbs" (list "get" "patch" "delete"))
      (dict "apiGroups" (list "bootstrap.cluster.x-k8s.io") "resources" (list "talosconfigtemplates") "verbs" (list "create"))))
  (dict "apiVersion" "rbac.authorization.k8s.io/v1" "kind" "RoleBinding" "metadata" (dict "name" $name "namespace" $namespace "labels" $labels)
    "roleRef" (dict "apiGroup" "rbac.authorization.k8s.io" "kind" "Role" "name" $name)
    "subjects" (list (dict "kind" "ServiceAccount" "name" $name "namespace" $namespace)))
  (dict "apiVersion" "rbac.authorization.k8s.io/v1" "kind" "ClusterRole" "metadata" (dict "name" (printf "%s-%s-kube-dns" $namespace $pool) "labels" $labels)
    "rules" (list (dict "apiGroups" (list "") "resources" (list "services") "resourceNames" (list "kube-dns") "verbs" (list "get"))))
  (dict "apiVersion" "rbac.authorization.k8s.io/v1" "kind" "ClusterRoleBinding" "metadata" (dict "name" (printf "%s-%s-kube-dns" $namespace $pool) "labels" $labels)
    "roleRef" (dict "apiGroup" "rbac.authorization.k8s.io" "kind" "ClusterRole" "name" (printf "%s-%s-kube-dns" $namespace $pool))
    "subjects" (list (dict "kind" "ServiceAccount" "name" $name "namespace" $namespace))) -}}
{{- /* A tenant namespace denies egress by default on Cozystack; the Job needs the API server and DNS. */ -}}
{{- if .Capabilities.APIVersions.Has "cilium.io/v2/CiliumNetworkPolicy" -}}
{{- $objects = append $objects (dict "apiVersion" "cilium.io/v2" "kind" "CiliumNetworkPolicy" "metadata" (dict "name" $name "namespace" $namespace "labels" $labels)
  "spec" (dict
    "endpointSelector" (dict "matchLabels" (dict "kubernetes-worker-image.cozystack.io/talos-config" $pool))
    "egress" (list
      (dict "toEntities" (list "kube-apiserver"))
      (dict "toEndpoints" (list (dict "matchLabels" (dict "k8s:io.kubernetes.pod.namespace" "kube-system" "k8s:k8s-app" "kube-dns")))
        "toPorts" (list (dict "ports" (list (dict "port" "53" "protocol" "UDP") (dict "port" "53" "protocol" "TCP")))))))) -}}
{{- end -}}
{{- $objects = append $objects (dict "apiVersion" "batch/v1" "kind" "Job"
  "metadata" (dict "name" (printf "%s-talos-%s" $pool ($jobSpec | toJson | sha256sum | trunc 6)) "namespace" $namespace "labels" $labels)
  "spec" $jobSpec) -}}
{{- range $objects }}
---
{{ toYaml . }}
{{- end }}
{{- end -}}
