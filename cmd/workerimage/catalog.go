package main

import (
	"fmt"

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
		reset     bool
		toApply   bool
		cluster   clusterFlags
	)
	cmd := &cobra.Command{
		Use:   "catalog [-f VALUES.yaml]...",
		Short: "What will the catalog chart do with these values against my cluster?",
		Long: `What will the catalog chart do with these values against my cluster? Renders the golden image catalog
built into this binary, as its upgrade would, against the cluster, and says for each golden whether
it creates it, keeps it, refuses to edit it (a DataVolume's spec cannot change), retires it,
refuses to retire it (something still uses it) or deletes it, which goldens of cozy-public the
values drop, and which import from another Image Factory than the one new pools are given (naming
the key that sets it), with the chart's refusals word for word; then the defaults it publishes for
new pools (ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults) beside what is published now.

-f files, layered as Helm layers them ("-" reads standard input), are read in one of three shapes,
and the report says which (valuesShape in -o json):
  the catalog's own values   what its Package holds under spec.components.kubernetes-worker-image.values
                             (images, imageFactoryURL, storageClass, storage, tenantWorkers, registries,
                             monitoring, cloneSubjects, ...)
  the catalog's Package      the whole Package cozystack.kubernetes-worker-image (apiVersion
                             cozystack.io/v1alpha1, kind Package), as adopt and rollout print it
  platform values            kubernetesWorkerImage and bundles, forwarded by the platform chart built into
                             this binary, with its own checks
Values with apiVersion and kind are a Package; with kubernetesWorkerImage or bundles, platform values;
with a key only the catalog's values take, the catalog's own; with only tenantWorkers and registries,
which both take, the shape of what the cluster runs (platform values where this repository's platform
release holds the catalog's values, the catalog's own otherwise). Keys of both shapes at once, or a
key neither takes, are refused (exit 2), naming the key and the nearest one.

A catalog change is a change to what is there: the files merge over the catalog values the cluster
holds (its Package's, or those the platform's release forwards) as helm upgrade --reuse-values -f
merges them, maps key by key, a list replaced whole, null deleting a key; --reset-values previews the
files alone, as Helm's flag. A whole Package merges over nothing: it is applied as it is. Each default
the catalog publishes for new pools (tenantWorkers.talos.*, tenantWorkers.osImage, a registries.mirrors
host, a registries.config host's CA, monitoring) and each images[] entry the result removes from the
cluster's values is said on its own line ("removes"): a warning, not a refusal (exit 0), since removing
one may be the change meant; what the upgrade refuses is exit 1 as ever.

The report ends with what to apply where the cluster's catalog values are written: the catalog's
Package whole, holding exactly the values previewed (kubectl apply -f FILE), or, where this
repository's platform release is installed, the platform's values whole with the files layered over
them (helm upgrade). Without -f, the values the cluster's catalog Package holds now: a check of what
is deployed against today's cluster. --to-apply prints only that Package (or those platform values),
with nothing else, to pipe into kubectl apply -f - (or save for helm upgrade -f); where the catalog
refuses the values it prints nothing to stdout, the refusal to stderr, and exits 1.`,
		Example: a.example(
			"catalog -f examples/stock-cozystack/catalog-values.yaml --cluster cmd/workerimage/testdata/stock/cluster.yaml",
			"catalog -f examples/platform/closed-network.yaml --cluster examples/cluster-state.yaml",
			"catalog -f package.yaml --kubeconfig ~/.kube/management.yaml",
			"catalog -f talos-fix.yaml --to-apply | kubectl apply -f -"),
		Annotations: map[string]string{"exitCodes": exitCodes("the catalog renders", "the catalog (or the platform chart) refuses the values: the upgrade would fail", "bad input (a key neither shape takes, keys of two shapes, an object that is not the catalog's Package, a CA it would publish or write that is not CA certificates by X.509), an unreachable cluster")},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := a.options(format)
			if err != nil {
				return err
			}
			if namespace != golden.Namespace {
				return errorf("-n %s: the catalog is the release kubernetes-worker-image in %s, where its goldens live, and it installs into no other namespace (pools of every namespace clone from there); leave out -n, or give -n %s", namespace, golden.Namespace, golden.Namespace)
			}
			if reset && len(values) == 0 {
				return errorf("--reset-values previews the -f files alone: give the values with -f (without -f, catalog previews the values the cluster's Package holds)")
			}
			var files map[string]any
			if len(values) > 0 {
				if files, err = report.ReadValuesFiles(values, a.stdin); err != nil {
					return err
				}
			}
			t, err := a.connect(cluster, true)
			if err != nil {
				return err
			}
			var rep *report.CatalogReport
			if files != nil {
				rep, err = report.CatalogFromFiles(t, files, values, reset)
			} else {
				rep, err = report.CatalogFromCluster(t)
			}
			if err != nil {
				return err
			}
			if toApply {
				return a.catalogToApply(rep)
			}
			output.Catalog(&a.out, rep, o)
			if rep.Refused() {
				a.code = exitAttn
			}
			return nil
		},
	}
	valuesFlag(cmd, &values, `the catalog's own values, its Package, or platform values, as helm's -f: repeatable, layered in order ("-" reads standard input); default: the values of the cluster's catalog Package`)
	cmd.Flags().BoolVar(&reset, "reset-values", false, "preview the -f files alone, as helm upgrade --reset-values, instead of merged over the catalog values the cluster holds (--reuse-values)")
	cmd.Flags().BoolVar(&toApply, "to-apply", false, "print only what to apply, the catalog's Package whole (kubectl apply -f -) or the platform's values whole (helm upgrade -f), instead of the report")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", golden.Namespace, "the catalog release's namespace, as helm -n names it: "+golden.Namespace+", the only one it installs into")
	cluster.add(cmd, "kubeconfig of a live cluster (default: KUBECONFIG, ~/.kube/config, or in a pod its service account)")
	outputFlag(cmd, &format)
	return cmd
}

// catalogToApply prints what the report ends with, alone: the Package or
// the platform values to apply. A refused render prints nothing there (a
// pipe into kubectl applies nothing) and says why on stderr.
func (a *app) catalogToApply(rep *report.CatalogReport) error {
	if rep.Refused() {
		fmt.Fprintf(a.stderr, "the catalog refuses these values, so there is nothing to apply: %s\n", output.TermSafe(rep.Refusal+rep.SchemaRefusal))
		a.code = exitAttn
		return nil
	}
	if !output.CatalogToApply(&a.out, rep) {
		return errorf("nothing to apply: %s", output.TermSafe(rep.ChangeNote))
	}
	return nil
}
