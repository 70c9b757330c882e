// Package v2 declares, for controller-gen, Cilium's CiliumNetworkPolicy
// (cilium.io/v2) as an opaque kind: Cozystack's kubernetes-nodes chart and
// this project's pool chart render one where the cluster serves it, and the
// upgrade-cost benchmark installs both charts on the tier's API server.
// Cilium's module is far larger than this one kind, so only the kind is
// declared, its spec kept as written.
//
// +groupName=cilium.io
package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CiliumNetworkPolicy is a Cilium network policy of one namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
type CiliumNetworkPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Spec map[string]any `json:"spec,omitempty"`
}
