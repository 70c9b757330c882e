package render

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What CDI asks before a cross-namespace clone from a PVC, as read in
// kubevirt.io/containerized-data-importer-api, pkg/apis/core/v1beta1/authorize_utils.go
// (getResourceAttributesPvc): `create` on datavolumes, subresource "source", group
// cdi.kubevirt.io, in the source namespace, named after the source PVC; or, as a
// second chance, `create` on pods there.
type catalogAccess struct {
	verb, group, resource, subresource, namespace, name string
}

func catalogCloneAccess(name string) catalogAccess {
	return catalogAccess{"create", "cdi.kubevirt.io", "datavolumes", "source", catalogNamespace, name}
}

// catalogRoleAllows evaluates a Role's rules the way Kubernetes RBAC does
// (wildcards included), so a test can probe requests the Role must not allow.
func catalogRoleAllows(role render.Doc, a catalogAccess) bool {
	if role.Namespace() != a.namespace {
		return false
	}
	resource := a.resource
	if a.subresource != "" {
		resource += "/" + a.subresource
	}
	rules, _ := render.Get(role.Object, "rules").([]interface{})
	for _, r := range rules {
		if catalogMatches(render.Get(r, "verbs"), a.verb) && catalogMatches(render.Get(r, "apiGroups"), a.group) &&
			(catalogMatches(render.Get(r, "resources"), resource) || (a.subresource != "" && catalogMatches(render.Get(r, "resources"), a.resource+"/*"))) &&
			(render.Get(r, "resourceNames") == nil || len(render.Get(r, "resourceNames").([]interface{})) == 0 || catalogMatches(render.Get(r, "resourceNames"), a.name)) {
			return true
		}
	}
	return false
}

func catalogMatches(list interface{}, want string) bool {
	items, _ := list.([]interface{})
	for _, item := range items {
		if s := str(item); s == want || s == "*" {
			return true
		}
	}
	return false
}

const catalogRBACValues = `
images:
  - {schematicID: abc, version: v1.13.6}
  - {schematicID: abc, version: v1.13.5, storageClass: local}
  - {schematicID: def, version: v1.14.0-beta.1}
`

func TestCatalogCloneRoleGrantsExactlyTheGoldens(t *testing.T) {
	goldens := []interface{}{support.GoldenName("abc", "v1.13.6"), support.GoldenName("abc", "v1.13.5"), support.GoldenName("def", "v1.14.0-beta.1")}
	m := mustRenderCatalog(t, vals(t, catalogRBACValues), nil)
	role := doc(t, m, "Role")
	assert.Equal(t, catalogNamespace, role.Namespace())
	assert.Equal(t, []interface{}{map[string]interface{}{
		"apiGroups":     []interface{}{"cdi.kubevirt.io"},
		"resources":     []interface{}{"datavolumes/source"},
		"verbs":         []interface{}{"create"},
		"resourceNames": goldens,
	}}, render.Get(role.Object, "rules"), "one rule: create datavolumes/source on the goldens")

	for _, g := range goldens {
		assert.True(t, catalogRoleAllows(role, catalogCloneAccess(g.(string))), "clone of %s", g)
	}
	// Nothing else: no other name, subresource, resource, verb, group or namespace.
	golden := goldens[0].(string)
	for _, a := range []catalogAccess{
		catalogCloneAccess(support.GoldenName("abc", "v1.13.4")),
		catalogCloneAccess("some-tenant-secret-pvc"),
		catalogCloneAccess(""),
		{"create", "", "pods", "", catalogNamespace, golden},
		{"create", "cdi.kubevirt.io", "datavolumes", "", catalogNamespace, golden},
		{"get", "cdi.kubevirt.io", "datavolumes", "", catalogNamespace, golden},
		{"delete", "cdi.kubevirt.io", "datavolumes", "", catalogNamespace, golden},
		{"update", "cdi.kubevirt.io", "datavolumes", "", catalogNamespace, golden},
		{"get", "cdi.kubevirt.io", "datavolumes", "source", catalogNamespace, golden},
		{"update", "cdi.kubevirt.io", "datavolumes", "source", catalogNamespace, golden},
		{"create", "cdi.kubevirt.io", "datavolumes", "status", catalogNamespace, golden},
		{"create", "", "persistentvolumeclaims", "", catalogNamespace, golden},
		{"get", "", "persistentvolumeclaims", "", catalogNamespace, golden},
		{"create", "snapshot.storage.k8s.io", "volumesnapshots", "", catalogNamespace, golden},
		{"create", "cdi.kubevirt.io", "datasources", "", catalogNamespace, golden},
		{"create", "cdi.kubevirt.io", "datavolumes", "source", "tenant-acme", golden},
	} {
		assert.False(t, catalogRoleAllows(role, a), "%+v must not be granted", a)
	}
}

func TestCatalogRendersNoOtherRBAC(t *testing.T) {
	m := mustRenderCatalog(t, vals(t, catalogRBACValues), nil)
	kinds := map[string]int{}
	for _, d := range m.Docs {
		kinds[d.Kind()]++
	}
	assert.Equal(t, map[string]int{"DataVolume": 3, "Role": 1, "RoleBinding": 1}, kinds,
		"no ClusterRole, ClusterRoleBinding, ServiceAccount or second Role")
}

func TestCatalogCloneRoleBindingDefaultsToEveryServiceAccount(t *testing.T) {
	m := mustRenderCatalog(t, vals(t, catalogRBACValues), nil)
	role := doc(t, m, "Role")
	binding := doc(t, m, "RoleBinding")
	assert.Equal(t, catalogNamespace, binding.Namespace())
	assert.Equal(t, map[string]interface{}{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role.Name()}, render.Get(binding.Object, "roleRef"))
	// CDI asks on behalf of system:serviceaccount:<tenant>:<sa>, whose groups
	// include system:serviceaccounts (CanServiceAccountClonePVC).
	assert.Equal(t, []interface{}{map[string]interface{}{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:serviceaccounts"}},
		render.Get(binding.Object, "subjects"))
}

func TestCatalogCloneSubjectsComeFromValues(t *testing.T) {
	m := mustRenderCatalog(t, vals(t, `
images: [{schematicID: abc, version: v1.13.6}]
cloneSubjects:
  - {kind: Group, apiGroup: rbac.authorization.k8s.io, name: "system:serviceaccounts:tenant-acme"}
  - {kind: ServiceAccount, name: default, namespace: tenant-beta}
`), nil)
	assert.Equal(t, []interface{}{
		map[string]interface{}{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:serviceaccounts:tenant-acme"},
		map[string]interface{}{"kind": "ServiceAccount", "name": "default", "namespace": "tenant-beta"},
	}, render.Get(doc(t, m, "RoleBinding").Object, "subjects"))

	// No subjects: the Role stays, nothing is bound to it.
	m = mustRenderCatalog(t, vals(t, "{images: [{schematicID: abc, version: v1.13.6}], cloneSubjects: []}"), nil)
	doc(t, m, "Role")
	assert.Empty(t, m.OfKind("RoleBinding"))
}

// With no golden there is nothing to grant: no Role at all, rather than a rule
// with an empty resourceNames, which would grant every PVC in cozy-public.
func TestCatalogNoGoldenNoCloneRBAC(t *testing.T) {
	m := mustRenderCatalog(t, vals(t, "images: []"), nil)
	assert.Empty(t, m.OfKind("Role"))
	assert.Empty(t, m.OfKind("RoleBinding"))
	require.Empty(t, m.Docs)
}

// The evaluator above must see an over-broad rule, or its refusals prove nothing.
func TestCatalogRoleEvaluatorSeesOverGrants(t *testing.T) {
	golden := support.GoldenName("abc", "v1.13.6")
	for _, tc := range []struct {
		rule   string
		access catalogAccess
	}{
		{"{apiGroups: ['*'], resources: ['*'], verbs: ['*']}", catalogAccess{"delete", "", "pods", "", catalogNamespace, "x"}},
		{"{apiGroups: [cdi.kubevirt.io], resources: [datavolumes/source], verbs: [create], resourceNames: []}", catalogCloneAccess("any-pvc")},
		{"{apiGroups: [cdi.kubevirt.io], resources: ['datavolumes/*'], verbs: [create], resourceNames: [" + golden + "]}", catalogAccess{"create", "cdi.kubevirt.io", "datavolumes", "status", catalogNamespace, golden}},
		{"{apiGroups: [''], resources: [pods], verbs: [create]}", catalogAccess{"create", "", "pods", "", catalogNamespace, golden}},
	} {
		role := render.Doc{Object: vals(t, "{kind: Role, metadata: {name: r, namespace: "+catalogNamespace+"}, rules: ["+tc.rule+"]}")}
		assert.True(t, catalogRoleAllows(role, tc.access), "%s allows %+v", tc.rule, tc.access)
	}
}

// liveCatalog is a cluster where the catalog rendered with these values
// was installed: its goldens live in cozy-public, as Helm left them.
func liveCatalog(t testing.TB, values string, objects ...string) *support.Cluster {
	t.Helper()
	cluster := support.NewCluster()
	require.NoError(t, cluster.Apply(mustRenderCatalog(t, vals(t, values), nil), catalogNamespace))
	if len(objects) > 0 {
		objs, err := render.ParseObjects([]byte(strings.Join(objects, "")))
		require.NoError(t, err)
		require.NoError(t, cluster.Add(objs...))
	}
	return cluster
}

func cloneRoleNames(t testing.TB, m *render.Manifest) []interface{} {
	t.Helper()
	roles := m.OfKind("Role")
	if len(roles) == 0 {
		return nil
	}
	names, _ := render.Get(roles[0].Object, "rules.0.resourceNames").([]interface{})
	return names
}

// A golden stays cloneable until it retires: the clone Role names today's
// entries' goldens, then every golden of the catalog cozy-public still holds
// (its DataVolume, or its PVC once CDI collected that), so dropping an entry,
// or a default moving on, never revokes the clones of pools still on it. A
// retiring golden, marked or retiring in this render, leaves it; so do
// objects that are not the catalog's goldens.
func TestCatalogCloneRoleKeepsEveryLiveGoldenUntilItRetires(t *testing.T) {
	a, b, c := support.GoldenName("abc", "v1.13.5"), support.GoldenName("abc", "v1.13.6"), support.GoldenName("abc", "v1.13.4")
	both := "images: [{schematicID: abc, version: v1.13.6}, {schematicID: abc, version: v1.13.5}]"
	onlyB := "images: [{schematicID: abc, version: v1.13.6}]"

	dropped := mustRenderCatalog(t, vals(t, onlyB), liveCatalog(t, both))
	assert.Equal(t, []interface{}{b, a}, cloneRoleNames(t, dropped), "the dropped entry's golden is still cloneable")
	assert.True(t, catalogRoleAllows(doc(t, dropped, "Role"), catalogCloneAccess(a)))
	assert.Len(t, dropped.OfKind("DataVolume"), 1, "the catalog no longer manages it (Helm keeps it)")

	none := mustRenderCatalog(t, vals(t, "images: []"), liveCatalog(t, both))
	assert.Equal(t, []interface{}{a, b}, cloneRoleNames(t, none), "no entry at all: the live goldens, sorted")
	assert.Len(t, none.OfKind("RoleBinding"), 1)

	retiring := mustRenderCatalog(t, vals(t, "images: [{schematicID: abc, version: v1.13.6}, {schematicID: abc, version: v1.13.5, retire: true}]"), liveCatalog(t, both))
	assert.Equal(t, []interface{}{b}, cloneRoleNames(t, retiring), "a golden retiring in this render leaves the Role")

	marked := liveCatalog(t, both)
	require.NoError(t, marked.Apply(mustRenderCatalog(t, vals(t, "images: [{schematicID: abc, version: v1.13.6}, {schematicID: abc, version: v1.13.5, retire: true}]"), nil), catalogNamespace))
	assert.Equal(t, []interface{}{b}, cloneRoleNames(t, mustRenderCatalog(t, vals(t, onlyB), marked)), "a live golden marked retiring, its entry gone: not cloneable")

	// A golden CDI collected, kept as its PVC (which carries the DataVolume's labels), stays cloneable.
	claim := func(name, ns, label string) string {
		return "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name + ", namespace: " + ns + ", labels: {app.kubernetes.io/part-of: " + label + "}}\nspec: {storageClassName: replicated, resources: {requests: {storage: 6Gi}}}\n"
	}
	pvcOnly := mustRenderCatalog(t, vals(t, onlyB), liveCatalog(t, onlyB, claim(c, catalogNamespace, "kubernetes-worker-image")))
	assert.Equal(t, []interface{}{b, c}, cloneRoleNames(t, pvcOnly))
	entryOfIt := mustRenderCatalog(t, vals(t, "images: [{schematicID: abc, version: v1.13.6}, {schematicID: abc, version: v1.13.4}]"), liveCatalog(t, onlyB, claim(c, catalogNamespace, "kubernetes-worker-image")))
	assert.Equal(t, []interface{}{b, c}, cloneRoleNames(t, entryOfIt), "listed once, as an entry's")

	dv := func(name, ns, label string) string {
		return "---\napiVersion: cdi.kubevirt.io/v1beta1\nkind: DataVolume\nmetadata: {name: " + name + ", namespace: " + ns + ", labels: {app.kubernetes.io/part-of: " + label + "}}\nspec: {source: {http: {url: 'https://x.internal/a.img'}}}\n"
	}
	neighbours := liveCatalog(t, onlyB,
		dv(support.GoldenName("abc", "v1.13.3"), catalogNamespace, "someone-else"),
		dv("ubuntu-24.04", catalogNamespace, "kubernetes-worker-image"),
		dv(support.GoldenName("abc", "v1.13.2"), "tenant-acme", "kubernetes-worker-image"),
		claim(support.GoldenName("abc", "v1.13.1"), catalogNamespace, "someone-else"),
		claim("talos-data", catalogNamespace, "kubernetes-worker-image"))
	assert.Equal(t, []interface{}{b}, cloneRoleNames(t, mustRenderCatalog(t, vals(t, onlyB), neighbours)),
		"not the catalog's label, not a golden's name, another namespace: none is the catalog's golden")

	// With no golden anywhere there is still no rule: an empty resourceNames would grant every PVC.
	empty := mustRenderCatalog(t, vals(t, "images: []"), liveCatalog(t, "images: []", dv("ubuntu-24.04", catalogNamespace, "kubernetes-worker-image")))
	assert.Empty(t, empty.OfKind("Role"))
	assert.Empty(t, empty.OfKind("RoleBinding"))
	onlyRetiring := liveCatalog(t, "images: []")
	require.NoError(t, onlyRetiring.Apply(mustRenderCatalog(t, vals(t, "images: [{schematicID: abc, version: v1.13.5, retire: true}]"), nil), catalogNamespace))
	assert.Empty(t, mustRenderCatalog(t, vals(t, "images: []"), onlyRetiring).OfKind("Role"), "a retiring golden alone grants nothing")
}
