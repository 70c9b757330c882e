// Package workerconfig is the one place this repository asks Talos whether a
// worker can boot with a machine config: the tests of tests/talos and the
// integration tier's validate-worker-config (over the configs the Talos
// bootstrap provider generates) both call it.
package workerconfig

import (
	"fmt"

	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"
)

// cloudMode is the runtime mode of a worker that boots from a pre-installed
// cloud disk image (the golden's openstack-amd64.raw.xz): Talos is already on
// the disk, so no install disk is required, and it is not a container. It is
// what Talos's own "cloud" mode answers (machined's runtime.ModeCloud, which
// lives in an internal package and cannot be imported).
type cloudMode struct{}

func (cloudMode) String() string        { return "cloud" }
func (cloudMode) RequiresInstall() bool { return false }
func (cloudMode) InContainer() bool     { return false }

// Load reads a machine config with Talos's own config loader and checks it
// (Check).
func Load(raw []byte) (config.Provider, error) {
	cfg, err := configloader.NewFromBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("Talos cannot load the machine config: %w", err)
	}
	return cfg, Check(cfg)
}

// Check validates a machine config strictly in cloud mode, as the worker's
// Talos does at boot: every warning is a failure too.
func Check(cfg config.Provider) error {
	warnings, err := cfg.Validate(cloudMode{}, validation.WithStrict())
	if err != nil {
		return fmt.Errorf("validate (cloud mode, strict): %w", err)
	}
	if len(warnings) > 0 {
		return fmt.Errorf("validate (cloud mode, strict): warnings %v", warnings)
	}
	return nil
}
