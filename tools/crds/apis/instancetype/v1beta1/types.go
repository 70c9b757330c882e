package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
)

// The root type below has the shape of
// kubevirt.io/api/instancetype/v1beta1.VirtualMachineClusterInstancetype
// (TypeMeta, ObjectMeta and the upstream spec; no status) and its doc comment,
// which becomes the schema's description. The markers are what KubeVirt's
// virt-operator registers the kind with: cluster-scoped, these short names,
// no subresources, one version.

// VirtualMachineClusterInstancetype is a cluster scoped version of VirtualMachineInstancetype resource.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=vmclusterinstancetype;vmclusterinstancetypes;vmcf;vmcfs
type VirtualMachineClusterInstancetype struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Required spec describing the instancetype
	Spec instancetypev1beta1.VirtualMachineInstancetypeSpec `json:"spec"`
}
