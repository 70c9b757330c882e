package rollout_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// factoryStandIn answers as an Image Factory would, without a network: its
// version list, and each image URL by status (200 unless statuses says
// otherwise); it records what it was asked and the CA each ask trusted.
type factoryStandIn struct {
	versions []string
	statuses map[string]int
	mu       sync.Mutex
	asked    []string
}

func (f *factoryStandIn) reader() *rollout.FactoryReader {
	return &rollout.FactoryReader{Transport: func(caPEM string) (http.RoundTripper, error) {
		return roundTrip(func(req *http.Request) (*http.Response, error) {
			f.mu.Lock()
			f.asked = append(f.asked, req.Method+" "+req.URL.String()+" ca="+caName(caPEM))
			f.mu.Unlock()
			if strings.HasSuffix(req.URL.Path, "/versions") {
				raw, _ := json.Marshal(f.versions)
				return response(req, http.StatusOK, string(raw)), nil
			}
			status := http.StatusOK
			if s, ok := f.statuses[req.URL.String()]; ok {
				status = s
			}
			return response(req, status, ""), nil
		}), nil
	}}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func response(req *http.Request, status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Body: io.NopCloser(strings.NewReader(body)), Request: req, Header: http.Header{}}
}

// caName names a CA by its first certificate's subject line, "" for none.
func caName(caPEM string) string {
	if caPEM == "" {
		return "none"
	}
	if b, _ := pem.Decode([]byte(caPEM)); b != nil {
		return "pem"
	}
	return "text"
}

// The day-2 page's first command, on the example cluster: --behind with
// --to-talos selects every pool older than the target on its minor, the
// golden pools on v1.13.6 too (before, only the HTTP pools were behind by
// another way and selected), each blocked for v1.13.7's catalog entry, and
// the plan ends with that catalog change.
func TestRolloutBehindWithATargetSelectsTheGoldenPools(t *testing.T) {
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Behind: true}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, MaxClones: 1}
	plan := mustRollout(t, support.ExampleObjects(t), o)
	pools := byPool(plan)
	for _, hr := range []string{"tenant-acme/kubernetes-nodes-acme-golden", "tenant-beta/kubernetes-nodes-beta-batch", "tenant-beta/kubernetes-nodes-beta-spot"} {
		require.Contains(t, pools, hr, "a golden pool on v1.13.6 is older than v1.13.7")
		assert.Equal(t, rollout.StateNeedsEntry, pools[hr].State, hr)
	}
	assert.Equal(t, 7, plan.Selected)
	assert.False(t, plan.CanStart)
	require.NotNil(t, plan.Catalog, "the catalog change the golden pools wait for")
	last := plan.Catalog.Images[len(plan.Catalog.Images)-1]
	assert.Equal(t, report.ChangeNew, last.Change)
	assert.Equal(t, "v1.13.7", last.Entry.Version)
	assert.Equal(t, []string{"tenant-acme/kubernetes-nodes-acme-golden", "tenant-beta/kubernetes-nodes-beta-batch", "tenant-beta/kubernetes-nodes-beta-spot"}, last.Pools)

	// Without --to-talos, --behind is what Behind says: the golden pools
	// on the chart's default and the catalog's newest are not behind.
	o.Target = rollout.RolloutTarget{Defaults: true}
	plan = mustRollout(t, support.ExampleObjects(t), o)
	assert.NotContains(t, byPool(plan), "tenant-acme/kubernetes-nodes-acme-golden")

	// A pool on the target's patch or newer, or on another minor, is not
	// older than it: v1.13.5 selects gamma-edge (v1.13.4) and no v1.13.6 pool
	// but those behind by another way (the factory).
	o.Target = rollout.RolloutTarget{TalosVersion: "v1.13.5"}
	plan = mustRollout(t, support.ExampleObjects(t), o)
	pools = byPool(plan)
	assert.Contains(t, pools, "tenant-gamma/kubernetes-nodes-gamma-edge")
	assert.NotContains(t, pools, "tenant-acme/kubernetes-nodes-acme-golden")
}

// A --to-talos nothing of the platform knows is refused before any pool is
// planned, naming the nearest known releases, unless the factory the
// selected pools import from lists it (asked once per factory and CA,
// each with the CA the pools import with): v1.13.80, a typo of the next
// patch, is refused; a factory that lists it lets it through, and the plan
// says what was asked. Known: a golden's (v1.13.5), the chart's default
// (v1.13.6), and by the support row of v1.13 the next patch (v1.13.7) and
// the older ones (v1.13.4); not v1.13.8 nor another minor's v1.14.0.
func TestRolloutRefusesATargetNothingKnows(t *testing.T) {
	objs := support.ExampleObjects(t)
	sel := rollout.RolloutSelection{Namespace: "tenant-beta"}
	for version, by := range map[string]string{
		"v1.13.5": "golden cozy-public/talos-worker-",
		"v1.13.6": "golden cozy-public/talos-worker-",
		"v1.13.7": "the chart's support row for Talos v1.13, the next patch after v1.13.6",
		"v1.13.4": "the chart's support row for Talos v1.13, a patch before v1.13.6",
	} {
		f := &factoryStandIn{}
		plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: sel, Target: rollout.RolloutTarget{TalosVersion: version}, Factory: f.reader()})
		require.NotNil(t, plan.TargetKnown, version)
		assert.Contains(t, plan.TargetKnown.By, by, version)
		assert.Empty(t, f.asked, "%s: known, no factory asked", version)
	}

	for _, version := range []string{"v1.13.80", "v1.13.8", "v1.14.0"} {
		f := &factoryStandIn{versions: []string{"v1.13.6", "v1.13.7"}}
		_, err := planRollout(t, objs, rollout.RolloutOptions{Selection: sel, Target: rollout.RolloutTarget{TalosVersion: version}, Factory: f.reader()})
		require.Error(t, err, version)
		assert.Contains(t, err.Error(), "--to-talos "+version+": no catalog entry, golden in cozy-public or chart default names it", version)
		assert.Contains(t, err.Error(), "the nearest known releases: v1.13.6, v1.13.5", version)
		assert.Contains(t, err.Error(), "; asked the factory GET https://factory.mirror.internal/versions (trusting the system's roots): it does not list "+version+" either (it lists 2 releases", version)
		assert.Contains(t, err.Error(), "check the release (a typo?)", version)
	}

	// The factory lists it: through, and said.
	f := &factoryStandIn{versions: []string{"v1.13.7", "v1.13.80"}}
	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: sel, Target: rollout.RolloutTarget{TalosVersion: "v1.13.80"}, Factory: f.reader()})
	require.NotNil(t, plan.TargetKnown)
	assert.Empty(t, plan.TargetKnown.By)
	assert.Equal(t, []string{
		"GET https://factory.mirror.internal/versions (trusting the system's roots): lists it",
		"GET https://factory.talos.dev/versions (trusting the system's roots): lists it",
	}, plan.TargetKnown.Asked, "beta-web imports from the public factory; the golden pools' new entry from the published mirror")
	distinct := map[string]bool{}
	for _, a := range f.asked {
		distinct[a] = true
	}
	assert.Equal(t, map[string]bool{"GET https://factory.mirror.internal/versions ca=none": true, "GET https://factory.talos.dev/versions ca=none": true}, distinct, "each factory once a plan")

	// An unreachable factory: refused, saying what was asked and why.
	down := &rollout.FactoryReader{Transport: func(string) (http.RoundTripper, error) {
		return roundTrip(func(*http.Request) (*http.Response, error) { return nil, io.ErrUnexpectedEOF }), nil
	}}
	_, err := planRollout(t, objs, rollout.RolloutOptions{Selection: sel, Target: rollout.RolloutTarget{TalosVersion: "v1.13.80"}, Factory: down})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "asked the factory GET https://factory.mirror.internal/versions (trusting the system's roots): ")
	assert.Contains(t, err.Error(), "make the factory reachable from here and run again")
}

// Each selected pool's factory is asked trusting the CA it imports with:
// the stock fleet's catalog publishes the mirror and its CA, so alpha-apps
// (on the mirror by the published defaults) and the golden pool's new
// entry trust the published CA at the mirror; alpha-web, on the public
// factory, the system's roots alone; with --to-factory and --factory-ca,
// every HTTP pool the CA given.
func TestRolloutAsksEachFactoryTrustingItsCA(t *testing.T) {
	ca := publishedCA(t)
	var mu sync.Mutex
	trusted := map[string]string{}
	reader := &rollout.FactoryReader{Transport: func(caPEM string) (http.RoundTripper, error) {
		return roundTrip(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			trusted[req.URL.Host] = caPEM
			mu.Unlock()
			return response(req, http.StatusOK, `["v1.13.9"]`), nil
		}), nil
	}}
	plan := mustRollout(t, stockFleet(t), rollout.RolloutOptions{Target: rollout.RolloutTarget{TalosVersion: "v1.13.9"}, Factory: reader, MaxClones: 10})
	assert.Equal(t, map[string]string{"factory.mirror.internal": ca, "factory.talos.dev": ""}, trusted)
	assert.Contains(t, strings.Join(plan.TargetKnown.Asked, "\n"), "GET https://factory.mirror.internal/versions (trusting the system's roots and the CA published with it): lists it")

	trusted = map[string]string{}
	_ = mustRollout(t, stockFleet(t), rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-alpha"},
		Target: rollout.RolloutTarget{TalosVersion: "v1.13.9", FactoryURL: "https://factory.other.internal", FactoryCA: ca, FactoryCAFrom: "other.pem"}, Factory: reader, MaxClones: 10})
	assert.Equal(t, map[string]string{"factory.other.internal": ca}, trusted, "--to-factory with --factory-ca: the CA given, for every HTTP pool")
}

// FactoryReader trusts the CA it is given besides the system's roots, as
// CDI's importer does: a factory served by a CA of its own answers with
// it, and is refused without it; a version list that is not a JSON array
// of strings, or larger than an Image Factory's, is refused; HEAD refused,
// an image is asked for with a GET of its first bytes.
func TestFactoryReaderTrustsTheCAItIsGiven(t *testing.T) {
	var methods []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/versions":
			_, _ = w.Write([]byte(`["v1.13.6","v1.13.7"]`))
		case "/bad/versions":
			_, _ = w.Write([]byte(`{"versions":[]}`))
		case "/big/versions":
			_, _ = w.Write([]byte("[" + strings.Repeat(`"v1.13.7",`, 120000) + `"v1"]`))
		case "/image/ok.raw.xz":
			methods = append(methods, r.Method+" "+r.Header.Get("Range"))
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.WriteHeader(http.StatusPartialContent)
			_, _ = w.Write(make([]byte, 512))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	ctx := context.Background()
	var r rollout.FactoryReader

	versions, err := r.Versions(ctx, srv.URL, ca)
	require.NoError(t, err)
	assert.Equal(t, []string{"v1.13.6", "v1.13.7"}, versions)
	_, err = r.Versions(ctx, srv.URL, "")
	require.Error(t, err, "its CA not given: the system's roots do not know it")
	assert.Contains(t, err.Error(), "certificate")
	_, err = r.Versions(ctx, srv.URL+"/bad", ca)
	assert.ErrorContains(t, err, "not a JSON array of strings")
	_, err = r.Versions(ctx, srv.URL+"/big", ca)
	assert.ErrorContains(t, err, "larger than 1048576 bytes")

	ok, status, err := r.ImageThere(ctx, srv.URL+"/image/ok.raw.xz", ca)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "GET of its first bytes: 206 Partial Content", status)
	assert.Equal(t, []string{"HEAD ", "GET bytes=0-511"}, methods)
	ok, status, err = r.ImageThere(ctx, srv.URL+"/image/missing.raw.xz", ca)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "HEAD: 404 Not Found", status)
}

// The surge a rollout writes to hold --max-clones is put back after its
// last wave, and the plan says so: beta-golden's three workers would clone
// three disks at once, so --max-clones 2 writes maxSurge 1, the pool
// setting none of its own (the key is removed after). Its values once
// restored render the template the move renders: maxSurge is not in the
// KubevirtMachineTemplate, so putting it back rolls nothing.
func TestRolloutPlansToRestoreTheSurge(t *testing.T) {
	o := rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, MaxClones: 2}
	plan := mustRollout(t, stockFleet(t), o)
	require.Len(t, plan.Pools(), 1)
	golden := plan.Pools()[0]
	require.Equal(t, "tenant-beta/kubernetes-nodes-beta-golden", golden.HelmRelease)
	assert.Equal(t, &report.SurgeRestore{Wrote: 1}, golden.SurgeRestore)
	assert.Equal(t, "set to 1 during the roll, restored after the last wave (the key removed, as the pool sets none); a run that stops before leaves it to the next run to the same target (the rollout's record keeps it)", golden.SurgeRestore.Text())
	assert.EqualValues(t, 1, golden.SpecValues["maxSurge"])

	// The pool with its values as the restore leaves them (the move's,
	// without maxSurge), its MachineDeployment on the plan's target: on
	// the target, the same template.
	restored := stockFleet(t)
	for _, obj := range restored {
		switch {
		case obj.GetKind() == "HelmRelease" && obj.GetName() == "kubernetes-nodes-beta-golden":
			values := map[string]any{}
			for k, v := range golden.SpecValues {
				if k != "maxSurge" {
					values[k] = v
				}
			}
			require.NoError(t, unstructured.SetNestedMap(obj.Object, values, "spec", "values"))
		case obj.GetKind() == "MachineDeployment" && obj.GetName() == "kubernetes-beta-golden":
			require.NoError(t, unstructured.SetNestedField(obj.Object, golden.MachineTemplate.Target, "spec", "template", "spec", "infrastructureRef", "name"))
		}
	}
	again := byPool(mustRollout(t, restored, o))["tenant-beta/kubernetes-nodes-beta-golden"]
	assert.Equal(t, rollout.StateOnTarget, again.State, again.Reason)
	assert.Equal(t, golden.MachineTemplate.Target, again.MachineTemplate.Current, "the KubevirtMachineTemplate name is unchanged by the restore")

	// A pool with a maxSurge of its own gets it back.
	o.Selection = rollout.RolloutSelection{Namespace: "tenant-beta"}
	own := stockFleet(t)
	for _, obj := range own {
		if obj.GetKind() == "HelmRelease" && obj.GetName() == "kubernetes-nodes-beta-golden" {
			require.NoError(t, unstructured.SetNestedField(obj.Object, int64(3), "spec", "values", "maxSurge"))
		}
	}
	p := byPool(mustRollout(t, own, o))["tenant-beta/kubernetes-nodes-beta-golden"]
	require.NotNil(t, p.SurgeRestore, p.Reason)
	assert.Equal(t, &report.SurgeRestore{Wrote: 1, Had: true, Own: int64(3)}, p.SurgeRestore)
}

// A release the cluster's catalog names in an entry whose golden is not
// created yet is known by that entry: the Package's images are read when
// the fleet's goldens and defaults do not know it.
func TestRolloutKnowsATargetACatalogEntryNames(t *testing.T) {
	objs := support.ExampleObjects(t)
	for _, o := range objs {
		if o.GetKind() == "Package" && o.GetName() == "cozystack.kubernetes-worker-image" {
			images, _, _ := unstructured.NestedSlice(o.Object, "spec", "components", "kubernetes-worker-image", "values", "images")
			require.NotEmpty(t, images)
			images = append(images, map[string]any{"schematicID": schematic, "version": "v1.13.9"})
			require.NoError(t, unstructured.SetNestedSlice(o.Object, images, "spec", "components", "kubernetes-worker-image", "values", "images"))
		}
	}
	f := &factoryStandIn{}
	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.9"}, Factory: f.reader()})
	require.NotNil(t, plan.TargetKnown)
	assert.Regexp(t, `^the catalog entry spec\.components\.kubernetes-worker-image\.values\.images\[\d+\] of Package cozystack\.kubernetes-worker-image$`, plan.TargetKnown.By)
	assert.Empty(t, f.asked)
	_, err := planRollout(t, support.ExampleObjects(t), rollout.RolloutOptions{Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.9"}, Factory: f.reader()})
	assert.ErrorContains(t, err, "--to-talos v1.13.9: no catalog entry", "the neighbour: without the entry, not known")
}

// The Talos minors the chart's support rows list come from what the chart
// answers in a render (kubernetes-nodes.behindFacts), never from its source
// text: a support table whose row is written by a template action (which no
// reading of the source can evaluate) still knows v1.13.7, the next patch
// after v1.13.6, by its v1.13 row; without a v1.13 row, v1.13.7 is unknown
// and the refusal names the rows the chart renders.
func TestRolloutReadsTheSupportRowsFromARender(t *testing.T) {
	objs := support.ExampleObjects(t)
	plan := func(row string) (*rollout.RolloutPlan, error) {
		chrt, err := report.LoadPoolChart("")
		require.NoError(t, err)
		edited := false
		for _, dep := range chrt.Dependencies() {
			for _, f := range dep.Templates {
				if dep.Name()+"/"+f.Name == "kubernetes-nodes-lib/templates/_versions.tpl" {
					s := strings.Replace(string(f.Data), "v1.13: {min: 31, max: 36}\n", row, 1)
					edited = s != string(f.Data)
					f.Data = []byte(s)
				}
			}
		}
		require.True(t, edited, "the support table was found")
		state := render.NewState(objs...)
		served, err := state.APIVersions()
		require.NoError(t, err)
		target := report.Target{Provider: state, Desc: "state", APIVersions: served}
		f, err := report.ReadPinsToPlan(chrt, target, fleet.Options{Chart: chrt.Metadata.Name})
		require.NoError(t, err)
		factory := &factoryStandIn{versions: []string{"v1.13.6"}}
		return rollout.Rollout(chrt, target, f, rollout.RolloutOptions{WaveSize: 5, Selection: rollout.RolloutSelection{Namespace: "tenant-beta"}, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}, Factory: factory.reader()})
	}
	p, err := plan(`{{ printf "v1.%d" 13 }}: {min: 31, max: 36}` + "\n")
	require.NoError(t, err)
	require.NotNil(t, p.TargetKnown)
	assert.Contains(t, p.TargetKnown.By, "the chart's support row for Talos v1.13, the next patch after v1.13.6")

	_, err = plan("")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the chart's support rows (Talos v1.11, v1.12) take a patch of a minor only up to the next after the newest named one")
}

// The catalog change of a rollout moves the Talos release new pools take to
// the target when theirs is older on the same schematic (the stock example
// cluster publishes no version: the chart's built-in v1.13.6), also with
// --to-schematic naming theirs (both keys); it moves nothing for a target
// they take already, and says why for another schematic.
func TestRolloutMovesTheReleaseNewPoolsTake(t *testing.T) {
	objs := support.ExampleObjects(t)
	builtin := report.Sourced{Value: "v1.13.6", Source: "the pool chart's built-in default"}
	sel := rollout.RolloutSelection{Namespace: "tenant-beta"}
	plan := mustRollout(t, objs, rollout.RolloutOptions{Selection: sel, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7"}})
	require.NotNil(t, plan.Catalog)
	assert.Equal(t, []report.DefaultMove{{Key: "tenantWorkers.talos.version", From: builtin, To: "v1.13.7"}}, plan.Catalog.NewPools)

	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: sel, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7", SchematicID: schematic}})
	require.NotNil(t, plan.Catalog)
	assert.Equal(t, []report.DefaultMove{
		{Key: "tenantWorkers.talos.schematicID", From: report.Sourced{Value: schematic, Source: "the pool chart's built-in default"}, To: schematic},
		{Key: "tenantWorkers.talos.version", From: builtin, To: "v1.13.7"},
	}, plan.Catalog.NewPools)

	other := strings.Repeat("a", 64)
	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: sel, Target: rollout.RolloutTarget{TalosVersion: "v1.13.7", SchematicID: other}, Factory: (&factoryStandIn{versions: []string{"v1.13.7"}}).reader()})
	require.NotNil(t, plan.Catalog)
	assert.Empty(t, plan.Catalog.NewPools)
	assert.Equal(t, "new pools keep Talos v1.13.6: they take schematic "+schematic+", not --to-schematic "+other+"; to move them too, set tenantWorkers.talos.schematicID and tenantWorkers.talos.version in this change yourself", plan.Catalog.NewPoolsNote)

	plan = mustRollout(t, objs, rollout.RolloutOptions{Selection: sel, Target: rollout.RolloutTarget{TalosVersion: "v1.13.6"}})
	if plan.Catalog != nil {
		assert.Empty(t, plan.Catalog.NewPools, "new pools take v1.13.6 already")
		assert.Empty(t, plan.Catalog.NewPoolsNote)
	}
}
