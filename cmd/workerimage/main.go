// Command workerimage answers three operator questions about worker pools by
// rendering the pool chart with Helm's own engine (the internal/render harness)
// against a cluster-state file or a live cluster:
//
//	plan       what will this pool do against my cluster?
//	rollcheck  will this chart upgrade roll any worker?
//	pins       can I delete this golden?
//	adopt      which pools still import over HTTP, and what moving them to goldens takes
//
// Exit status: 0 fine, 1 the answer is "no" (refused, would roll), 2 bad input.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/engine"
)

const (
	exitOK      = 0
	exitAttn    = 1 // plan: refused; rollcheck: a pool rolls or is refused at head
	exitProblem = 2 // bad input: missing file, unparsable YAML, unknown flag, unreachable cluster
)

const usage = `usage:
  workerimage plan -values POOL.yaml [-release NAME] [-namespace NS] [-cluster STATE.yaml | -kubeconfig PATH [-context NAME]] [-chart DIR] [-o text|yaml|json]
  workerimage rollcheck -base DIR -head DIR -values GLOB [-cluster STATE.yaml | -kubeconfig PATH [-context NAME]] [-release NAME] [-namespace NS] [-o text|json]
  workerimage rollcheck -base DIR -head DIR (-cluster STATE.yaml | -kubeconfig PATH | -context NAME) [-artifact NAME]... [-o text|json]
  workerimage pins [-cluster STATE.yaml | -kubeconfig PATH] [-context NAME] [-artifact NAME]... [-chart DIR] [-o text|json]
  workerimage adopt [-cluster STATE.yaml | -kubeconfig PATH] [-context NAME] [-artifact NAME]... [-chart DIR] [-o text|json]

pins and adopt without -cluster or -kubeconfig reach the cluster as kubectl does: KUBECONFIG, ~/.kube/config, or in a pod its service account.
workerimage help COMMAND (or workerimage COMMAND -h) says what a command answers, its flags and defaults, its exit codes and an example.`

func main() {
	// client-go and Helm log some failures through the standard logger as well
	// as returning them; the returned error is the one line we print.
	log.SetOutput(io.Discard)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	return app{stdout: stdout, stderr: stderr, dial: dialKubeconfig}.run(args)
}

// app carries the outputs and the one seam to a live cluster: dial turns a
// kubeconfig and context into Helm's client provider. Tests swap in a fake provider, so the
// -kubeconfig paths run the same code as -cluster.
type app struct {
	stdout, stderr io.Writer
	dial           func(k kubeAccess) (p engine.ClientProvider, desc string, err error)
}

// problem is bad input or an unusable cluster: one line, exit 2, no output.
type problem struct{ msg string }

func (p problem) Error() string { return p.msg }

func problemf(format string, a ...interface{}) error {
	return problem{fmt.Sprintf(format, a...)}
}

func (a app) run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(a.stderr, "workerimage: missing command: plan, rollcheck, pins or adopt (workerimage -help shows their flags)")
		return exitProblem
	}
	var cmd func([]string, *bytes.Buffer) (int, error)
	switch args[0] {
	case "plan":
		cmd = a.plan
	case "rollcheck":
		cmd = a.rollcheck
	case "pins":
		cmd = a.pins
	case "adopt":
		cmd = a.adopt
	case "help":
		if len(args) > 1 {
			if _, ok := verbHelp[args[1]]; !ok {
				fmt.Fprintf(a.stderr, "workerimage help: unknown command %q (want plan, rollcheck, pins or adopt)\n", args[1])
				return exitProblem
			}
			return a.run([]string{args[1], "-h"})
		}
		fmt.Fprintln(a.stdout, usage)
		return exitOK
	case "-h", "-help", "--help":
		fmt.Fprintln(a.stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(a.stderr, "workerimage: unknown command %q (want plan, rollcheck, pins or adopt; workerimage -help shows their flags)\n", args[0])
		return exitProblem
	}
	// Output is built whole and written only on success, so bad input or a
	// cluster that fails halfway leaves nothing behind but the one line.
	var out bytes.Buffer
	code, err := cmd(args[1:], &out)
	var help helpRequest
	if errors.As(err, &help) {
		writeVerbHelp(a.stdout, args[0], help.flags)
		return exitOK
	}
	if err != nil {
		var p problem
		if !errors.As(err, &p) {
			p = problem{err.Error()}
		}
		fmt.Fprintf(a.stderr, "workerimage %s: %s\n", args[0], termSafe(oneLine(p.msg)))
		return exitProblem
	}
	_, _ = a.stdout.Write(out.Bytes())
	return code
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
		return problem{err.Error()}
	}
	if fs.NArg() > 0 {
		return problemf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

func oneOf(flagName, value string, allowed ...string) error {
	for _, v := range allowed {
		if value == v {
			return nil
		}
	}
	return problemf("-%s %q: want %s", flagName, value, strings.Join(allowed, ", "))
}

// oneLine keeps the chart's own words of a Helm error on one line: it strips
// Helm's "execution error at (file:line:col): " prefix and joins lines. Helm
// starts a refusal's error with that prefix; the same words anywhere else are
// text the message quotes (a tenant's value), and stay.
func oneLine(msg string) string {
	const helmPrefix = "execution error at ("
	if strings.HasPrefix(msg, helmPrefix) {
		if j := strings.Index(msg, "): "); j >= 0 {
			msg = msg[j+3:]
		}
	}
	return strings.Join(strings.Fields(msg), " ")
}
