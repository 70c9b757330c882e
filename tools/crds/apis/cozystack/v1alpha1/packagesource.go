package v1alpha1

import (
	"github.com/fluxcd/pkg/apis/kustomize"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PackageSource names where a package's charts come from and, per variant,
// which components (charts) it has and which of them are installed where.
// The Cozystack operator makes one ExternalArtifact per component of every
// variant, <packagesource>-<variant>-<component> with dots made dashes.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName={pks}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Variants",type="string",JSONPath=".status.variants",description="The variants' names, comma-separated"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status",description="Whether the artifacts are ready"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].message",description="The Ready condition's message"
type PackageSource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PackageSourceSpec   `json:"spec,omitempty"`
	Status PackageSourceStatus `json:"status,omitempty"`
}

// PackageSourceSpec is where the charts are and the variants made of them.
type PackageSourceSpec struct {
	// SourceRef is the Flux source holding the charts.
	// +optional
	SourceRef *PackageSourceRef `json:"sourceRef,omitempty"`

	// Variants are the configurations a Package can choose from, each with
	// its components, libraries and dependencies.
	// +optional
	Variants []Variant `json:"variants,omitempty"`
}

// PackageSourceRef is a Flux source and the folder of it holding the charts.
type PackageSourceRef struct {
	// Kind of the source.
	// +kubebuilder:validation:Enum=GitRepository;OCIRepository
	// +required
	Kind string `json:"kind"`

	// Name of the source.
	// +required
	Name string `json:"name"`

	// Namespace of the source.
	// +required
	Namespace string `json:"namespace"`

	// Path is the folder of the source the component paths are relative to:
	// "packages" for a GitRepository and the root for an OCIRepository when
	// unset.
	// +optional
	Path string `json:"path,omitempty"`
}

// Variant is one configuration of a package.
type Variant struct {
	// Name identifies the variant; a Package chooses it by this name.
	// +required
	Name string `json:"name"`

	// DependsOn names the Packages (for example cozystack.networking) that
	// must be ready before this variant's components are installed.
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`

	// Libraries are the Helm library charts the components may use.
	// +optional
	Libraries []Library `json:"libraries,omitempty"`

	// Components are the charts of this variant.
	// +optional
	Components []Component `json:"components,omitempty"`
}

// Library is a Helm library chart copied into the components that use it.
type Library struct {
	// Name is the library's folder name under a component's charts/; the last
	// element of path when unset.
	// +optional
	Name string `json:"name,omitempty"`

	// Path is the library chart's folder in the source.
	// +required
	Path string `json:"path"`
}

// Component is one chart of a variant; with install, it is also a release.
type Component struct {
	// Name identifies the component in its variant.
	// +required
	Name string `json:"name"`

	// Path is the chart's folder in the source.
	// +required
	Path string `json:"path"`

	// Install makes the component a HelmRelease; without it the component is
	// only an artifact (a chart others install).
	// +optional
	Install *ComponentInstall `json:"install,omitempty"`

	// Libraries names the variant's libraries this chart uses.
	// +optional
	Libraries []string `json:"libraries,omitempty"`

	// ValuesFiles are the chart's values files merged into its values.yaml,
	// in order.
	// +optional
	ValuesFiles []string `json:"valuesFiles,omitempty"`
}

// ComponentInstall is how a component is installed as a HelmRelease.
type ComponentInstall struct {
	// ReleaseName is the HelmRelease's name; the component's name when unset.
	// +optional
	ReleaseName string `json:"releaseName,omitempty"`

	// Namespace is the namespace the release is installed into.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Privileged marks a release that needs a privileged namespace.
	// +optional
	Privileged bool `json:"privileged,omitempty"`

	// DependsOn names components of the same variant installed first.
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`

	// UpgradeCRDs is the HelmRelease's spec.upgrade.crds: how an upgrade
	// treats the chart's crds/ folder (helm-controller's Skip when unset).
	// +optional
	// +kubebuilder:validation:Enum=Skip;Create;CreateReplace
	UpgradeCRDs string `json:"upgradeCRDs,omitempty"`

	// WaitStrategy is the name of the HelmRelease's wait strategy.
	// +optional
	// +kubebuilder:validation:Enum=poller;legacy
	WaitStrategy string `json:"waitStrategy,omitempty"`

	// HealthCheckExprs are the HelmRelease's CEL health checks of the custom
	// resources the component renders.
	// +optional
	HealthCheckExprs []kustomize.CustomHealthCheck `json:"healthCheckExprs,omitempty"`
}

// PackageSourceStatus is what the operator observed.
type PackageSourceStatus struct {
	// Variants is the variants' names, comma-separated.
	// +optional
	Variants string `json:"variants,omitempty"`

	// Conditions are the latest observations of the PackageSource's state.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
