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

// chartSourceKinds are the sources a HelmRelease's spec.chart.spec.sourceRef
// may name.
var chartSourceKinds = map[string]bool{"HelmRepository": true, "GitRepository": true, "Bucket": true}

// The platform's pool chart, as Cozystack names it: the cluster-scoped
// ApplicationDefinition of KubernetesNodes says in spec.release.chartRef
// which artifact every pool is installed from; without one (a cluster that
// does not serve it, or holds none), Cozystack's own artifact. Cozystack
// releases before ApplicationDefinitions installed every application with
// spec.chart from the cozystack-apps HelmRepository in cozy-public.
const (
	ApplicationDefinitionAPI = "cozystack.io/v1alpha1"
	ApplicationDefinition    = "kubernetes-nodes"
)

var (
	// DefaultPoolArtifact is Cozystack's pool chart artifact.
	DefaultPoolArtifact = Source{Kind: "ExternalArtifact", Namespace: "cozy-system", Name: "cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes"}
	// LegacyPoolRepository is where Cozystack's earlier releases took every
	// application chart from, by spec.chart.
	LegacyPoolRepository = Source{Kind: "HelmRepository", Namespace: "cozy-public", Name: "cozystack-apps"}
)

// Source is a Flux source object a HelmRelease takes its chart from. Kind ""
// (an --artifact given as NAMESPACE/NAME) is any kind.
type Source struct {
	Kind, Namespace, Name string
}

func (s Source) String() string {
	if s.Kind == "" {
		return s.Namespace + "/" + s.Name
	}
	return s.Kind + " " + s.Namespace + "/" + s.Name
}

// Flag is how --artifact names it.
func (s Source) Flag() string {
	if s.Kind == "" {
		return s.Namespace + "/" + s.Name
	}
	return s.Kind + "/" + s.Namespace + "/" + s.Name
}

func (s Source) matches(o Source) bool {
	return (s.Kind == "" || s.Kind == o.Kind) && s.Namespace == o.Namespace && s.Name == o.Name
}

// ParseArtifact reads an --artifact: KIND/NAMESPACE/NAME or NAMESPACE/NAME. A
// name alone is refused: any tenant can create a source of that name in its
// own namespace, and a pool is a pool by where its chart is.
func ParseArtifact(a string) (Source, error) {
	parts := strings.Split(a, "/")
	for _, p := range parts {
		if p == "" {
			parts = nil
			break
		}
	}
	switch len(parts) {
	case 2:
		return Source{Namespace: parts[0], Name: parts[1]}, nil
	case 3:
		if !chartRefKinds[parts[0]] && !chartSourceKinds[parts[0]] {
			return Source{}, fmt.Errorf("--artifact %q: %s is not a kind a HelmRelease takes its chart from (want one of %s)", a, parts[0], strings.Join(append(SortedKinds(chartRefKinds), SortedKinds(chartSourceKinds)...), ", "))
		}
		return Source{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, nil
	case 1:
		return Source{}, fmt.Errorf("--artifact %q names no namespace: give NAMESPACE/%s or KIND/NAMESPACE/%s (a name alone is one any tenant can give a source of its own)", a, a, a)
	}
	return Source{}, fmt.Errorf("--artifact %q: want KIND/NAMESPACE/NAME or NAMESPACE/NAME, such as %s", a, DefaultPoolArtifact.Flag())
}

// SortedKinds are a kind set's names, sorted.
func SortedKinds(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Options say which chart is the pool chart.
type Options struct {
	// Chart is the pool chart's name (kubernetes-nodes): a Helm release
	// record that no HelmRelease manages is a pool when it names it.
	Chart string
	// Artifacts are further sources, "KIND/NAMESPACE/NAME" or
	// "NAMESPACE/NAME", that hold the pool chart (ParseArtifact).
	Artifacts []string
}

// PoolChart is where the pool chart is, as Read found it: the sources a
// HelmRelease's chart reference must name to be a pool.
type PoolChart struct {
	// ChartRef is the artifact a pool's spec.chartRef names; From says who
	// named it (the ApplicationDefinition, or Cozystack's default).
	ChartRef Source
	From     string
	// Artifacts are those the operator named (--artifact).
	Artifacts []Source
}

// String names the pool chart in a report or a message.
func (c PoolChart) String() string {
	s := c.ChartRef.String() + " (" + c.From + ")"
	for _, a := range c.Artifacts {
		s += ", " + a.String() + " (--artifact)"
	}
	return s
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
	// PoolChart is the chart source a HelmRelease must name to be a pool.
	PoolChart PoolChart
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

// Read finds every pool: each HelmRelease whose chart reference is the
// platform's pool chart (PoolChartOf), and each Helm release of the pool
// chart that no HelmRelease manages. A pool is where its objects are: a
// HelmRelease is read only as a pool of its own namespace (its release
// installed and recorded there), a record only as the release its labels
// name in its own namespace; either is otherwise listed in Ignored, as is a
// HelmRelease that looks like a pool (its chart's name is the pool chart's)
// but takes its chart from another source, a tenant's own included. An error
// is a cluster that answered with one, or an --artifact that names no source.
func Read(ctx context.Context, p engine.ClientProvider, o Options) (*Fleet, error) {
	pc, err := PoolChartOf(ctx, p, o)
	if err != nil {
		return nil, err
	}
	f := &Fleet{PoolChart: pc}
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
		id := hr.GetNamespace() + "/" + hr.GetName()
		foundBy, lookalike := pc.reference(hr, o.Chart)
		release, elsewhere := releaseOf(hr)
		if foundBy == "" {
			// Its release is its own, pool or not: its record is never read
			// as a release no HelmRelease manages.
			if elsewhere == "" {
				claimed[hr.GetNamespace()+"/"+release] = true
			}
			if lookalike != "" {
				f.Ignored = append(f.Ignored, Ignored{Object: "HelmRelease " + id, Reason: lookalike})
			}
			continue
		}
		if elsewhere != "" {
			f.Ignored = append(f.Ignored, Ignored{Object: "HelmRelease " + id, Reason: elsewhere})
			continue
		}
		key := hr.GetNamespace() + "/" + release
		pool := Pool{HelmRelease: id, Release: release, Namespace: hr.GetNamespace(), FoundBy: foundBy}
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

// PoolChartOf says where the pool chart is: the artifact the
// ApplicationDefinition kubernetes-nodes names in spec.release.chartRef (one
// GET), else Cozystack's default artifact; and the sources o.Artifacts names.
func PoolChartOf(ctx context.Context, p engine.ClientProvider, o Options) (PoolChart, error) {
	pc := PoolChart{ChartRef: DefaultPoolArtifact, From: "Cozystack's default; the cluster holds no ApplicationDefinition " + ApplicationDefinition}
	for _, a := range o.Artifacts {
		s, err := ParseArtifact(a)
		if err != nil {
			return PoolChart{}, err
		}
		pc.Artifacts = append(pc.Artifacts, s)
	}
	if p == nil {
		return pc, nil
	}
	def, err := Get(ctx, p, ApplicationDefinitionAPI, "ApplicationDefinition", "", ApplicationDefinition)
	if err != nil {
		return PoolChart{}, err
	}
	if def == nil {
		return pc, nil
	}
	ref := Source{
		Kind:      Text(def.Object, "spec", "release", "chartRef", "kind"),
		Namespace: Text(def.Object, "spec", "release", "chartRef", "namespace"),
		Name:      Text(def.Object, "spec", "release", "chartRef", "name"),
	}
	if !chartRefKinds[ref.Kind] || ref.Name == "" || ref.Namespace == "" {
		return PoolChart{}, fmt.Errorf("ApplicationDefinition %s: its spec.release.chartRef (kind %q, namespace %q, name %q) names no chart source a HelmRelease can take in every tenant namespace (want kind %s, a namespace and a name); fix the ApplicationDefinition, as Cozystack installs it", ApplicationDefinition, ref.Kind, ref.Namespace, ref.Name, strings.Join(SortedKinds(chartRefKinds), ", "))
	}
	pc.ChartRef, pc.From = ref, "named by ApplicationDefinition "+ApplicationDefinition
	return pc, nil
}

// reference says how hr's chart reference names the pool chart ("" when it
// does not), and, when it does not but looks like it (a chartRef whose name
// ends in the pool chart's name, spec.chart naming that chart), why it is
// not read as a pool.
func (c PoolChart) reference(hr *unstructured.Unstructured, chartName string) (foundBy, lookalike string) {
	own := hr.GetNamespace()
	named := func(s Source) bool {
		for _, a := range c.Artifacts {
			if a.matches(s) {
				return true
			}
		}
		return false
	}
	if name := Text(hr.Object, "spec", "chart", "spec", "chart"); name != "" {
		src := Source{
			Kind:      Text(hr.Object, "spec", "chart", "spec", "sourceRef", "kind"),
			Namespace: firstText(Text(hr.Object, "spec", "chart", "spec", "sourceRef", "namespace"), own),
			Name:      Text(hr.Object, "spec", "chart", "spec", "sourceRef", "name"),
		}
		switch {
		case name != chartName:
			return "", ""
		case LegacyPoolRepository.matches(src):
			return "spec.chart " + name + " from " + src.String(), ""
		case named(src):
			return "spec.chart " + name + " from " + src.String() + " (named by --artifact)", ""
		}
		return "", fmt.Sprintf("names chart %s by spec.chart from %s, not the platform's pool chart (%s, or chart %s from %s): a pool is a pool by where its chart is, never by a name a tenant can copy; if that source is the platform's, name it with --artifact %s", name, src, c.ChartRef, chartName, LegacyPoolRepository, src.Flag())
	}
	ref := Source{
		Kind:      Text(hr.Object, "spec", "chartRef", "kind"),
		Namespace: firstText(Text(hr.Object, "spec", "chartRef", "namespace"), own),
		Name:      Text(hr.Object, "spec", "chartRef", "name"),
	}
	if !chartRefKinds[ref.Kind] || ref.Name == "" {
		return "", ""
	}
	switch {
	case c.ChartRef.matches(ref):
		return "spec.chartRef " + ref.String(), ""
	case named(ref):
		return "spec.chartRef " + ref.String() + " (named by --artifact)", ""
	case strings.HasSuffix(ref.Name, chartName):
		return "", fmt.Sprintf("its spec.chartRef %s is not the platform's pool chart %s: a pool is a pool by where its chart is, never by a name a tenant can copy; if that source is the platform's, name it with --artifact %s", ref, c, ref.Flag())
	}
	return "", ""
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
