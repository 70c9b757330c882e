// Package v1beta1 declares, for controller-gen, the one KubeVirt root type the
// integration tier needs: VirtualMachineClusterInstancetype of
// instancetype.kubevirt.io/v1beta1.
//
// kubevirt.io/api v1.6.0 carries the +groupName marker but none of the
// kubebuilder markers controller-gen needs to make a CRD of a type
// (+kubebuilder:object:root, the Cluster scope, the short names): KubeVirt
// writes its CRDs with its own generator (virt-operator), not controller-gen.
// Markers live in source comments, so they cannot be added to the upstream
// package from outside. This package supplies them on a root type that only
// wraps the upstream spec: every field of the schema below the root comes
// from kubevirt.io/api itself, with its markers, read from the module cache.
//
// +groupName=instancetype.kubevirt.io
package v1beta1
