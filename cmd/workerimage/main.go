// Command workerimage answers operators' questions about worker pools by
// rendering the pool chart with Helm's own engine against a cluster state.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cozystack/golden-worker-images/tests/render"
	"helm.sh/helm/v3/pkg/chart"
)

// exitUsage is the status for bad input: a missing file, unparsable YAML, an unknown flag.
const exitUsage = 2

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: workerimage plan -values POOL.yaml -cluster STATE.yaml [-release NAME] [-namespace NS] [-o text|yaml]")
		return exitUsage
	}
	switch args[0] {
	case "plan":
		return runPlan(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "workerimage: unknown command %q (want plan)\n", args[0])
		return exitUsage
	}
}

type planFlags struct {
	values, cluster, release, namespace, output string
}

func runPlan(args []string, stdout, stderr io.Writer) int {
	var f planFlags
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.values, "values", "", "pool values file")
	fs.StringVar(&f.cluster, "cluster", "", "cluster state file (multi-document YAML)")
	fs.StringVar(&f.release, "release", "", "release name (default kubernetes-nodes-<cluster>-<values file name>)")
	fs.StringVar(&f.namespace, "namespace", "", "release namespace (default tenant-<cluster>)")
	fs.StringVar(&f.output, "o", "text", "output: text or yaml")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "workerimage plan: %v\n", err)
		return exitUsage
	}
	p, err := preparePlan(f)
	if err != nil {
		fmt.Fprintf(stderr, "workerimage plan: %v\n", err)
		return exitUsage
	}
	m, renderErr := render.Render(p.chart, p.opts)
	switch f.output {
	case "yaml":
		if renderErr != nil {
			fmt.Fprintf(stdout, "# %s: refused\n# %s\n", p.opts.Release.Name, oneLine(renderErr))
			return 1
		}
		fmt.Fprint(stdout, m.Text())
	default:
		fmt.Fprintf(stdout, "pool     %s (namespace %s)\n", p.opts.Release.Name, p.opts.Release.Namespace)
		if renderErr != nil {
			fmt.Fprintf(stdout, "result   refused: %s\n", oneLine(renderErr))
			return 1
		}
		for _, d := range m.Docs {
			fmt.Fprintf(stdout, "%-8s %s/%s\n", "object", d.Kind(), d.Name())
		}
		fmt.Fprintln(stdout, "result   renders")
	}
	return 0
}

type preparedPlan struct {
	chart *chart.Chart
	opts  render.Options
}

// oneLine strips Helm's "execution error at (file:line:col): " prefix, keeping the chart's own words.
func oneLine(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "): "); i >= 0 && strings.HasPrefix(msg, "execution error at (") {
		msg = msg[i+3:]
	}
	return strings.ReplaceAll(msg, "\n", " ")
}

var errNoValues = errors.New("-values is required")

func preparePlan(f planFlags) (*preparedPlan, error) {
	if f.values == "" {
		return nil, errNoValues
	}
	if f.output != "text" && f.output != "yaml" {
		return nil, fmt.Errorf("-o %q: want text or yaml", f.output)
	}
	values, err := render.ReadValues(f.values)
	if err != nil {
		return nil, err
	}
	var opts render.Options
	opts.Values = values
	cluster, _ := values["cluster"].(string)
	opts.Release.Name = f.release
	if opts.Release.Name == "" {
		opts.Release.Name = fmt.Sprintf("kubernetes-nodes-%s-%s", cluster, strings.TrimSuffix(filepath.Base(f.values), filepath.Ext(f.values)))
	}
	opts.Release.Namespace = f.namespace
	if opts.Release.Namespace == "" {
		opts.Release.Namespace = "tenant-" + cluster
	}
	if f.cluster != "" {
		c, err := render.LoadCluster(f.cluster)
		if err != nil {
			return nil, err
		}
		opts.Cluster = c
	}
	chrt, err := render.LoadChart(render.PoolChart)
	if err != nil {
		return nil, err
	}
	return &preparedPlan{chart: chrt, opts: opts}, nil
}
