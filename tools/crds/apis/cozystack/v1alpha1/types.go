// Package v1alpha1 declares, for controller-gen, the kinds of Cozystack's
// cozystack.io/v1alpha1 API the tier serves. Cozystack's own API module is not
// one this project builds from (it replaces k8s.io/apimachinery with a fork),
// so the types are written here from its API at main 3c780acd4
// (api/v1alpha1/*_types.go):
//
//   - PackageSource, Package and ApplicationDefinition (packagesource.go,
//     package.go, applicationdefinition.go): every field, enum, pattern,
//     required field, scope, short name, status subresource and printer column
//     upstream declares, so the objects docs/cozystack.md tells an operator to
//     apply are judged by the schema Cozystack's API server applies.
//   - WorkloadMonitor (below): opaque, its spec kept as written. Cozystack's
//     own kubernetes-nodes chart renders one per pool, and the upgrade-cost
//     benchmark installs that chart on the tier's API server beside this
//     project's.
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
