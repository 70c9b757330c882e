package report

const (
	annGolden        = "kubernetes-worker-image.cozystack.io/golden"
	annPool          = "kubernetes-worker-image.cozystack.io/pool"
	annRetiring      = "kubernetes-worker-image.cozystack.io/retiring"
	machineTemplAPI  = "infrastructure.cluster.x-k8s.io/v1alpha1"
	annCloneType     = "cdi.kubevirt.io/cloneType"
	annCloneFallback = "cdi.kubevirt.io/cloneFallbackReason"
	machineDeplAPI   = "cluster.x-k8s.io/v1beta1"
	// annImportEndpoint: where CDI imported a PVC from.
	annImportEndpoint = "cdi.kubevirt.io/storage.import.endpoint"
	// annImportCertConfigMap and annImportChecksum: CDI's record, on a PVC it
	// imported, of the source's certConfigMap and checksum.
	annImportCertConfigMap = "cdi.kubevirt.io/storage.import.certConfigMap"
	annImportChecksum      = "cdi.kubevirt.io/storage.import.checksum"
	// catalogCAConfigMap is the catalog's ConfigMap of its chart-wide
	// imageFactoryCA; an entry's own CA is in <it>-<schematicID>-<version>.
	catalogCAConfigMap = "kubernetes-worker-image-ca"
)
