// Command workerimage answers operator questions about worker pools by
// rendering the charts with Helm's own engine (the internal/render harness)
// against a cluster-state file or a live cluster:
//
//	plan       what will this pool do against my cluster?
//	rollcheck  will upgrading to this chart roll my workers?
//	pins       can I delete this golden?
//	adopt      which pools still import over HTTP, and what moving them to goldens takes
//	rollout    move chosen pools to a new Talos, the chart's defaults, a golden or a factory, in watched waves
//	catalog    what will the catalog chart do with these values against my cluster?
//	version    which binary is this, and which charts does it carry?
//
// It is built on spf13/cobra, as kubectl and Helm are, and spells its flags
// as they do (-f/--values, -n/--namespace, -o/--output, --kubeconfig,
// --context); installed as kubectl-workerimage, it is the kubectl plugin
// `kubectl workerimage`.
//
// Exit status: 0 fine, 1 the answer is "no" (refused, would roll), 2 bad input.
package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/spf13/cobra"
)

func main() {
	// client-go and Helm log some failures through the standard logger as well
	// as returning them; the returned error is the one line we print.
	log.SetOutput(io.Discard)
	a := &app{name: commandName(os.Args[0]), stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, dial: dialKubeconfig, terminal: isTerminal}
	os.Exit(a.run(os.Args[1:]))
}

// commandName is how the binary names itself: as the kubectl plugin
// kubectl-workerimage, "kubectl workerimage", as kubectl shows it.
func commandName(argv0 string) string {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	if plugin, ok := strings.CutPrefix(base, "kubectl-"); ok && plugin != "" {
		return "kubectl " + strings.ReplaceAll(plugin, "_", "-")
	}
	return "workerimage"
}

// verbs are the commands, in the order help lists them. A new verb is one
// more constructor here, built like the others (flags.go holds what they share).
func (a *app) verbs() []*cobra.Command {
	return []*cobra.Command{a.planCommand(), a.rollcheckCommand(), a.pinsCommand(), a.adoptCommand(), a.rolloutCommand(), a.catalogCommand(), a.versionCommand()}
}

// helpTemplate is cobra's, with each command's exit codes after its usage.
const helpTemplate = `{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}{{with index .Annotations "exitCodes"}}
Exit codes:
{{.}}{{end}}`

// root builds the command tree for this run.
func (a *app) root() *cobra.Command {
	// Help lists the verbs in the order of the questions, not alphabetically.
	cobra.EnableCommandSorting = false
	root := &cobra.Command{
		Use:   "workerimage",
		Short: "Golden Talos worker images: what a pool does, what an upgrade rolls, which goldens are used",
		Long: `Answers an operator's questions about worker pools by rendering the charts it was built with
(Helm's own engine) against a cluster: a live one, reached as kubectl reaches it (--kubeconfig,
KUBECONFIG, --context, in a pod its service account), or a cluster state file (--cluster).`,
		Annotations:   map[string]string{"exitCodes": exitCodes("every answer is fine", "the answer is no: a pool is refused or would roll", "bad input, an unreachable cluster; one line on stderr, nothing on stdout")},
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("missing command: %s (%s --help lists them)", verbNames(cmd), cmd.CommandPath())
			}
			return unknownCommand(cmd, args[0])
		},
	}
	if a.name != "workerimage" {
		root.Annotations[cobra.CommandDisplayNameAnnotation] = a.name
	}
	root.SetHelpTemplate(helpTemplate)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(a.verbs()...)
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				name := strings.Join(args, " ")
				return unknownCommand(c.Root(), name)
			}
			target.InitDefaultHelpFlag()
			return target.Help()
		},
	})
	return root
}

func verbNames(root *cobra.Command) string {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

func unknownCommand(root *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q (want %s)", name, verbNames(root))
	if near := report.NearestWord(name, strings.Split(verbNames(root), ", ")); near != "" {
		msg += "; did you mean " + near + "?"
	}
	return fmt.Errorf("%s", msg)
}

// run parses args and runs the verb they name; its exit status.
func (a *app) run(args []string) int {
	root := a.root()
	root.SetArgs(normalizeArgs(root, args))
	cmd, err := root.ExecuteC()
	a.clearProgress()
	if err != nil {
		where := a.name
		if cmd != nil {
			where = cmd.CommandPath()
		}
		fmt.Fprintf(a.stderr, "%s: %s\n", where, output.TermSafe(report.OneLine(err.Error())))
		return exitProblem
	}
	_, _ = a.stdout.Write(a.out.Bytes())
	return a.code
}
