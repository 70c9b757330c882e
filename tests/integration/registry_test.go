//go:build integration

package integration

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"
)

// startRegistry builds CNCF distribution's registry from tools/registry (its
// own module: the Go build cache makes every run after the first a link) and
// serves it on a loopback port with its storage in the tier's folder, stopped
// with the API server. It serves TLS with a certificate of an organisation's
// own CA, as a closed network's registry does: it returns host:port and the
// file holding that CA's PEM, which every client must be given.
func (e *env) startRegistry(t *testing.T) (host, caFile string) {
	t.Helper()
	bin := filepath.Join(e.dir, "registry")
	started := time.Now()
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Dir = support.Path("tools", "registry")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build tools/registry: %v\n%s", err, out)
	}
	t.Logf("registry built in %s", time.Since(started).Round(100*time.Millisecond))

	host = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	tlsDir := filepath.Join(e.dir, "registry-tls")
	caPEM := writeCASignedServingCert(t, tlsDir, "Registry Test CA")
	caFile = filepath.Join(tlsDir, "ca.crt")
	writeFile(t, caFile, string(caPEM))
	config := filepath.Join(e.dir, "registry.yaml")
	writeFile(t, config, fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
  secret: %s
  tls:
    certificate: %s
    key: %s
`, filepath.Join(e.dir, "registry-data"), host, randomHex(t, 16), filepath.Join(tlsDir, "tls.crt"), filepath.Join(tlsDir, "tls.key")))
	// Without these the registry exports traces and metrics to an OTLP
	// collector on localhost, which the tier does not run.
	e.start(t, "registry", "/usr/bin/env", "OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_LOGS_EXPORTER=none", bin, "serve", config)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get("https://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return host, caFile
			}
		}
		if time.Now().After(deadline) {
			e.dumpLogs(t)
			t.Fatalf("the registry on %s did not answer /v2/ within 30s: %v", host, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runMake runs a target of the repository's Makefile, as CI and a release
// do: its standard output, then its standard error.
func runMake(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = support.RepoRoot()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("make %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

var pushed = regexp.MustCompile(`(?m)^Pushed: (\S+)\nDigest: (sha256:[0-9a-f]{64})$`)

// testChartsThroughOCIRegistry: `make package` and `make push` against a real
// OCI registry on loopback, served under an organisation's own CA as the
// closed-network page has it (the push given the CA with --ca-file, as the
// page says; refused without it); every archive pulled back with Helm's
// registry client is the archive pushed (manifest digest as push reported
// it, chart layer digest and bytes as packaged) and renders every golden
// case and baseline corner byte for byte as the chart folder does; Helm
// installs the pool chart as pulled, and `workerimage rollcheck` takes the
// oci:// head with --ca-file, against two charts and against what runs.
func testChartsThroughOCIRegistry(t *testing.T, e *env) {
	host, caFile := e.startRegistry(t)
	dist := filepath.Join(e.dir, "dist")
	repo := "oci://" + host + "/charts"

	stdout, _ := runMake(t, "package", "DIST="+dist)
	packaged := strings.Fields(stdout)
	mustHold(t, len(packaged) == len(chartFolders), "make package wrote %d archives, want one per chart (%d): %v", len(packaged), len(chartFolders), packaged)
	// The control: the registry's CA is not in this machine's store.
	if out, err := exec.Command("make", "--no-print-directory", "-C", support.RepoRoot(), "push", "DIST="+dist, "REGISTRY="+repo).CombinedOutput(); err == nil || !strings.Contains(string(out), "x509") {
		t.Fatalf("make push without the registry's CA: %v, want a refusal for the unknown authority:\n%s", err, out)
	}
	// helm push reports each push on standard error, as its registry client writes.
	_, out := runMake(t, "push", "DIST="+dist, "REGISTRY="+repo, "PUSH_FLAGS=--ca-file "+caFile)
	digests := map[string]string{}
	for _, m := range pushed.FindAllStringSubmatch(out, -1) {
		digests[m[1]] = m[2]
	}
	mustHold(t, len(digests) == len(packaged), "make push reported %d pushes, want %d:\n%s", len(digests), len(packaged), out)

	client, err := registry.NewRegistryClientWithTLS(io.Discard, "", "", caFile, false, filepath.Join(e.dir, "registry-credentials.json"), false)
	if err != nil {
		t.Fatal(err)
	}
	pulled := map[string]*chart.Chart{}
	for _, folder := range chartFolders {
		local, err := render.LoadChart(support.Path(folder))
		if err != nil {
			t.Fatal(err)
		}
		name, version := local.Metadata.Name, local.Metadata.Version
		archive := filepath.Join(dist, name+"-"+version+".tgz")
		raw, err := os.ReadFile(archive)
		if err != nil {
			t.Fatalf("make package left no %s: %v", archive, err)
		}
		ref := fmt.Sprintf("%s/charts/%s:%s", host, name, version)
		res, err := client.Pull(ref)
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		sum := sha256.Sum256(raw)
		if got, want := res.Manifest.Digest, digests[ref]; got != want {
			t.Errorf("%s: pulled manifest %s, make push reported %s", ref, got, want)
		}
		if got, want := res.Chart.Digest, "sha256:"+hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: pulled chart layer %s, the packaged archive is %s", ref, got, want)
		}
		if !bytes.Equal(res.Chart.Data, raw) {
			t.Errorf("%s: the pulled chart layer is not the packaged archive byte for byte", ref)
		}
		if res.Chart.Meta.Name != name || res.Chart.Meta.Version != version {
			t.Errorf("%s: its config names %s %s", ref, res.Chart.Meta.Name, res.Chart.Meta.Version)
		}
		c, err := loader.LoadArchive(bytes.NewReader(res.Chart.Data))
		if err != nil {
			t.Fatalf("%s: Helm's loader refuses what was pulled: %v", ref, err)
		}
		if diff := chartFilesDiffer(local, c); diff != "" {
			t.Errorf("%s differs from %s: %s", ref, folder, diff)
		}
		pulled[folder] = c
	}

	// Every committed render, from the pulled charts, byte for byte.
	cases, found, err := support.GoldenCases()
	if err != nil || !found {
		t.Fatalf("golden case table: found %v, %v", found, err)
	}
	corners, err := support.BaselineCases()
	if err != nil {
		t.Fatal(err)
	}
	rendered := 0
	for _, c := range append(cases, corners...) {
		want, wantErr := c.Render(render.Render, true)
		got, gotErr := c.RenderChart(pulled[c.ChartDir()], render.Render, true)
		switch {
		case wantErr != nil || gotErr != nil:
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Errorf("case %s: the folder renders %v, the pulled chart %v", c.Name, wantErr, gotErr)
			}
		case want.Text() != got.Text():
			t.Errorf("case %s: the pulled chart renders other bytes than the folder", c.Name)
		default:
			rendered++
		}
	}
	mustHold(t, rendered > 0, "no case rendered")
	t.Logf("%d charts pushed and pulled back unchanged; %d cases render the same bytes from the registry as from the folders", len(pulled), rendered)

	// rollcheck takes the oci:// head: against the folder, the pulled chart
	// rolls no example pool; named without a tag it is the newest version.
	pool := pulled[render.PoolChart]
	tagged := fmt.Sprintf("%s/kubernetes-nodes:%s", repo, pool.Metadata.Version)
	for _, head := range []string{tagged, repo + "/kubernetes-nodes"} {
		stdout, _, code := e.workerimage(t, "rollcheck", head, "--ca-file", caFile, "--base", support.Path(render.PoolChart),
			"-f", support.Path("examples", "pools", "*.yaml"), "--cluster", support.Path("examples", "cluster-state.yaml"))
		// Named without a tag, the report says which version it took.
		if code != 0 || !strings.Contains(stdout, "\nhead     "+tagged+"\n") || !regexp.MustCompile(`\n\d+ pools: 0 roll, `).MatchString(stdout) {
			t.Errorf("rollcheck %s --base the folder: exit %d\n%s", head, code, stdout)
		}
	}
	_, stderr, code := e.workerimage(t, "rollcheck", repo+"/kubernetes-nodes:0.0.0", "--ca-file", caFile, "--cluster", support.Path("examples", "cluster-state.yaml"))
	if code != 2 || !strings.Contains(stderr, repo+"/kubernetes-nodes:0.0.0") {
		t.Errorf("rollcheck of a version the registry lacks: exit %d, %s", code, stderr)
	}

	// Helm installs the pool chart as pulled; rollcheck of the same oci://
	// head against what runs finds the pool and rolls nothing.
	const ns, rel = "tenant-oci", "kubernetes-nodes-oci-workers"
	e.createNamespace(t, ns)
	inst := action.NewInstall(e.helm(t, ns).cfg)
	inst.ReleaseName, inst.Namespace, inst.Timeout = rel, ns, time.Minute
	if _, err := inst.Run(pool, map[string]interface{}{"cluster": "oci"}); err != nil {
		t.Fatalf("helm install %s from %s: %v", rel, repo, err)
	}
	head := fmt.Sprintf("%s/kubernetes-nodes:%s", repo, pool.Metadata.Version)
	stdout, _, code = e.workerimage(t, "rollcheck", head, "--ca-file", caFile, "--kubeconfig", e.kubeconfig, "-n", ns)
	if code != 0 || !strings.Contains(stdout, rel) || !strings.Contains(stdout, "\n1 pool: 0 roll, ") {
		t.Errorf("rollcheck %s against the pool Helm installed from it: exit %d\n%s", head, code, stdout)
	}
	e.helm(t, ns).mustUninstall(rel)
}

// chartFolders are the charts `make package` builds.
var chartFolders = support.ReleasedCharts

// chartFilesDiffer names the first file (metadata, values, schema, template,
// other file, or dependency) in which two loaded charts differ; "" when none.
func chartFilesDiffer(a, b *chart.Chart) string {
	if a.Metadata.Name != b.Metadata.Name || a.Metadata.Version != b.Metadata.Version || a.Metadata.Type != b.Metadata.Type {
		return fmt.Sprintf("Chart.yaml names %s %s (%s) and %s %s (%s)", a.Metadata.Name, a.Metadata.Version, a.Metadata.Type, b.Metadata.Name, b.Metadata.Version, b.Metadata.Type)
	}
	if !bytes.Equal(a.Schema, b.Schema) {
		return "values.schema.json"
	}
	files := func(c *chart.Chart) map[string][]byte {
		out := map[string][]byte{}
		for _, f := range c.Templates {
			out[f.Name] = f.Data
		}
		for _, f := range c.Raw {
			if f.Name == "values.yaml" {
				out[f.Name] = f.Data
			}
		}
		return out
	}
	fa, fb := files(a), files(b)
	names := map[string]bool{}
	for n := range fa {
		names[n] = true
	}
	for n := range fb {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		if !bytes.Equal(fa[n], fb[n]) {
			return n
		}
	}
	da, db := a.Dependencies(), b.Dependencies()
	if len(da) != len(db) {
		return fmt.Sprintf("%d dependencies against %d", len(da), len(db))
	}
	byName := map[string]*chart.Chart{}
	for _, d := range db {
		byName[d.Name()] = d
	}
	for _, d := range da {
		other, ok := byName[d.Name()]
		if !ok {
			return "dependency " + d.Name() + " missing"
		}
		if diff := chartFilesDiffer(d, other); diff != "" {
			return "charts/" + d.Name() + ": " + diff
		}
	}
	return ""
}

// mustHold fails the test now when ok is false.
func mustHold(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

// testCozystackPageObjects: every object docs/cozystack.md tells an operator
// to apply (the OCIRepositories, the HelmRelease, the PackageSources and
// Packages) passes strict server-side dry-run against the real CRDs, the
// cozystack.io ones generated from Go types written from Cozystack's API; and
// a wrong value in each kind, at the fields the page writes, is refused
// (CozystackInstall applies the install's objects for real).
func testCozystackPageObjects(t *testing.T, e *env) {
	raw, err := os.ReadFile(support.Path(support.CozystackPage))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for i, block := range support.Blocks(string(raw)) {
		if block.Lang == "yaml" {
			files[fmt.Sprintf("block-%02d.yaml", i)] = block.Text
		}
	}
	m, err := render.NewManifest(files)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, d := range m.Docs {
		kinds[d.Kind()]++
		if ns := d.Namespace(); ns != "" {
			e.createNamespace(t, ns)
		}
	}
	mustHold(t, kinds["OCIRepository"] >= 4 && kinds["HelmRelease"] >= 1 && kinds["PackageSource"] >= 3 && kinds["Package"] >= 2,
		"the page shows %v, want its OCIRepositories, HelmRelease, PackageSources and Packages", kinds)
	n, problems := e.dryRunApply(t, m, "")
	for _, p := range problems {
		t.Errorf("docs/cozystack.md: %s", p)
	}
	// The controls: a value each schema refuses, set on the page's own object.
	first := func(kind string) map[string]any {
		for _, d := range m.Docs {
			if d.Kind() == kind {
				out := map[string]any{}
				body, _ := json.Marshal(d.Object)
				_ = json.Unmarshal(body, &out)
				return out
			}
		}
		t.Fatalf("the page shows no %s", kind)
		return nil
	}
	for _, c := range []struct {
		kind, path, key string
		value           any
		wantInText      string
	}{
		{"OCIRepository", "spec.layerSelector", "operation", "unpack", "operation"},
		{"PackageSource", "spec.sourceRef", "kind", "HelmRepository", "kind"},
		{"PackageSource", "spec.sourceRef", "name", nil, "name"},
		{"PackageSource", "spec.variants.0", "notAField", "x", "notAField"},
		{"PackageSource", "spec.variants.0.components.0", "path", nil, "path"},
		{"PackageSource", "spec.variants.0.components.0.install", "upgradeCRDs", "Always", "upgradeCRDs"},
		{"Package", "spec", "variant", 7, "variant"},
		{"Package", "spec.components.kubernetes-worker-image", "enable", false, "enable"},
	} {
		obj := first(c.kind)
		parent, ok := render.Get(obj, c.path).(map[string]any)
		mustHold(t, ok, "the page's %s has no object at %s", c.kind, c.path)
		if c.value == nil {
			delete(parent, c.key)
		} else {
			parent[c.key] = c.value
		}
		if _, problems := e.dryRunApply(t, &render.Manifest{Docs: []render.Doc{{Object: obj}}}, ""); len(problems) != 1 || !strings.Contains(problems[0], c.wantInText) {
			t.Errorf("the page's %s with %s.%s = %v passed or failed otherwise: %q; the check checks nothing", c.kind, c.path, c.key, c.value, problems)
		} else {
			t.Logf("refused as it should be: %s", problems[0])
		}
	}
	t.Logf("%d objects of docs/cozystack.md (%v) passed strict dry-run; 8 wrong ones were refused", n, kinds)
}
