// Command registry is CNCF distribution's registry (github.com/distribution/
// distribution/v3) with only the filesystem storage driver linked: the
// integration tier's loopback OCI registry, which `make push` pushes the
// chart archives to and Helm's client pulls them back from. The upstream
// command also links the Azure, GCS and S3 drivers, which the tier never uses
// and which triple the build.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	// `registry serve CONFIG`, as the upstream command takes it.
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
