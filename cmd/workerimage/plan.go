package main

import (
	"strings"
	"time"

	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/spf13/cobra"
)

func (a *app) planCommand() *cobra.Command {
	var (
		values                    []string
		release, namespace, chart string
		format                    string
		manifests                 bool
		cluster                   clusterFlags
	)
	cmd := &cobra.Command{
		Use:   "plan [POOL.yaml] [-f VALUES.yaml]...",
		Short: "What will this pool do against my cluster?",
		Long: `What will this pool do against my cluster? Renders the pool chart with the pool's values against a
cluster-state file, a live cluster (found as kubectl finds it), or no cluster (--cluster none, or
no kubeconfig at all: a preview, every lookup answers empty, so the golden and clone checks are
not run), and reports the disk source, the golden, the clone checks
and the KubevirtMachineTemplate name.

The values are POOL.yaml and the -f files, layered in that order as Helm layers its -f files (a
later file's keys win, maps merge key by key); "-" reads standard input. The release name defaults
to kubernetes-nodes-<cluster>-<pool>, the pool taken from the first values file's name (a name such
as my_pool.yaml, or values from standard input, need --release).`,
		Example: a.example(
			"plan examples/pools/golden.yaml --cluster examples/cluster-state.yaml",
			"plan -f examples/pools/golden.yaml -f overrides.yaml -n tenant-acme --kubeconfig ~/.kube/config",
			"plan -f examples/pools/golden.yaml --cluster none --manifests   # the objects, as helm template prints them"),
		Annotations: map[string]string{"exitCodes": exitCodes("the pool renders", "the chart refuses the pool (the result line says why and what to write)", "bad input: a missing or unreadable file, unknown flag, unreachable cluster, a CA in the values that is not CA certificates by X.509")},
		Args:        cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files := append(append([]string{}, args...), values...)
			o, err := a.options(format)
			if err != nil {
				return err
			}
			if manifests && format != "text" {
				return errorf("--manifests prints the rendered objects as YAML already; leave out -o %s", format)
			}
			vals, err := report.ReadValuesFiles(files, a.stdin)
			if err != nil {
				return err
			}
			if err := report.PoolCAsToWrite(vals, strings.Join(files, ", "), time.Now()); err != nil {
				return err
			}
			chrt, err := report.LoadPoolChart(chart)
			if err != nil {
				return err
			}
			if chart != "" {
				if err := report.CheckPoolChartFacts(chrt, chart); err != nil {
					return err
				}
			}
			t, err := a.connect(cluster, false)
			if err != nil {
				return err
			}
			poolFile := report.PoolFile(files)
			rel := report.ReleaseFor(poolFile, vals, release, namespace)
			rep, manifest, err := report.Plan(chrt, t, rel, vals)
			if err != nil {
				return err
			}
			if release == "" {
				rep.ReleaseHint = report.ReleaseHint(poolFile, vals)
			}
			if manifests {
				output.Manifests(&a.out, rep, manifest)
			} else {
				output.Plan(&a.out, rep, o)
			}
			if rep.Result != "renders" {
				a.code = exitAttn
			}
			return nil
		},
	}
	valuesFlag(cmd, &values, `pool values file, as helm's -f: repeatable, layered in order after POOL.yaml ("-" reads standard input)`)
	cmd.Flags().StringVar(&release, "release", "", "release name (default kubernetes-nodes-<cluster>-<first values file's name>)")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "release namespace (default tenant-<cluster>)")
	cluster.add(cmd, "kubeconfig of a live cluster (default: KUBECONFIG, ~/.kube/config, or in a pod its service account; with none of them, a preview)")
	previewFlag(cmd)
	cmd.Flags().StringVar(&chart, "chart", "", "pool chart folder (default: the "+render.PoolChart+" built into this binary)")
	_ = cmd.MarkFlagDirname("chart")
	outputFlag(cmd, &format)
	cmd.Flags().BoolVar(&manifests, "manifests", false, "print the objects the pool renders, as helm template does, instead of the report")
	return cmd
}
