// Package v1 declares, for controller-gen, the two KubeVirt root types
// Cluster API's KubeVirt provider reads and writes: VirtualMachine and
// VirtualMachineInstance of kubevirt.io/v1.
//
// As for instancetype (../../instancetype/v1beta1), kubevirt.io/api carries
// none of the kubebuilder markers that make a CRD of a type: KubeVirt writes
// its CRDs with virt-operator. The root types here wrap the upstream spec and
// status; every field below the root comes from kubevirt.io/api itself, with
// its markers (the templates' metadata keeps unknown fields, as KubeVirt's
// own schema does).
//
// +groupName=kubevirt.io
package v1
