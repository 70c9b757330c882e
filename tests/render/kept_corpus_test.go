package render

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	fleetread "github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/engine"
)

// The kept corpus: every pool value set the repository keeps, each with the
// release it renders as and the cluster states it is rendered against. It is
// what TestPlanVerdictIsHelms and TestPreviousReleasesPoolsRenderNow hold the
// CLI and this release to.

// keptPool is one pool value set and where it is kept.
type keptPool struct {
	name   string
	rel    render.Release
	values map[string]interface{}
	states []string
}

// keptState is one cluster state a kept pool renders against: its lookups
// and the API versions it serves; "none" is no cluster (helm template).
type keptState struct {
	name        string
	provider    engine.ClientProvider
	apiVersions []string
}

type keptCorpus struct {
	pools  []keptPool
	states map[string]keptState
	// by counts the value sets per place they are kept.
	by map[string]int
}

const noState = "none"

var (
	keptOnce sync.Once
	kept     keptCorpus
	keptErr  error
)

// keptPools gathers the corpus once per test binary.
func keptPools(t testing.TB) keptCorpus {
	t.Helper()
	keptOnce.Do(func() { kept, keptErr = gatherKept(t) })
	require.NoError(t, keptErr)
	return kept
}

// standaloneStates are what a pool values file (an example pool, a plan
// fixture, a kept pool) is rendered against: no cluster, the golden cases'
// usual cluster, the render tests' healthy cluster, every cluster-state file
// `plan` is shown or tested with.
var standaloneStateFiles = []string{
	"examples/cluster-state.yaml",
	"examples/platform/cluster-state.yaml",
	"cmd/workerimage/testdata/state/*.yaml",
}

// fleetStateFiles are the cluster states that hold pools as Cozystack
// deploys them (HelmReleases, valuesFrom, the platform's cozystack-values
// Secrets): each pool is taken with its values as helm-controller merges
// them (internal/fleet, which pins and rollcheck read fleets with) and
// rendered against its own state.
var fleetStateFiles = []string{
	"examples/cluster-state.yaml",
	"examples/platform/cluster-state.yaml",
	"cmd/workerimage/testdata/rollcheck/*.yaml",
	"cmd/workerimage/testdata/pins/*.yaml",
	"cmd/workerimage/testdata/rollout/*.yaml",
	"cmd/workerimage/testdata/adopt/*.yaml",
	"cmd/workerimage/testdata/stock/*.yaml",
}

// poolValuesFiles are the pool values files kept outside the golden table.
var poolValuesFiles = []string{
	"examples/pools/*.yaml",
	"cmd/workerimage/testdata/pools/*.yaml",
	"tests/render/testdata/pools/*.yaml",
}

func globRepo(t testing.TB, patterns []string) []string {
	t.Helper()
	var out []string
	for _, p := range patterns {
		files, err := filepath.Glob(support.Path(p))
		require.NoError(t, err)
		require.NotEmpty(t, files, "%s matches no file", p)
		out = append(out, files...)
	}
	return out
}

func rel(path string) string {
	r, err := filepath.Rel(support.RepoRoot(), path)
	if err != nil {
		return path
	}
	return r
}

func gatherKept(t testing.TB) (keptCorpus, error) {
	c := keptCorpus{states: map[string]keptState{noState: {name: noState}}, by: map[string]int{}}
	addState := func(name string, paths ...string) error {
		if _, ok := c.states[name]; ok {
			return nil
		}
		st, err := render.LoadState(paths...)
		if err != nil {
			return fmt.Errorf("state %s: %w", name, err)
		}
		served, err := st.APIVersions()
		if err != nil {
			return fmt.Errorf("state %s: %w", name, err)
		}
		c.states[name] = keptState{name: name, provider: st, apiVersions: served}
		return nil
	}
	add := func(where string, p keptPool) {
		c.pools = append(c.pools, p)
		c.by[where]++
	}

	// The render tests' healthy cluster (a Succeeded golden on a class that
	// clones), which the hostile-values table renders against.
	c.states["healthy"] = keptState{name: "healthy", provider: healthyCluster(t)}

	standalone := []string{noState, "healthy"}
	for _, f := range globRepo(t, standaloneStateFiles) {
		if err := addState(rel(f), f); err != nil {
			return c, err
		}
		standalone = append(standalone, rel(f))
	}

	// The golden table's pool cases (the baseline corners among them), each
	// against its own fixtures, and with no cluster as the release check
	// renders the corners.
	cases, _, err := support.GoldenCases()
	if err != nil {
		return c, err
	}
	for _, gc := range cases {
		if gc.Chart != "pool" {
			continue
		}
		values, err := render.ReadValues(gc.ValuesFile)
		if err != nil {
			return c, fmt.Errorf("%s: %w", gc.ValuesFile, err)
		}
		states := []string{noState}
		if gc.Cluster != nil {
			name := "golden:" + strings.Join(gc.Cluster, "+")
			paths := make([]string, len(gc.Cluster))
			for i, f := range gc.Cluster {
				paths[i] = support.Fixture(f)
			}
			if err := addState(name, paths...); err != nil {
				return c, err
			}
			states = append(states, name)
			if len(gc.Cluster) > 0 {
				standalone = appendOnce(standalone, name)
			}
		}
		add("golden pool cases", keptPool{name: "golden " + gc.Name, rel: gc.ReleaseOf(), values: values, states: states})
	}

	// Pool values files, as `plan POOL.yaml` names their release.
	for _, f := range globRepo(t, poolValuesFiles) {
		if !strings.HasSuffix(f, ".yaml") {
			continue
		}
		values, err := render.ReadValues(f)
		if err != nil {
			// A fixture kept to be unreadable (plan's bad-input tests) is no pool.
			continue
		}
		add(filepath.Dir(rel(f)), keptPool{name: rel(f), rel: report.ReleaseFor(f, values, "", ""), values: values, states: standalone})
	}

	// Every pool of every fleet state, against its own state.
	for _, f := range globRepo(t, fleetStateFiles) {
		name := rel(f)
		if err := addState(name, f); err != nil {
			return c, err
		}
		fl, err := fleetread.Read(context.Background(), c.states[name].provider, fleetread.Options{Chart: "kubernetes-nodes"})
		if err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		for _, p := range fl.Pools {
			if p.Unresolved != "" {
				continue
			}
			add("fleet states", keptPool{name: name + " " + p.ID(), rel: render.Release{Name: p.Release, Namespace: p.Namespace, Upgrade: true}, values: p.Values, states: []string{name}})
		}
	}

	// The fuzz targets' seeds and kept corpora, placed as each target places
	// its strings, with each target's release, with no cluster and the
	// healthy cluster.
	fuzzStates := []string{noState, "healthy"}
	for _, seed := range imageFieldsSeeds {
		for _, builtin := range []bool{false, true} {
			add("fuzz", keptPool{name: fmt.Sprintf("FuzzImageFields seed %q builtin=%v", seed, builtin), rel: imageFieldsRelease, values: imageFieldsValues(seed[0], seed[1], seed[2], builtin), states: fuzzStates})
		}
	}
	for _, seed := range tenantValuesSeeds {
		add("fuzz", keptPool{name: fmt.Sprintf("FuzzTenantValuesSchemaOff seed %q", seed), rel: tenantValuesRelease, values: tenantValues(seed[0], seed[1], seed[2], seed[3], seed[4], seed[5], seed[6]), states: fuzzStates})
	}
	ca, err := os.ReadFile(support.Fixture("ca/factory-ca.pem"))
	if err != nil {
		return c, err
	}
	trusted := trustedImportsSeeds(string(ca))
	for _, seed := range validatingSeeds {
		add("fuzz", keptPool{name: fmt.Sprintf("FuzzValidatingHelpers seed %q", seed), rel: validatingRelease, values: validatingValues(seed[0], seed[1], seed[2], seed[3], seed[4], seed[5], seed[6], seed[7]), states: fuzzStates})
	}
	for _, dir := range []string{"FuzzImageFields", "FuzzTenantValuesSchemaOff", "FuzzTrustedImportsSchemaOff", "FuzzValidatingHelpers"} {
		files, _ := filepath.Glob(support.Fixture(filepath.Join("fuzz", dir, "*")))
		for _, f := range files {
			args, err := readFuzzCorpus(f)
			if err != nil {
				return c, err
			}
			name := rel(f)
			switch dir {
			case "FuzzImageFields":
				add("fuzz", keptPool{name: name, rel: imageFieldsRelease, values: imageFieldsValues(args[0].(string), args[1].(string), args[2].(string), args[3].(bool)), states: fuzzStates})
			case "FuzzTenantValuesSchemaOff":
				s := strs(args)
				add("fuzz", keptPool{name: name, rel: tenantValuesRelease, values: tenantValues(s[0], s[1], s[2], s[3], s[4], s[5], s[6]), states: fuzzStates})
			case "FuzzTrustedImportsSchemaOff":
				trusted = append(trusted, [2]string{args[0].(string), args[1].(string)})
			case "FuzzValidatingHelpers":
				s := strs(args)
				add("fuzz", keptPool{name: name, rel: validatingRelease, values: validatingValues(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]), states: fuzzStates})
			}
		}
	}
	for i, seed := range trusted {
		for _, key := range []string{"talos", "_cluster"} {
			add("fuzz", keptPool{name: fmt.Sprintf("FuzzTrustedImportsSchemaOff %d %s", i, key), rel: trustedImportsPoolRelease, values: trustedImportsPoolValues(key, seed[0]), states: fuzzStates})
		}
	}

	// The hostile-values table of the pool: every payload in every field,
	// schema on and off, against the healthy cluster it is judged on.
	for _, hc := range hostileCharts() {
		if !strings.HasPrefix(hc.name, "pool") {
			continue
		}
		for _, field := range hc.fields {
			for _, p := range hostilePayloads {
				for _, skip := range []bool{false, true} {
					values := vals(t, hc.base)
					field.set(values, p.value)
					r := hc.release
					r.SkipSchemaValidation = skip
					add("hostile values", keptPool{name: fmt.Sprintf("hostile %s %s = %s (schema off: %v)", hc.name, field.name, p.name, skip), rel: r, values: values, states: []string{"healthy"}})
				}
			}
		}
	}
	return c, nil
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func strs(args []interface{}) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i], _ = a.(string)
	}
	return out
}

// readFuzzCorpus reads a file of a fuzz target's kept corpus ("go test fuzz
// v1", then one Go literal a line: string(...) or bool(...), the only types
// the pool's fuzz targets take).
func readFuzzCorpus(path string) ([]interface{}, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []interface{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; sc.Scan(); i++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case i == 0:
			if line != "go test fuzz v1" {
				return nil, fmt.Errorf("%s: not a fuzz corpus file", path)
			}
		case strings.HasPrefix(line, "string(") && strings.HasSuffix(line, ")"):
			s, err := strconv.Unquote(line[len("string(") : len(line)-1])
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
			}
			out = append(out, s)
		case strings.HasPrefix(line, "bool(") && strings.HasSuffix(line, ")"):
			b, err := strconv.ParseBool(line[len("bool(") : len(line)-1])
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
			}
			out = append(out, b)
		case line == "":
		default:
			return nil, fmt.Errorf("%s line %d: %q is no string or bool literal", path, i+1, line)
		}
	}
	return out, sc.Err()
}

// pairs counts value sets x states.
func (c keptCorpus) pairs() int {
	n := 0
	for _, p := range c.pools {
		n += len(p.states)
	}
	return n
}

// summary says how many value sets are kept where.
func (c keptCorpus) summary() string {
	var parts []string
	for _, k := range report.SortedKeys(c.by) {
		parts = append(parts, fmt.Sprintf("%s %d", k, c.by[k]))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d value sets (%s) x their states (%d states) = %d renders", len(c.pools), strings.Join(parts, ", "), len(c.states), c.pairs())
}
