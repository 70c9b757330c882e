package main

import (
	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/spf13/cobra"
)

func (a *app) versionCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Which binary is this, and which charts does it carry?",
		Long: `Which binary is this, and which charts does it carry? Prints the binary's version as Go recorded
its build: the release tag (v0.2.0) for go install ...@v0.2.0 or a build of a tagged checkout; for any
other commit Go's pseudo-version naming it, with its VCS revision and time and whether the tree had
uncommitted changes; (devel) where the build recorded no VCS information (-buildvcs=false). Then the
name and version of each chart built into it: the charts plan, pins, adopt and catalog render.`,
		Example:     a.example("version", "version -o json"),
		Annotations: map[string]string{"exitCodes": exitCodes("printed", "", "bad input")},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := a.options(format)
			if err != nil {
				return err
			}
			rep, err := report.Version()
			if err != nil {
				return err
			}
			output.Version(&a.out, rep, o)
			return nil
		},
	}
	outputFlag(cmd, &format)
	return cmd
}
