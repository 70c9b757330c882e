package render_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// The CLI's state-file reader answers Helm's lookup as the tests' fake cluster
// (client-go's fake dynamic client) does, lists sorted as a real API server sorts them.
func TestStateAnswersLookupsAsTheFakeCluster(t *testing.T) {
	files := []string{support.Fixture("cluster/storageclasses.yaml"), support.Fixture("catalog/goldens.yaml"), support.Fixture("catalog/elsewhere.yaml")}
	state, err := render.LoadState(files...)
	require.NoError(t, err)
	fake, err := support.LoadCluster(files...)
	require.NoError(t, err)
	objs, err := render.LoadObjects(files...)
	require.NoError(t, err)
	require.NotEmpty(t, objs)

	ctx := context.Background()
	client := func(p interface {
		GetClientFor(string, string) (dynamic.NamespaceableResourceInterface, bool, error)
	}, apiVersion, kind, namespace string) dynamic.ResourceInterface {
		c, namespaced, err := p.GetClientFor(apiVersion, kind)
		require.NoError(t, err)
		if namespaced && namespace != "" {
			return c.Namespace(namespace)
		}
		return c
	}
	names := func(l *unstructured.UnstructuredList) []string {
		var out []string
		for _, o := range l.Items {
			out = append(out, o.GetNamespace()+"/"+o.GetName())
		}
		return out
	}
	for _, o := range objs {
		for _, ns := range []string{o.GetNamespace(), "", "elsewhere-ns"} {
			got, err := client(state, o.GetAPIVersion(), o.GetKind(), ns).List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			want, err := client(fake, o.GetAPIVersion(), o.GetKind(), ns).List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			require.ElementsMatch(t, names(want), names(got), "list %s in %q", o.GetKind(), ns)
			require.IsIncreasing(t, append([]string{""}, names(got)...), "sorted by namespace and name")
		}
		got, err := client(state, o.GetAPIVersion(), o.GetKind(), o.GetNamespace()).Get(ctx, o.GetName(), metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, o.Object, got.Object)

		_, err = client(state, o.GetAPIVersion(), o.GetKind(), o.GetNamespace()).Get(ctx, "absent", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "an absent object is NotFound, which lookup answers with an empty map: %v", err)
	}
	// A kind the state holds none of lists empty, as a served kind does.
	l, err := client(state, "cdi.kubevirt.io/v1beta1", "DataVolume", "nowhere").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, l.Items)
	_, err = client(state, "v1", "ConfigMap", "x").Create(ctx, &unstructured.Unstructured{}, metav1.CreateOptions{})
	require.Error(t, err, "a state file is read-only")
}

// A state file serves the snapshot API when it holds an object of it, so the
// pool's snapshot refusal sees what it would on that cluster.
func TestStateServesTheAPIVersionsOfItsObjects(t *testing.T) {
	without, err := render.ParseObjects([]byte("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: a}\nprovisioner: p\n"))
	require.NoError(t, err)
	served, err := render.NewState(without...).APIVersions()
	require.NoError(t, err)
	require.Empty(t, served)

	with, err := render.ParseObjects([]byte("apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshotClass\nmetadata: {name: a}\ndriver: p\ndeletionPolicy: Delete\n"))
	require.NoError(t, err)
	served, err = render.NewState(append(without, with...)...).APIVersions()
	require.NoError(t, err)
	require.Equal(t, []string{"snapshot.storage.k8s.io/v1", "snapshot.storage.k8s.io/v1/VolumeSnapshotClass"}, served)
}

// A cluster serves the snapshot API without holding a VolumeSnapshotClass:
// its state file says so by the CRD kubectl wrote into it, as discovery
// says so live, so the chart's check 8 names the same cause on both (the
// file read as not serving it was the one difference the tier found between
// a live fleet and its state file). A version the CRD does not serve, or a
// CRD of another group, serves nothing.
func TestStateServesTheAPIVersionsOfItsCRDs(t *testing.T) {
	crd := func(group, version string, served bool) string {
		return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: volumesnapshotclasses.%[1]s}
spec:
  group: %[1]s
  names: {kind: VolumeSnapshotClass, plural: volumesnapshotclasses}
  scope: Cluster
  versions: [{name: %[2]s, served: %[3]t, storage: true}]
`, group, version, served)
	}
	for _, c := range []struct {
		name, objs string
		want       []string
	}{
		{"served, no object", crd("snapshot.storage.k8s.io", "v1", true), []string{"snapshot.storage.k8s.io/v1", "snapshot.storage.k8s.io/v1/VolumeSnapshotClass"}},
		{"listed, not served", crd("snapshot.storage.k8s.io", "v1", false), nil},
		{"another version", crd("snapshot.storage.k8s.io", "v1beta1", true), nil},
		{"another group", crd("snapshot.example.org", "v1", true), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs, err := render.ParseObjects([]byte("apiVersion: v1\nkind: List\nitems: []\n---\n" + c.objs))
			require.NoError(t, err)
			served, err := render.NewState(objs...).APIVersions()
			require.NoError(t, err)
			require.Equal(t, c.want, served)
		})
	}
}

// A state file holding the cluster's CRDs (docs/cli.md's kubectl command
// takes them) serves what that cluster served: a kind no CRD serves, not
// built into Kubernetes and of which it holds no object, is not served, as
// discovery answers live (before, every kind was served, empty, and a
// cluster serving no HelmRelease read as one holding none). A kind a CRD
// serves reads empty, built-in kinds are served without a CRD, and a file
// without CRDs serves every kind, as before.
func TestStateWithCRDsServesWhatTheyServe(t *testing.T) {
	const vscCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: volumesnapshotclasses.snapshot.storage.k8s.io}
spec:
  group: snapshot.storage.k8s.io
  names: {kind: VolumeSnapshotClass, plural: volumesnapshotclasses}
  scope: Cluster
  versions: [{name: v1, served: true, storage: true}]
`
	const objects = `apiVersion: v1
kind: Secret
metadata: {name: s, namespace: n}
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: d, namespace: n}
`
	served := func(t *testing.T, st *render.State, apiVersion, kind string) bool {
		t.Helper()
		c, _, err := st.GetClientFor(apiVersion, kind)
		if errors.Is(err, render.ErrKindNotServed) {
			require.Contains(t, err.Error(), "no kind "+kind+" in "+apiVersion)
			return false
		}
		require.NoError(t, err)
		_, err = c.List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		return true
	}
	objs, err := render.ParseObjects([]byte(vscCRD + "---\n" + objects))
	require.NoError(t, err)
	withCRDs := render.NewState(objs...)
	require.False(t, served(t, withCRDs, "helm.toolkit.fluxcd.io/v2", "HelmRelease"), "no CRD serves it, no object of it")
	require.True(t, served(t, withCRDs, "snapshot.storage.k8s.io/v1", "VolumeSnapshotClass"), "its CRD serves it")
	require.False(t, served(t, withCRDs, "snapshot.storage.k8s.io/v1beta1", "VolumeSnapshotClass"), "its CRD serves only v1")
	require.True(t, served(t, withCRDs, "v1", "ConfigMap"), "built into Kubernetes")
	require.True(t, served(t, withCRDs, "storage.k8s.io/v1", "StorageClass"), "built into Kubernetes")
	require.True(t, served(t, withCRDs, "cdi.kubevirt.io/v1beta1", "DataVolume"), "it holds one")

	objs, err = render.ParseObjects([]byte(objects))
	require.NoError(t, err)
	require.True(t, served(t, render.NewState(objs...), "helm.toolkit.fluxcd.io/v2", "HelmRelease"), "a file without CRDs cannot tell")
}
