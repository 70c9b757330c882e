// Command gen writes the kubernetes-nodes-rd chart's openAPISchema from the
// pool chart's values.schema.json and Chart.yaml (`make generate`, run from
// the repository root).
package main

import (
	"fmt"
	"os"

	"github.com/cozystack/golden-worker-images/internal/rdschema"
)

func main() {
	if err := generate(); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func generate() error {
	chart, err := os.ReadFile(rdschema.PoolChart + "/Chart.yaml")
	if err != nil {
		return err
	}
	internal, err := rdschema.InternalKeys(chart)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(rdschema.PoolSchema)
	if err != nil {
		return err
	}
	raw, err = rdschema.OpenAPISchema(raw, internal)
	if err != nil {
		return err
	}
	return os.WriteFile(rdschema.Out, raw, 0o644)
}
