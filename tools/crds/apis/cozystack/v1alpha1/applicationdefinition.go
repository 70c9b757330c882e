package v1alpha1

import (
	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApplicationDefinition makes an application kind of cozystack-api: its
// schema, the chart each application is installed with, and its dashboard
// entry. It has no status.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
type ApplicationDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ApplicationDefinitionSpec `json:"spec,omitempty"`
}

// ApplicationDefinitionSpec is the application, its release and what the
// dashboard shows of it.
type ApplicationDefinitionSpec struct {
	// Application is the kind cozystack-api serves.
	Application ApplicationDefinitionApplication `json:"application"`
	// Release is how each application becomes a HelmRelease.
	Release ApplicationDefinitionRelease `json:"release"`

	// Secrets selects the Secrets a tenant sees of an application.
	Secrets ApplicationDefinitionResources `json:"secrets,omitempty"`
	// Services selects the Services a tenant sees of an application.
	Services ApplicationDefinitionResources `json:"services,omitempty"`
	// Ingresses selects the Ingresses a tenant sees of an application.
	Ingresses ApplicationDefinitionResources `json:"ingresses,omitempty"`

	// Dashboard is the application's entry in the dashboard.
	Dashboard *ApplicationDefinitionDashboard `json:"dashboard,omitempty"`
}

// ApplicationDefinitionApplication names the kind and holds its schema.
type ApplicationDefinitionApplication struct {
	// Kind of the application.
	Kind string `json:"kind"`
	// OpenAPISchema is the application's values schema, as a JSON string.
	// cozystack-api validates nothing with it: it applies the schema's
	// defaults to an application when it reads one. Cozystack's dashboard
	// builds its form from it and validates the form against it.
	OpenAPISchema string `json:"openAPISchema"`
	// Plural is the resource's plural name.
	Plural string `json:"plural"`
	// Singular is the resource's singular name.
	Singular string `json:"singular"`
}

// ApplicationDefinitionRelease is the HelmRelease each application becomes.
type ApplicationDefinitionRelease struct {
	// ChartRef is the chart every application of this kind is installed with.
	ChartRef *helmv2.CrossNamespaceSourceReference `json:"chartRef"`
	// Labels are added to every release.
	Labels map[string]string `json:"labels,omitempty"`
	// Prefix is put before the application's name to name its release; no
	// dot, since a dot separates the release name in derived names.
	// +kubebuilder:validation:Pattern=`^[a-z0-9-]*$`
	Prefix string `json:"prefix"`

	// WaitStrategy is the name of the release's wait strategy.
	// +optional
	// +kubebuilder:validation:Enum=poller;legacy
	WaitStrategy string `json:"waitStrategy,omitempty"`

	// HealthCheckExprs are the release's CEL health checks of the custom
	// resources the application renders.
	// +optional
	HealthCheckExprs []kustomize.CustomHealthCheck `json:"healthCheckExprs,omitempty"`
}

// ApplicationDefinitionResourceSelector is a label selector that may also
// name the objects (Go templates of .name, .kind and .namespace).
type ApplicationDefinitionResourceSelector struct {
	metav1.LabelSelector `json:",inline"`
	// ResourceNames, when set, are the only names that match.
	// +optional
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// ApplicationDefinitionResources selects objects of an application.
type ApplicationDefinitionResources struct {
	// Exclude hides every object any of its selectors matches.
	Exclude []*ApplicationDefinitionResourceSelector `json:"exclude,omitempty"`
	// Include shows every object any of its selectors matches and no
	// exclude selector does.
	Include []*ApplicationDefinitionResourceSelector `json:"include,omitempty"`
}

// DashboardTab is a tab the dashboard shows for an application.
// +kubebuilder:validation:Enum=workloads;ingresses;services;secrets;yaml
type DashboardTab string

// ApplicationDefinitionDashboard is how the dashboard shows the application.
type ApplicationDefinitionDashboard struct {
	// Singular is the name shown for one application.
	Singular string `json:"singular"`
	// Plural is the name shown for several.
	Plural string `json:"plural"`
	// Name is a fixed name the dashboard uses for it.
	// +optional
	Name string `json:"name,omitempty"`
	// SingularResource marks an application there is one of, not a list.
	// +optional
	SingularResource bool `json:"singularResource,omitempty"`
	// Weight orders the entries, lower first.
	// +optional
	Weight int `json:"weight,omitempty"`
	// Description is the short text shown with the entry.
	// +optional
	Description string `json:"description,omitempty"`
	// Icon is the entry's icon (inline SVG, base64 or a data URI).
	// +optional
	Icon string `json:"icon,omitempty"`
	// Category groups entries.
	Category string `json:"category"`
	// Tags are for search and filtering.
	// +optional
	Tags []string `json:"tags,omitempty"`
	// Tabs are the tabs shown for an application.
	// +optional
	Tabs []DashboardTab `json:"tabs,omitempty"`
	// KeysOrder is the order of the keys in the YAML view.
	// +optional
	KeysOrder [][]string `json:"keysOrder,omitempty"`
	// Module marks a tenant module.
	// +optional
	Module bool `json:"module,omitempty"`
}
