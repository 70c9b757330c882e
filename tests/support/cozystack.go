package support

import "fmt"

// What a stock Cozystack (main 3c780acd4) gives a KubernetesNodes pool: the
// release settings of its ApplicationDefinition kubernetes-nodes (the fixture
// tests/render/testdata/cozystack/kubernetes-nodes-rd.yaml, which a test holds
// these to) and cozystack-api's defaults for the settings it leaves to them.
const (
	// CozystackArtifact is the ExternalArtifact in cozy-system that
	// upstream's ApplicationDefinition names the pool chart by.
	CozystackArtifact          = "cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes"
	CozystackArtifactNamespace = "cozy-system"
	// CozystackReleasePrefix is spec.release.prefix: a pool's HelmRelease is
	// the prefix and its application's name.
	CozystackReleasePrefix = "kubernetes-nodes-"
	// CozystackShardLabel and CozystackShard are spec.release.labels: the
	// helm-controller shard that reconciles tenants' releases.
	CozystackShardLabel = "sharding.fluxcd.io/key"
	CozystackShard      = "tenants"
	// CozystackHelmTimeout is the ApplicationDefinition's
	// release.cozystack.io/helm-install-timeout, which cozystack-api gives
	// both install and upgrade; helm-install-disable-wait is "true".
	CozystackHelmTimeout = "15m"
	// cozystack-api's defaults (--helmrelease-interval,
	// --helmrelease-retry-interval, --helmrelease-max-history), which
	// Cozystack's cozystack-api Deployment does not override.
	CozystackInterval      = "5m"
	CozystackRetryInterval = "30s"
	CozystackMaxHistory    = 5
)

// CozystackHelmRelease is the HelmRelease cozystack-api writes when a tenant
// creates the KubernetesNodes application app in namespace with spec values
// (a YAML flow or block value, indented for the values: key): the release
// labels, then the application's kind, group and name; chartRef to the
// artifact; the interval and history limit; install and upgrade under
// RetryOnFailure with the rd's timeout and no wait; the namespace's
// cozystack-values Secret first, then the application's own values. The one
// definition of that shape: the tier creates its pools with it, and a test
// holds every Cozystack pool of the examples and fixtures to it.
func CozystackHelmRelease(namespace, app, values string) string {
	return CozystackHelmReleaseOf(CozystackArtifact, namespace, app, values)
}

// CozystackHelmReleaseOf is CozystackHelmRelease for an ApplicationDefinition
// whose chartRef names artifact (in cozy-system): after the install page's
// takeover, this pool chart's artifact.
func CozystackHelmReleaseOf(artifact, namespace, app, values string) string {
	return fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: %[4]s%[2]s
  namespace: %[1]s
  labels:
    %[5]s: %[6]s
    apps.cozystack.io/application.kind: KubernetesNodes
    apps.cozystack.io/application.group: apps.cozystack.io
    apps.cozystack.io/application.name: %[2]s
spec:
  chartRef: {kind: ExternalArtifact, name: %[7]s, namespace: %[8]s}
  interval: %[9]s
  maxHistory: %[12]d
  install:
    timeout: %[10]s
    disableWait: true
    strategy: {name: RetryOnFailure, retryInterval: %[11]s}
  upgrade:
    timeout: %[10]s
    disableWait: true
    strategy: {name: RetryOnFailure, retryInterval: %[11]s}
  valuesFrom: [{kind: Secret, name: cozystack-values}]
  values: %[3]s
`, namespace, app, values, CozystackReleasePrefix, CozystackShardLabel, CozystackShard,
		artifact, CozystackArtifactNamespace, CozystackInterval, CozystackHelmTimeout,
		CozystackRetryInterval, CozystackMaxHistory)
}
