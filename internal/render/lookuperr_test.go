package render_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// lookupChart looks a ConfigMap up by name, lists Secrets, then refuses with
// .Values.refuse when it is set: a refusal that quotes whatever text it is given.
func lookupChart() *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "probe", Version: "0.1.0"},
		Templates: []*chart.File{{Name: "templates/probe.yaml", Data: []byte(`{{- $cm := lookup "v1" "ConfigMap" "ns" "cm" -}}
{{- $all := lookup "v1" "Secret" "ns" "" -}}
{{- with .Values.refuse }}{{ fail . }}{{ end -}}
kind: Probe
metadata: {name: probe}
`)}},
	}
}

func renderProbe(p interface {
	GetClientFor(string, string) (dynamic.NamespaceableResourceInterface, bool, error)
}, refuse string) error {
	vals := map[string]interface{}{}
	if refuse != "" {
		vals["refuse"] = refuse
	}
	_, err := render.Render(lookupChart(), render.Options{Release: render.Release{Name: "probe", Namespace: "ns"}, Values: vals, Cluster: p})
	return err
}

// A render that fails on the cluster's answer is a *LookupError carrying that
// very error; a refusal is not, whatever its text says.
func TestLookupErrorsAreToldFromRefusalsByStructure(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("etcd is down")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("no list"))
	for name, fail := range map[string]map[string]error{
		"get":  {"ConfigMap": unavailable},
		"list": {"Secret": forbidden},
	} {
		t.Run(name, func(t *testing.T) {
			c := support.NewCluster()
			c.FailWith = fail
			err := renderProbe(c, "")
			var le *render.LookupError
			require.True(t, errors.As(err, &le), "%v", err)
			for _, want := range fail {
				assert.Same(t, want, le.Err)
				assert.ErrorIs(t, err, want)
			}
			assert.Contains(t, err.Error(), "error calling lookup", "Helm's own message is kept")
		})
	}

	// Refusals whose text reads like a lookup error, Helm's wording or the
	// provider's own, against a cluster that answers every lookup.
	for _, text := range []string{
		"error calling lookup: configmaps is forbidden",
		`template: probe/templates/probe.yaml:1:8: executing "probe/templates/probe.yaml" at <lookup "v1" "ConfigMap" "ns" "cm">: error calling lookup: etcd is down`,
		unavailable.Error(),
		render.ErrKindNotServed.Error() + ": no group version v1",
		"unable to get apiresource from unstructured: /v1, Kind=ConfigMap",
	} {
		err := renderProbe(support.NewCluster(), text)
		require.Error(t, err, text)
		var le *render.LookupError
		assert.False(t, errors.As(err, &le), "a refusal quoting %q is not a lookup error", text)
	}
}

// Helm's engine drops the error chain when a failed render's text holds its
// refusal delimiters (cleanupExecError rebuilds the message from the text
// between them): the provider's record still tells the lookup error apart.
func TestLookupErrorIsToldEvenWhenHelmDropsTheChain(t *testing.T) {
	c := support.NewCluster()
	c.FailWith = map[string]error{"ConfigMap": errors.New(`configmaps "HELM_ERR_STARTxHELM_ERR_END" is forbidden`)}
	err := renderProbe(c, "")
	var le *render.LookupError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Same(t, c.FailWith["ConfigMap"], le.Err)
	assert.Regexp(t, `^execution error at \(probe/templates/probe\.yaml:[0-9:]+\): x$`, err.Error(), "Helm's message reads like a refusal")
}

// Helm's lookup answers a missing object or kind's list with an empty map, so
// NotFound is no failure; a kind the cluster does not serve is one.
func TestLookupNotFoundIsAnAnswerAndAnUnservedKindIsAnError(t *testing.T) {
	require.NoError(t, renderProbe(support.NewCluster(), ""), "the ConfigMap is not there: an empty answer")

	err := renderProbe(unserved{support.NewCluster()}, "")
	var le *render.LookupError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.ErrorIs(t, err, render.ErrKindNotServed)
}

// unserved is a cluster that serves no Secret, as a live cluster without a
// CRD answers discovery.
type unserved struct{ *support.Cluster }

func (u unserved) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if kind == "Secret" {
		return nil, false, render.ErrKindNotServed
	}
	return u.Cluster.GetClientFor(apiVersion, kind)
}

// The state file answers a missing object NotFound, which is no error.
func TestStateNotFoundIsNoLookupError(t *testing.T) {
	state := render.NewState(&unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]interface{}{"name": "other", "namespace": "ns"}}})
	c, _, err := state.GetClientFor("v1", "ConfigMap")
	require.NoError(t, err)
	_, err = c.Namespace("ns").Get(context.Background(), "cm", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err))
	require.NoError(t, renderProbe(state, ""))
}
