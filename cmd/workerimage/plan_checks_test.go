package main

import (
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What plan says about the clone path beyond the golden: which golden serves
// the pool's class and why, CDI's clone strategy and where it came from, and
// each check behind refusals 4 to 9 (docs/design.md "One flavor on several
// StorageClasses" and "Every host-assisted fallback ... is refused"). The
// fixtures: testdata/state/golden.yaml holds the plain golden on "replicated"
// (provisioner linstor.csi.linbit.com); testdata/state/per-class.yaml adds
// per-class goldens on "fast" (rbd.csi.ceph.com) and "fixed" (not
// expandable), a CDI resource, a StorageProfile for "fast" and a
// VolumeSnapshotClass for the Ceph driver.

// planOf runs plan -o json for the pool values file against the state file.
func planOf(t *testing.T, values, state string, code int) report.PlanReport {
	t.Helper()
	res := cli(t, "plan", "-values", values, "-release", testRelease, "-namespace", testNamespace, "-cluster", state, "-o", "json")
	require.Equal(t, code, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	return decode[report.PlanReport](t, res)
}

// checkIn is the report's outcome of the check behind refusal n.
func checkIn(t *testing.T, d *report.DiskReport, n int) report.FallbackCheck {
	t.Helper()
	require.NotNil(t, d)
	for _, c := range d.FallbackChecks {
		if c.Refusal == n {
			return c
		}
	}
	t.Fatalf("no check of refusal %d in %+v", n, d.FallbackChecks)
	return report.FallbackCheck{}
}

func TestPlanSaysWhichGoldenServesThePoolAndWhy(t *testing.T) {
	plain := goldenName(defaultVersion)
	// docs/design.md: the per-class golden of class C is <plain>--C.
	perClass := func(class string) string { return plain + "--" + class }

	t.Run("the plain golden, on the pool's class", func(t *testing.T) {
		r := planOf(t, td("pools", "builtin.yaml"), td("state", "golden.yaml"), exitOK)
		d := r.DiskSource
		assert.Equal(t, plain, d.Golden)
		assert.Equal(t, &report.GoldenChoice{Choice: "plain", Reason: "the plain golden " + plain + ` is on the pool's class "replicated"`}, d.GoldenChoice, "no per-class golden named where none can be")
		assert.True(t, d.Checked)
	})

	t.Run("the per-class golden, the plain one on another class", func(t *testing.T) {
		r := planOf(t, td("pools", "builtin-fast.yaml"), td("state", "per-class.yaml"), exitOK)
		d := r.DiskSource
		assert.Equal(t, perClass("fast"), d.Golden, "the disk clones the golden of its class")
		assert.Equal(t, &report.GoldenChoice{Choice: "per-class", Reason: "the plain golden " + plain + ` is on "replicated", not on the pool's class "fast"`, PerClassGolden: perClass("fast")}, d.GoldenChoice)
		assert.Equal(t, "fast", d.GoldenClass.Value)
		kmt, err := harnessRender(t, td("pools", "builtin-fast.yaml"), td("state", "per-class.yaml"), "snapshot.storage.k8s.io/v1").One("KubevirtMachineTemplate")
		require.NoError(t, err)
		assert.Equal(t, kmt.Name(), r.MachineTemplate)
		assert.Contains(t, kmt.Text, "name: "+perClass("fast"), "the chart's own render clones the golden plan names")
	})

	t.Run("the per-class golden, the plain one absent", func(t *testing.T) {
		// Flavor v1.13.5 exists only on "fast".
		old := goldenName("v1.13.5")
		state := stateWith(t, "per-class", `---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: `+old+`--fast, namespace: cozy-public}
spec: {storage: {storageClassName: fast, resources: {requests: {storage: 6Gi}}}}
status: {phase: Succeeded}
`)
		values := writeTemp(t, "pool.yaml", "{cluster: acme, storageClass: fast, talos: {version: v1.13.5}, osImage: {builtin: {}}}")
		d := planOf(t, values, state, exitOK).DiskSource
		assert.Equal(t, old+"--fast", d.Golden)
		assert.Equal(t, "per-class", d.GoldenChoice.Choice)
		assert.Equal(t, "the plain golden "+old+" is absent from cozy-public", d.GoldenChoice.Reason)
	})

	t.Run("no golden on the pool's class: refused, reported in full", func(t *testing.T) {
		r := planOf(t, td("pools", "builtin-local.yaml"), td("state", "golden.yaml"), exitAttn)
		d := r.DiskSource
		assert.False(t, d.Checked, "the guards refused")
		assert.Equal(t, plain, d.Golden, "the golden the refusal names")
		assert.Equal(t, "DataVolume", d.GoldenFoundAs, "what the refused guards read is still reported")
		assert.Equal(t, &report.GoldenChoice{Choice: "none", Reason: "the plain golden " + plain + ` is on "replicated", not on the pool's class "local", and there is no per-class golden ` + perClass("local"), PerClassGolden: perClass("local")}, d.GoldenChoice)
		c := checkIn(t, d, 4)
		assert.Equal(t, "refused", c.Outcome)
		assert.Equal(t, r.Refusal, c.Detail, "the refusal a normal render fails with, word for word")
		assert.Equal(t, "passed", checkIn(t, d, 5).Outcome, "checks after the refusal still ran")
	})

	t.Run("no golden of the flavor at all: refused", func(t *testing.T) {
		r := planOf(t, td("pools", "builtin.yaml"), td("state", "cluster.yaml"), exitAttn)
		d := r.DiskSource
		assert.Equal(t, "absent", d.GoldenFoundAs)
		assert.Equal(t, "none", d.GoldenChoice.Choice)
		assert.Equal(t, "the plain golden "+plain+" is absent from cozy-public, and there is no per-class golden "+perClass("replicated"), d.GoldenChoice.Reason)
		assert.Equal(t, "skipped", checkIn(t, d, 4).Outcome, "an absent golden has no class to compare")

		text := cli(t, planArgs("builtin", "cluster")...)
		assert.Contains(t, text.stdout, "\ngolden           absent from cozy-public\n", "no claim that the pool runs from it")
	})
}

func TestPlanSaysTheCloneStrategyAndWhereItCameFrom(t *testing.T) {
	linstor := support.SnapshotClass("linstor", "linstor.csi.linbit.com")
	cases := []struct {
		name     string
		docs     []string
		strategy string
		source   string
		// check7 and check8 are the outcomes of refusals 7 and 8's checks.
		check7, check8 string
	}{
		{"the CDI resource's override wins", []string{support.CDIResource("cdi", "csi-clone"), support.StorageProfile("replicated", "snapshot", "Filesystem")}, "csi-clone",
			"spec.cloneStrategyOverride of the CDI resource cdi", "passed", "not needed"},
		{"else the class's StorageProfile", []string{support.CDIResource("cdi", ""), support.StorageProfile("replicated", "csi-clone", "Filesystem")}, "csi-clone",
			"status.cloneStrategy of the StorageProfile replicated", "passed", "not needed"},
		{"else CDI's default, snapshot", []string{support.CDIResource("cdi", ""), support.StorageProfile("replicated", "", "Filesystem"), linstor}, "snapshot",
			"CDI's default: the CDI resource cdi sets no spec.cloneStrategyOverride and the StorageProfile replicated states no status.cloneStrategy", "passed", "passed"},
		{"not known without a CDI resource", nil, "",
			"not known: the cluster has no CDI resource", "skipped", "skipped"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := planOf(t, td("pools", "builtin.yaml"), stateWith(t, "golden", c.docs...), exitOK).DiskSource
			assert.Equal(t, &report.Sourced{Value: c.strategy, Source: c.source}, d.CloneStrategy)
			assert.Equal(t, c.check7, checkIn(t, d, 7).Outcome)
			assert.Equal(t, c.check8, checkIn(t, d, 8).Outcome)
		})
	}

	d := planOf(t, td("pools", "builtin.yaml"), stateWith(t, "golden", support.CDIResource("cdi", ""), support.StorageProfile("replicated", "", "Filesystem"), linstor), exitOK).DiskSource
	assert.Equal(t, `VolumeSnapshotClass linstor has driver linstor.csi.linbit.com, the provisioner of StorageClass "replicated"`, checkIn(t, d, 8).Detail)
	d = planOf(t, td("pools", "builtin.yaml"), td("state", "golden.yaml"), exitOK).DiskSource
	assert.Contains(t, checkIn(t, d, 7).Detail, "no CDI resource")
}

func TestPlanReportsEachFallbackCheck(t *testing.T) {
	t.Run("every check passes on the per-class golden", func(t *testing.T) {
		d := planOf(t, td("pools", "builtin-fast.yaml"), td("state", "per-class.yaml"), exitOK).DiskSource
		var got []string
		for _, c := range d.FallbackChecks {
			got = append(got, c.Outcome+" "+c.Check)
			assert.Equal(t, report.CheckNames[c.Refusal], c.Check)
		}
		assert.Equal(t, []string{"passed same class", "passed not smaller", "passed expandable", "passed not copy", "passed snapshot class", "passed volume mode",
			"passed access modes", "passed class exists", "passed CSI driver", "passed same driver", "passed one CDI", "passed clone source"}, got, "refusals 4 to 15, in order")
		assert.Equal(t, `the golden and a worker disk on "fast" are both Block volumes`, checkIn(t, d, 9).Detail)
		assert.Equal(t, &report.Sourced{Value: "snapshot", Source: "status.cloneStrategy of the StorageProfile fast"}, d.CloneStrategy)
	})

	t.Run("the snapshot API not served: refused, the check says why", func(t *testing.T) {
		r := planOf(t, td("pools", "builtin.yaml"), stateWith(t, "golden", support.CDIResource("cdi", ""), support.StorageProfile("replicated", "", "Filesystem")), exitAttn)
		c := checkIn(t, r.DiskSource, 8)
		assert.Equal(t, "refused", c.Outcome)
		assert.Equal(t, r.Refusal, c.Detail)
		assert.Contains(t, c.Detail, "the cluster does not serve snapshot.storage.k8s.io/v1")
		assert.Equal(t, "snapshot", r.DiskSource.CloneStrategy.Value, "CDI's default, with a StorageProfile that states none")
		assert.Equal(t, "passed", checkIn(t, r.DiskSource, 7).Outcome)
	})

	t.Run("no VolumeSnapshotClass for the provisioner", func(t *testing.T) {
		r := planOf(t, td("pools", "builtin.yaml"), stateWith(t, "golden", support.CDIResource("cdi", ""), support.StorageProfile("replicated", "", "Filesystem"), support.SnapshotClass("ceph", "rbd.csi.ceph.com")), exitAttn)
		c := checkIn(t, r.DiskSource, 8)
		assert.Equal(t, "refused", c.Outcome)
		assert.Contains(t, c.Detail, "no VolumeSnapshotClass has driver linstor.csi.linbit.com")
	})

	t.Run("strategy copy: refused, and no snapshot to look for", func(t *testing.T) {
		r := planOf(t, td("pools", "builtin.yaml"), stateWith(t, "golden", support.CDIResource("cdi", "copy")), exitAttn)
		assert.Equal(t, "refused", checkIn(t, r.DiskSource, 7).Outcome)
		assert.Equal(t, report.FallbackCheck{Refusal: 8, Check: "snapshot class", Outcome: "not needed", Detail: "the strategy is copy, not snapshot"}, checkIn(t, r.DiskSource, 8))
	})

	t.Run("volume modes: differ, or not known", func(t *testing.T) {
		// The golden's PVC in golden.yaml is a Filesystem volume.
		r := planOf(t, td("pools", "builtin.yaml"), stateWith(t, "golden", support.StorageProfile("replicated", "", "Block")), exitAttn)
		c := checkIn(t, r.DiskSource, 9)
		assert.Equal(t, "refused", c.Outcome)
		assert.Contains(t, c.Detail, "is a Filesystem volume")

		d := planOf(t, td("pools", "builtin.yaml"), td("state", "golden.yaml"), exitOK).DiskSource
		assert.Equal(t, report.FallbackCheck{Refusal: 9, Check: "volume mode", Outcome: "skipped", Detail: "the cluster has no StorageProfile replicated, so a worker disk's volume mode is not known"}, checkIn(t, d, 9))
	})

	t.Run("size and expansion", func(t *testing.T) {
		// The golden is 6Gi: a 6Gi disk needs no expansion, a 5Gi one is refused.
		d := planOf(t, writeTemp(t, "pool.yaml", "{cluster: acme, diskSize: 6Gi, osImage: {builtin: {}}}"), td("state", "golden.yaml"), exitOK).DiskSource
		assert.Equal(t, "passed", checkIn(t, d, 5).Outcome)
		assert.Equal(t, "not needed", checkIn(t, d, 6).Outcome)

		r := planOf(t, writeTemp(t, "pool.yaml", "{cluster: acme, diskSize: 5Gi, osImage: {builtin: {}}}"), td("state", "golden.yaml"), exitAttn)
		assert.Equal(t, report.FallbackCheck{Refusal: 5, Check: "not smaller", Outcome: "refused", Detail: r.Refusal}, checkIn(t, r.DiskSource, 5))
	})

	t.Run("where the filesystem overhead came from", func(t *testing.T) {
		// A 20Gi Filesystem disk on the expandable "replicated" passes check 6;
		// its detail says which overhead CDI's request was grown by.
		linstor := support.SnapshotClass("linstor", "linstor.csi.linbit.com")
		profile := support.StorageProfile("replicated", "", "Filesystem")
		d := planOf(t, td("pools", "builtin.yaml"), stateWith(t, "golden", support.CDIResource("cdi", ""), profile, linstor), exitOK).DiskSource
		assert.Equal(t, "passed", checkIn(t, d, 6).Outcome)
		// 20Gi is 21474836480 bytes, already MiB-aligned; grown by 6% and rounded up: 22763326669.
		assert.Contains(t, checkIn(t, d, 6).Detail, "CDI's request for a worker disk, 22763326669 bytes (diskSize 20Gi aligned up to 1 MiB and grown by CDI's default filesystem overhead 0.06 (not read: the cluster has a CDI resource but no CDIConfig config yet", "the figure is CDI's default, and plan says so")

		d = planOf(t, td("pools", "builtin.yaml"), stateWith(t, "golden", support.CDIResource("cdi", ""), support.CDIConfig("0.1"), profile, linstor), exitOK).DiskSource
		assert.Contains(t, checkIn(t, d, 6).Detail, "grown by the filesystem overhead 0.1 of the CDIConfig config", "a CDIConfig's own figure is read")
	})

	t.Run("two refusals: the first is the result, both are reported", func(t *testing.T) {
		// "fixed" cannot expand (6) and no VolumeSnapshotClass serves its driver (8).
		r := planOf(t, writeTemp(t, "pool.yaml", "{cluster: acme, storageClass: fixed, osImage: {builtin: {}}}"), td("state", "per-class.yaml"), exitAttn)
		assert.Equal(t, goldenName(defaultVersion)+"--fixed", r.DiskSource.Golden)
		six, eight := checkIn(t, r.DiskSource, 6), checkIn(t, r.DiskSource, 8)
		assert.Equal(t, "refused", six.Outcome)
		assert.Equal(t, r.Refusal, six.Detail)
		assert.Equal(t, "refused", eight.Outcome)
		assert.Contains(t, eight.Detail, "no VolumeSnapshotClass has driver fixed.csi.example")

		text := cli(t, "plan", "-values", writeTemp(t, "pool.yaml", "{cluster: acme, storageClass: fixed, osImage: {builtin: {}}}"), "-release", testRelease, "-namespace", testNamespace, "-cluster", td("state", "per-class.yaml")).stdout
		assert.Contains(t, text, "6 expandable      refused  the refusal in result\n", "the result line already prints it")
		assert.Contains(t, text, "8 snapshot class  refused  "+eight.Detail+"\n", "a later refusal is printed in full")
	})
}

func TestPlanTextShowsChoiceStrategyChecksAndNote(t *testing.T) {
	res := cli(t, planArgs("builtin-fast", "per-class")...)
	require.Equal(t, exitOK, res.code, res.stderr)
	text := res.stdout
	plain := goldenName(defaultVersion)
	assert.Contains(t, text, "\ngolden choice     per-class: the plain golden "+plain+` is on "replicated", not on the pool's class "fast"`+"\n")
	assert.Contains(t, text, "\nclone strategy    snapshot  (status.cloneStrategy of the StorageProfile fast)\n")
	// One row per check, their outcomes in one column, under one label.
	_, checks, ok := strings.Cut(text, "\nfallback checks   ")
	require.True(t, ok, text)
	rows := strings.Split(checks, "\n")[:6]
	for i, row := range rows {
		if i > 0 {
			require.True(t, strings.HasPrefix(row, strings.Repeat(" ", len("fallback checks   "))), row)
			row = strings.TrimLeft(row, " ")
		}
		assert.Equal(t, "passed", strings.Fields(row[len("8 snapshot class  "):])[0], row)
	}
	assert.True(t, strings.HasPrefix(rows[0], "4 same class      passed  "), rows[0])
	assert.Contains(t, text, "\nnote              "+report.NodeLocalNote+"\n")

	none := cli(t, planArgs("builtin", "golden")...)
	assert.Contains(t, none.stdout, "\nclone strategy    not known: the cluster has no CDI resource\n", "no value to print, only why")
}

// A node-local class passes every check yet sends every clone to the
// golden's node; no render can tell, so plan says so on the clone path.
func TestPlanNotesThatNodeLocalClassesCannotBeTold(t *testing.T) {
	assert.Contains(t, report.NodeLocalNote, "node-local StorageClass")
	for _, c := range []struct{ pool, state string }{{"builtin", "golden"}, {"builtin", ""}, {"builtin-local", "golden"}} {
		res := cli(t, planArgs(c.pool, c.state, "-o", "json")...)
		assert.Equal(t, report.NodeLocalNote, decode[report.PlanReport](t, res).DiskSource.Note, "%s against %q", c.pool, c.state)
	}
	res := cli(t, planArgs("http", "golden", "-o", "json")...)
	assert.Empty(t, decode[report.PlanReport](t, res).DiskSource.Note, "the HTTP path has no golden")
	assert.NotContains(t, cli(t, planArgs("http", "golden")...).stdout, "\nnote ")
}
