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
	return p.Namespace + "/" + p.Release
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

// Read finds every pool: each HelmRelease whose chart reference names the
// pool chart, or whose reference does not and whose Helm release record
// does; and each Helm release of the pool chart that no HelmRelease manages.
// An error is a cluster that answered with one.
func Read(ctx context.Context, p engine.ClientProvider, o Options) (*Fleet, error) {
	f := &Fleet{}
	records, err := latestRecords(ctx, p)
	if err != nil {
		return nil, err
	}
	claimed := map[string]bool{}
	hrs, served, err := list(ctx, p, HelmReleaseAPI, "HelmRelease")
	if err != nil {
		return nil, err
	}
	f.HelmReleasesServed = served
	for i := range hrs {
		hr := &hrs[i]
		release, namespace, storage := releaseOf(hr)
		claimed[storage+"/"+release] = true
		foundBy, decided := o.byReference(hr)
		if foundBy == "" && decided {
			continue
		}
		if foundBy == "" {
			rec, err := records.get(storage + "/" + release)
			if err != nil {
				return nil, err
			}
			if rec == nil || rec.Chart.Metadata.Name != o.Chart {
				continue
			}
			foundBy = "Helm release record " + rec.secret + " (chart " + o.Chart + ")"
		}
		pool := Pool{HelmRelease: hr.GetNamespace() + "/" + hr.GetName(), Release: release, Namespace: namespace, FoundBy: foundBy}
		pool.Values, pool.Unresolved, err = Values(ctx, p, hr)
		if err != nil {
			return nil, fmt.Errorf("reading the values of HelmRelease %s: %w", pool.HelmRelease, err)
		}
		f.Pools = append(f.Pools, pool)
	}
	// Releases of the pool chart no HelmRelease manages (helm install).
	for _, key := range records.keys() {
		if claimed[key] {
			continue
		}
		rec, err := records.get(key)
		if err != nil {
			return nil, err
		}
		if rec == nil || rec.Chart.Metadata.Name != o.Chart {
			continue
		}
		vals := rec.Config
		if vals == nil {
			vals = map[string]any{}
		}
		ns := rec.Namespace
		if ns == "" {
			ns = strings.SplitN(key, "/", 2)[0]
		}
		f.Pools = append(f.Pools, Pool{Release: rec.Name, Namespace: ns, FoundBy: "Helm release record " + rec.secret + " (no HelmRelease)", Values: vals})
	}
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

// releaseOf is where helm-controller installs hr: what its status says it
// installed last (status.history[0], status.storageNamespace: a name longer
// than Helm allows is shortened by the controller, and only the status shows
// it), else as the spec asks: the release spec.releaseName, else
// [<targetNamespace>-]<name>; in spec.targetNamespace, else hr's namespace;
// its record kept in spec.storageNamespace, else hr's namespace.
func releaseOf(hr *unstructured.Unstructured) (release, namespace, storage string) {
	namespace, _, _ = unstructured.NestedString(hr.Object, "spec", "targetNamespace")
	release, _, _ = unstructured.NestedString(hr.Object, "spec", "releaseName")
	if release == "" {
		release = hr.GetName()
		if namespace != "" {
			release = namespace + "-" + release
		}
	}
	if namespace == "" {
		namespace = hr.GetNamespace()
	}
	storage, _, _ = unstructured.NestedString(hr.Object, "spec", "storageNamespace")
	if storage == "" {
		storage = hr.GetNamespace()
	}
	if history, _, _ := unstructured.NestedSlice(hr.Object, "status", "history"); len(history) > 0 {
		if last, ok := history[0].(map[string]any); ok {
			name, _, _ := unstructured.NestedString(last, "name")
			ns, _, _ := unstructured.NestedString(last, "namespace")
			if name != "" && ns != "" {
				release, namespace = name, ns
			}
		}
	}
	if s, _, _ := unstructured.NestedString(hr.Object, "status", "storageNamespace"); s != "" {
		storage = s
	}
	return release, namespace, storage
}

// recordSet holds the newest record Secret of each release, decoded on demand.
type recordSet struct {
	newest  map[string]*unstructured.Unstructured
	version map[string]int
	decoded map[string]*record
}

func (r recordSet) keys() []string {
	out := make([]string, 0, len(r.newest))
	for k := range r.newest {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// get returns the newest record of a release, nil when it has none or it
// was uninstalled with its history kept.
func (r recordSet) get(key string) (*record, error) {
	s, ok := r.newest[key]
	if !ok {
		return nil, nil
	}
	if rec, ok := r.decoded[key]; ok {
		return rec, nil
	}
	rec, err := decodeRecord(s)
	if err != nil {
		return nil, err
	}
	if rec.Info.Status == "uninstalled" || rec.Info.Status == "uninstalling" {
		rec = nil
	}
	r.decoded[key] = rec
	return rec, nil
}

func latestRecords(ctx context.Context, p engine.ClientProvider) (recordSet, error) {
	rs := recordSet{newest: map[string]*unstructured.Unstructured{}, version: map[string]int{}, decoded: map[string]*record{}}
	c, _, err := p.GetClientFor("v1", "Secret")
	if err != nil {
		return rs, fmt.Errorf("listing Helm release records: %w", err)
	}
	// A superseded record is never a release's newest, and most records of a
	// long-lived cluster are superseded ones (Helm keeps ten per release):
	// the API server leaves them out, so their payloads are never sent.
	l, err := c.List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,status!=superseded"})
	if err != nil {
		return rs, fmt.Errorf("listing Helm release records (Secrets labelled owner=helm): %w", err)
	}
	for i := range l.Items {
		s := &l.Items[i]
		key, v, ok := recordKey(s)
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
