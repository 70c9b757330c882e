package main

import (
	"bytes"
	"fmt"

	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
)

func (a app) plan(args []string, out *bytes.Buffer) (int, error) {
	fs := newFlags("plan")
	values := fs.String("values", "", "pool values file (YAML)")
	release := fs.String("release", "", "release name (default kubernetes-nodes-<cluster>-<values file name>)")
	namespace := fs.String("namespace", "", "release namespace (default tenant-<cluster>)")
	state, kube := clusterFlags(fs, "kubeconfig of a live cluster")
	chartDir := fs.String("chart", "", "pool chart folder (default: the "+render.PoolChart+" built into this binary)")
	format := fs.String("o", "text", "output: text, yaml or json")
	if err := parseFlags(fs, args); err != nil {
		return 0, err
	}
	if *values == "" {
		return 0, fmt.Errorf("-values is required")
	}
	if err := oneOf("o", *format, "text", "yaml", "json"); err != nil {
		return 0, err
	}
	vals, err := report.ReadValues(*values)
	if err != nil {
		return 0, err
	}
	chrt, err := report.LoadPoolChart(*chartDir)
	if err != nil {
		return 0, err
	}
	t, err := a.connect(*state, *kube, false)
	if err != nil {
		return 0, err
	}
	rel := report.ReleaseFor(*values, vals, *release, *namespace)
	rep, manifest, err := report.Plan(chrt, t, rel, vals)
	if err != nil {
		return 0, err
	}
	if *release == "" {
		rep.ReleaseHint = report.ReleaseHint(*values, vals)
	}
	output.Plan(out, rep, manifest, *format)
	if rep.Result != "renders" {
		return exitAttn, nil
	}
	return exitOK, nil
}
