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
	"fmt"
	"io"
	"log"
	"os"

	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/report"
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
		fmt.Fprintf(a.stderr, "workerimage %s: %s\n", args[0], output.TermSafe(report.OneLine(err.Error())))
		return exitProblem
	}
	_, _ = a.stdout.Write(out.Bytes())
	return code
}
