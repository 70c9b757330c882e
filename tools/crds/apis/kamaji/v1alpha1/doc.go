// Package v1alpha1 declares, for controller-gen, the part of Kamaji's Cluster
// API control plane provider (controlplane.cluster.x-k8s.io/v1alpha1) that the
// pool chart's reconcile Job reads and writes: a KamajiControlPlane's uid (the
// owner of the TalosConfigTemplate it applies) and spec.network.certSANs (the
// names the control plane's certificate carries).
//
// The provider's own Go module is not served by the module proxy this project
// builds from, so its types cannot be read here. This package names the kind
// as the provider registers it (namespaced, a status subresource) and types
// only those fields; every other field of the spec and the status is kept as
// written (x-kubernetes-preserve-unknown-fields), so the tier's objects can
// hold the provider's other fields without this package claiming their shape.
//
// +groupName=controlplane.cluster.x-k8s.io
package v1alpha1
