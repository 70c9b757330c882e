package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KamajiControlPlane is the control plane of a Cluster API cluster run by
// Kamaji in the management cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type KamajiControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec KamajiControlPlaneSpec `json:"spec,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Status map[string]any `json:"status,omitempty"`
}

// KamajiControlPlaneSpec holds the control plane's desired state; only its
// network is typed here.
//
// +kubebuilder:pruning:PreserveUnknownFields
type KamajiControlPlaneSpec struct {
	// Network is how the control plane is reached.
	Network NetworkComponent `json:"network,omitempty"`
}

// NetworkComponent is the control plane's Service and certificate names.
//
// +kubebuilder:pruning:PreserveUnknownFields
type NetworkComponent struct {
	// CertSANs are extra names and addresses the API server's certificate
	// carries.
	CertSANs []string `json:"certSANs,omitempty"`
}
