package report_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// certificate and notACertificate are the tests' CAs (support's).
var (
	certificate     = support.Certificate
	notACertificate = support.NotACertificate
)

type caCases struct {
	valid, expired, future, leaf, garbage string
}

func caCasesAt(t *testing.T, now time.Time) caCases {
	day := 24 * time.Hour
	return caCases{
		valid:   certificate(t, "Mirror CA", true, now.Add(-day), now.Add(365*day)),
		expired: certificate(t, "Old Mirror CA", true, now.Add(-365*day), now.Add(-day)),
		future:  certificate(t, "Next Mirror CA", true, now.Add(day), now.Add(365*day)),
		leaf:    certificate(t, "mirror.internal", false, now.Add(-day), now.Add(365*day)),
		garbage: notACertificate,
	}
}

// X.509 names each certificate CDI's importer cannot use as a CA; a valid CA
// beside them is no problem, and neither is a bundle of valid CAs.
func TestCAProblems(t *testing.T) {
	now := time.Now()
	c := caCasesAt(t, now)
	assert.Empty(t, report.CAProblems(c.valid, now))
	assert.Empty(t, report.CAProblems(c.valid+c.valid, now))

	problems := report.CAProblems(c.valid+c.expired+c.future+c.leaf+c.garbage, now)
	require.Len(t, problems, 4)
	assert.Regexp(t, `^certificate 2 of 5 \(CN=Old Mirror CA\) expired on 20\d\d-\d\d-\d\dT`, problems[0])
	assert.Regexp(t, `^certificate 3 of 5 \(CN=Next Mirror CA\) is not valid before `, problems[1])
	assert.Equal(t, "certificate 4 of 5 (CN=mirror.internal) is not a CA (its basic constraints do not say CA:TRUE): TLS trusts it only when the mirror serves this very certificate, never one it issued", problems[2])
	assert.Regexp(t, `^certificate 5 of 5: its DER is not an X.509 certificate \(.+\): CDI's importer skips it$`, problems[3])
}

// plan reads the pool's CA in effect from the ConfigMap its render writes;
// the neighbour with a valid CA has nothing to say.
func TestPlanNamesTheCAsProblems(t *testing.T) {
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	c := caCasesAt(t, time.Now())
	planOf := func(ca string) *report.PlanReport {
		rep, _, err := report.Plan(chrt, report.Target{Desc: "preview"}, render.Release{Name: "kubernetes-nodes-acme-w", Namespace: "tenant-acme"},
			map[string]any{"cluster": "acme", "talos": map[string]any{"imageFactoryCA": ca}})
		require.NoError(t, err)
		return rep
	}
	plan := func(ca string) *report.PlanReport {
		rep := planOf(ca)
		require.Equal(t, "renders", rep.Result, "%s", rep.Refusal)
		require.NotNil(t, rep.DiskSource.ImageFactoryCA)
		return rep
	}
	assert.Empty(t, plan(c.valid).DiskSource.ImageFactoryCAProblems)
	for name, ca := range map[string]string{"expired": c.expired, "not a CA": c.leaf} {
		problems := plan(ca).DiskSource.ImageFactoryCAProblems
		require.Len(t, problems, 1, name)
		assert.Contains(t, problems[0], map[string]string{"expired": "expired on", "not a CA": "is not a CA"}[name])
	}
	// DER that is no certificate the chart itself refuses (its DER check),
	// so it never reaches a ConfigMap for plan to read.
	rep := planOf(c.garbage)
	assert.Equal(t, "refused", rep.Result)
	assert.Contains(t, rep.Refusal, "talos.imageFactoryCA")
}

// pins reads the catalog's CA ConfigMaps in cozy-public as X.509 and names a
// bad certificate by its ConfigMap; the neighbour CA ConfigMap is not named.
func TestPinsNamesTheCatalogCAsProblems(t *testing.T) {
	objs, err := render.LoadObjects(filepath.Join("..", "..", "examples", "cluster-state.yaml"))
	require.NoError(t, err)
	c := caCasesAt(t, time.Now())
	configMap := func(name, ca string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "cozy-public"}, "data": map[string]any{fleet.CAKey: ca}}}
	}
	st := render.NewState(append(objs, configMap("kubernetes-worker-image-ca", c.expired), configMap("kubernetes-worker-image-ca-abc-v1.13.6", c.valid))...)
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	f, err := report.ReadPins(chrt, report.Target{Provider: st, Desc: "state"}, fleet.Options{Chart: chrt.Metadata.Name})
	require.NoError(t, err)
	rep := report.Pins(f, "state", chrt.Metadata.Name)
	require.Len(t, rep.CAProblems, 1)
	assert.Equal(t, "cozy-public/kubernetes-worker-image-ca", rep.CAProblems[0].ConfigMap)
	require.Len(t, rep.CAProblems[0].Problems, 1)
	assert.True(t, strings.HasPrefix(rep.CAProblems[0].Problems[0], "certificate 1 of 1 (CN=Old Mirror CA) expired on "))
}
