// Package v1alpha1 declares, for controller-gen, Cozystack's WorkloadMonitor
// (cozystack.io/v1alpha1) as an opaque kind: Cozystack's own kubernetes-nodes
// chart renders one per pool, and the upgrade-cost benchmark installs that
// chart on the tier's API server beside this project's. Cozystack's API module
// is not one this project reads its types from, so only the kind is declared,
// its spec and status kept as written.
//
// +groupName=cozystack.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadMonitor watches a workload's replicas for Cozystack's dashboard.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
type WorkloadMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Spec map[string]any `json:"spec,omitempty"`
}
