package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxSurge is the MachineDeployment's rolling-update surge: absent it is
// maxReplicas, as Cozystack's chart writes it; set, the value as a count.
func TestMaxSurgeBoundsTheRollingUpdate(t *testing.T) {
	for _, tc := range []struct{ values, want string }{
		{"{cluster: acme}", "10"},
		{"{cluster: acme, maxReplicas: 4}", "4"},
		{"{cluster: acme, maxSurge: 0}", "0"},
		{"{cluster: acme, maxSurge: 1}", "1"},
		{"{cluster: acme, maxSurge: '3'}", "3"},
		// A leading zero is a decimal count, never octal.
		{"{cluster: acme, maxSurge: '010'}", "10"},
		// Above maxReplicas is allowed: Cluster API creates no more than the roll needs.
		{"{cluster: acme, maxReplicas: 2, maxSurge: 5}", "5"},
		{"{cluster: acme, maxSurge: 2147483647}", "2147483647"},
	} {
		t.Run(tc.values, func(t *testing.T) {
			m := mustRenderPool(t, vals(t, tc.values), nil)
			md := doc(t, m, "MachineDeployment")
			assert.Contains(t, md.Text, "\n    rollingUpdate:\n      maxSurge: "+tc.want+"\n      maxUnavailable: 1\n", "written as decimal digits, an integer the API reads as such")
			assert.EqualValues(t, 1, render.Get(md.Object, "spec.strategy.rollingUpdate.maxUnavailable"), "maxUnavailable stays 1, so 0 still replaces workers")
		})
	}
	// null is not set (the schema refuses it; with the schema off it renders as absent, like podCpuLimit).
	absent, err := renderPoolAs(t, schemaOff, vals(t, "{cluster: acme}"), nil)
	require.NoError(t, err)
	null, err := renderPoolAs(t, schemaOff, vals(t, "{cluster: acme, maxSurge: null}"), nil)
	require.NoError(t, err)
	assert.Equal(t, absent.Text(), null.Text())
}

// Changing maxSurge rolls no worker: the KubevirtMachineTemplate (its name
// and body), the MachineDeployment's machine template and every other object
// render the same bytes, on both disk paths; the only difference is the
// rolling update's maxSurge line.
func TestMaxSurgeRollsNoWorker(t *testing.T) {
	for _, path := range []struct {
		name, base string
		cluster    func(testing.TB) *support.Cluster
	}{
		{"http", "cluster: acme\n", func(t testing.TB) *support.Cluster { return loadCluster(t, "cluster/instancetypes.yaml") }},
		{"builtin", "cluster: acme\nosImage: {builtin: {}}\n", func(t testing.TB) *support.Cluster { return healthyCluster(t) }},
	} {
		t.Run(path.name, func(t *testing.T) {
			before := mustRenderPool(t, vals(t, path.base), path.cluster(t))
			for _, surge := range []string{"0", "1", "'7'"} {
				after := mustRenderPool(t, vals(t, path.base+"maxSurge: "+surge), path.cluster(t))
				require.Equal(t, machineTemplateName(t, before), machineTemplateName(t, after), "maxSurge %s renames the machine template", surge)
				require.Len(t, after.Docs, len(before.Docs))
				for i, d := range after.Docs {
					if d.Kind() == "MachineDeployment" {
						continue
					}
					require.Equal(t, before.Docs[i].Text, d.Text, "maxSurge %s changes the %s %s", surge, d.Kind(), d.Name())
				}
				mdBefore, mdAfter := doc(t, before, "MachineDeployment"), doc(t, after, "MachineDeployment")
				assert.Equal(t, render.Get(mdBefore.Object, "spec.template"), render.Get(mdAfter.Object, "spec.template"), "the MachineDeployment's machine template is unchanged")
				written := strings.Trim(surge, "'")
				assert.Equal(t,
					strings.Replace(mdBefore.Text, "      maxSurge: 10\n", "      maxSurge: "+written+"\n", 1),
					mdAfter.Text, "only the rolling update's maxSurge line differs")
			}
		})
	}
}

// Every refusal of maxSurge fires with the schema off and names the pool, the
// value and the fix; its neighbour renders.
func TestMaxSurgeRefusals(t *testing.T) {
	for _, tc := range []struct{ name, values, refusal, neighbour string }{
		{"negative", "{cluster: acme, maxSurge: -1}", "maxSurge -1 (a number) is not a whole number of workers from 0 to 2147483647 (it is outside 0 to 2147483647)", "{cluster: acme, maxSurge: 0}"},
		{"fraction", "{cluster: acme, maxSurge: 1.5}", "maxSurge 1.5 (a number) is not a whole number of workers from 0 to 2147483647 (it is not a whole number)", "{cluster: acme, maxSurge: 2}"},
		{"past int32", "{cluster: acme, maxSurge: 2147483648}", "maxSurge 2.147483648e+09 (a number) is not a whole number of workers from 0 to 2147483647 (it is outside 0 to 2147483647)", "{cluster: acme, maxSurge: 2147483647}"},
		{"digits past int32", "{cluster: acme, maxSurge: '2147483648'}", `maxSurge "2147483648" is not a whole number of workers from 0 to 2147483647 (it is outside 0 to 2147483647)`, "{cluster: acme, maxSurge: '2147483647'}"},
		{"percentage", "{cluster: acme, maxSurge: '25%'}", `maxSurge "25%" is not a whole number of workers from 0 to 2147483647 (it is not a number)`, "{cluster: acme, maxSurge: '25'}"},
		{"string of a fraction", "{cluster: acme, maxSurge: '1.0'}", `maxSurge "1.0" is not a whole number of workers`, "{cluster: acme, maxSurge: '1'}"},
		{"eleven digits", "{cluster: acme, maxSurge: '00000000001'}", `maxSurge "00000000001" is not a whole number of workers`, "{cluster: acme, maxSurge: '0000000001'}"},
		{"boolean", "{cluster: acme, maxSurge: true}", "maxSurge true (a boolean) is not a whole number of workers", "{cluster: acme, maxSurge: 1}"},
		{"list", "{cluster: acme, maxSurge: [1]}", "maxSurge a list is not a whole number of workers", "{cluster: acme, maxSurge: 1}"},
		{"breaks out", "{cluster: acme, maxSurge: \"1\\n      evil: 1\"}", `maxSurge "1\n      evil: 1" is not a whole number of workers`, "{cluster: acme, maxSurge: \"1\"}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPoolAs(t, schemaOff, vals(t, tc.values), nil)
			requireRefusal(t, err, "pool kubernetes-acme-workers: "+tc.refusal, "set maxSurge to a non-negative integer such as 1", "0 replaces one worker at a time", "or remove it to surge up to maxReplicas")
			_, err = renderPoolAs(t, schemaOff, vals(t, tc.neighbour), nil)
			require.NoError(t, err, "neighbour %s renders", tc.neighbour)
		})
	}
}

// The committed render of a pool with maxSurge set is the committed render of
// the same pool without it, but the maxSurge line: the same template name and
// body, so setting it on a running pool rolls none of its workers.
func TestMaxSurgeGoldenDiffersFromItsPoolByOneLine(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", name+".golden.yaml"))
		require.NoError(t, err)
		return string(b)
	}
	bounded, unbounded := read("pool-max-surge"), read("pool-builtin-declared-class")
	require.Equal(t, 1, strings.Count(unbounded, "\n      maxSurge: 10\n"))
	require.Equal(t, strings.Replace(unbounded, "\n      maxSurge: 10\n", "\n      maxSurge: 1\n", 1), bounded)
}
