// What every verb shares: the exit codes, the app with its outputs and its
// seam to a live cluster, and the flags and their parsing.

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"helm.sh/helm/v3/pkg/engine"
)

const (
	exitOK      = 0
	exitAttn    = 1 // plan: refused; rollcheck: a pool rolls or is refused at head
	exitProblem = 2 // bad input: missing file, unparsable YAML, unknown flag, unreachable cluster
)

// app carries the outputs and the one seam to a live cluster: dial turns a
// kubeconfig and context into Helm's client provider. Tests swap in a fake provider, so the
// -kubeconfig paths run the same code as -cluster.
type app struct {
	stdout, stderr io.Writer
	dial           func(k kubeAccess) (p engine.ClientProvider, desc string, err error)
}

// kubeAccess is how a command reaches a live cluster, as kubectl does:
// -kubeconfig (one file) else KUBECONFIG (a list of files) else
// ~/.kube/config, -context else the current context, and in a pod with none
// of them, its service account (in-cluster config).
type kubeAccess struct {
	kubeconfig, context string
}

// given: the operator named a kubeconfig or a context.
func (k kubeAccess) given() bool { return k.kubeconfig != "" || k.context != "" }

// clusterFlags adds -cluster, -kubeconfig and -context to a command's flags.
func clusterFlags(fs *flag.FlagSet, kubeconfigHelp string) (state *string, k *kubeAccess) {
	k = &kubeAccess{}
	state = fs.String("cluster", "", "cluster state file (multi-document YAML)")
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", kubeconfigHelp)
	fs.StringVar(&k.context, "context", "", "kubeconfig context to use (default: its current context)")
	return state, k
}

// newFlags returns a flag set that reports errors to the caller instead of
// printing usage, so an unknown flag is one line like every other problem.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// helpRequest is -h or -help on a verb: its flags, for the verb's own help.
type helpRequest struct{ flags *flag.FlagSet }

func (helpRequest) Error() string { return flag.ErrHelp.Error() }

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return helpRequest{fs}
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

func oneOf(flagName, value string, allowed ...string) error {
	for _, v := range allowed {
		if value == v {
			return nil
		}
	}
	return fmt.Errorf("-%s %q: want %s", flagName, value, strings.Join(allowed, ", "))
}

// stringList is a repeatable flag; a comma also separates values.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}
