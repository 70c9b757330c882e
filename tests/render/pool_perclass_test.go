package render

import (
	"context"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A pool chooses the golden for its class (docs/design.md "One flavor on several
// StorageClasses"): the plain one on its class, else the per-class one.
var perClassLocal = defaultGolden + "--local"

func perClassCluster(t testing.TB, objs ...string) *support.Cluster {
	all := ""
	for _, o := range objs {
		all += o
	}
	return clusterFromYAML(t, all, "cluster/instancetypes.yaml", "cluster/storageclasses.yaml")
}

var (
	plainOnReplicated = golden{class: "replicated", size: "6Gi", phase: "Succeeded"}.yaml()
	plainOnLocal      = golden{class: "local", size: "6Gi", phase: "Succeeded"}.yaml()
	perClassOnLocal   = golden{name: perClassLocal, class: "local", size: "6Gi", phase: "Succeeded"}.yaml()
)

const localPool = "{cluster: acme, storageClass: local, osImage: {builtin: {}}}"

func TestPoolClonesThePerClassGoldenOfItsClass(t *testing.T) {
	for _, tc := range []struct{ name, plain string }{
		{"the plain golden is on another class", plainOnReplicated},
		{"the plain golden is absent", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := perClassCluster(t, tc.plain, perClassOnLocal)
			m := mustRenderPool(t, vals(t, localPool), cluster)
			disk := diskOf(m)
			assert.Equal(t, map[string]interface{}{"namespace": "cozy-public", "name": perClassLocal}, render.Get(disk, "spec.source.pvc"))
			assert.Equal(t, perClassLocal, render.Get(disk, "metadata.annotations[kubernetes-worker-image.cozystack.io/golden]"))
			assert.Equal(t, "local", render.Get(disk, "spec.storage.storageClassName"))
			assert.Equal(t, 2, cluster.CallsByVerb()["get datavolumes"], "the plain golden, then the per-class one: fixed GETs")
		})
	}
}

// The plain golden on the pool's class wins, with today's bytes and requests,
// even when a per-class golden for that class exists too.
func TestPlainGoldenOnThePoolsClassKeepsTodaysBytes(t *testing.T) {
	before := perClassCluster(t, plainOnLocal)
	after := perClassCluster(t, plainOnLocal, perClassOnLocal)
	mBefore := mustRenderPool(t, vals(t, localPool), before)
	mAfter := mustRenderPool(t, vals(t, localPool), after)
	assert.Equal(t, mBefore.Text(), mAfter.Text())
	assert.Equal(t, defaultGolden, render.Get(diskOf(mAfter), "spec.source.pvc.name"))
	assert.Equal(t, before.CallsByVerb(), after.CallsByVerb(), "no per-class lookup")

	// A catalog that only adds per-class goldens changes no pool that renders today.
	healthy := mustRenderPool(t, vals(t, builtinPool), healthyCluster(t)).Text()
	assert.Equal(t, healthy, mustRenderPool(t, vals(t, builtinPool), healthyCluster(t, perClassOnLocal)).Text())
}

func TestPerClassGoldenRefusals(t *testing.T) {
	for _, tc := range []struct {
		name             string
		values           string
		cluster          []string
		refusal          []string
		neighbourValues  string
		neighbourCluster []string
	}{
		{
			name:             "a failed plain golden on the pool's class is refused, never swapped",
			values:           localPool,
			cluster:          []string{golden{class: "local", size: "6Gi", phase: "Failed"}.yaml(), perClassOnLocal},
			refusal:          []string{"golden " + defaultGolden + " in cozy-public failed to import"},
			neighbourValues:  localPool,
			neighbourCluster: []string{plainOnReplicated, perClassOnLocal},
		},
		{
			name:             "the per-class golden failed",
			values:           localPool,
			cluster:          []string{plainOnReplicated, golden{name: perClassLocal, class: "local", size: "6Gi", phase: "Failed"}.yaml()},
			refusal:          []string{"golden " + perClassLocal + " in cozy-public failed to import", "describe datavolume " + perClassLocal},
			neighbourValues:  localPool,
			neighbourCluster: []string{plainOnReplicated, golden{name: perClassLocal, class: "local", size: "6Gi", phase: "ImportInProgress"}.yaml()},
		},
		{
			name:             "the per-class golden is retiring",
			values:           localPool,
			cluster:          []string{plainOnReplicated, retiringPerClass(perClassLocal, "local")},
			refusal:          []string{"golden " + perClassLocal + " in cozy-public is retiring"},
			neighbourValues:  localPool,
			neighbourCluster: []string{plainOnReplicated, perClassOnLocal},
		},
		{
			name:             "the disk is smaller than the per-class golden",
			values:           "{cluster: acme, storageClass: local, diskSize: 4Gi, osImage: {builtin: {}}}",
			cluster:          []string{plainOnReplicated, perClassOnLocal},
			refusal:          []string{"diskSize 4Gi is smaller than golden " + perClassLocal + " (6Gi)"},
			neighbourValues:  "{cluster: acme, storageClass: local, diskSize: 6Gi, osImage: {builtin: {}}}",
			neighbourCluster: []string{plainOnReplicated, perClassOnLocal},
		},
		{
			name:             "a larger disk on a class that cannot expand",
			values:           "{cluster: acme, storageClass: fixed, osImage: {builtin: {}}}",
			cluster:          []string{plainOnReplicated, golden{name: defaultGolden + "--fixed", class: "fixed", size: "6Gi", phase: "Succeeded"}.yaml()},
			refusal:          []string{"more than the capacity 6Gi of golden " + defaultGolden + "--fixed", `StorageClass "fixed"`, "allowVolumeExpansion"},
			neighbourValues:  "{cluster: acme, storageClass: fixed, diskSize: 6Gi, osImage: {builtin: {}}}",
			neighbourCluster: []string{plainOnReplicated, golden{name: defaultGolden + "--fixed", class: "fixed", size: "6Gi", phase: "Succeeded"}.yaml()},
		},
		{
			name:             "no per-class golden: today's class refusal",
			values:           localPool,
			cluster:          []string{plainOnReplicated},
			refusal:          []string{`its disks would be on StorageClass "local" (storageClass) but golden ` + defaultGolden + ` is on "replicated"`},
			neighbourValues:  localPool,
			neighbourCluster: []string{plainOnReplicated, perClassOnLocal},
		},
		{
			name:             "neither golden: today's absent refusal, naming additionalStorageClasses",
			values:           localPool,
			cluster:          []string{golden{name: defaultGolden + "--fixed", class: "fixed", size: "6Gi", phase: "Succeeded"}.yaml()},
			refusal:          []string{"golden " + defaultGolden + " is absent from cozy-public", `add "local" to its additionalStorageClasses: the golden ` + perClassLocal},
			neighbourValues:  localPool,
			neighbourCluster: []string{perClassOnLocal},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPool(t, vals(t, tc.values), perClassCluster(t, tc.cluster...))
			requireRefusal(t, err, tc.refusal...)
			_, err = renderPool(t, vals(t, tc.neighbourValues), perClassCluster(t, tc.neighbourCluster...))
			require.NoError(t, err)
		})
	}
}

func retiringPerClass(name, class string) string {
	return "---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: DataVolume\nmetadata:\n  name: " + name + "\n  namespace: cozy-public\n  annotations: {kubernetes-worker-image.cozystack.io/retiring: \"true\"}\nspec:\n  source: {http: {url: \"https://factory.talos.dev/image/x/v/openstack-amd64.raw.xz\"}}\n  storage:\n    storageClassName: " + class + "\n    resources: {requests: {storage: 6Gi}}\nstatus: {phase: Succeeded}\n"
}

// A pool running from its per-class golden is past needing it, and keeps its
// class when the default moves; a pool running from the plain golden keeps it.
func TestRunningFromAPerClassGolden(t *testing.T) {
	running := runningPool(testPoolName, testPoolName+"-abc123", perClassLocal, "local", 2)
	// The per-class golden is gone; the plain one is on another class.
	m := mustRenderPool(t, vals(t, localPool), perClassCluster(t, plainOnReplicated, running))
	assert.Equal(t, perClassLocal, render.Get(diskOf(m), "spec.source.pvc.name"))
	// Both gone.
	m = mustRenderPool(t, vals(t, localPool), perClassCluster(t, running))
	assert.Equal(t, perClassLocal, render.Get(diskOf(m), "spec.source.pvc.name"))
	// Not exempt at zero ready workers.
	_, err := renderPool(t, vals(t, localPool), perClassCluster(t, runningPool(testPoolName, testPoolName+"-abc123", perClassLocal, "local", 0)))
	requireRefusal(t, err, "is absent from cozy-public")

	// storageClass "": frozen on the class the template wrote, though "replicated" is the default.
	m = mustRenderPool(t, vals(t, "{cluster: acme, storageClass: '', osImage: {builtin: {}}}"), perClassCluster(t, plainOnReplicated, perClassOnLocal, running))
	assert.Equal(t, perClassLocal, render.Get(diskOf(m), "spec.source.pvc.name"))
	assert.Equal(t, "local", render.Get(diskOf(m), "spec.storage.storageClassName"))

	// Running from the plain golden after it was deleted: adding a per-class golden re-images nothing.
	plainRunning := runningPool(testPoolName, testPoolName+"-abc123", defaultGolden, "local", 2)
	before := mustRenderPool(t, vals(t, localPool), perClassCluster(t, plainRunning))
	after := mustRenderPool(t, vals(t, localPool), perClassCluster(t, plainRunning, perClassOnLocal))
	assert.Equal(t, before.Text(), after.Text())
	assert.Equal(t, defaultGolden, render.Get(diskOf(after), "spec.source.pvc.name"))
}

// withPerClassGoldens adds, for every golden in cozy-public (a DataVolume, or
// the PVC left of one) and every StorageClass of the cluster, the per-class
// golden a catalog entry listing that class in additionalStorageClasses would
// import: imported, on that class, the same size. It returns how many it added.
func withPerClassGoldens(cluster *support.Cluster) (int, error) {
	ctx := context.Background()
	list := func(apiVersion, kind, namespace string) ([]unstructured.Unstructured, error) {
		client, _, err := cluster.GetClientFor(apiVersion, kind)
		if err != nil {
			return nil, err
		}
		var l *unstructured.UnstructuredList
		if namespace == "" {
			l, err = client.List(ctx, metav1.ListOptions{})
		} else {
			l, err = client.Namespace(namespace).List(ctx, metav1.ListOptions{})
		}
		if err != nil {
			return nil, err
		}
		return l.Items, nil
	}
	classes, err := list("storage.k8s.io/v1", "StorageClass", "")
	if err != nil {
		return 0, err
	}
	goldens := map[string]string{} // name -> size
	exists := map[string]bool{}
	for _, kind := range []struct{ apiVersion, kind, size string }{
		{"v1", "PersistentVolumeClaim", "spec.resources.requests.storage"},
		{"cdi.kubevirt.io/v1beta1", "DataVolume", "spec.storage.resources.requests.storage"},
	} {
		items, err := list(kind.apiVersion, kind.kind, "cozy-public")
		if err != nil {
			return 0, err
		}
		for _, o := range items {
			exists[o.GetName()] = true
			if strings.HasPrefix(o.GetName(), "talos-worker-") && !strings.Contains(o.GetName(), "--") {
				size, _ := render.Get(o.Object, kind.size).(string)
				goldens[o.GetName()] = size
			}
		}
	}
	added := 0
	for name, size := range goldens {
		for _, class := range classes {
			if exists[name+"--"+class.GetName()] {
				continue // the case's own per-class golden
			}
			g := golden{name: name + "--" + class.GetName(), class: class.GetName(), size: size, phase: "Succeeded"}
			objs, err := render.ParseObjects([]byte(g.yaml()))
			if err != nil {
				return 0, err
			}
			if err := cluster.Add(objs...); err != nil {
				return 0, err
			}
			added++
		}
	}
	return added, nil
}

// Per-class goldens are byte-neutral: every pool golden case and baseline
// corner renders its committed bytes when the cluster also holds a per-class
// golden of every flavor on every class (a catalog change that only adds
// per-class goldens renames no template and rolls no worker).
func TestPerClassGoldensChangeNoCommittedPoolRender(t *testing.T) {
	pools, added := 0, 0
	for _, c := range committedPoolCases(t) {
		if c.Cluster == nil {
			continue
		}
		pools++
		t.Run(c.Name, func(t *testing.T) {
			requireCommittedBytes(t, c, func(chrt *chart.Chart, opts render.Options) (*render.Manifest, error) {
				n, err := withPerClassGoldens(opts.Cluster.(*support.Cluster))
				if err != nil {
					return nil, err
				}
				added += n
				return render.Render(chrt, opts)
			})
		})
	}
	require.GreaterOrEqual(t, pools, 24, "every pool case with a cluster is covered")
	// The control: the clusters of the clone cases did gain per-class goldens.
	require.Greater(t, added, 10)
}
