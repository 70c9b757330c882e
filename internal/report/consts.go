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
)
