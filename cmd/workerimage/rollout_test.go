package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// rolloutCluster is the rollout fixture served as a live cluster that
// takes writes (client-go's fake dynamic client), with Cluster API played
// by a loop: once a pool's HelmRelease spec.values name the target, its
// MachineDeployment moves to the template the plan named and rolls out.
// The fake keeps a HelmRelease's generation as written (no API server bumps
// it), so each stays Ready at its generation: the CLI tests read what the
// command prints; internal/apply's tests check generations.
type rolloutCluster struct {
	// factory stands in for the Image Factory (wave 1's images); nil: the
	// real one, which a test never reaches.
	factory *rollout.FactoryReader
	c       *support.Cluster
	served  []string
	targets map[string]string // HelmRelease -> template, from the plan
	stop    chan struct{}
	done    sync.WaitGroup
}

func newRolloutCluster(t *testing.T, move bool) *rolloutCluster {
	t.Helper()
	c, err := support.LoadCluster(rolloutFixture)
	require.NoError(t, err)
	state, err := render.LoadState(rolloutFixture)
	require.NoError(t, err)
	served, err := state.APIVersions()
	require.NoError(t, err)
	// The live stand-in publishes no mirror: its HTTP pools on the public
	// factory move as the apply tests follow them (with the mirror
	// published they are blocked: TestRolloutBlocksAPoolOffTheMirror).
	require.NoError(t, c.Delete("v1", "ConfigMap", "cozy-public", report.TenantDefaultsConfigMap))
	rc := &rolloutCluster{c: c, served: served, targets: map[string]string{}, stop: make(chan struct{})}
	// The templates each pool moves to, as the plan names them.
	r := cli(t, "rollout", "--to-talos", "v1.13.7", "--cluster", rolloutFixture, "-o", "json")
	plan := decode[rollout.RolloutPlan](t, r)
	for _, p := range append(plan.Pools(), plan.Blocked...) {
		rc.targets[p.HelmRelease] = p.MachineTemplate.Target
	}
	if move {
		rc.done.Add(1)
		go rc.capi()
		t.Cleanup(func() { close(rc.stop); rc.done.Wait() })
	}
	return rc
}

func (rc *rolloutCluster) dial(kubeAccess) (engine.ClientProvider, string, error) {
	return servedAs{rc.c, rc.served}, "kubeconfig fake", nil
}

// servedAs answers discovery as the fixture's state file does (the API
// versions of the objects it holds), as the live provider answers it.
type servedAs struct {
	*support.Cluster
	served []string
}

func (s servedAs) APIVersions() ([]string, error) { return s.served, nil }

func (rc *rolloutCluster) capi() {
	defer rc.done.Done()
	ctx := context.Background()
	hrs, _, _ := rc.c.GetClientFor("helm.toolkit.fluxcd.io/v2", "HelmRelease")
	mds, _, _ := rc.c.GetClientFor("cluster.x-k8s.io/v1beta1", "MachineDeployment")
	for {
		select {
		case <-rc.stop:
			return
		case <-time.After(5 * time.Millisecond):
		}
		list, err := hrs.List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, hr := range list.Items {
			if v, _, _ := unstructured.NestedString(hr.Object, "spec", "values", "talos", "version"); v != "v1.13.7" {
				continue
			}
			name := "kubernetes-" + strings.TrimPrefix(hr.GetName(), "kubernetes-nodes-")
			md, err := mds.Namespace(hr.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			tpl := rc.targets[hr.GetNamespace()+"/"+hr.GetName()]
			if running, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name"); running == tpl {
				continue
			}
			_ = unstructured.SetNestedField(md.Object, tpl, "spec", "template", "spec", "infrastructureRef", "name")
			_, _ = mds.Namespace(hr.GetNamespace()).Update(ctx, md, metav1.UpdateOptions{})
		}
	}
}

// patches counts the HelmRelease patches the command made.
func (rc *rolloutCluster) patches() int { return rc.c.CallsByVerb()["patch helmreleases"] }

// runRollout runs rollout on the fake live cluster, stderr a terminal or not.
func runRollout(t *testing.T, rc *rolloutCluster, terminal bool, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	term := func(w io.Writer) (int, bool) { return 120, terminal && w == &errOut }
	a := &app{name: "workerimage", stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, dial: rc.dial, terminal: term, factory: rc.factory}
	code := a.run(append([]string{"rollout", "--kubeconfig", "fake"}, args...))
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

var applyBeta = []string{"--to-talos", "v1.13.7", "-n", "tenant-beta", "--wave", "2", "--apply", "--poll", "5ms", "--timeout", "20s"}

// --apply on a pipe: the plan, then one line per event, nothing on stderr.
func TestRolloutApplyPrintsALinePerEvent(t *testing.T) {
	rc := newRolloutCluster(t, true)
	r := runRollout(t, rc, false, applyBeta...)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, r.stderr, "no progress on a pipe")
	plan, events, _ := strings.Cut(r.stdout, "\n\nwave 1 of 2: ")
	assert.Contains(t, plan, "result  can start: 3 pools to move in 2 waves; --apply runs it")
	lines := strings.Split(strings.TrimSuffix("wave 1 of 2: "+events, "\n"), "\n")
	var kinds []string
	for _, l := range lines {
		word, _, _ := strings.Cut(l, " ")
		if word != "waiting" {
			kinds = append(kinds, word)
		}
	}
	assert.Equal(t, []string{"wave", "patched", "patched", "ready", "ready", "wave", "wave", "patched", "ready", "wave", "done:"}, kinds, r.stdout)
	assert.Contains(t, r.stdout, "\npatched tenant-beta/kubernetes-nodes-beta-batch: talos.version v1.13.6 -> v1.13.7 (generation 1 -> 1), to render ")
	assert.Contains(t, r.stdout, "\nwaiting tenant-beta/kubernetes-nodes-beta-", "progress events are lines on a pipe")
	assert.Contains(t, r.stdout, "\nready tenant-beta/kubernetes-nodes-beta-batch: HelmRelease Ready at generation 1; MachineDeployment names ")
	assert.True(t, strings.HasSuffix(r.stdout, "\ndone: 3 pools on the target, in 2 waves\n"), r.stdout)
	assert.Equal(t, 3, rc.patches())
}

// On a terminal the waiting shows on stderr, one line over the last, and
// is cleared; the events on stdout are the same but for the waiting lines.
func TestRolloutApplyProgressOnATerminal(t *testing.T) {
	rc := newRolloutCluster(t, true)
	r := runRollout(t, rc, true, applyBeta...)
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "\nwaiting ")
	assert.Contains(t, r.stdout, "\nready tenant-beta/kubernetes-nodes-beta-web: ")
	assert.Contains(t, r.stderr, "\r\x1b[Kworkerimage: reading the pools")
	assert.Contains(t, r.stderr, "\r\x1b[Kworkerimage: planning pool 1 of 3: tenant-beta/kubernetes-nodes-beta-batch")
	assert.Contains(t, r.stderr, "\r\x1b[Kworkerimage: wave 1 of 2: ")
	assert.NotContains(t, r.stderr, "\n", "never a line of its own")
	assert.True(t, strings.HasSuffix(r.stderr, "\r\x1b[K"), "cleared at the end")
}

// -o json: the plan event, then one JSON object per line per event; -o
// yaml: one document per event.
func TestRolloutApplyJSONEvents(t *testing.T) {
	rc := newRolloutCluster(t, true)
	r := runRollout(t, rc, false, append(applyBeta, "-o", "json")...)
	require.Equal(t, exitOK, r.code, r.stderr)
	var events []rollout.RolloutEvent
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var e rollout.RolloutEvent
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "one JSON object a line: %s", sc.Text())
		assert.False(t, e.Time.IsZero(), e.Event)
		events = append(events, e)
	}
	require.NotEmpty(t, events)
	assert.Equal(t, rollout.EventPlan, events[0].Event)
	require.NotNil(t, events[0].Plan)
	assert.Equal(t, 3, events[0].Plan.Selected)
	assert.Equal(t, rollout.EventDone, events[len(events)-1].Event)
	seen := map[string]int{}
	for _, e := range events {
		seen[e.Event]++
		switch e.Event {
		case rollout.EventWave:
			assert.Equal(t, 2, e.Waves)
			assert.NotEmpty(t, e.Pools)
		case rollout.EventReady, rollout.EventProgress:
			require.NotNil(t, e.Status, e.Message)
			assert.NotEmpty(t, e.Pool)
		}
	}
	assert.Equal(t, map[string]int{"plan": 1, "wave": 2, "patched": 3, "ready": 3, "wave-done": 2, "done": 1}, withoutProgress(seen))

	rc = newRolloutCluster(t, true)
	r = runRollout(t, rc, false, append(applyBeta, "-o", "yaml")...)
	require.Equal(t, exitOK, r.code, r.stderr)
	docs := strings.Split(strings.TrimPrefix(r.stdout, "---\n"), "\n---\n")
	var first, last map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(docs[0]), &first))
	require.NoError(t, yaml.Unmarshal([]byte(docs[len(docs)-1]), &last))
	assert.Equal(t, "plan", first["event"])
	assert.Equal(t, "done", last["event"])
}

func withoutProgress(m map[string]int) map[string]int {
	delete(m, rollout.EventProgress)
	return m
}

// A wave that does not finish in --timeout stops the rollout, exit 1,
// naming the pool and where it is; the next wave is not patched.
func TestRolloutApplyStopsAtATimeout(t *testing.T) {
	rc := newRolloutCluster(t, false) // Cluster API never moves
	r := runRollout(t, rc, false, "--to-talos", "v1.13.7", "-n", "tenant-beta", "--wave", "1", "--apply", "--poll", "5ms", "--timeout", "50ms")
	assert.Equal(t, exitAttn, r.code)
	assert.Empty(t, r.stderr)
	assert.Contains(t, r.stdout, "\nfailed tenant-beta/kubernetes-nodes-beta-batch: timed out after 50ms (--timeout, per wave): HelmRelease Ready at generation 1; MachineDeployment still names kubernetes-beta-batch-")
	assert.Contains(t, r.stdout, "\nstopped in wave 1 of 3 at tenant-beta/kubernetes-nodes-beta-batch: timed out after 50ms")
	assert.Contains(t, r.stdout, "; 2 waves not started; fix the cause and run the same command again")
	assert.Equal(t, 1, rc.patches(), "the next waves are not patched")
}

// --apply keeps its record in cozy-system as it patches: a run stopped
// after its first patch leaves that pool in the record, and the same command
// run again finds it on its way (rolling, waited for, not patched again).
// A pool a tenant put on the target under this tool's field manager's name
// is not in the record: on the target, not waited on. With the record gone,
// nothing is waited for.
func TestRolloutApplyKeepsItsRecord(t *testing.T) {
	rc := newRolloutCluster(t, false) // Cluster API never moves
	args := []string{"--to-talos", "v1.13.7", "-n", "tenant-beta", "--wave", "1"}
	r := runRollout(t, rc, false, append(args, "--apply", "--poll", "5ms", "--timeout", "50ms")...)
	require.Equal(t, exitAttn, r.code, r.stdout)
	require.Equal(t, 1, rc.patches())
	name := rollout.NewRolloutRecord(rollout.RolloutTarget{TalosVersion: "v1.13.7"}).Name
	assert.Contains(t, r.stdout, "\nrecord    ConfigMap cozy-system/"+name+": --apply adds each HelmRelease it patches")
	cm, err := rc.c.Get("v1", "ConfigMap", "cozy-system", name)
	require.NoError(t, err)
	rec, err := rollout.DecodeRolloutRecord(rollout.RolloutTarget{TalosVersion: "v1.13.7"}, cm)
	require.NoError(t, err)
	batch, err := rc.c.Get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "tenant-beta", "kubernetes-nodes-beta-batch")
	require.NoError(t, err)
	w, ok := rec.Written("tenant-beta", "kubernetes-nodes-beta-batch")
	require.True(t, ok, "the patched pool is in the record")
	assert.Equal(t, report.RecordedWrite{Namespace: "tenant-beta", Name: "kubernetes-nodes-beta-batch", UID: string(batch.GetUID()), Generation: batch.GetGeneration()}, w)
	assert.NotEmpty(t, w.UID)
	assert.Equal(t, report.RecordLabels, cm.GetLabels())

	// A tenant writes beta-spot onto the target, naming its field manager
	// workerimage-rollout (as cozystack-api lets a create name it).
	spot, err := rc.c.Get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "tenant-beta", "kubernetes-nodes-beta-spot")
	require.NoError(t, err)
	require.NoError(t, unstructured.SetNestedField(spot.Object, "v1.13.7", "spec", "values", "talos", "version"))
	spot.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: rollout.FieldManager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "helm.toolkit.fluxcd.io/v2",
		Time: &metav1.Time{Time: time.Now()}, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:values":{"f:talos":{"f:version":{}}}}}`)}}})
	hrs, _, _ := rc.c.GetClientFor("helm.toolkit.fluxcd.io/v2", "HelmRelease")
	_, err = hrs.Namespace("tenant-beta").Update(t.Context(), spot, metav1.UpdateOptions{FieldManager: rollout.FieldManager})
	require.NoError(t, err)

	r = runRollout(t, rc, false, append(args, "-o", "json")...)
	require.Equal(t, exitOK, r.code, r.stderr)
	plan := decode[rollout.RolloutPlan](t, r)
	states := map[string]string{}
	for _, p := range append(plan.Pools(), plan.OnTarget...) {
		states[p.HelmRelease] = p.State + ": " + p.Reason
	}
	assert.Equal(t, rollout.StateRolling, plan.Waves[0].Pools[0].State, "the recorded pool comes first, waited for")
	assert.Equal(t, "tenant-beta/kubernetes-nodes-beta-batch", plan.Waves[0].Pools[0].HelmRelease)
	assert.Nil(t, plan.Waves[0].Pools[0].ValuesChange, "not patched again")
	assert.Regexp(t, `^on-target: on the target by its own values \(the rollout's record, ConfigMap cozy-system/`+name+`, holds no write of it\), so not waited on: `, states["tenant-beta/kubernetes-nodes-beta-spot"])

	require.NoError(t, rc.c.Delete("v1", "ConfigMap", "cozy-system", name))
	r = runRollout(t, rc, false, append(args, "-o", "json")...)
	require.Equal(t, exitOK, r.code, r.stderr)
	plan = decode[rollout.RolloutPlan](t, r)
	for _, p := range plan.Pools() {
		assert.NotEqual(t, rollout.StateRolling, p.State, "%s: no record, nothing on its way", p.HelmRelease)
	}
	for _, p := range plan.OnTarget {
		assert.Contains(t, p.Reason, "holds no write of it), so not waited on", p.HelmRelease)
	}
	assert.Len(t, plan.OnTarget, 2)
}

// A plan that will not start is printed and nothing is patched, --apply
// or not: a target golden absent (v1.13.8 is in no catalog entry), or with
// --strict a pool that cannot move (gamma-big never deployed); with no
// target or a bad one nothing is read at all.
func TestRolloutApplyNeverStartsABlockedPlan(t *testing.T) {
	rc := newRolloutCluster(t, false)
	r := runRollout(t, rc, false, "--to-talos", "v1.13.8", "--apply", "--poll", "5ms", "--timeout", "1s")
	assert.Equal(t, exitAttn, r.code)
	assert.Contains(t, r.stdout, "result  will not start: 3 pools blocked (above)")
	assert.Equal(t, 0, rc.patches())
	r = runRollout(t, rc, false, "--to-talos", "v1.13.7", "--strict", "--apply", "--poll", "5ms", "--timeout", "1s")
	assert.Equal(t, exitAttn, r.code)
	assert.Contains(t, r.stdout, "result  will not start: --strict, and 1 pool cannot move (above)")
	assert.Contains(t, r.stdout, "\ncannot move (--strict: the rollout will not start until each is fixed, or left out with --exclude):\n  pool  tenant-gamma/kubernetes-nodes-gamma-big  not-deployed: ")
	assert.Equal(t, 0, rc.patches())
	// -o json: the plan event alone, on one line.
	r = runRollout(t, rc, false, "--to-talos", "v1.13.8", "--apply", "--poll", "5ms", "--timeout", "1s", "-o", "json")
	assert.Equal(t, exitAttn, r.code)
	assert.Equal(t, 1, strings.Count(r.stdout, "\n"), r.stdout)
	var e rollout.RolloutEvent
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &e))
	assert.Equal(t, rollout.EventPlan, e.Event)
	assert.False(t, e.Plan.CanStart)
	assert.Equal(t, 0, rc.patches())
}

func TestRolloutBadInput(t *testing.T) {
	fixture := rolloutFixture
	big := filepath.Join(t.TempDir(), "big.pem")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("x"), 64<<10+1), 0o644))
	for _, c := range []struct {
		name      string
		args      []string
		fragments []string
	}{
		{"no target", []string{"rollout", "--cluster", fixture}, []string{"give a target: --to-talos VERSION"}},
		{"schematic alone", []string{"rollout", "--to-schematic", "abc", "--cluster", fixture}, []string{"give its Talos version too"}},
		{"defaults and a version", []string{"rollout", "--to-defaults", "--to-talos", "v1.13.7", "--cluster", fixture}, []string{"leave out --to-talos"}},
		{"builtin and a factory", []string{"rollout", "--to-builtin", "--to-factory", "https://f.example", "--cluster", fixture}, []string{"give one of them"}},
		{"no wave", []string{"rollout", "--to-talos", "v1.13.7", "--wave", "0", "--cluster", fixture}, []string{"--wave 0: a wave holds at least 1 pool"}},
		{"bad flavor", []string{"rollout", "--to-talos", "v1.13.7", "--flavor", "v1.13.6", "--cluster", fixture}, []string{`--flavor "v1.13.6": want SCHEMATIC/VERSION`, "vMAJOR.MINOR for every patch of that minor"}},
		{"flavor of no pool", []string{"rollout", "--to-talos", "v1.13.7", "--flavor", defaultSchematic + "/v1.13.5", "--cluster", fixture}, []string{"--flavor " + defaultSchematic + "/v1.13.5: no pool boots it; did you mean " + defaultSchematic + "/v1.13.4?"}},
		{"namespace of no pool", []string{"rollout", "--to-talos", "v1.13.7", "-n", "tenant-zzz", "--cluster", fixture}, []string{"-n tenant-zzz: no pool is in namespace tenant-zzz; the pools are in tenant-acme, tenant-beta, tenant-gamma"}},
		{"exclude of no pool", []string{"rollout", "--to-talos", "v1.13.7", "--exclude", "gamma-big", "--cluster", fixture}, []string{"--exclude gamma-big names no pool", "did you mean kubernetes-nodes-gamma-big, kubernetes-gamma-big?"}},
		{"exclude of every pool", []string{"rollout", "--to-talos", "v1.13.7", "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--exclude", "kubernetes-beta-web", "--cluster", fixture}, []string{"--exclude kubernetes-beta-web leaves out every pool the rest of the selection keeps (1 pool): nothing is selected; exclude fewer, or select others"}},
		{"a CA without a factory", []string{"rollout", "--to-talos", "v1.13.7", "--factory-ca", "examples/platform/mirror-ca.pem", "--cluster", fixture}, []string{"--factory-ca examples/platform/mirror-ca.pem is the CA of the factory a pool moves to: give --to-factory URL with it"}},
		{"a CA file missing", []string{"rollout", "--to-factory", "https://factory.mirror.internal", "--factory-ca", td("nope.pem"), "--cluster", fixture}, []string{"--factory-ca ", "nope.pem", "no such file"}},
		{"a CA file with no certificate", []string{"rollout", "--to-factory", "https://factory.mirror.internal", "--factory-ca", "testdata/rollout/golden-v1.13.7.yaml", "--cluster", fixture}, []string{"--factory-ca testdata/rollout/golden-v1.13.7.yaml: it holds no PEM block"}},
		{"a CA too big", []string{"rollout", "--to-factory", "https://factory.mirror.internal", "--factory-ca", big, "--cluster", fixture}, []string{"--factory-ca " + big + ": more than 65536 bytes"}},
		{"negative max workers", []string{"rollout", "--to-talos", "v1.13.7", "--max-workers", "-1", "--cluster", fixture}, []string{"--max-workers -1: give the most workers a wave replaces at once, or 0 for no bound"}},
		{"apply a state file", []string{"rollout", "--to-talos", "v1.13.7", "--apply", "--cluster", fixture}, []string{"--cluster " + fixture + " plans only: --apply patches a live cluster"}},
		{"no timeout", []string{"rollout", "--to-talos", "v1.13.7", "--apply", "--timeout", "0s", "--kubeconfig", fixture}, []string{"--timeout 0s: a wave needs a timeout above zero"}},
		{"malformed version", []string{"rollout", "--to-talos", "1.13.7", "--cluster", fixture}, []string{"the target is refused by the chart", `version "1.13.7" (from talos.version) is malformed`}},
		{"a pool nothing names", []string{"rollout", "--to-talos", "v1.13.7", "--pool", "beta-web", "--cluster", fixture}, []string{"--pool beta-web names no pool", "did you mean kubernetes-nodes-beta-web, kubernetes-beta-web?"}},
		{"bad output", []string{"rollout", "--to-talos", "v1.13.7", "--cluster", fixture, "-o", "xml"}, []string{`--output "xml"`}},
		{"stray argument", []string{"rollout", "v1.13.7", "--cluster", fixture}, []string{`unknown command "v1.13.7"`}},
		{"no cluster", []string{"rollout", "--to-talos", "v1.13.7", "--kubeconfig", td("nope.kubeconfig")}, []string{"nope.kubeconfig", "no such file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			requireProblem(t, cli(t, c.args...), c.fragments...)
		})
	}
}

// help rollout says every flag with its default, and the exit codes.
func TestRolloutHelp(t *testing.T) {
	r := cli(t, "help", "rollout")
	require.Equal(t, exitOK, r.code)
	for _, want := range []string{
		"--apply ", "--wave int ", "(default 5)", "--timeout duration", "(default 30m0s)", "--to-talos string", "--to-schematic string", "--to-defaults", "--to-builtin", "--to-factory string",
		"-n, --namespace string", "--pool strings", "--flavor string", "--behind", "--cluster string", "--kubeconfig string", "-o, --output string",
		"--exclude strings", "--strict", "--max-workers int", "--max-clones int", "(default 10)", "--factory-ca FILE",
		"Exit codes:\n  0  the plan can start", "  1  the rollout will not start", "  2  bad input",
	} {
		assert.Contains(t, r.stdout, want)
	}
	assert.NotContains(t, r.stdout, "--poll", "a test knob, hidden")
}

// The example fleet, done: after the v1.13.7 golden imported, every pool of
// the minor moves (its HTTP pools onto the mirror the catalog publishes, as
// the plan without --to-factory asks) and gamma-big, which never deployed,
// is listed apart without holding the others (exit 0); the pinned outputs
// show the plan without --to-factory (rollout-minor.golden.text).
func TestRolloutMovesTheExampleFleetPastAPoolThatCannotMove(t *testing.T) {
	r := cli(t, "rollout", "--to-talos", "v1.13.7", "--to-factory", "https://factory.mirror.internal", "--flavor", defaultSchematic+"/v1.13", "--cluster", rolloutFixture, "-o", "json")
	require.Equal(t, exitOK, r.code, r.stderr)
	plan := decode[rollout.RolloutPlan](t, r)
	assert.True(t, plan.CanStart)
	var moving []string
	for _, p := range plan.Pools() {
		moving = append(moving, p.HelmRelease)
	}
	assert.ElementsMatch(t, []string{"tenant-acme/kubernetes-nodes-acme-golden", "tenant-acme/kubernetes-nodes-acme-workers", "tenant-beta/kubernetes-nodes-beta-batch",
		"tenant-beta/kubernetes-nodes-beta-spot", "tenant-beta/kubernetes-nodes-beta-web", "tenant-gamma/kubernetes-nodes-gamma-edge"}, moving)
	require.Len(t, plan.CannotMove, 1)
	assert.Equal(t, "tenant-gamma/kubernetes-nodes-gamma-big", plan.CannotMove[0].HelmRelease)
	assert.Equal(t, rollout.StateNotDeployed, plan.CannotMove[0].State)
	assert.Empty(t, plan.Blocked)
	// --exclude leaves it out altogether; --strict stops on it.
	r = cli(t, "rollout", "--to-talos", "v1.13.7", "--to-factory", "https://factory.mirror.internal", "--flavor", defaultSchematic+"/v1.13", "--exclude", "tenant-gamma/kubernetes-gamma-big", "--cluster", rolloutFixture, "-o", "json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Empty(t, decode[rollout.RolloutPlan](t, r).CannotMove)
	r = cli(t, "rollout", "--to-talos", "v1.13.7", "--to-factory", "https://factory.mirror.internal", "--flavor", defaultSchematic+"/v1.13", "--strict", "--cluster", rolloutFixture)
	assert.Equal(t, exitAttn, r.code)
	assert.Contains(t, r.stdout, "result  will not start: --strict, and 1 pool cannot move (above)")
}

// --to-factory with --factory-ca FILE: one change writes the URL and the
// CA (talos.imageFactoryCA, the file's PEM), so the pool rolls once.
func TestRolloutFactoryWithItsCA(t *testing.T) {
	r := cli(t, "rollout", "--to-factory", "https://factory.mirror.internal", "--factory-ca", filepath.Join(support.RepoRoot(), "examples", "platform", "mirror-ca.pem"), "--pool", "tenant-beta/kubernetes-nodes-beta-web", "--cluster", rolloutFixture, "-o", "json")
	require.Equal(t, exitOK, r.code, r.stderr)
	plan := decode[rollout.RolloutPlan](t, r)
	require.Len(t, plan.Pools(), 1)
	web := plan.Pools()[0]
	pem, err := os.ReadFile(filepath.Join(support.RepoRoot(), "examples", "platform", "mirror-ca.pem"))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.mirror.internal", "imageFactoryCA": string(pem)}}, web.ValuesChange)
	assert.Equal(t, "kubernetes-beta-web-2f13d5", web.MachineTemplate.Current)
	assert.NotEqual(t, web.MachineTemplate.Current, web.MachineTemplate.Target)
}

// The CVE plan on a stock Cozystack (testdata/rollout/stock.yaml): the pool
// created from the dashboard before the takeover is planned on the public
// factory, blocked there (the catalog publishes a mirror), and the plan
// prints the command that moves it to the published mirror in the same
// change. That command, run as printed with the
// published CA saved as the file it names, plans the pool's flavor, factory
// and CA in one values change and one new template, and no pool left on
// another factory (rollout-stock.golden.text shows the first plan whole).
func TestRolloutFactoryCommandAsPrinted(t *testing.T) {
	fixture, err := filepath.Abs(rolloutStockFixture)
	require.NoError(t, err)
	r := cli(t, "rollout", "--to-talos", "v1.13.7", "--flavor", defaultSchematic+"/v1.13", "--cluster", fixture, "-o", "json")
	require.Equal(t, exitAttn, r.code, "blocked for its factory: "+r.stderr)
	plan := decode[rollout.RolloutPlan](t, r)
	require.Equal(t, 1, plan.OtherFactoryPools)
	require.Equal(t, 1, plan.OtherFactoryBlocked)
	command := strings.Fields(plan.FactoryCommand)
	require.Equal(t, []string{"workerimage", "rollout"}, command[:2])
	assert.Contains(t, plan.FactoryCommand, "--factory-ca mirror-ca.pem")

	pem, err := os.ReadFile(filepath.Join(support.RepoRoot(), "examples", "platform", "mirror-ca.pem"))
	require.NoError(t, err)
	t.Chdir(t.TempDir())
	require.NoError(t, os.WriteFile("mirror-ca.pem", pem, 0o600))
	r = cli(t, append(command[1:], "--cluster", fixture, "-o", "json")...)
	require.Equal(t, exitOK, r.code, r.stderr)
	again := decode[rollout.RolloutPlan](t, r)
	require.Len(t, again.Pools(), 1)
	web := again.Pools()[0]
	assert.Equal(t, "tenant-alpha/kubernetes-nodes-alpha-web", web.HelmRelease)
	assert.Equal(t, map[string]any{"talos": map[string]any{"version": "v1.13.7", "imageFactoryURL": "https://factory.mirror.internal", "imageFactoryCA": string(pem)}}, web.ValuesChange)
	assert.Equal(t, "https://factory.mirror.internal", web.To.ImageFactoryURL.Value)
	assert.NotEqual(t, web.MachineTemplate.Current, web.MachineTemplate.Target)
	assert.Zero(t, again.OtherFactoryPools)
	assert.Nil(t, web.OtherFactory)
}

// --max-clones holds inside a pool: acme-golden alone would clone its two
// disks at once, so its one move patch writes maxSurge 0 with the Talos
// move (one generation), and it rolls onto the template the plan without
// the bound names: the rolling update is not part of the machine template.
// After the last wave one more patch puts the pool's own back (acme-golden
// sets none: the key is removed), and the template it runs stays. A run that
// stops before its last wave leaves the surge as written, and the same
// command run again puts it back once the pool has rolled.
func TestRolloutApplyWritesMaxSurgeInTheSamePatch(t *testing.T) {
	rc := newRolloutCluster(t, true)
	args := []string{"--to-talos", "v1.13.7", "--pool", "tenant-acme/kubernetes-nodes-acme-golden", "--max-clones", "1"}
	plan := runRollout(t, rc, false, args...)
	require.Equal(t, exitOK, plan.code, plan.stderr)
	assert.Contains(t, plan.stdout, "\n    surge     set to 0 during the roll, restored after the last wave (the key removed, as the pool sets none); a run that stops before leaves it to the next run to the same target (the rollout's record keeps it)\n")
	r := runRollout(t, rc, false, append(args, "--apply", "--poll", "5ms", "--timeout", "20s")...)
	require.Equal(t, exitOK, r.code, r.stderr+r.stdout)
	assert.Equal(t, 2, rc.patches(), "the move, then the surge put back")
	assert.Contains(t, r.stdout, "\npatched tenant-acme/kubernetes-nodes-acme-golden: talos.version v1.13.6 -> v1.13.7, maxSurge 10 -> 0 ")
	assert.Contains(t, r.stdout, "\nready tenant-acme/kubernetes-nodes-acme-golden: ")
	_, events, _ := strings.Cut(r.stdout, "\nwave 1 of 1 done: ")
	assert.Regexp(t, `^[^\n]*\nrestored tenant-acme/kubernetes-nodes-acme-golden: maxSurge 0 removed, as the pool had none \(the rolling update only: no worker rolls\)\ndone: 1 pool on the target, in 1 wave\n$`, events)
	hr, err := rc.c.Get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "tenant-acme", "kubernetes-nodes-acme-golden")
	require.NoError(t, err)
	values, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	assert.NotContains(t, values, "maxSurge", "the pool's own: none")
	assert.Equal(t, "v1.13.7", values["talos"].(map[string]any)["version"])
	md, err := rc.c.Get("cluster.x-k8s.io/v1beta1", "MachineDeployment", "tenant-acme", "kubernetes-acme-golden")
	require.NoError(t, err)
	running, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	assert.Equal(t, rc.targets["tenant-acme/kubernetes-nodes-acme-golden"], running)
	after := runRollout(t, rc, false, append(args, "-o", "json")...)
	require.Equal(t, exitOK, after.code, after.stderr)
	again := decode[rollout.RolloutPlan](t, after)
	require.Len(t, again.OnTarget, 1, "restored, it is on the target: its template is the one the move rendered")
	assert.Equal(t, running, again.OnTarget[0].MachineTemplate.Current)

	// Cluster API never moves: the wave times out, and the surge stays.
	stuck := newRolloutCluster(t, false)
	r = runRollout(t, stuck, false, append(args, "--apply", "--poll", "5ms", "--timeout", "50ms")...)
	require.Equal(t, exitAttn, r.code, r.stdout)
	assert.Equal(t, 1, stuck.patches(), "no restore after a stop")
	assert.NotContains(t, r.stdout, "\nrestored ")
	hr, err = stuck.c.Get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "tenant-acme", "kubernetes-nodes-acme-golden")
	require.NoError(t, err)
	values, _, _ = unstructured.NestedMap(hr.Object, "spec", "values")
	assert.EqualValues(t, 0, values["maxSurge"])

	// Cluster API moves now: the same command run again waits for the pool
	// the stopped run left rolling and, after its last wave, puts back the
	// pool's own maxSurge, which the rollout's record kept.
	resumed := runRollout(t, stuck, false, args...)
	require.Equal(t, exitOK, resumed.code, resumed.stderr)
	assert.Contains(t, resumed.stdout, "\n    surge     set to 0 by an earlier run to hold its bound, restored after the last wave (the key removed, as the pool set none)\n")
	stuck.done.Add(1)
	go stuck.capi()
	t.Cleanup(func() { close(stuck.stop); stuck.done.Wait() })
	r = runRollout(t, stuck, false, append(args, "--apply", "--poll", "5ms", "--timeout", "20s")...)
	require.Equal(t, exitOK, r.code, r.stderr+r.stdout)
	assert.Equal(t, 2, stuck.patches(), "the move, then, in the run after, the surge put back")
	assert.Contains(t, r.stdout, "\nrestored tenant-acme/kubernetes-nodes-acme-golden: maxSurge 0 removed, as the pool had none (the rolling update only: no worker rolls)\n")
	hr, err = stuck.c.Get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "tenant-acme", "kubernetes-nodes-acme-golden")
	require.NoError(t, err)
	values, _, _ = unstructured.NestedMap(hr.Object, "spec", "values")
	assert.NotContains(t, values, "maxSurge", "the pool's own: none")
}

// --factory-ca is read as plan and pins read a CA in effect (X.509): a
// certificate that is expired or not yet valid, one that is not a CA, or
// one whose DER does not parse is refused (exit 2), naming the file, the
// certificate and its problem, before the cluster is read; a bundle is
// judged certificate by certificate. The neighbour, a CA valid now, plans.
func TestRolloutFactoryCAIsReadAsX509(t *testing.T) {
	now, day := time.Now(), 24*time.Hour
	valid := support.Certificate(t, "Mirror CA", true, now.Add(-day), now.Add(365*day))
	dir := t.TempDir()
	file := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	for _, c := range []struct {
		name, pem string
		problem   string
	}{
		{"expired.pem", support.Certificate(t, "Old Mirror CA", true, now.Add(-365*day), now.Add(-day)),
			`certificate 1 of 1 \(CN=Old Mirror CA\) expired on 20\d\d-\d\d-\d\dT[\d:]+Z: TLS refuses a chain through it`},
		{"future.pem", support.Certificate(t, "Next Mirror CA", true, now.Add(day), now.Add(365*day)),
			`certificate 1 of 1 \(CN=Next Mirror CA\) is not valid before 20\d\d-\d\d-\d\dT[\d:]+Z: TLS refuses a chain through it until then`},
		{"leaf.pem", support.Certificate(t, "factory.mirror.internal", false, now.Add(-day), now.Add(365*day)),
			`certificate 1 of 1 \(CN=factory.mirror.internal\) is not a CA \(its basic constraints do not say CA:TRUE\): TLS trusts it only when the mirror serves this very certificate, never one it issued`},
		{"garbage.pem", support.NotACertificate,
			`certificate 1 of 1: its DER is not an X.509 certificate \(.+\): CDI's importer skips it`},
		{"bundle.pem", valid + support.Certificate(t, "Old Mirror CA", true, now.Add(-365*day), now.Add(-day)),
			`certificate 2 of 2 \(CN=Old Mirror CA\) expired on `},
	} {
		path := file(c.name, c.pem)
		r := cli(t, "rollout", "--to-factory", "https://factory.mirror.internal", "--factory-ca", path, "-n", "tenant-beta", "--cluster", rolloutFixture)
		assert.Equal(t, exitProblem, r.code, c.name)
		assert.Empty(t, r.stdout, c.name)
		assert.Regexp(t, `^workerimage rollout: --factory-ca `+regexp.QuoteMeta(path)+`: `+c.problem, r.stderr, c.name)
		assert.Contains(t, r.stderr, "; every pool moved would import trusting it: give the certificates of the CA that serves the factory, each a CA (CA:TRUE) valid now\n", c.name)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), c.name)
	}
	r := cli(t, "rollout", "--to-factory", "https://factory.mirror.internal", "--factory-ca", file("valid.pem", valid), "-n", "tenant-beta", "--cluster", rolloutFixture)
	assert.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "change    talos.imageFactoryCA: ")
}
