package main

import (
	"bytes"
	"fmt"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
)

func (a app) rollcheck(args []string, out *bytes.Buffer) (int, error) {
	fs := newFlags("rollcheck")
	base := fs.String("base", "", "checkout of the chart's current version (its "+render.PoolChart+" is rendered)")
	head := fs.String("head", "", "checkout of the chart's next version")
	glob := fs.String("values", "", "pool values files (a glob, quoted); without it, every pool of the cluster, with its values as Flux computes them")
	state, kube := clusterFlags(fs, "kubeconfig of a live cluster (optional)")
	var artifacts stringList
	fs.Var(&artifacts, "artifact", "with a cluster and no -values: a chartRef name, NAME or NAMESPACE/NAME, that is the pool chart (repeatable)")
	release := fs.String("release", "", "release name for every pool (default kubernetes-nodes-<cluster>-<values file name>)")
	namespace := fs.String("namespace", "", "release namespace for every pool (default tenant-<cluster>)")
	format := fs.String("o", "text", "output: text or json")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	fromCluster := *glob == "" && (*state != "" || kube.given())
	if *base == "" || *head == "" || (*glob == "" && !fromCluster) {
		return 0, fmt.Errorf("-base and -head are required, and -values or a cluster (-cluster, -kubeconfig, -context) to read the pools from")
	}
	if fromCluster && (*release != "" || *namespace != "") {
		return 0, fmt.Errorf("-release and -namespace apply to -values files; a cluster's pools are installed as their HelmReleases say")
	}
	if err := oneOf("o", *format, "text", "json"); err != nil {
		return 0, err
	}
	baseChart, err := report.ChartAt(*base)
	if err != nil {
		return 0, err
	}
	headChart, err := report.ChartAt(*head)
	if err != nil {
		return 0, err
	}
	var pools []report.RollInput
	if !fromCluster {
		if pools, err = report.RollInputsFromFiles(*glob, *release, *namespace); err != nil {
			return 0, err
		}
	}
	t, err := a.connect(*state, *kube, false)
	if err != nil {
		return 0, err
	}
	if fromCluster {
		if pools, err = report.RollInputsFromCluster(t, fleet.Options{Chart: headChart.Metadata.Name, Artifacts: artifacts}); err != nil {
			return 0, err
		}
	}

	rep, err := report.Rollcheck(baseChart, headChart, t, *base, *head, pools)
	if err != nil {
		return 0, err
	}
	output.Rollcheck(out, rep, *format)
	if rep.Attention() {
		return exitAttn, nil
	}
	return exitOK, nil
}
