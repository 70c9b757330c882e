package render

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	fleetread "github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// helmVerdict is what Helm's own pipeline says of one kept pool against one
// state: nil, it renders; else its refusal.
type helmVerdict struct {
	pool  keptPool
	state keptState
	err   error
}

func (v helmVerdict) what() string { return v.pool.name + " against " + v.state.name }

// helmVerdicts renders every kept pool against each of its states with Helm's
// own pipeline (support.HelmRender) on chrt alone.
func helmVerdicts(t *testing.T, c keptCorpus, chrt *chart.Chart) []helmVerdict {
	t.Helper()
	var out []helmVerdict
	for _, p := range c.pools {
		for _, s := range p.states {
			st := c.states[s]
			_, err := support.HelmRender(chrt, p.rel, p.values, st.provider, st.apiVersions)
			out = append(out, helmVerdict{pool: p, state: st, err: err})
		}
	}
	return out
}

var (
	currentOnce     sync.Once
	currentVerdicts []helmVerdict
	currentTook     time.Duration
)

// currentHelmVerdicts are helmVerdicts of this checkout's pool chart, made
// once per test binary (both kept-corpus tests read them), and how long
// they took.
func currentHelmVerdicts(t *testing.T) ([]helmVerdict, time.Duration) {
	t.Helper()
	c := keptPools(t)
	// Helm's own loader, as helm-controller reads a chart folder.
	chrt, err := loader.Load(support.Path(render.PoolChart))
	require.NoError(t, err)
	currentOnce.Do(func() {
		start := time.Now()
		currentVerdicts = helmVerdicts(t, c, chrt)
		currentTook = time.Since(start)
	})
	return currentVerdicts, currentTook
}

// The CLI's verdict is Helm's (issue 60, item 5): over every pool value set
// the repository keeps, against each cluster state it is rendered against,
// the report `plan` prints (report.Plan, which adds the CLI's facts template
// to the chart) says "renders" exactly where Helm's own pipeline renders the
// chart alone, and where Helm refuses, the plan's refusal carries Helm's
// message. A facts template that fails where the chart renders (tls: null
// before this release) fails it.
func TestPlanVerdictIsHelms(t *testing.T) {
	if testing.Short() {
		t.Skip("renders the kept corpus twice")
	}
	c := keptPools(t)
	// The pool chart built into the CLI, as `workerimage plan` loads it.
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	verdicts, helmTook := currentHelmVerdicts(t)
	catalogs := map[string]map[string]fleetread.Golden{}
	renders, refused := 0, 0
	start := time.Now()
	for _, v := range verdicts {
		target := report.Target{Provider: v.state.provider, Desc: v.state.name, APIVersions: v.state.apiVersions}
		if _, ok := catalogs[v.state.name]; !ok {
			cat, err := report.ReadCatalog(target)
			require.NoError(t, err, v.state.name)
			catalogs[v.state.name] = cat
		}
		target.Catalog = catalogs[v.state.name]
		rep, _, err := report.Plan(chrt, target, v.pool.rel, support.CopyValues(v.pool.values))
		require.NoError(t, err, "%s: plan found a cluster problem", v.what())
		if v.err == nil {
			renders++
			assert.Equal(t, "renders", rep.Result, "%s: Helm renders the chart alone, plan says %s: %s", v.what(), rep.Result, rep.Refusal)
			continue
		}
		refused++
		if !assert.Equal(t, "refused", rep.Result, "%s: Helm refuses (%v), plan says %s", v.what(), v.err, rep.Result) {
			continue
		}
		// plan shows a schema's patterns as the regex reads them, not JSON-escaped.
		helm := strings.ReplaceAll(support.HelmRefusal(v.err), `\\`, `\`)
		if strings.HasPrefix(helm, schemaRefusalLead) {
			assert.ElementsMatch(t, schemaViolations(helm), schemaViolations(rep.SchemaRefusal), "%s: plan's schema refusal does not carry Helm's:\n%s\n%s", v.what(), helm, rep.SchemaRefusal)
			continue
		}
		assert.Contains(t, rep.Refusal, helm, "%s: plan's refusal does not carry Helm's", v.what())
	}
	t.Logf("kept corpus: %s; Helm renders %d, refuses %d; Helm's pipeline took %s, plan %s",
		c.summary(), renders, refused, helmTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	require.Positive(t, renders)
	require.Positive(t, refused)
}

// schemaRefusalLead opens Helm's schema refusal.
const schemaRefusalLead = "values don't meet the specifications of the schema(s) in the following chart(s):"

// invalidPropertyName is the violation of a map key against propertyNames:
// Helm's JSON schema validator words its location from an unordered walk
// (the same values read "at '/minReplicas/global'" in one render and "at
// '/storageClass/kubectl'" in the next), so it is compared without it.
var invalidPropertyName = regexp.MustCompile(`^'[^']*': invalid propertyName `)

// schemaViolations are the violations a schema refusal lists ("- at
// '/path': what"), which Helm's validator lists in no fixed order.
func schemaViolations(msg string) []string {
	parts := strings.Split(msg, " - at ")
	out := make([]string, 0, len(parts))
	for _, p := range parts[1:] {
		out = append(out, invalidPropertyName.ReplaceAllString(p, "(a key): invalid propertyName "))
	}
	return out
}
