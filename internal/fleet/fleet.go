// Package fleet finds a cluster's worker pools the way Cozystack deploys them
// and computes each pool's values the way Flux does, and reads the goldens,
// worker disks and MachineDeployments it holds (ReadGoldens), for the operator CLI's
// fleet reports (pins, adopt). It only reads, through Helm's client provider,
// so a cluster-state file and a live cluster are read by the same code.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	HelmReleaseAPI  = "helm.toolkit.fluxcd.io/v2"
	machineDeplAPI  = "cluster.x-k8s.io/v1beta1"
	machineTemplAPI = "infrastructure.cluster.x-k8s.io/v1alpha1"
)

// chartRefKinds are the sources a HelmRelease's spec.chartRef may name.
var chartRefKinds = map[string]bool{"ExternalArtifact": true, "OCIRepository": true, "HelmChart": true}

// Options say which chart is the pool chart.
type Options struct {
	// Chart is the pool chart's name (kubernetes-nodes).
	Chart string
	// Artifacts are further chartRef names, "<name>" or "<namespace>/<name>",
	// that are the pool chart although their names do not end in Chart.
	Artifacts []string
}

// Pool is one worker pool's release and the values it renders with.
type Pool struct {
	// HelmRelease is "<namespace>/<name>" of its Flux HelmRelease, "" for a
	// release installed without one (plain helm install).
	HelmRelease string
	// Release and Namespace are the Helm release's name and namespace.
	Release, Namespace string
	// FoundBy says what made it a pool: its chart reference or its Helm
	// release record.
	FoundBy string
	// Values are what Flux renders it with; nil when Unresolved.
	Values map[string]any
	// Unresolved is why its values cannot be computed (a required
	// valuesFrom reference is missing, as Flux would fail it).
	Unresolved string
}

// ID names the pool in reports: its HelmRelease, else its Helm release.
func (p Pool) ID() string {
	if p.HelmRelease != "" {
		return p.HelmRelease
	}
	return p.Key()
}

// Key is the pool's identity: its Helm release's namespace and name. No two
// pools of a Fleet share one.
func (p Pool) Key() string { return p.Namespace + "/" + p.Release }

// Ignored is a tenant object that is not read as a pool because it names
// what its place does not (a release record whose body names another
// release or namespace, a HelmRelease whose release or record is outside its
// own namespace) or cannot be decoded.
type Ignored struct {
	// Object is "<kind> <namespace>/<name>".
	Object string `json:"object"`
	Reason string `json:"reason"`
}

// UnreadNamespace is a namespace that holds pool objects none of whose
// pools could be read: what its pools use is not known.
type UnreadNamespace struct {
	Namespace string `json:"namespace"`
	// Objects are its pool objects, as "<namespace>/<kind>/<name>".
	Objects []string `json:"objects"`
}

// Fleet is what Read found.
type Fleet struct {
	Pools []Pool
	// HelmReleasesServed: the cluster serves Flux's HelmRelease.
	HelmReleasesServed bool
	// PoolObjects are the cluster's KubevirtMachineTemplates and the
	// MachineDeployments whose infrastructure is one (or is not stated), as
	// "<namespace>/<kind>/<name>": a cluster holding them runs pools, so a
	// report that found none must not conclude that nothing uses a golden.
	PoolObjects []string
	// Ignored are the objects not read as pools, sorted.
	Ignored []Ignored
}

// Resolved counts the pools whose values were computed.
func (f *Fleet) Resolved() int {
	n := 0
	for _, p := range f.Pools {
		if p.Unresolved == "" {
			n++
		}
	}
	return n
}

// Unread lists, by namespace, the pool objects of each namespace none of
// whose pools could be read (found with values computed): whatever another
// namespace holds, a report cannot tell what these pools use.
func (f *Fleet) Unread() []UnreadNamespace {
	readable := map[string]bool{}
	for _, p := range f.Pools {
		if p.Unresolved == "" {
			readable[p.Namespace] = true
		}
	}
	var out []UnreadNamespace
	for _, o := range f.PoolObjects {
		ns, _, _ := strings.Cut(o, "/")
		if readable[ns] {
			continue
		}
		if len(out) == 0 || out[len(out)-1].Namespace != ns {
			out = append(out, UnreadNamespace{Namespace: ns})
		}
		out[len(out)-1].Objects = append(out[len(out)-1].Objects, o)
	}
	return out
}

// Read finds every pool: each HelmRelease whose chart reference names the
// pool chart, or whose reference does not and whose Helm release record
// does; and each Helm release of the pool chart that no HelmRelease manages.
// A pool is where its objects are: a HelmRelease is read only as a pool of
// its own namespace (its release installed and recorded there), a record
// only as the release its labels name in its own namespace; either is
// otherwise listed in Ignored. An error is a cluster that answered with one.
func Read(ctx context.Context, p engine.ClientProvider, o Options) (*Fleet, error) {
	f := &Fleet{}
	records, err := latestRecords(ctx, p, o.Chart)
	if err != nil {
		return nil, err
	}
	hrs, served, err := list(ctx, p, HelmReleaseAPI, "HelmRelease")
	if err != nil {
		return nil, err
	}
	f.HelmReleasesServed = served
	pools := map[string]int{}
	add := func(pool Pool) {
		if i, ok := pools[pool.Key()]; ok {
			// Two HelmReleases of one namespace deploying one release: which
			// one helm-controller last applied is not known.
			first := &f.Pools[i]
			first.Values = nil
			first.Unresolved = fmt.Sprintf("HelmReleases %s and %s both deploy release %s; which values it runs with is not known", first.ID(), pool.ID(), pool.Key())
			return
		}
		pools[pool.Key()] = len(f.Pools)
		f.Pools = append(f.Pools, pool)
	}
	claimed := map[string]bool{}
	values := newValuesReader(p)
	for i := range hrs {
		hr := &hrs[i]
		foundBy, decided := o.byReference(hr)
		if foundBy == "" && decided {
			continue
		}
		id := hr.GetNamespace() + "/" + hr.GetName()
		release, elsewhere := releaseOf(hr)
		if elsewhere != "" {
			f.Ignored = append(f.Ignored, Ignored{Object: "HelmRelease " + id, Reason: elsewhere})
			continue
		}
		key := hr.GetNamespace() + "/" + release
		pool := Pool{HelmRelease: id, Release: release, Namespace: hr.GetNamespace(), FoundBy: foundBy}
		if foundBy == "" {
			rec, problem := records.get(key)
			switch {
			case problem != "":
				// Only its record could say whether it is a pool: it is
				// one not resolved, never silently none.
				pool.FoundBy = "spec.chartRef naming no chart, and a Helm release record that cannot be read"
				pool.Unresolved = "whether it deploys chart " + o.Chart + " is not known: " + problem
				claimed[key] = true
				add(pool)
				continue
			case rec == nil || rec.Chart != o.Chart:
				continue
			}
			pool.FoundBy = "Helm release record " + rec.secret + " (chart " + o.Chart + ")"
		}
		// A pool claims its release, so its record is not read as another.
		claimed[key] = true
		if pool.Values, pool.Unresolved, err = values.values(ctx, hr); err != nil {
			return nil, fmt.Errorf("reading the values of HelmRelease %s: %w", pool.HelmRelease, err)
		}
		add(pool)
	}
	// Releases of the pool chart no HelmRelease manages (helm install).
	for _, key := range records.keys() {
		if claimed[key] {
			continue
		}
		rec, problem := records.get(key)
		if problem != "" || rec == nil || rec.Chart != o.Chart {
			continue
		}
		ns, release, _ := strings.Cut(key, "/")
		pool := Pool{Release: release, Namespace: ns, FoundBy: "Helm release record " + rec.secret + " (no HelmRelease)", Values: rec.Config}
		if rec.configProblem != "" {
			pool.Unresolved = "its Helm release record's values: " + rec.configProblem
		}
		add(pool)
	}
	f.Ignored = append(f.Ignored, records.ignored...)
	sort.Slice(f.Ignored, func(i, j int) bool { return f.Ignored[i].Object < f.Ignored[j].Object })
	sort.Slice(f.Pools, func(i, j int) bool { return f.Pools[i].ID() < f.Pools[j].ID() })
	if f.PoolObjects, err = poolObjects(ctx, p); err != nil {
		return nil, err
	}
	return f, nil
}

// byReference says how hr's chart reference names the pool chart, "" when
// it does not. decided: spec.chart names a chart, so its record is not asked
// (a chartRef names an artifact, whose name may say nothing).
func (o Options) byReference(hr *unstructured.Unstructured) (foundBy string, decided bool) {
	if name, _, _ := unstructured.NestedString(hr.Object, "spec", "chart", "spec", "chart"); name != "" {
		if name == o.Chart {
			return "spec.chart " + name, true
		}
		return "", true
	}
	kind, _, _ := unstructured.NestedString(hr.Object, "spec", "chartRef", "kind")
	name, _, _ := unstructured.NestedString(hr.Object, "spec", "chartRef", "name")
	ns, _, _ := unstructured.NestedString(hr.Object, "spec", "chartRef", "namespace")
	if ns == "" {
		ns = hr.GetNamespace()
	}
	if !chartRefKinds[kind] || name == "" {
		return "", false
	}
	ref := fmt.Sprintf("spec.chartRef %s %s/%s", kind, ns, name)
	if strings.HasSuffix(name, o.Chart) {
		return ref, true
	}
	for _, a := range o.Artifacts {
		if a == name || a == ns+"/"+name {
			return ref + " (named by -artifact)", true
		}
	}
	return "", false
}

// releaseOf is the release helm-controller installs for hr: what its status
// says it installed last (status.history[0]: a name longer than Helm allows
// is shortened by the controller, and only the status shows it), else the
// release spec.releaseName, else [<targetNamespace>-]<name>.
//
// A HelmRelease speaks only for its own namespace. Its spec and status are
// written by whoever writes the HelmRelease, and helm-controller installs and
// records a release wherever its service account may (Cozystack's runs with
// the platform's rights and creates each pool's HelmRelease with its release
// and its record in the HelmRelease's own namespace). One whose release
// (spec.targetNamespace, status.history) or record (spec.storageNamespace,
// status.storageNamespace) is in another namespace would speak for that
// namespace's pool: elsewhere says so, and it is not read.
func releaseOf(hr *unstructured.Unstructured) (release, elsewhere string) {
	own := hr.GetNamespace()
	target, _, _ := unstructured.NestedString(hr.Object, "spec", "targetNamespace")
	release, _, _ = unstructured.NestedString(hr.Object, "spec", "releaseName")
	if release == "" {
		release = hr.GetName()
		if target != "" {
			release = target + "-" + release
		}
	}
	if target == "" {
		target = own
	}
	storage, _, _ := unstructured.NestedString(hr.Object, "spec", "storageNamespace")
	if s, _, _ := unstructured.NestedString(hr.Object, "status", "storageNamespace"); s != "" {
		storage = s
	}
	if storage == "" {
		storage = own
	}
	if history, _, _ := unstructured.NestedSlice(hr.Object, "status", "history"); len(history) > 0 {
		if last, ok := history[0].(map[string]any); ok {
			name, _, _ := unstructured.NestedString(last, "name")
			ns, _, _ := unstructured.NestedString(last, "namespace")
			if name != "" && ns != "" {
				release, target = name, ns
			}
		}
	}
	var where []string
	if target != own {
		where = append(where, fmt.Sprintf("installs its release %s into namespace %s", release, target))
	}
	if storage != own {
		where = append(where, fmt.Sprintf("keeps its release record in namespace %s", storage))
	}
	if len(where) > 0 {
		elsewhere = strings.Join(where, " and ") + ", not its own namespace " + own + ": a HelmRelease is read only as a pool of its own namespace"
	}
	return release, elsewhere
}

// recordSet holds the newest record Secret of each release, decoded on
// demand, once; a record's data is dropped once it is read.
type recordSet struct {
	poolChart string
	newest    map[string]*unstructured.Unstructured
	version   map[string]int
	decoded   map[string]decodedRecord
	// ignored are the records listed rather than read: inconsistent ones,
	// and those that cannot be decoded.
	ignored []Ignored
}

type decodedRecord struct {
	rec     *record
	problem string
}

func (r *recordSet) keys() []string {
	out := make([]string, 0, len(r.newest))
	for k := range r.newest {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// get returns the newest record of a release ("<namespace>/<release>"), nil
// when it has none or it was uninstalled with its history kept. problem says
// why it is not read (listed in ignored): it cannot be decoded, or its body
// names another release or namespace than its labels and its own namespace.
func (r *recordSet) get(key string) (*record, string) {
	s, ok := r.newest[key]
	if !ok {
		return nil, ""
	}
	if d, ok := r.decoded[key]; ok {
		return d.rec, d.problem
	}
	d := decodedRecord{}
	rec, err := decodeRecord(s, r.poolChart)
	ns, release, _ := strings.Cut(key, "/")
	switch {
	case err != nil:
		d.problem = err.Error()
	case rec.Chart == r.poolChart && (rec.Name != release || (rec.Namespace != "" && rec.Namespace != ns)):
		d.problem = fmt.Sprintf("Helm release record %s: its body names release %q in namespace %q, not release %s of its labels in its own namespace %s", rec.secret, rec.Name, rec.Namespace, release, ns)
	case rec.Status == "uninstalled" || rec.Status == "uninstalling":
	default:
		d.rec = rec
	}
	if d.problem != "" {
		d.problem = strings.TrimPrefix(d.problem, errUndecodable.Error()+": ")
		r.ignored = append(r.ignored, Ignored{Object: "Secret " + s.GetNamespace() + "/" + s.GetName(), Reason: d.problem})
	}
	// Nothing of the record is kept but what was read from it.
	delete(s.Object, "data")
	r.decoded[key] = d
	return d.rec, d.problem
}

func latestRecords(ctx context.Context, p engine.ClientProvider, poolChart string) (*recordSet, error) {
	rs := &recordSet{poolChart: poolChart, newest: map[string]*unstructured.Unstructured{}, version: map[string]int{}, decoded: map[string]decodedRecord{}}
	c, _, err := p.GetClientFor("v1", "Secret")
	if err != nil {
		return nil, fmt.Errorf("listing Helm release records: %w", err)
	}
	// A superseded record is never a release's newest, and most records of a
	// long-lived cluster are superseded ones (Helm keeps ten per release):
	// the API server leaves them out, so their payloads are never sent.
	l, err := c.List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,status!=superseded"})
	if err != nil {
		return nil, fmt.Errorf("listing Helm release records (Secrets labelled owner=helm): %w", err)
	}
	for i := range l.Items {
		s := &l.Items[i]
		key, v, ok, inconsistent := recordKey(s)
		if inconsistent != "" {
			rs.ignored = append(rs.ignored, Ignored{Object: "Secret " + s.GetNamespace() + "/" + s.GetName(), Reason: "a Helm release record that names another: " + inconsistent})
		}
		if ok && v > rs.version[key] {
			rs.newest[key], rs.version[key] = s, v
		}
	}
	return rs, nil
}

// list reads every object of a kind; served is false when the cluster has
// no such kind (its CRD is not installed).
func list(ctx context.Context, p engine.ClientProvider, apiVersion, kind string) ([]unstructured.Unstructured, bool, error) {
	c, _, err := p.GetClientFor(apiVersion, kind)
	if errors.Is(err, render.ErrKindNotServed) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("listing %s %s: %w", kind, apiVersion, err)
	}
	l, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, false, fmt.Errorf("listing %s %s: %w", kind, apiVersion, err)
	}
	return l.Items, true, nil
}

func poolObjects(ctx context.Context, p engine.ClientProvider) ([]string, error) {
	var out []string
	tpls, _, err := list(ctx, p, machineTemplAPI, "KubevirtMachineTemplate")
	if err != nil {
		return nil, err
	}
	for _, t := range tpls {
		out = append(out, t.GetNamespace()+"/KubevirtMachineTemplate/"+t.GetName())
	}
	mds, _, err := list(ctx, p, machineDeplAPI, "MachineDeployment")
	if err != nil {
		return nil, err
	}
	for _, md := range mds {
		// Counted unless it names another provider's infrastructure: a
		// MachineDeployment read without its spec must not pass for none.
		if k, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "kind"); k == "" || k == "KubevirtMachineTemplate" {
			out = append(out, md.GetNamespace()+"/MachineDeployment/"+md.GetName())
		}
	}
	sort.Strings(out)
	return out, nil
}
