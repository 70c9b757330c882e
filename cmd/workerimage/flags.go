// What every verb shares: the exit codes, the app with its inputs, outputs
// and its seam to a live cluster, the flags kubectl and Helm spell the same
// way, and the spellings of earlier versions (-values, -cluster, ...).

package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"helm.sh/helm/v3/pkg/engine"
)

const (
	exitOK      = 0
	exitAttn    = 1 // plan, catalog: refused; rollcheck: a pool rolls or is refused at head
	exitProblem = 2 // bad input: missing file, unparsable YAML, unknown flag, unreachable cluster
)

// app is one run of the command: how it was invoked (name: "workerimage",
// or "kubectl workerimage" when kubectl runs it as the plugin
// kubectl-workerimage), its standard streams, the one seam to a live
// cluster (dial: a kubeconfig and context to Helm's client provider; tests
// swap in a fake, so the --kubeconfig paths run the same code as --cluster),
// and how it tells a terminal (tests swap in a fake check).
type app struct {
	name           string
	stdin          io.Reader
	stdout, stderr io.Writer
	dial           func(k kubeAccess) (p engine.ClientProvider, desc string, err error)
	terminal       func(w io.Writer) (width int, ok bool)
	// factory reads the Image Factory rollout asks (its version list, wave
	// 1's images); nil: the real one. Tests give a stand-in.
	factory *rollout.FactoryReader

	// out is what a verb prints, written to stdout only when it succeeds,
	// so bad input or a cluster that fails halfway leaves nothing behind but
	// one line on stderr; code is the verb's exit status then.
	out  bytes.Buffer
	code int
	// progressShown: a progress line is on stderr, to be cleared.
	progressShown bool
}

// isTerminal is the real check: a file descriptor that is a terminal, and
// its width.
func isTerminal(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0, false
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		width = 0
	}
	return width, true
}

// kubeAccess is how a command reaches a live cluster, as kubectl does:
// --kubeconfig (one file) else KUBECONFIG (a list of files) else
// ~/.kube/config, --context else the current context, and in a pod with none
// of them, its service account (in-cluster config).
type kubeAccess struct {
	kubeconfig, context string
}

// given: the operator named a kubeconfig or a context.
func (k kubeAccess) given() bool { return k.kubeconfig != "" || k.context != "" }

// clusterFlags are --cluster (a state file), --kubeconfig and --context.
type clusterFlags struct {
	state string
	kube  kubeAccess
}

func (c *clusterFlags) add(cmd *cobra.Command, kubeconfigHelp string) {
	f := cmd.Flags()
	f.StringVar(&c.state, "cluster", "", "cluster state file (multi-document YAML of the cluster's objects) instead of a live cluster")
	f.StringVar(&c.kube.kubeconfig, "kubeconfig", "", kubeconfigHelp)
	f.StringVar(&c.kube.context, "context", "", "kubeconfig context to use (default: its current context)")
	_ = cmd.MarkFlagFilename("cluster", "yaml", "yml")
	_ = cmd.MarkFlagFilename("kubeconfig")
}

// previewFlag says in --cluster's help that a verb that can answer without
// a cluster takes --cluster none.
func previewFlag(cmd *cobra.Command) {
	f := cmd.Flags().Lookup("cluster")
	f.Usage += `, or "none": no cluster, a preview (every lookup answers empty)`
}

// outputFlag adds -o/--output: text, json or yaml on every verb.
func outputFlag(cmd *cobra.Command, format *string) {
	cmd.Flags().StringVarP(format, "output", "o", "text", "output format: "+strings.Join(output.Formats, ", ")+" (yaml is the same report as json)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(output.Formats, cobra.ShellCompDirectiveNoFileComp))
}

// options are the output options for format: with the text report on a
// terminal, its width, so long lines wrap there and nowhere else.
func (a *app) options(format string) (output.Options, error) {
	if err := oneOf("output", format, output.Formats...); err != nil {
		return output.Options{}, err
	}
	o := output.Options{Format: format}
	if width, ok := a.terminal(a.stdout); ok && format == "text" {
		o.Width = width
	}
	return o, nil
}

// registryFlags adds how a chart named oci://... is pulled, as `helm pull`
// spells it: --plain-http, --insecure-skip-tls-verify, --ca-file, --cert-file,
// --key-file, --registry-config (credentials from `helm registry login`).
func registryFlags(cmd *cobra.Command, o *report.RegistryOptions) {
	f := cmd.Flags()
	f.BoolVar(&o.PlainHTTP, "plain-http", false, "pull an oci:// chart over plain HTTP (a registry without TLS)")
	f.BoolVar(&o.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "pull an oci:// chart without verifying the registry's certificate")
	f.StringVar(&o.CAFile, "ca-file", "", "verify the registry's certificate with this CA bundle as well")
	f.StringVar(&o.CertFile, "cert-file", "", "client certificate for the registry (with --key-file)")
	f.StringVar(&o.KeyFile, "key-file", "", "client key for the registry (with --cert-file)")
	f.StringVar(&o.RegistryConfig, "registry-config", "", "Helm's registry credentials file (default: HELM_REGISTRY_CONFIG, or Helm's own, written by helm registry login)")
	for _, name := range []string{"ca-file", "cert-file", "key-file", "registry-config"} {
		_ = cmd.MarkFlagFilename(name)
	}
}

// valuesFlag adds -f/--values as Helm spells it: repeatable, "-" reads
// standard input. One file each: a path may hold a comma.
func valuesFlag(cmd *cobra.Command, files *[]string, help string) {
	cmd.Flags().StringArrayVarP(files, "values", "f", nil, help)
	_ = cmd.MarkFlagFilename("values", "yaml", "yml")
}

// artifactFlag adds --artifact: chartRef names that are the pool chart.
func artifactFlag(cmd *cobra.Command, artifacts *[]string, help string) {
	cmd.Flags().StringSliceVar(artifacts, "artifact", nil, help)
}

func oneOf(flagName, value string, allowed ...string) error {
	for _, v := range allowed {
		if value == v {
			return nil
		}
	}
	return fmt.Errorf("--%s %q: want %s", flagName, value, strings.Join(allowed, ", "))
}

// normalizeArgs lets the spellings of earlier versions work: Go's flag
// package took -values, -cluster, -kubeconfig with one dash, which pflag
// would read as a row of one-letter flags. An argument of one dash and a
// long flag's name (before any "="), up to a lone "--", gets its second
// dash; one-letter flags (-f, -n, -o) and "-" (standard input) stay.
func normalizeArgs(root *cobra.Command, args []string) []string {
	long := map[string]bool{"help": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) { long[f.Name] = true })
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	out := make([]string, 0, len(args))
	for i, arg := range args {
		if arg == "--" {
			return append(out, args[i:]...)
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "-"), "=")
		if strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "--") && len(name) > 1 && long[name] {
			arg = "-" + arg
		}
		out = append(out, arg)
	}
	return out
}

// exitCodes spells a verb's exit codes for its help; "" where the verb
// never exits with one.
func exitCodes(meanings ...string) string {
	var b strings.Builder
	for code, m := range meanings {
		if m != "" {
			fmt.Fprintf(&b, "  %d  %s\n", code, m)
		}
	}
	return b.String()
}

// example is a verb's example as this binary is invoked.
func (a *app) example(lines ...string) string {
	for i, l := range lines {
		lines[i] = "  " + a.name + " " + l
	}
	return strings.Join(lines, "\n")
}

// errorf is a problem of the command line (exit 2).
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// A selection flag narrows what a verb reads to some pools: -n, --pool,
// --flavor, --exclude. Left out, it narrows nothing; given empty (--pool=,
// -n "$NS" with NS unset) it is refused as it is read, never taken as left
// out: an unset shell variable would turn a one-pool rollout into a fleet
// rollout. A list flag (repeatable, comma-separated, as pflag reads one)
// refuses an empty name among others too.
type selectionValue struct {
	flag string // as the message names it: -n/--namespace, --pool
	// effect says what the empty value would do, and fix what to give.
	effect, fix string
	one         *string
	many        *[]string
	changed     bool
}

// emptySelectionError is a selection flag given an empty value.
type emptySelectionError struct{ msg string }

func (e *emptySelectionError) Error() string { return e.msg }

func (v *selectionValue) refuse(value string) error {
	return &emptySelectionError{fmt.Sprintf("%s %q: an empty value is refused, never read as the flag left out: %s (an unset shell variable gives one); %s", v.flag, value, v.effect, v.fix)}
}

func (v *selectionValue) Set(s string) error {
	if s == "=" {
		// pflag reads -n= as -n with the value "=": -n=$NS with NS unset.
		return v.refuse("")
	}
	if v.one != nil {
		if s == "" {
			return v.refuse(s)
		}
		*v.one = s
		return nil
	}
	names, err := csv.NewReader(strings.NewReader(s)).Read()
	if err != nil && s != "" {
		return err
	}
	if len(names) == 0 || slices.Contains(names, "") {
		return v.refuse(s)
	}
	if !v.changed {
		*v.many = nil
	}
	*v.many = append(*v.many, names...)
	v.changed = true
	return nil
}

// Type names the value in help as pflag names a string or a string slice.
func (v *selectionValue) Type() string {
	if v.one != nil {
		return "string"
	}
	return "strings"
}

func (v *selectionValue) String() string {
	if v.one != nil {
		return *v.one
	}
	if len(*v.many) == 0 {
		return ""
	}
	return "[" + strings.Join(*v.many, ",") + "]"
}

// selectionFlag adds a selection flag of one value (shorthand "" for none).
func selectionFlag(cmd *cobra.Command, p *string, name, shorthand, effect, fix, help string) {
	flag := "--" + name
	if shorthand != "" {
		flag = "-" + shorthand + "/--" + name
	}
	cmd.Flags().VarP(&selectionValue{flag: flag, effect: effect, fix: fix, one: p}, name, shorthand, help)
}

// selectionListFlag adds a repeatable, comma-separated selection flag.
func selectionListFlag(cmd *cobra.Command, p *[]string, name, effect, fix, help string) {
	cmd.Flags().Var(&selectionValue{flag: "--" + name, effect: effect, fix: fix, many: p}, name, help)
}

// namespaceSelection adds -n/--namespace where it keeps one namespace's
// pools.
func namespaceSelection(cmd *cobra.Command, p *string, help string) {
	selectionFlag(cmd, p, "namespace", "n", "it would keep no namespace out, and every namespace's pools would be read as selected",
		"give a namespace, or leave -n out for every namespace", help)
}

// flagError is what a flag that does not parse says: a selection flag's
// own refusal as it is, anything else as pflag says it.
func flagError(_ *cobra.Command, err error) error {
	var empty *emptySelectionError
	if errors.As(err, &empty) {
		return empty
	}
	return err
}
