package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// verbDoc is what `workerimage help VERB` says beside the verb's flags.
type verbDoc struct {
	answers string
	exits   [3]string // exit 0, 1 and 2; "" where the verb never exits with it
	example string
}

var verbHelp = map[string]verbDoc{
	"plan": {
		answers: "What will this pool do against my cluster? Renders the pool chart with the pool's values against a\ncluster-state file, a live cluster, or no cluster (a preview: every lookup answers empty, so the\ngolden and clone checks are not run), and reports the disk source, the golden, the clone checks\nand the KubevirtMachineTemplate name. The release name defaults to kubernetes-nodes-<cluster>-<pool>,\nthe pool taken from the values file's name (a name such as my_pool.yaml needs -release).",
		exits:   [3]string{"the pool renders", "the chart refuses the pool (the result line says why and what to write)", "bad input: a missing or unreadable file, unknown flag, unreachable cluster"},
		example: "bin/workerimage plan -values examples/pools/golden.yaml -cluster examples/cluster-state.yaml",
	},
	"rollcheck": {
		answers: "Will this chart upgrade roll any worker? Renders every pool with the chart of two checkouts (-base,\n-head) and reports, per pool, whether its KubevirtMachineTemplate name changes, with the first\ndiffering lines of its body. With a cluster and no -values it checks every pool of the cluster.",
		exits:   [3]string{"no pool rolls", "a pool rolls, the head chart refuses one, or a pool could not be checked", "bad input"},
		example: "bin/workerimage rollcheck -base . -head . -values 'tests/render/testdata/golden/pool-cozystack-0[1-3]*.values.yaml' -release kubernetes-nodes-acme-workers -namespace tenant-acme",
	},
	"pins": {
		answers: "Can I delete this golden? Lists every golden in cozy-public with the pools whose values resolve to\nit, the disks and KubevirtMachineTemplates that use it, where it was imported from, and which\ngoldens nothing uses (safe to delete, as the catalog chart's own retirement rule decides).",
		exits:   [3]string{"the report was made", "", "bad input, an unreachable cluster, or no pool readable while pool objects exist (it will not conclude)"},
		example: "bin/workerimage pins -cluster examples/cluster-state.yaml",
	},
	"adopt": {
		answers: "Which pools still import over HTTP, and what would moving them to goldens take? For each HTTP pool,\nrenders the chart with osImage.builtin against the same cluster and reports the outcome (ready,\nneeds a catalog entry or a per-class golden, importing, refused), the catalog values to paste,\neach pool's values change, and the template names (each switch rolls that pool once).",
		exits:   [3]string{"the report was made", "", "bad input, an unreachable cluster, or no pool readable while pool objects exist"},
		example: "bin/workerimage adopt -cluster examples/cluster-state.yaml",
	},
}

// writeVerbHelp prints a verb's help: what it answers, every flag with its
// default, the exit codes and one example.
func writeVerbHelp(w io.Writer, verb string, fs *flag.FlagSet) {
	doc := verbHelp[verb]
	fmt.Fprintf(w, "workerimage %s\n\n%s\n\nflags:\n", verb, doc.answers)
	fs.VisitAll(func(f *flag.Flag) {
		def := ""
		if f.DefValue != "" {
			def = fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(w, "  -%s%s\n      %s\n", f.Name, def, strings.ReplaceAll(f.Usage, "\n", "\n      "))
	})
	fmt.Fprintf(w, "\nexit codes:\n")
	for code, meaning := range doc.exits {
		if meaning != "" {
			fmt.Fprintf(w, "  %d  %s\n", code, meaning)
		}
	}
	fmt.Fprintf(w, "\nexample:\n  %s\n", doc.example)
}
