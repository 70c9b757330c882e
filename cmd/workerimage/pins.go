package main

import (
	"fmt"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/spf13/cobra"
	"helm.sh/helm/v3/pkg/chart"
)

func (a *app) pinsCommand() *cobra.Command {
	var tree bool
	in := fleetFlags{}
	cmd := &cobra.Command{
		Use:   "pins [GOLDEN]",
		Short: "Can I delete this golden?",
		Long: `Can I delete this golden? Lists every golden in cozy-public (or only GOLDEN) with the pools whose
values resolve to it, the disks and KubevirtMachineTemplates that use it, where it was imported
from, and which goldens nothing uses (safe to delete, as the catalog chart's own retirement rule
decides), with the steps that delete one for good: through its catalog entry (retire: true, then
dropping it), since Helm would create again a golden its release still lists. --tree draws the
goldens, their pools and disks as a tree.`,
		Example: a.example(
			"pins --cluster examples/cluster-state.yaml",
			"pins talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.5 --cluster examples/cluster-state.yaml",
			"pins --tree --kubeconfig ~/.kube/management.yaml"),
		Annotations: map[string]string{"exitCodes": exitCodes("the report was made", "GOLDEN is not created yet: a catalog entry names it, cozy-public does not hold it (the answer names the entry)", "bad input, an unreachable cluster, a GOLDEN nothing knows, or a namespace holding pool objects none of whose pools is readable (it will not conclude; the report is still printed)")},
		Args:        cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if tree && in.format != "text" {
				return errorf("--tree draws the text report; -o %s holds the same goldens, pools and disks as data", in.format)
			}
			r, err := a.readFleet(in)
			if err != nil {
				return err
			}
			if err := r.facts.CheckNamespace(in.namespace); err != nil {
				return err
			}
			rep := report.Pins(r.facts, r.target.Desc, r.chart.Metadata.Name)
			// Where the catalog's values are written is read only when a
			// golden's delete steps go through them.
			if rep.HasGoldensToDelete() {
				home, err := report.ReadCatalogHome(r.target)
				if err != nil {
					return err
				}
				if err := report.WithDeleteSteps(&rep, home, r.facts); err != nil {
					return err
				}
			}
			if len(args) == 1 {
				one, err := report.OneGolden(rep, args[0])
				if err != nil {
					// A golden a catalog entry names and cozy-public does not
					// hold yet is no mistake: it is on its way.
					nc, ncErr := report.CatalogEntryFor(r.target, args[0])
					if ncErr != nil || nc == nil {
						return err
					}
					output.NotCreated(&a.out, nc, r.options)
					a.code = exitAttn
					return nil
				}
				rep = one
			}
			rep = report.PinsInNamespace(rep, in.namespace)
			output.Pins(&a.out, &rep, r.options, tree)
			// The report stands, but no golden it leaves unused is safe
			// while a namespace's pools could not be read.
			if why := rep.WhyNotConcluded(); why != "" {
				fmt.Fprintf(a.stderr, "%s: %s\n", cmd.CommandPath(), output.TermSafe(why))
				a.code = exitProblem
			}
			return nil
		},
	}
	in.add(cmd, "resolved")
	in.namespaceFlag(cmd, "only the pools and disks of this namespace, under every golden cozy-public holds (whether a golden is safe to delete stays the whole cluster's answer)")
	cmd.Flags().BoolVar(&tree, "tree", false, "draw the goldens, the pools that use each and their disks as a tree")
	return cmd
}

// fleetFlags are the flags pins and adopt share.
type fleetFlags struct {
	cluster   clusterFlags
	artifacts []string
	chartDir  string
	format    string
	namespace string
	// toPlan: the command plans most pools as they are (rollout), so the
	// pools are read with the render its plan reuses (report.ReadPinsToPlan).
	// adopt plans only the pools that import over HTTP: rendering every pool
	// whole for them would cost more than it saves.
	toPlan bool
}

// namespaceFlag adds -n/--namespace, which keeps one namespace's pools.
func (f *fleetFlags) namespaceFlag(cmd *cobra.Command, help string) {
	namespaceSelection(cmd, &f.namespace, help+"; a namespace with no pool is bad input")
}

// add adds them; poolsAre says what the chart does with the pools, for
// --chart's help.
func (f *fleetFlags) add(cmd *cobra.Command, poolsAre string) {
	f.cluster.add(cmd, "kubeconfig of a live cluster (default: KUBECONFIG, ~/.kube/config, or in a pod its service account)")
	artifactFlag(cmd, &f.artifacts, "a chart source, KIND/NAMESPACE/NAME or NAMESPACE/NAME, that holds the pool chart besides the one the ApplicationDefinition kubernetes-nodes names (repeatable)")
	cmd.Flags().StringVar(&f.chartDir, "chart", "", "pool chart folder the pools are "+poolsAre+" with (default: the "+render.PoolChart+" built into this binary)")
	_ = cmd.MarkFlagDirname("chart")
	outputFlag(cmd, &f.format)
}

// fleetRead is what pins and adopt read: the pool chart, the cluster and
// what it holds, and the output options asked for.
type fleetRead struct {
	chart   *chart.Chart
	target  report.Target
	facts   *report.PinsFacts
	options output.Options
}

// readFleet reads the cluster as pins and adopt do.
func (a *app) readFleet(f fleetFlags) (*fleetRead, error) {
	o, err := a.options(f.format)
	if err != nil {
		return nil, err
	}
	chrt, err := report.LoadPoolChart(f.chartDir)
	if err != nil {
		return nil, err
	}
	if f.chartDir != "" {
		if err := report.CheckPoolChartFacts(chrt, f.chartDir); err != nil {
			return nil, err
		}
	}
	t, err := a.connect(f.cluster, true)
	if err != nil {
		return nil, err
	}
	read := report.ReadPins
	if f.toPlan {
		read = report.ReadPinsToPlan
	}
	facts, err := read(chrt, t, fleet.Options{Chart: chrt.Metadata.Name, Artifacts: f.artifacts})
	if err != nil {
		return nil, err
	}
	return &fleetRead{chart: chrt, target: t, facts: facts, options: o}, nil
}
