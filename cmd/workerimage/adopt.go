package main

import (
	"bytes"

	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/report"
)

func (a app) adopt(args []string, out *bytes.Buffer) (int, error) {
	in, err := a.readFleet("adopt", "rendered", args)
	if err != nil {
		return 0, err
	}
	rep, err := report.Adopt(in.chart, in.target, in.facts)
	if err != nil {
		return 0, err
	}
	output.Adopt(out, rep, in.format)
	return exitOK, nil
}
