package report

// MachineConfigReport is the installer, the registry mirrors and the
// registries' config the worker's machine config gets, each with the channel
// it came from: the pool's own value, _cluster, the catalog's published
// defaults (CatalogChannel) or the chart's built-in value.
type MachineConfigReport struct {
	Installer Installer `json:"installer"`
	// RegistryMirrors is machine.registries.mirrors, sorted by host, merged
	// per host: the published mirrors, then _cluster's, then the pool's own,
	// each replacing the one before for its host.
	RegistryMirrors []RegistryMirror `json:"registryMirrors"`
	// RegistryConfig is machine.registries.config, sorted by host, merged
	// per host: the published CAs, then _cluster's entry for a host
	// replacing it. Never the CA itself or a credential.
	RegistryConfig []RegistryConfigHost `json:"registryConfig"`
}

// Installer is machine.install.image and where its repository came from.
type Installer struct {
	Image      string `json:"image"`
	Repository string `json:"repository"`
	Source     string `json:"source"`
}

// RegistryMirror is one host's mirror as the machine config gets it.
type RegistryMirror struct {
	Host      string   `json:"host"`
	Endpoints []string `json:"endpoints"`
	// OverridePath and SkipFallback are as written; absent when not.
	OverridePath *bool  `json:"overridePath,omitempty"`
	SkipFallback *bool  `json:"skipFallback,omitempty"`
	Source       string `json:"source"`
}

// RegistryConfigHost is one host's registry config: whether the workers
// trust a CA for it (tls.ca) and where the entry came from.
type RegistryConfigHost struct {
	Host   string `json:"host"`
	CA     bool   `json:"ca"`
	Source string `json:"source"`
}
