package main

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cozystack/golden-worker-images/internal/apply"
	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/spf13/cobra"
)

// Defaults of rollout's --wave and --timeout.
const (
	defaultWave    = 5
	defaultTimeout = 30 * time.Minute
)

func (a *app) rolloutCommand() *cobra.Command {
	var (
		in       fleetFlags
		o        report.RolloutOptions
		doApply  bool
		timeout  time.Duration
		poll     time.Duration
		selected []string
	)
	cmd := &cobra.Command{
		Use:   "rollout (--to-talos VERSION [--to-schematic ID] | --to-defaults | --to-builtin | --to-factory URL) [-n NS] [--pool NAME]... [--flavor SCHEMATIC/VERSION] [--behind] [--apply]",
		Short: "Move chosen pools to a new Talos, the chart's defaults, a golden or a factory, in watched waves",
		Long: `Moves chosen pools to a target, wave by wave: a Talos version (--to-talos, with --to-schematic to
change the schematic too), the chart's Talos defaults for new pools (--to-defaults), cloning a golden
(--to-builtin, what adopt proposes), or importing from another Image Factory (--to-factory, for pools
that import over HTTP). Parts combine: --to-builtin --to-talos v1.13.7 switches and moves at once.

The pools are the cluster's, found and valued as Flux deploys them; -n, --pool, --flavor and --behind
keep those every one of them keeps. Each is rendered by the chart against the cluster as it is and with
its values changed at the field its flavor came from; without --apply the plan is printed per wave:
each pool's values change, its old and new template names, the workers it replaces, the clones in
flight and the storage they take in cozy-public. It will not start while a selected pool is not
resolved or refused at the target, or its target golden is absent or not Succeeded on its class
(the catalog entry to add is printed, as adopt prints it).

With --apply it patches each pool's HelmRelease spec.values (never a valuesFrom Secret; a pool
installed without a HelmRelease is refused), --wave pools at a time, and before the next wave waits
until each HelmRelease is Ready at its new generation and each MachineDeployment runs the new template
with every worker updated and ready (at zero workers: the template named), within --timeout. It stops
at the first pool that fails or times out, saying which and why; run again, it skips the pools on the
target and waits for those still rolling: all it knows is read from the cluster. Progress shows on
stderr on a terminal; otherwise each event is one line, and -o json writes each as one JSON object
per line.`,
		Example: a.example(
			"rollout --to-talos v1.13.7 --cluster examples/cluster-state.yaml -n tenant-acme",
			"rollout --to-talos v1.13.7 --flavor ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.6 --wave 10 --apply",
			"rollout --to-factory https://factory.mirror.internal --behind --apply -o json"),
		Annotations: map[string]string{"exitCodes": exitCodes(
			"the plan can start (without --apply), or every selected pool is on the target (with --apply)",
			"the rollout will not start (a selected pool is blocked), or it stopped: a pool failed, a wave timed out, or it was interrupted",
			"bad input (no target, a --pool that names no pool, a target the chart refuses, --apply with --cluster), an unreachable cluster, or no pool readable while pool objects exist")},
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Selection.Pools = selected
			if err := o.Check(); err != nil {
				return err
			}
			if doApply && in.cluster.state != "" {
				return errorf("--cluster %s plans only: --apply patches a live cluster (--kubeconfig, --context, or kubectl's defaults)", in.cluster.state)
			}
			if doApply && timeout <= 0 {
				return errorf("--timeout %s: a wave needs a timeout above zero", timeout)
			}
			r, err := a.readFleet(in)
			if err != nil {
				return err
			}
			plan, err := report.Rollout(r.chart, r.target, r.facts, o)
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
			return a.applyRollout(cmd.Context(), r, plan, apply.Options{Timeout: timeout, Poll: poll})
		},
	}
	in.add(cmd, "rendered")
	f := cmd.Flags()
	f.StringVarP(&o.Selection.Namespace, "namespace", "n", "", "only the pools of this namespace (default: every namespace)")
	f.StringSliceVar(&selected, "pool", nil, "only these pools: a HelmRelease's name, its release, kubernetes-<cluster>-<pool>, or NAMESPACE/any of those (repeatable, or comma-separated)")
	f.StringVar(&o.Selection.Flavor, "flavor", "", "only the pools that boot this flavor today, SCHEMATIC/VERSION")
	f.BoolVar(&o.Selection.Behind, "behind", false, "only the pools that are behind what a new pool gets now: a newer Talos patch in the catalog, a newer chart default, a newer Kubernetes patch, another factory than the platform's")
	f.StringVar(&o.Target.TalosVersion, "to-talos", "", "the Talos version to move to (each pool keeps its schematic unless --to-schematic)")
	f.StringVar(&o.Target.SchematicID, "to-schematic", "", "with --to-talos: the Image Factory schematic to move to")
	f.BoolVar(&o.Target.Defaults, "to-defaults", false, "move to the Talos version and schematic the chart gives a new pool, and to the chart's Kubernetes release of each pool's minor")
	f.BoolVar(&o.Target.Builtin, "to-builtin", false, "clone a golden of the flavor (osImage.builtin) instead of importing over HTTP")
	f.StringVar(&o.Target.FactoryURL, "to-factory", "", "import over HTTP from this Image Factory (pools that import over HTTP)")
	f.BoolVar(&doApply, "apply", false, "patch the pools' HelmReleases and wait for them, wave by wave (default: print the plan)")
	f.IntVar(&o.WaveSize, "wave", defaultWave, "pools patched and waited for together")
	f.DurationVar(&timeout, "timeout", defaultTimeout, "how long a wave may take, from its first patch to its last pool on the target")
	f.DurationVar(&poll, "poll", 2*time.Second, "how often a wave's pools are read while it waits")
	_ = f.MarkHidden("poll")
	return cmd
}

// applyRollout prints the plan (-o json: as the plan event, the first line
// of the stream), then, when it can start, runs it, printing each event as it
// comes: the events stream to stdout (a wave can take an hour), progress
// goes to stderr on a terminal.
func (a *app) applyRollout(ctx context.Context, r *fleetRead, plan *report.RolloutPlan, o apply.Options) error {
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
		output.RolloutEvent(&buf, report.RolloutEvent{Time: time.Now(), Event: report.EventPlan, Message: "the plan", Plan: plan}, r.options)
	}
	_, _ = a.stdout.Write(buf.Bytes())
	if !plan.CanStart {
		// The plan says what blocks it; nothing is patched.
		a.code = exitAttn
		return nil
	}
	progress := a.progress()
	o.Tick = progress
	emit := func(e report.RolloutEvent) {
		if e.Event == report.EventProgress && progress != nil && r.options.Format == "text" {
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
