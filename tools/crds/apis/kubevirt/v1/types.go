package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// The root types below have the shape of kubevirt.io/api/core/v1's
// (TypeMeta, ObjectMeta, the upstream spec and status) and their doc
// comments, which become the schemas' descriptions. The markers are what
// KubeVirt's virt-operator registers the kinds with: namespaced, these short
// names in category all, one version (v1, the one KubeVirt stores), a status
// subresource on VirtualMachine and none on VirtualMachineInstance (its
// client is generated with +genclient:noStatus: KubeVirt writes a VMI's
// status with the object).

// VirtualMachine handles the VirtualMachines that are not running
// or are in a stopped state
// The VirtualMachine contains the template to create the
// VirtualMachineInstance. It also mirrors the running state of the created
// VirtualMachineInstance in its status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=vm;vms,categories=all
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
type VirtualMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec contains the specification of VirtualMachineInstance created
	Spec kubevirtv1.VirtualMachineSpec `json:"spec"`
	// Status holds the current state of the controller and brief information
	// about its associated VirtualMachineInstance
	Status kubevirtv1.VirtualMachineStatus `json:"status,omitempty"`
}

// VirtualMachineInstance is *the* VirtualMachineInstance Definition. It represents a virtual machine in the runtime environment of kubernetes.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=vmi;vmis,categories=all
// +kubebuilder:storageversion
type VirtualMachineInstance struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// VirtualMachineInstance Spec contains the VirtualMachineInstance specification.
	Spec kubevirtv1.VirtualMachineInstanceSpec `json:"spec"`
	// Status is the high level overview of how the VirtualMachineInstance is doing. It contains information available to controllers and users.
	Status kubevirtv1.VirtualMachineInstanceStatus `json:"status,omitempty"`
}
