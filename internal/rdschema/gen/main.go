// Command gen writes the kubernetes-nodes-rd chart's openAPISchema from the
// pool chart's values.schema.json (`make generate`, run from the repository
// root).
package main

import (
	"fmt"
	"os"

	"github.com/cozystack/golden-worker-images/internal/rdschema"
)

func main() {
	raw, err := os.ReadFile(rdschema.PoolSchema)
	if err == nil {
		raw, err = rdschema.OpenAPISchema(raw)
	}
	if err == nil {
		err = os.WriteFile(rdschema.Out, raw, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}
