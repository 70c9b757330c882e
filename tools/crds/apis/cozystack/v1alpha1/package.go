package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Package installs one variant of the PackageSource of the same name: each
// of its components with install becomes a HelmRelease.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={pkg,pkgs}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Variant",type="string",JSONPath=".spec.variant",description="The variant installed"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status",description="Whether the releases were made"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].message",description="The Ready condition's message"
type Package struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PackageSpec   `json:"spec,omitempty"`
	Status PackageStatus `json:"status,omitempty"`
}

// PackageSpec chooses a variant and overrides its components.
type PackageSpec struct {
	// Variant is the PackageSource's variant to install; "default" when unset.
	// +optional
	Variant string `json:"variant,omitempty"`

	// IgnoreDependencies names entries of the variant's dependsOn not to
	// wait for.
	// +optional
	IgnoreDependencies []string `json:"ignoreDependencies,omitempty"`

	// Components overrides components by name: turns one off, or gives its
	// release values.
	// +optional
	Components map[string]PackageComponent `json:"components,omitempty"`
}

// PackageComponent overrides one component of the variant.
type PackageComponent struct {
	// Enabled false leaves the component out even though the variant has it.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// Values are the Helm values the component's HelmRelease is given.
	// +optional
	Values *apiextensionsv1.JSON `json:"values,omitempty"`
}

// PackageStatus is what the operator observed.
type PackageStatus struct {
	// Conditions are the latest observations of the Package's state.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Dependencies is, per Package of the variant's dependsOn, whether it is
	// ready.
	// +optional
	Dependencies map[string]DependencyStatus `json:"dependencies,omitempty"`
}

// DependencyStatus is whether one dependency is ready.
type DependencyStatus struct {
	// Ready is the dependency Package's Ready condition.
	Ready bool `json:"ready"`
}
