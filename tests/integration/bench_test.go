//go:build integration

package integration

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// maxHistory is the number of revisions Helm keeps per release here: Flux's
// helm-controller default. Helm lists and decodes every kept revision of the
// release on each upgrade, so the record's size costs time as well as etcd.
const maxHistory = 5

// minUpgrades is the fewest alternating rounds measured (each round upgrades
// every side once): a median over fewer says little on a shared machine.
const minUpgrades = 15

// BenchmarkUpgradeCost is what a platform upgrade costs a pool on one real
// API server: an unchanged `helm upgrade` of an HTTP pool (chart defaults,
// cluster acme) with the pre-feature pool chart, Cozystack's own
// (support.CozystackChart, from $COZYSTACK_CHART; left out without it), and with the chart of this checkout,
// and of a clone pool (declared class, healthy golden in cozy-public) with
// this checkout's chart. The sides are upgraded alternately, in one run, each
// upgrade as the `helm upgrade` command does it: a fresh Helm configuration on
// the kubeconfig (discovery cached on disk), the chart loaded from its folder,
// Helm's SDK keeping maxHistory revisions. It reports the median wall time of
// each side and their ratios, the size of the release record (the Helm
// Secret's data.release as the API shows it; see releaseRecord), the requests
// that reached the API server and the objects in the manifest per upgrade; the
// log breaks the requests down by purpose, the CPU time by process and the
// record by what the chart stores in it. Goals (docs/design.md): HTTP pool within
// 1.15x of the pre-feature chart's time and 1.5x of its record; clone pool
// within 1.3x of the HTTP pool's time. Measured, never asserted. Charts named
// in UPGRADE_BENCH_CHARTS are measured beside them (candidatesEnv).
func BenchmarkUpgradeCost(b *testing.B) {
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(binDir(), name)); err != nil {
			b.Skipf("%s is not built in %s: run `make apiserver` first (or set KUBE_APISERVER_BIN_DIR)", name, binDir())
		}
	}
	// Helm's chart loader logs every symlinked dependency (the library chart)
	// on each load; that says nothing here.
	logOut := log.Writer()
	log.SetOutput(io.Discard)
	b.Cleanup(func() { log.SetOutput(logOut) })

	e := startEnv(b)
	e.installCRDs(b)
	// The kinds Cozystack's chart renders beside a pool's (every side runs on
	// this cluster, so this chart's pools render their CiliumNetworkPolicy too).
	for _, f := range cozystackChartCRDFiles {
		e.installCRDFile(b, f)
	}
	e.createClusterFixtures(b)

	// A healthy golden for the clone pool, as the tier's Catalog subtest has it.
	defaults, err := support.PoolDefaults()
	if err != nil {
		b.Fatal(err)
	}
	e.createNamespace(b, catalogNamespace)
	e.helm(b, catalogNamespace).mustInstall(catalogRelease, render.CatalogChart, nil)
	e.setPhase(b, catalogNamespace, support.GoldenName(defaults.SchematicID, defaults.Version), "Succeeded")

	head := support.Path(render.PoolChart)
	// Cozystack's chart needs _cluster (the platform always passes it); every side gets the same.
	platform := func() map[string]interface{} { return map[string]interface{}{"cluster-domain": "cozy.local"} }
	httpPool := func() map[string]interface{} {
		return map[string]interface{}{"cluster": poolCluster, "_cluster": platform()}
	}
	clonePool := func() map[string]interface{} {
		return map[string]interface{}{"cluster": poolCluster, "_cluster": platform(), "osImage": map[string]interface{}{"builtin": map[string]interface{}{}}}
	}
	var sides []*upgradeSide
	preDir, err := support.CozystackChart()
	switch {
	case errors.Is(err, support.ErrNoPreFeatureChart):
		b.Logf("pre-feature side left out: %v", err)
	case err != nil:
		b.Fatal(err)
	default:
		sides = append(sides, &upgradeSide{name: "pre-feature", chartDir: preDir, namespace: "tenant-bench-pre-feature", values: httpPool})
	}
	httpSide := &upgradeSide{name: "http", chartDir: head, namespace: "tenant-bench-http", values: httpPool}
	cloneSide := &upgradeSide{name: "clone", chartDir: head, namespace: "tenant-bench-clone", values: clonePool}
	sides = append(sides, httpSide, cloneSide)
	extra, err := candidateSides(os.Getenv(candidatesEnv), httpPool)
	if err != nil {
		b.Fatal(err)
	}
	sides = append(sides, extra...)

	// Every side is the same pool (release kubernetes-nodes-acme-workers), each
	// in its own tenant namespace (Cozystack's chart grants its dashboard role
	// to the tenant a namespace names): same names, same object sizes. maxHistory upgrades
	// after the install bring its history to the steady state every measured
	// upgrade then sees (maxHistory revisions listed, the oldest deleted).
	for _, s := range sides {
		e.createNamespace(b, s.namespace)
		e.helm(b, s.namespace).mustInstall(poolRelease, s.chartDir, s.values())
		for i := 0; i < maxHistory; i++ {
			s.upgrade(b, e, false)
		}
	}

	b.Run("alternating", func(b *testing.B) {
		rounds := max(b.N, minUpgrades)
		for _, s := range sides {
			s.reset()
		}
		b.ResetTimer()
		for i := 0; i < rounds; i++ {
			// Each round starts with another side, so none always runs first.
			for j := range sides {
				sides[(i+j)%len(sides)].upgrade(b, e, true)
			}
		}
		b.StopTimer()
		for _, s := range sides {
			s.readRecord(b, e)
		}

		// ns/op is the HTTP pool's median upgrade on this checkout's chart.
		b.ReportMetric(float64(httpSide.median().Nanoseconds()), "ns/op")
		for _, s := range sides {
			b.ReportMetric(float64(s.median().Microseconds())/1000, s.name+"-ms/upgrade")
			b.ReportMetric(s.requestsPerUpgrade(), s.name+"-requests/upgrade")
		}
		b.ReportMetric(httpSide.requestsPerUpgrade(), "requests/upgrade")
		b.ReportMetric(float64(httpSide.objects), "objects/upgrade")
		b.ReportMetric(float64(httpSide.record.size), "record-bytes")
		if pre := sides[0]; pre.name == "pre-feature" {
			b.ReportMetric(float64(pre.objects), "pre-feature-objects/upgrade")
			b.ReportMetric(float64(pre.record.size), "pre-feature-record-bytes")
			b.ReportMetric(ratio(httpSide.median(), pre.median()), "x-pre-feature-upgrade")
			b.ReportMetric(float64(httpSide.record.size)/float64(pre.record.size), "x-pre-feature-record")
		}
		b.ReportMetric(ratio(cloneSide.median(), httpSide.median()), "x-http-upgrade")
		for _, s := range extra {
			b.ReportMetric(float64(s.objects), s.name+"-objects/upgrade")
			b.ReportMetric(float64(s.record.size), s.name+"-record-bytes")
			if pre := sides[0]; pre.name == "pre-feature" {
				b.ReportMetric(ratio(s.median(), pre.median()), "x-pre-feature-upgrade-"+s.name)
				b.ReportMetric(float64(s.record.size)/float64(pre.record.size), "x-pre-feature-record-"+s.name)
			}
		}
		logUpgradeCost(b, sides, rounds)
	})
}

// upgradeSide is one release the benchmark upgrades, unchanged, over and over,
// and what its measured upgrades cost.
type upgradeSide struct {
	name, chartDir, namespace string
	values                    func() map[string]interface{}

	wall     []time.Duration
	requests map[requestKey]*requestStat // summed over the measured upgrades
	cpu      map[string]time.Duration    // the same, by process
	objects  int                         // documents in the last manifest
	revision int                         // of the last upgrade
	record   releaseRecord
}

func (s *upgradeSide) reset() {
	s.wall = nil
	s.requests = map[requestKey]*requestStat{}
	s.cpu = map[string]time.Duration{}
}

// candidatesEnv names extra charts to measure beside the others in the same
// run, as HTTP pools with the chart defaults: "name=/chart/folder,...". It
// weighs a change to the pool chart (a copy outside the checkout) before it
// is made.
const candidatesEnv = "UPGRADE_BENCH_CHARTS"

func candidateSides(spec string, values func() map[string]interface{}) ([]*upgradeSide, error) {
	var out []*upgradeSide
	seen := map[string]bool{"pre-feature": true, "http": true, "clone": true}
	for _, item := range strings.Split(spec, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		name, dir, ok := strings.Cut(item, "=")
		if !ok || name == "" || dir == "" || strings.ContainsAny(name, " /") {
			return nil, fmt.Errorf("%s: %q is not name=/chart/folder", candidatesEnv, item)
		}
		if seen[strings.ToLower(name)] {
			return nil, fmt.Errorf("%s: %q: the name %s is taken (by the benchmark's own sides or an earlier chart)", candidatesEnv, item, name)
		}
		seen[strings.ToLower(name)] = true
		if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", candidatesEnv, name, err)
		}
		out = append(out, &upgradeSide{name: name, chartDir: dir, namespace: "tenant-bench-candidate-" + strings.ToLower(name), values: values})
	}
	return out, nil
}

// upgrade runs one `helm upgrade` with unchanged values, as the command does:
// a new Helm configuration from the kubeconfig (discovery cached on disk, as
// the CLI caches it), the chart loaded from its folder. Only measured upgrades
// count.
func (s *upgradeSide) upgrade(b *testing.B, e *env, measured bool) {
	b.Helper()
	counter := &requestCounter{stats: map[requestKey]*requestStat{}}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &e.kubeconfig
	flags.Namespace = &s.namespace
	cache := filepath.Join(e.dir, "kube-cache")
	flags.CacheDir = &cache
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.Wrap(counter.wrap)
		return c
	}
	var (
		rel  *release.Release
		err  error
		took time.Duration
	)
	cpuBefore := e.cpuTimes()
	// The label lets a CPU profile of the run be read per side:
	// go tool pprof -tagfocus side=http.
	pprof.Do(context.Background(), pprof.Labels("side", s.name), func(context.Context) {
		start := time.Now()
		cfg := new(action.Configuration)
		if err = cfg.Init(flags, s.namespace, "secret", func(string, ...interface{}) {}); err != nil {
			return
		}
		var chrt *chart.Chart
		if chrt, err = render.LoadChart(s.chartDir); err != nil {
			return
		}
		up := action.NewUpgrade(cfg)
		up.Namespace = s.namespace
		up.MaxHistory = maxHistory
		rel, err = up.Run(poolRelease, chrt, s.values())
		took = time.Since(start)
	})
	cpuAfter := e.cpuTimes()
	if err != nil {
		b.Fatalf("%s: helm upgrade: %v", s.name, err)
	}
	s.objects, s.revision = len(render.SplitDocuments(rel.Manifest)), rel.Version
	if !measured {
		return
	}
	s.wall = append(s.wall, took)
	for k, v := range counter.stats {
		if s.requests[k] == nil {
			s.requests[k] = &requestStat{}
		}
		s.requests[k].n += v.n
		s.requests[k].took += v.took
	}
	for p, t := range cpuAfter {
		s.cpu[p] += t - cpuBefore[p]
	}
}

func (s *upgradeSide) median() time.Duration {
	w := append([]time.Duration(nil), s.wall...)
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	if len(w)%2 == 1 {
		return w[len(w)/2]
	}
	return (w[len(w)/2-1] + w[len(w)/2]) / 2
}

func (s *upgradeSide) requestsPerUpgrade() float64 {
	n := 0
	for _, v := range s.requests {
		n += v.n
	}
	return float64(n) / float64(len(s.wall))
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// readRecord reads the Helm Secret of the side's last revision.
func (s *upgradeSide) readRecord(b *testing.B, e *env) {
	b.Helper()
	name := fmt.Sprintf("sh.helm.release.v1.%s.v%d", poolRelease, s.revision)
	secret, ok := e.get(b, "v1", "Secret", s.namespace, name)
	if !ok {
		b.Fatalf("%s: no release Secret %s/%s", s.name, s.namespace, name)
	}
	wire, _, _ := unstructured.NestedString(secret.Object, "data", "release")
	stored, err := base64.StdEncoding.DecodeString(wire)
	if err != nil {
		b.Fatalf("%s: data.release of %s: %v", s.name, name, err)
	}
	if s.record, err = readReleaseRecord(stored); err != nil {
		b.Fatalf("%s: %s: %v", s.name, name, err)
	}
}

// releaseRecord is one stored Helm release. Helm's Secret driver writes
// base64(gzip(json(release))) as the bytes of the Secret's data.release, which
// etcd holds as they are (stored); the API shows them base64-encoded once more
// (size: the record size docs/design.md bounds, as `kubectl get secret -o
// jsonpath='{.data.release}' | wc -c` counts it, 4/3 of stored). The release
// holds the chart's metadata, templates, values and schema and its other files
// (not its dependencies), the values given, the manifest and the status.
type releaseRecord struct {
	size, stored, gzipped, json int
	rel                         *release.Release
}

func readReleaseRecord(stored []byte) (releaseRecord, error) {
	gz, err := base64.StdEncoding.DecodeString(string(stored))
	if err != nil {
		return releaseRecord{}, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return releaseRecord{}, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return releaseRecord{}, err
	}
	rel := &release.Release{}
	if err := json.Unmarshal(raw, rel); err != nil {
		return releaseRecord{}, err
	}
	return releaseRecord{size: base64.StdEncoding.EncodedLen(len(stored)), stored: len(stored), gzipped: len(gz), json: len(raw), rel: rel}, nil
}

// recordSize encodes a release as Helm's Secret driver does (JSON, gzip at
// its best compression, base64) and returns its size as releaseRecord.size.
func recordSize(rel *release.Release) int {
	raw, err := json.Marshal(rel)
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = w.Write(raw)
	_ = w.Close()
	return base64.StdEncoding.EncodedLen(base64.StdEncoding.EncodedLen(buf.Len()))
}

// recordPart is one part of a stored release: its size as written (a
// template's text, the schema's bytes, values and manifest as JSON) and the
// record bytes (releaseRecord.size) the release loses without it: gzip shares
// a window between parts, so these do not add up to the whole.
type recordPart struct {
	name         string
	size, record int
}

// composition takes each part out of a copy of the release in turn.
func (r releaseRecord) composition() []recordPart {
	whole := recordSize(r.rel)
	without := func(edit func(rel *release.Release, c *chart.Chart)) int {
		rel, c := *r.rel, *r.rel.Chart
		rel.Chart = &c
		edit(&rel, &c)
		return whole - recordSize(&rel)
	}
	jsonLen := func(v interface{}) int {
		raw, _ := json.Marshal(v)
		return len(raw)
	}
	var parts []recordPart
	c := r.rel.Chart
	templates := 0
	for i, f := range c.Templates {
		templates += len(f.Data)
		parts = append(parts, recordPart{"templates/" + strings.TrimPrefix(f.Name, "templates/"), len(f.Data), without(func(_ *release.Release, c *chart.Chart) {
			c.Templates = append(append([]*chart.File(nil), c.Templates[:i]...), c.Templates[i+1:]...)
		})})
	}
	for i, f := range c.Files {
		parts = append(parts, recordPart{"files/" + f.Name, len(f.Data), without(func(_ *release.Release, c *chart.Chart) {
			c.Files = append(append([]*chart.File(nil), c.Files[:i]...), c.Files[i+1:]...)
		})})
	}
	parts = append(parts,
		recordPart{"every template", templates, without(func(_ *release.Release, c *chart.Chart) { c.Templates = nil })},
		recordPart{"values.yaml (as JSON)", jsonLen(c.Values), without(func(_ *release.Release, c *chart.Chart) { c.Values = nil })},
		recordPart{"values.schema.json", len(c.Schema), without(func(_ *release.Release, c *chart.Chart) { c.Schema = nil })},
		recordPart{"Chart.yaml (metadata)", jsonLen(c.Metadata), without(func(_ *release.Release, c *chart.Chart) { c.Metadata = nil })},
		recordPart{"manifest", len(r.rel.Manifest), without(func(rel *release.Release, _ *chart.Chart) { rel.Manifest = "" })},
		recordPart{"values given", jsonLen(r.rel.Config), without(func(rel *release.Release, _ *chart.Chart) { rel.Config = nil })},
	)
	return parts
}

// requestKey is what a request was for: the release records (Secrets),
// discovery, OpenAPI (Helm's validation of the manifest), a lookup (an object
// read before the new revision's record is written: on an unchanged upgrade,
// the render's) or the apply (an object request after it: Helm's diff and
// patch).
type requestKey struct{ purpose, verb, resource string }

type requestStat struct {
	n    int
	took time.Duration
}

// requestCounter wraps a REST config's transport and counts every request that
// reaches the API server (the discovery disk cache sits outside it).
type requestCounter struct {
	mu       sync.Mutex
	applying bool
	stats    map[requestKey]*requestStat
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := rt.RoundTrip(req)
		took := time.Since(start)
		purpose, resource := classifyRequest(req.URL.Path)
		c.mu.Lock()
		defer c.mu.Unlock()
		if purpose == "" {
			purpose = "lookup"
			if c.applying {
				purpose = "apply"
			}
		}
		k := requestKey{purpose, req.Method, resource}
		if c.stats[k] == nil {
			c.stats[k] = &requestStat{}
		}
		c.stats[k].n++
		c.stats[k].took += took
		if purpose == "records" && req.Method == http.MethodPost {
			c.applying = true
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// classifyRequest names the resource of an API path and, for Secrets,
// discovery and OpenAPI, its purpose ("" for objects: lookup or apply).
func classifyRequest(path string) (purpose, resource string) {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	var rest []string
	switch {
	case seg[0] == "openapi":
		return "openapi", strings.Join(seg, "/")
	case seg[0] == "api" && len(seg) > 2:
		rest = seg[2:]
	case seg[0] == "apis" && len(seg) > 3:
		rest = seg[3:]
	default:
		return "discovery", strings.Join(seg, "/")
	}
	resource = rest[0]
	if rest[0] == "namespaces" && len(rest) > 2 {
		resource = rest[2]
	}
	if resource == "secrets" {
		return "records", resource
	}
	return "", resource
}

// cpuTimes is the CPU time used so far by this process (Helm) and by each
// server process.
func (e *env) cpuTimes() map[string]time.Duration {
	out := map[string]time.Duration{}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		out["helm (this process)"] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for _, p := range e.procs {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
		if err != nil {
			continue
		}
		// utime and stime are fields 14 and 15, in clock ticks (100 per second
		// on Linux), after the parenthesised command name.
		fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
		if len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		out[p.name] = time.Duration(utime+stime) * 10 * time.Millisecond
	}
	return out
}

// logUpgradeCost writes what each side's upgrades cost, where the requests
// and the CPU time went, and what the stored record holds.
func logUpgradeCost(b *testing.B, sides []*upgradeSide, rounds int) {
	var out strings.Builder
	w := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(&out, "\n%d alternating rounds, %d revisions kept; medians and per-upgrade means:\n", rounds, maxHistory)
	fmt.Fprintln(w, "side\tmedian ms\tmin ms\tmax ms\trequests\tobjects\trecord B\tin etcd B\tgzip B\tJSON B\t")
	for _, s := range sides {
		lo, hi := s.wall[0], s.wall[0]
		for _, d := range s.wall {
			lo, hi = min(lo, d), max(hi, d)
		}
		fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%d\t%d\t%d\t\n", s.name, ms(s.median()), ms(lo), ms(hi),
			s.requestsPerUpgrade(), s.objects, s.record.size, s.record.stored, s.record.gzipped, s.record.json)
	}
	w.Flush()

	fmt.Fprintf(&out, "\nrequests per upgrade (count, ms) by purpose, verb and resource:\n")
	keys := map[requestKey]bool{}
	for _, s := range sides {
		for k := range s.requests {
			keys[k] = true
		}
	}
	sorted := make([]requestKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.purpose != b.purpose {
			return a.purpose < b.purpose
		}
		if a.resource != b.resource {
			return a.resource < b.resource
		}
		return a.verb < b.verb
	})
	w = tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "purpose\tverb\tresource\t")
	for _, s := range sides {
		fmt.Fprintf(w, "%s n\t%s ms\t", s.name, s.name)
	}
	fmt.Fprintln(w)
	for _, k := range sorted {
		fmt.Fprintf(w, "%s\t%s\t%s\t", k.purpose, k.verb, k.resource)
		for _, s := range sides {
			st := s.requests[k]
			if st == nil {
				st = &requestStat{}
			}
			fmt.Fprintf(w, "%.1f\t%.2f\t", float64(st.n)/float64(len(s.wall)), ms(st.took)/float64(len(s.wall)))
		}
		fmt.Fprintln(w)
	}
	w.Flush()

	fmt.Fprintf(&out, "\nCPU time per upgrade, ms:\n")
	w = tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	procs := []string{"helm (this process)", "kube-apiserver", "etcd"}
	fmt.Fprintln(w, "side\t"+strings.Join(procs, "\t")+"\t")
	for _, s := range sides {
		fmt.Fprintf(w, "%s\t", s.name)
		for _, p := range procs {
			fmt.Fprintf(w, "%.1f\t", ms(s.cpu[p])/float64(len(s.wall)))
		}
		fmt.Fprintln(w)
	}
	w.Flush()

	for _, s := range sides {
		if s.name == "clone" {
			continue // it stores the same chart as the HTTP pool
		}
		fmt.Fprintf(&out, "\n%s record: %d bytes (%d re-encoded as Helm does); what each part costs it (record bytes lost without it):\n", s.name, s.record.size, recordSize(s.record.rel))
		w = tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "part\tsize B\trecord B\t")
		parts := s.record.composition()
		sort.SliceStable(parts, func(i, j int) bool { return parts[i].record > parts[j].record })
		for _, p := range parts {
			fmt.Fprintf(w, "%s\t%d\t%d\t\n", p.name, p.size, p.record)
		}
		w.Flush()
	}
	b.Log(out.String())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
