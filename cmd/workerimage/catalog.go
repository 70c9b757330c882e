package main

import (
	"strings"

	"github.com/cozystack/golden-worker-images/internal/golden"
	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/spf13/cobra"
)

func (a *app) catalogCommand() *cobra.Command {
	var (
		values    []string
		format    string
		namespace string
		cluster   clusterFlags
	)
	cmd := &cobra.Command{
		Use:   "catalog [-f PLATFORM_VALUES.yaml]...",
		Short: "What will the catalog chart do with these values against my cluster?",
		Long: `What will the catalog chart do with these values against my cluster? Renders the golden image catalog
built into this binary, as the platform's upgrade would, against the cluster, and says for each
golden whether it creates it, keeps it, refuses to edit it (a DataVolume's spec cannot change),
retires it, refuses to retire it (something still uses it) or deletes it, and which goldens of
cozy-public the values drop, with the chart's refusals word for word.

The values are the platform's: -f files of the platform chart's values (its kubernetesWorkerImage
section is what reaches the catalog), layered as Helm layers them ("-" reads standard input) and
forwarded by the platform chart built into this binary, with its own checks. Without -f, the
values the cluster's catalog Package holds now (a check of what is deployed against today's
cluster). A catalog values file of its own goes under kubernetesWorkerImage: in a platform values file.`,
		Example: a.example(
			"catalog -f examples/platform/closed-network.yaml --cluster examples/cluster-state.yaml",
			"catalog -f platform-values.yaml --kubeconfig ~/.kube/management.yaml"),
		Annotations: map[string]string{"exitCodes": exitCodes("the catalog renders", "the catalog (or the platform chart) refuses the values: the upgrade would fail", "bad input, an unreachable cluster")},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := a.options(format)
			if err != nil {
				return err
			}
			if namespace != golden.Namespace {
				return errorf("-n %s: the catalog is the release kubernetes-worker-image in %s, where its goldens live, and it installs into no other namespace (pools of every namespace clone from there); leave out -n, or give -n %s", namespace, golden.Namespace, golden.Namespace)
			}
			var platform map[string]any
			if len(values) > 0 {
				if platform, err = report.ReadValuesFiles(values, a.stdin); err != nil {
					return err
				}
			}
			t, err := a.connect(cluster, true)
			if err != nil {
				return err
			}
			var rep *report.CatalogReport
			if platform != nil {
				vals, enabled, refused, err := report.CatalogValuesFromPlatform(platform)
				switch {
				case err != nil:
					return err
				case refused != nil:
					rep = refused
					rep.Cluster, rep.ValuesFrom = t.Desc, "platform values "+strings.Join(values, ", ")
				default:
					from := "platform values " + strings.Join(values, ", ") + " (their kubernetesWorkerImage, as the platform chart forwards it to the catalog)"
					if rep, err = report.CatalogPreview(t, vals, from); err != nil {
						return err
					}
					rep.Enabled = &enabled
					if err := rep.WithPlatformValues(t, platform); err != nil {
						return err
					}
				}
			} else {
				vals, from, err := report.CatalogValuesFromCluster(t)
				if err != nil {
					return err
				}
				if rep, err = report.CatalogPreview(t, vals, from); err != nil {
					return err
				}
			}
			output.Catalog(&a.out, rep, o)
			if rep.Refused() {
				a.code = exitAttn
			}
			return nil
		},
	}
	valuesFlag(cmd, &values, `platform values file, as helm's -f: repeatable, layered in order ("-" reads standard input); default: the values of the cluster's catalog Package`)
	cmd.Flags().StringVarP(&namespace, "namespace", "n", golden.Namespace, "the catalog release's namespace, as helm -n names it: "+golden.Namespace+", the only one it installs into")
	cluster.add(cmd, "kubeconfig of a live cluster (default: KUBECONFIG, ~/.kube/config, or in a pod its service account)")
	outputFlag(cmd, &format)
	return cmd
}
