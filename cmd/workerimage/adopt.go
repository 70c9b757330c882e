package main

import (
	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/spf13/cobra"
)

func (a *app) adoptCommand() *cobra.Command {
	in := fleetFlags{}
	cmd := &cobra.Command{
		Use:   "adopt",
		Short: "Which pools still import over HTTP, and what would moving them to goldens take?",
		Long: `Which pools still import over HTTP, and what would moving them to goldens take? For each HTTP pool,
renders the chart with osImage.builtin against the same cluster and reports the outcome (ready,
needs a catalog entry or a per-class golden, importing, refused), the catalog values to paste,
each pool's values change, the template names (each switch rolls that pool once), and what the
switches save: HTTP downloads of the image not made, less one per golden to add.`,
		Example:     a.example("adopt --cluster examples/cluster-state.yaml", "adopt --kubeconfig ~/.kube/management.yaml -o yaml"),
		Annotations: map[string]string{"exitCodes": exitCodes("the report was made", "", "bad input, an unreachable cluster, or no pool readable while pool objects exist")},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := a.readFleet(in)
			if err != nil {
				return err
			}
			facts, err := r.facts.InNamespace(in.namespace)
			if err != nil {
				return err
			}
			rep, err := report.Adopt(r.chart, r.target, facts)
			if err != nil {
				return err
			}
			output.Adopt(&a.out, rep, r.options)
			return nil
		},
	}
	in.add(cmd, "rendered")
	in.namespaceFlag(cmd, "only the pools of this namespace: their outcomes, the catalog entries they need and what moving them saves")
	return cmd
}
