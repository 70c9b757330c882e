package report

import (
	"context"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// gets counts the gets asked of a cluster, by kind.
type gets struct {
	engine.ClientProvider
	n map[string]int
}

func (g *gets) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	r, namespaced, err := g.ClientProvider.GetClientFor(apiVersion, kind)
	return countedGets{NamespaceableResourceInterface: r, count: func() { g.n[kind]++ }}, namespaced, err
}

type countedGets struct {
	dynamic.NamespaceableResourceInterface
	count func()
}

func (c countedGets) Namespace(ns string) dynamic.ResourceInterface {
	return countedNamespaceGets{ResourceInterface: c.NamespaceableResourceInterface.Namespace(ns), count: c.count}
}

func (c countedGets) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	c.count()
	return c.NamespaceableResourceInterface.Get(ctx, name, o, sub...)
}

type countedNamespaceGets struct {
	dynamic.ResourceInterface
	count func()
}

func (c countedNamespaceGets) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	c.count()
	return c.ResourceInterface.Get(ctx, name, o, sub...)
}

// A report over a fleet reads what many pools read once (a StorageClass, a
// namespace's values Secret), and each pool's own objects (its HelmRelease,
// MachineDeployment, KubevirtMachineTemplate) as they are asked for: keeping
// those would hold every pool's objects until the report ends.
func TestFleetSnapshotKeepsOnlyWhatPoolsShare(t *testing.T) {
	objs, err := render.ParseObjects([]byte(`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: replicated}
provisioner: linstor.csi.linbit.com
---
apiVersion: v1
kind: Secret
metadata: {name: cozystack-values, namespace: tenant-acme}
stringData: {values.yaml: "_cluster: {}"}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: kubernetes-acme-workers, namespace: tenant-acme}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: kubernetes-acme-workers-9acc08, namespace: tenant-acme}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kubernetes-nodes-acme-workers, namespace: tenant-acme}
`))
	require.NoError(t, err)
	cluster := &gets{ClientProvider: render.NewState(objs...), n: map[string]int{}}
	snap := FleetSnapshot(cluster)
	ctx := context.Background()
	for range 3 {
		for _, o := range objs {
			got, err := fleet.Get(ctx, snap, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
			require.NoError(t, err)
			require.NotNil(t, got, "%s %s", o.GetKind(), o.GetName())
		}
	}
	require.Equal(t, map[string]int{"StorageClass": 1, "Secret": 1, "MachineDeployment": 3, "KubevirtMachineTemplate": 3, "HelmRelease": 3}, cluster.n)
	require.Nil(t, FleetSnapshot(nil))
}
