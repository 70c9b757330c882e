package support

import "flag"

// Update is the -update flag of every test binary that links this package
// (`make golden`): it rewrites the committed golden renders and reports
// instead of comparing with them. Rewriting one is a deliberate re-baseline.
var Update = flag.Bool("update", false, "rewrite the committed golden files")
