package main

import (
	"bytes"
	"fmt"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"helm.sh/helm/v3/pkg/chart"
)

func (a app) pins(args []string, out *bytes.Buffer) (int, error) {
	in, err := a.readFleet("pins", "resolved", args)
	if err != nil {
		return 0, err
	}
	rep := report.Pins(in.facts, in.target.Desc, in.chart.Metadata.Name)
	output.Pins(out, &rep, in.format)
	if why := rep.WhyNotConcluded(); why != "" {
		fmt.Fprintf(a.stderr, "workerimage pins: %s\n", output.TermSafe(why))
		return exitProblem, nil
	}
	return exitOK, nil
}

// fleetRead is what pins and adopt read: the pool chart, the cluster and
// what it holds, and the output format asked for.
type fleetRead struct {
	chart  *chart.Chart
	target report.Target
	facts  *report.PinsFacts
	format string
}

// readFleet parses the flags pins and adopt share and reads the cluster;
// poolsAre says what the chart does with the pools, for -chart's help.
func (a app) readFleet(verb, poolsAre string, args []string) (*fleetRead, error) {
	fs := newFlags(verb)
	state, kube := clusterFlags(fs, "kubeconfig of a live cluster (default: KUBECONFIG, ~/.kube/config, or in a pod its service account)")
	var artifacts stringList
	fs.Var(&artifacts, "artifact", "a chartRef name, NAME or NAMESPACE/NAME, that is the pool chart although it does not end in the chart's name (repeatable)")
	chartDir := fs.String("chart", "", "pool chart folder the pools are "+poolsAre+" with (default: the "+render.PoolChart+" built into this binary)")
	format := fs.String("o", "text", "output: text or json")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if err := oneOf("o", *format, "text", "json"); err != nil {
		return nil, err
	}
	chrt, err := report.LoadPoolChart(*chartDir)
	if err != nil {
		return nil, err
	}
	t, err := a.connect(*state, *kube, true)
	if err != nil {
		return nil, err
	}
	facts, err := report.ReadPins(chrt, t, fleet.Options{Chart: chrt.Metadata.Name, Artifacts: artifacts})
	if err != nil {
		return nil, err
	}
	return &fleetRead{chart: chrt, target: t, facts: facts, format: *format}, nil
}
