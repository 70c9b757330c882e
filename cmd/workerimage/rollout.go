package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cozystack/golden-worker-images/internal/apply"
	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/spf13/cobra"
)

// Defaults of rollout's --wave, --max-clones and --timeout. Ten clones of
// one golden at once is well within what a Ceph snapshot serialises (about
// 35 a minute) and keeps CDI out of its backoff; --max-workers has no
// default bound: --wave and each pool's rolling update bound it.
const (
	defaultWave      = 5
	defaultMaxClones = 10
	defaultTimeout   = 30 * time.Minute
	// maxCABytes is what talos.imageFactoryCA holds at most (the chart's schema).
	maxCABytes = 64 << 10
)

func (a *app) rolloutCommand() *cobra.Command {
	var (
		in       = fleetFlags{toPlan: true}
		o        rollout.RolloutOptions
		doApply  bool
		timeout  time.Duration
		poll     time.Duration
		selected []string
		caFile   string
	)
	cmd := &cobra.Command{
		Use:   "rollout (--to-talos VERSION [--to-schematic ID] | --to-defaults | --to-builtin | --to-factory URL [--factory-ca FILE]) [-n NS] [--pool NAME]... [--exclude NAME]... [--flavor SCHEMATIC/VERSION] [--behind] [--strict] [--apply]",
		Short: "Move chosen pools to a new Talos, the chart's defaults, a golden or a factory, in watched waves",
		Long: `Moves chosen pools to a target, wave by wave: a Talos version (--to-talos, with --to-schematic to
change the schematic too), the chart's Talos defaults for new pools (--to-defaults), cloning a golden
(--to-builtin, what adopt proposes), or importing from another Image Factory (--to-factory, for pools
that import over HTTP; --factory-ca FILE writes the mirror's CA in the same change, so each pool
re-images once). Parts combine: --to-builtin --to-talos v1.13.7 switches and moves at once.

The pools are the cluster's, found and valued as Flux deploys them; -n, --pool, --flavor and --behind
keep those every one of them keeps, --exclude leaves pools out. --flavor SCHEMATIC/vMAJOR.MINOR takes
every patch of that minor. A selection that matches nothing is an error naming what it may have
meant, and an empty value (--pool=, -n "" from an unset variable) is refused, never read as the flag
left out. A pool already on the target by its own values is not moved nor waited on; one an earlier
run of this tool moved there is waited on until it has rolled, as long as the rollout's record says
so: a ConfigMap in cozy-system (named in the plan) to which --apply adds each HelmRelease it patches,
its UID and the generation written. A HelmRelease edited or created again since, or one that only
names this tool's field manager (any client can), is not waited on.

Each pool is rendered by the chart against the cluster as it is and with its values changed at the
field its flavor came from; without --apply the plan is printed per wave: each pool's values change,
its old and new template names, the workers it replaces and how many at once (its rolling update's
maxSurge + maxUnavailable, as Cluster API rolls it), the clones in flight per golden and the storage
they take in cozy-public. A wave holds at most --wave pools, --max-workers workers replaced at once
(0: no bound) and --max-clones clones of one golden in flight (at least 1). A pool above a bound on
its own takes, in the same values change as the move, the pool value maxSurge that keeps it within
(its rolling update is not part of its machine template: it rolls nothing the move does not); where
none can (a pool chart without maxSurge), it is listed apart. After the last wave, --apply puts each such pool's
own maxSurge back (the key removed where it had none): nothing rolls. A pool that keeps a factory
other than the one new pools get says so, with the command that moves flavor and factory in one
re-image; where the catalog publishes that factory, the pool is blocked until moved with it.

--to-talos must be a release the platform knows (a catalog entry, a golden, the chart's default, or
no newer than the next patch of a minor the chart supports), or one the factory each selected pool
imports from lists (GET <factory>/versions, trusting the CA the pool imports with): else it is bad
input, naming the nearest known releases.

Pools that cannot move are listed apart with the fix and the rest moves: refused at the target, never
deployed (no MachineDeployment), their last release failed, values not resolved, a HelmRelease with
postRenderers, suspended, applied by a Flux Kustomization, or installed without a HelmRelease.
--strict makes any of them stop the start. The rollout will not start while the target golden of a
selected pool is absent or not Succeeded on its class (the catalog entry to add is printed, as adopt
prints it).

With --apply it first asks the factory for each image wave 1's HTTP pools import (HEAD, or a GET of
its first bytes), and stops (exit 2) on one not served, nothing patched. It patches each pool's
HelmRelease spec.values (never a valuesFrom Secret), a wave at a time, recording each patch in the
rollout's record (the operator's identity needs get, create and update of ConfigMaps in
cozy-system; nothing is patched without them), and before the next wave waits
until each HelmRelease is Ready at its new generation and each MachineDeployment runs the new template
with every worker updated and ready (at zero workers: the template named), within --timeout. It stops
at the first pool that fails or times out, saying which and why; run again, it skips the pools on the
target and waits for those its record says it moved still rolling: all it knows is read from the
cluster. Progress shows on stderr on a terminal; otherwise each event is one line, and -o json writes
each as one JSON object per line.`,
		Example: a.example(
			"rollout --to-talos v1.13.7 --cluster examples/cluster-state.yaml -n tenant-acme",
			"rollout --to-talos v1.13.7 --flavor ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.6 --wave 10 --apply",
			"rollout --to-talos v1.13.7 --flavor ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13 --exclude tenant-gamma/kubernetes-nodes-gamma-big --max-clones 4",
			"rollout --to-factory https://factory.mirror.internal --factory-ca mirror-ca.pem --behind --apply -o json"),
		Annotations: map[string]string{"exitCodes": exitCodes(
			"the plan can start (without --apply; pools that cannot move are listed apart and stay where they are), or every pool of its waves is on the target (with --apply)",
			"the rollout will not start (a selected pool's target golden is absent or not Succeeded, a pool would import from another factory than the catalog publishes, or with --strict a pool cannot move), or it stopped: a pool failed, a wave timed out, it was interrupted, or a pool's own maxSurge could not be put back",
			"bad input (no target, a selection that matches nothing: -n, --flavor, --pool or --exclude naming no pool; an empty selection value; a malformed --flavor, a target the chart refuses, a --to-talos no one knows or serves, --factory-ca without --to-factory, --apply with --cluster, --max-clones below 1), an image of wave 1 its factory does not serve, an unreachable cluster or factory, or no pool readable while pool objects exist")},
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Selection.Pools = selected
			if caFile != "" {
				o.Target.FactoryCAFrom = caFile
				if o.Target.FactoryURL != "" {
					pem, err := readCA(caFile)
					if err != nil {
						return err
					}
					o.Target.FactoryCA = pem
				}
			}
			if o.MaxClones < 1 {
				// The report reads 0 as no bound; on the command line it reads as
				// "no clones", so it is refused and the bound lifted by a number.
				return errorf("--max-clones %d: a wave clones at least 1 disk of a golden at once, and 0 is not \"no bound\"; give the most clones of one golden a wave may have in flight (default %d); to lift the bound, give one at least the workers the selected pools replace at once (the plan's \"at once\" per wave)", o.MaxClones, defaultMaxClones)
			}
			if err := o.Check(); err != nil {
				return err
			}
			if doApply && in.cluster.state != "" {
				return errorf("--cluster %s plans only: --apply patches a live cluster (--kubeconfig, --context, or kubectl's defaults)", in.cluster.state)
			}
			if doApply && timeout <= 0 {
				return errorf("--timeout %s: a wave needs a timeout above zero", timeout)
			}
			o.Factory = a.factory
			r, err := a.readFleet(in)
			if err != nil {
				return err
			}
			plan, err := rollout.Rollout(r.chart, r.target, r.facts, o)
			if err != nil {
				return err
			}
			if !doApply {
				output.Rollout(&a.out, plan, r.options)
				if !plan.CanStart {
					a.code = exitAttn
				}
				return nil
			}
			return a.applyRollout(cmd.Context(), r, plan, apply.Options{Timeout: timeout, Poll: poll, Factory: a.factory})
		},
	}
	in.add(cmd, "rendered")
	f := cmd.Flags()
	namespaceSelection(cmd, &o.Selection.Namespace, "only the pools of this namespace (default: every namespace)")
	selectionListFlag(cmd, &selected, "pool", "it would name no pool, and every pool of the cluster would be selected",
		"give a pool as a HelmRelease's name, its release, kubernetes-<cluster>-<pool>, or NAMESPACE/any of those, or leave --pool out for every pool",
		"only these pools: a HelmRelease's name, its release, kubernetes-<cluster>-<pool>, or NAMESPACE/any of those (repeatable, or comma-separated)")
	selectionFlag(cmd, &o.Selection.Flavor, "flavor", "", "it would name no flavor, and the pools of every flavor would be selected",
		"give SCHEMATIC/vMAJOR.MINOR.PATCH or SCHEMATIC/vMAJOR.MINOR, or leave --flavor out for every flavor",
		"only the pools that boot this flavor today, SCHEMATIC/vMAJOR.MINOR.PATCH, or SCHEMATIC/vMAJOR.MINOR for every patch of that minor")
	selectionListFlag(cmd, &o.Selection.Exclude, "exclude", "it would leave no pool out, and the pool it was meant to leave out would move",
		"give a pool as --pool names it, or leave --exclude out",
		"leave out these pools, named as --pool names them (repeatable, or comma-separated)")
	f.BoolVar(&o.Strict, "strict", false, "all or nothing: a selected pool that cannot move (refused, never deployed, release failed, ...) keeps the rollout from starting")
	f.BoolVar(&o.Selection.Behind, "behind", false, "only the pools that are behind what a new pool gets now: a newer Talos patch in the catalog, a newer chart default, a newer Kubernetes patch, another factory than the platform's; with --to-talos, also every pool older than it on its minor")
	f.StringVar(&o.Target.TalosVersion, "to-talos", "", "the Talos version to move to (each pool keeps its schematic unless --to-schematic)")
	f.StringVar(&o.Target.SchematicID, "to-schematic", "", "with --to-talos: the Image Factory schematic to move to")
	f.BoolVar(&o.Target.Defaults, "to-defaults", false, "move to the Talos version and schematic the chart gives a new pool, and to the chart's Kubernetes release of each pool's minor")
	f.BoolVar(&o.Target.Builtin, "to-builtin", false, "clone a golden of the flavor (osImage.builtin) instead of importing over HTTP")
	f.StringVar(&o.Target.FactoryURL, "to-factory", "", "import over HTTP from this Image Factory (pools that import over HTTP)")
	f.StringVar(&caFile, "factory-ca", "", "with --to-factory: a PEM `FILE` of the CA that serves the factory, written as talos.imageFactoryCA in the same change as the URL")
	f.BoolVar(&doApply, "apply", false, "patch the pools' HelmReleases and wait for them, wave by wave (default: print the plan)")
	f.IntVar(&o.WaveSize, "wave", defaultWave, "pools patched and waited for together")
	f.IntVar(&o.MaxWorkers, "max-workers", 0, "the most workers a wave replaces at once, what its pools' rolling updates replace at once added up; a pool above it alone takes the maxSurge that keeps it within (0: no bound)")
	f.IntVar(&o.MaxClones, "max-clones", defaultMaxClones, "the most worker disks of one golden a wave clones at once, what its pools' rolling updates replace at once added up; a pool above it alone takes the maxSurge that keeps it within (at least 1; a number above every pool's workers lifts it)")
	f.DurationVar(&timeout, "timeout", defaultTimeout, "how long a wave may take, from its first patch to its last pool on the target")
	f.DurationVar(&poll, "poll", 2*time.Second, "how often a wave's pools are read while it waits")
	_ = f.MarkHidden("poll")
	return cmd
}

// readCA reads --factory-ca's PEM, to the size talos.imageFactoryCA holds,
// and as X.509, as plan and pins read a CA in effect (report.CAProblems): a
// certificate whose DER does not parse, that is expired or not yet valid,
// or that is not a CA is refused, named with its problem. The chart judges
// the rest (PEM certificates only) as it judges any pool's.
func readCA(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", errorf("--factory-ca %s: %v", path, err)
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, maxCABytes+1))
	if err != nil {
		return "", errorf("--factory-ca %s: %v", path, err)
	}
	if len(text) > maxCABytes {
		return "", errorf("--factory-ca %s: more than %d bytes; talos.imageFactoryCA holds at most 64 KiB of PEM certificates: give the CA's certificates alone", path, maxCABytes)
	}
	if problems := report.CAToWriteProblems(string(text), time.Now()); len(problems) > 0 {
		return "", errorf("--factory-ca %s: %s; every pool moved would import trusting it: give the certificates of the CA that serves the factory, each a CA (CA:TRUE) valid now", path, strings.Join(problems, "; "))
	}
	return string(text), nil
}

// applyRollout prints the plan (-o json: as the plan event, the first line
// of the stream), then, when it can start, runs it, printing each event as it
// comes: the events stream to stdout (a wave can take an hour), progress
// goes to stderr on a terminal.
func (a *app) applyRollout(ctx context.Context, r *fleetRead, plan *rollout.RolloutPlan, o apply.Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var buf bytes.Buffer
	if r.options.Format == "text" {
		output.Rollout(&buf, plan, r.options)
		buf.WriteString("\n")
	} else {
		output.RolloutEvent(&buf, rollout.RolloutEvent{Time: time.Now(), Event: rollout.EventPlan, Message: "the plan", Plan: plan}, r.options)
	}
	_, _ = a.stdout.Write(buf.Bytes())
	if !plan.CanStart {
		// The plan says what blocks it; nothing is patched.
		a.code = exitAttn
		return nil
	}
	progress := a.progress()
	o.Tick = progress
	emit := func(e rollout.RolloutEvent) {
		if e.Event == rollout.EventProgress && progress != nil && r.options.Format == "text" {
			progress(e.Message)
			return
		}
		a.clearProgress()
		var line bytes.Buffer
		output.RolloutEvent(&line, e, r.options)
		_, _ = a.stdout.Write(line.Bytes())
	}
	done, err := apply.Run(ctx, r.target.Provider, plan, o, emit)
	a.clearProgress()
	if err != nil {
		return err
	}
	if !done {
		a.code = exitAttn
	}
	return nil
}
