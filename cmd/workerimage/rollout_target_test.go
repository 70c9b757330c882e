package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"strings"
	"sync"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exampleCluster is the stock example cluster the docs read.
const exampleCluster = "examples/cluster-state.yaml"

// factoryStandIn answers as an Image Factory would, with no network: its
// version list, and each image by status (200 unless statuses says
// otherwise). It records each request, and the CA it was trusted with.
type factoryStandIn struct {
	versions []string
	statuses map[string]int
	mu       sync.Mutex
	asked    []string
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (f *factoryStandIn) reader() *rollout.FactoryReader {
	return &rollout.FactoryReader{Transport: func(string) (http.RoundTripper, error) {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			f.mu.Lock()
			f.asked = append(f.asked, req.Method+" "+req.URL.String())
			f.mu.Unlock()
			status, body := http.StatusOK, ""
			if strings.HasSuffix(req.URL.Path, "/versions") {
				raw, _ := json.Marshal(f.versions)
				body = string(raw)
			} else if s, ok := f.statuses[req.URL.String()]; ok {
				status = s
			}
			return &http.Response{StatusCode: status, Status: http.StatusText(status), Body: io.NopCloser(strings.NewReader(body)), Request: req, Header: http.Header{}}, nil
		}), nil
	}}
}

// cliFactory runs the command from the repository's root (the docs'
// paths), the Image Factory played by f.
func cliFactory(t *testing.T, f *factoryStandIn, args ...string) result {
	t.Helper()
	t.Chdir(support.RepoRoot())
	var out, errOut bytes.Buffer
	a := &app{name: "workerimage", stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, dial: dialKubeconfig, terminal: noTerminal, factory: f.reader()}
	code := a.run(args)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// The day-2 page's first command on the stock example cluster selects the
// golden pools on v1.13.6 as well as the HTTP pools (before: the HTTP
// pools alone, "can start: 3 pools", exit 0), blocks them for v1.13.7's
// catalog entry, and ends with that catalog change.
func TestRolloutDay2FirstCommandSelectsTheGoldenPools(t *testing.T) {
	r := cliFactory(t, &factoryStandIn{}, "rollout", "--to-talos", "v1.13.7", "--behind", "--max-clones", "1", "--cluster", exampleCluster)
	require.Equal(t, exitAttn, r.code, r.stderr)
	assert.Contains(t, r.stdout, "\nselected  7 pools: behind\n")
	for _, pool := range []string{"tenant-acme/kubernetes-nodes-acme-golden ", "tenant-beta/kubernetes-nodes-beta-batch ", "tenant-beta/kubernetes-nodes-beta-spot "} {
		assert.Regexp(t, `\n  pool  `+pool+` *needs-catalog-entry: `, r.stdout, pool)
	}
	assert.Contains(t, r.stdout, "\ncatalog: the catalog's Package with its new images list, complete")
	assert.Contains(t, r.stdout, "# new, golden talos-worker-"+defaultSchematic+"-v1.13.7, for 3 pools: tenant-acme/kubernetes-nodes-acme-golden, tenant-beta/kubernetes-nodes-beta-batch, tenant-beta/kubernetes-nodes-beta-spot\n")
	assert.Contains(t, r.stdout, "\nresult  will not start: 5 pools blocked (above)\n")
}

// A typo in the target is refused, exit 2, naming the nearest known
// releases and what the factory was asked (before: "can start", exit 0,
// and workers that would get a 404); a factory that lists the release lets
// it through, and the plan says it asked.
func TestRolloutRefusesATypoInTheTarget(t *testing.T) {
	args := []string{"rollout", "--to-talos", "v1.13.80", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--to-factory", "https://factory.mirror.internal", "--cluster", exampleCluster}
	f := &factoryStandIn{versions: []string{"v1.13.6", "v1.13.7"}}
	r := cliFactory(t, f, args...)
	assert.Equal(t, exitProblem, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "--to-talos v1.13.80: no catalog entry, golden in cozy-public or chart default names it")
	assert.Contains(t, r.stderr, "the nearest known releases: v1.13.6, v1.13.5; asked the factory GET https://factory.mirror.internal/versions (trusting the system's roots): it does not list v1.13.80 either (it lists 2 releases, the newest of v1.13: v1.13.7): check the release (a typo?)")
	assert.Equal(t, []string{"GET https://factory.mirror.internal/versions"}, f.asked)

	listed := &factoryStandIn{versions: []string{"v1.13.7", "v1.13.80"}}
	r = cliFactory(t, listed, args...)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "\n          Talos v1.13.80: named by no catalog entry, golden or chart default; asked GET https://factory.mirror.internal/versions (trusting the system's roots): lists it\n")
	assert.Contains(t, r.stdout, "\nresult  can start: 1 pool to move in 1 wave; --apply runs it\n")

	// The next patch after the newest one known needs no factory.
	next := &factoryStandIn{}
	r = cliFactory(t, next, "rollout", "--to-talos", "v1.13.7", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--to-factory", "https://factory.mirror.internal", "--cluster", exampleCluster)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, next.asked)
	assert.NotContains(t, r.stdout, "asked GET")
}

// A pool importing from the public factory while the catalog publishes a
// mirror is blocked with the fix (before: a note, "can start", exit 0, also
// under --strict); the fix as printed plans it on the mirror, exit 0.
func TestRolloutBlocksAPoolOffTheMirror(t *testing.T) {
	for _, strict := range []bool{false, true} {
		args := []string{"rollout", "--to-talos", "v1.13.7", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--cluster", exampleCluster}
		if strict {
			args = append(args, "--strict")
		}
		r := cliFactory(t, &factoryStandIn{}, args...)
		require.Equal(t, exitAttn, r.code, "strict %v: %s", strict, r.stderr)
		assert.Contains(t, r.stdout, "\n  pool  tenant-beta/kubernetes-nodes-beta-web  other-factory: it would import from https://factory.talos.dev once moved, not from https://factory.mirror.internal, which the catalog's published defaults (ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults) publishes for new pools")
		assert.Contains(t, r.stdout, "move flavor and factory in one re-image (--to-factory https://factory.mirror.internal), or leave it out (--exclude tenant-beta/kubernetes-nodes-beta-web); the factory line below plans it\n")
		assert.Contains(t, r.stdout, "\nresult  will not start: 1 pool blocked (above)\n")
	}
	r := cliFactory(t, &factoryStandIn{}, "rollout", "--to-talos", "v1.13.7", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--cluster", exampleCluster, "-o", "json")
	plan := decode[rollout.RolloutPlan](t, r)
	command := strings.Fields(plan.FactoryCommand)
	require.Equal(t, []string{"workerimage", "rollout", "--to-talos", "v1.13.7", "--to-factory", "https://factory.mirror.internal", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--wave", "5", "--max-clones", "10"}, command)
	r = cliFactory(t, &factoryStandIn{}, append(command[1:], "--cluster", exampleCluster)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "\nresult  can start: 1 pool to move in 1 wave; --apply runs it\n")
}

// --max-clones 0 reads as "no clones": refused (exit 2), saying how to lift
// the bound; 1 plans.
func TestRolloutRefusesMaxClonesZero(t *testing.T) {
	for _, n := range []string{"0", "-1"} {
		r := cli(t, "rollout", "--to-talos", "v1.13.7", "--max-clones", n, "--cluster", rolloutFixture)
		assert.Equal(t, exitProblem, r.code, n)
		assert.Empty(t, r.stdout)
		assert.Contains(t, r.stderr, "--max-clones "+n+": a wave clones at least 1 disk of a golden at once, and 0 is not \"no bound\"; give the most clones of one golden a wave may have in flight (default 10); to lift the bound, give one at least the workers the selected pools replace at once", n)
	}
	r := cli(t, "rollout", "--to-talos", "v1.13.7", "--max-clones", "1", "-n", "tenant-beta", "--cluster", rolloutFixture)
	assert.NotEqual(t, exitProblem, r.code, r.stderr)
}

// --apply asks the factory for wave 1's images before its first patch: one
// it does not serve stops the run, exit 2, naming the URL and the status,
// nothing patched; served, the run goes on and says what it asked.
func TestRolloutApplyChecksWaveOnesImages(t *testing.T) {
	image := "https://factory.talos.dev/image/" + defaultSchematic + "/v1.13.7/openstack-amd64.raw.xz"
	args := []string{"--to-talos", "v1.13.7", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--apply", "--poll", "5ms", "--timeout", "20s"}
	rc := newRolloutCluster(t, true)
	missing := &factoryStandIn{statuses: map[string]int{image: http.StatusNotFound}}
	rc.factory = missing.reader()
	r := runRollout(t, rc, false, args...)
	assert.Equal(t, exitProblem, r.code, r.stdout)
	assert.Contains(t, r.stderr, "wave 1: the image of tenant-beta/kubernetes-nodes-beta-web, "+image+", is not served by its factory (HEAD: Not Found); nothing was patched")
	assert.Equal(t, 0, rc.patches())
	assert.Equal(t, []string{"HEAD " + image}, missing.asked)

	served := &factoryStandIn{}
	rc.factory = served.reader()
	r = runRollout(t, rc, false, args...)
	require.Equal(t, exitOK, r.code, r.stderr+r.stdout)
	assert.Contains(t, r.stdout, "\nwave 1's images are served by their factory: "+image+" (HEAD: OK)\nwave 1 of 1: ")
	assert.Equal(t, 1, rc.patches())
}
