package main

import (
	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/spf13/cobra"
)

func (a *app) rollcheckCommand() *cobra.Command {
	var (
		base, head, release, namespace, format string
		values, artifacts                      []string
		cluster                                clusterFlags
		registry                               report.RegistryOptions
	)
	cmd := &cobra.Command{
		Use:   "rollcheck [HEAD_CHART] [--base BASE_CHART] [-f POOLS]...",
		Short: "Will upgrading to this chart roll my workers?",
		Long: `Will upgrading to this chart roll my workers? Renders every pool with the head chart (HEAD_CHART or
--head: a chart folder, a packaged chart .tgz as helm package builds it, a checkout of this
repository, or a chart in an OCI registry, oci://HOST/PATH/kubernetes-nodes:VERSION, pulled as helm
pull does) and compares its KubevirtMachineTemplate with the one it has now:

- without --base, the template each pool's MachineDeployment runs on the cluster (read from a live
  cluster or a state file): "will upgrading to this chart roll my workers";
- with --base (a chart in the same forms), the template the base chart renders.

The pools are the cluster's (found and valued as Flux deploys them; -n keeps one namespace), or
the -f files: each a glob, each file it matches one pool, released as plan names it. A template
name that changes rolls that pool; the first differing lines of its body are shown. A pool both
sides refuse is reported, and does not fail the check.`,
		Example: a.example(
			"rollcheck packages/apps/kubernetes-nodes --cluster cmd/workerimage/testdata/rollcheck/deployed.yaml",
			"rollcheck kubernetes-nodes-0.2.0.tgz --kubeconfig ~/.kube/management.yaml",
			"rollcheck oci://registry.internal/charts/kubernetes-nodes:0.2.0 --kubeconfig ~/.kube/management.yaml",
			"rollcheck --base . --head ../next -f 'examples/pools/*.yaml' --cluster examples/cluster-state.yaml"),
		Annotations: map[string]string{"exitCodes": exitCodes("no pool rolls", "a pool rolls, the head chart refuses one the base renders (or that runs), or a pool could not be checked", "bad input")},
		Args:        cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if head != "" {
					return errorf("the head chart is given twice (%s and --head %s): give one", args[0], head)
				}
				head = args[0]
			}
			o, err := a.options(format)
			if err != nil {
				return err
			}
			clusterGiven := (cluster.state != "" && cluster.state != noCluster) || cluster.kube.given() || kubeconfigFound()
			fromCluster := len(values) == 0
			switch {
			case head == "":
				return errorf("give the head chart: rollcheck HEAD_CHART (a chart folder, a .tgz, a checkout, or oci://...), or --head")
			case base != "" && fromCluster && !clusterGiven:
				return errorf("--base and --head are given: give -f pool values files, or a cluster (--cluster, --kubeconfig, --context) to read the pools from")
			case fromCluster && release != "":
				return errorf("--release applies to -f files; a cluster's pools are installed as their HelmReleases say")
			}
			headChart, headName, err := report.ChartAt(head, registry)
			if err != nil {
				return err
			}
			var pools []report.RollInput
			if !fromCluster {
				if pools, err = report.RollInputsFromFiles(values, release, namespace); err != nil {
					return err
				}
			}
			// Against what runs, or the pools a cluster holds, a cluster is
			// needed; two charts compare -f pools without one.
			t, err := a.connect(cluster, base == "" || fromCluster)
			if err != nil {
				return err
			}
			if fromCluster {
				if pools, err = report.RollInputsFromCluster(t, fleet.Options{Chart: headChart.Metadata.Name, Artifacts: artifacts}, namespace); err != nil {
					return err
				}
			}
			var rep report.RollReport
			if base == "" {
				rep, err = report.RollcheckDeployed(headChart, t, headName, pools)
			} else {
				baseChart, baseName, baseErr := report.ChartAt(base, registry)
				if baseErr != nil {
					return baseErr
				}
				rep, err = report.Rollcheck(baseChart, headChart, t, baseName, headName, pools)
			}
			if err != nil {
				return err
			}
			output.Rollcheck(&a.out, rep, o)
			if rep.Attention() {
				a.code = exitAttn
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&head, "head", "", "the chart to upgrade to: a chart folder, a .tgz, a checkout of this repository, or oci://HOST/PATH/NAME:VERSION (or give it as the argument)")
	cmd.Flags().StringVar(&base, "base", "", "the chart to compare with, in the same forms (default: what each pool runs on the cluster)")
	valuesFlag(cmd, &values, "pool values files, a glob each (quoted), each file one pool (default: every pool of the cluster, with its values as Flux computes them)")
	cmd.Flags().StringVar(&release, "release", "", "release name for every -f pool (default kubernetes-nodes-<cluster>-<values file name>)")
	namespaceSelection(cmd, &namespace, "with -f: the release namespace of every pool (default tenant-<cluster>); with a cluster: check only the pools of this namespace")
	cluster.add(cmd, "kubeconfig of a live cluster (default: KUBECONFIG, ~/.kube/config, or in a pod its service account; with --base and none of them, a preview)")
	previewFlag(cmd)
	artifactFlag(cmd, &artifacts, "with a cluster and no -f: a chart source, KIND/NAMESPACE/NAME or NAMESPACE/NAME, that holds the pool chart besides the one the ApplicationDefinition kubernetes-nodes names (repeatable)")
	registryFlags(cmd, &registry)
	outputFlag(cmd, &format)
	return cmd
}
