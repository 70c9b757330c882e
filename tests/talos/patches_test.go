// Package talos checks that Talos itself reads every machine-config patch the
// pool chart writes. CABPT applies a TalosConfigTemplate's strategicPatches
// with Talos's own config patcher onto the worker config it generates for the
// template's talosVersion; a patch Talos rejects means no worker of the pool
// ever joins. This module has its own go.mod so that Talos's machinery and its
// dependencies never enter the main module's graph.
package talos

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"
	"sigs.k8s.io/yaml"
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

// pool is what CABPT reads of one pool render.
type pool struct {
	file         string
	talosVersion string   // TalosConfigTemplate spec.template.spec.talosVersion
	k8sVersion   string   // MachineDeployment spec.template.spec.version, when set
	patches      []string // TalosConfigTemplate spec.template.spec.strategicPatches
}

// goldenDir holds the committed renders; every file holding a
// TalosConfigTemplate is a pool case, and pool-cozystack-* are the baseline
// grid (the values of Cozystack's own chart, without osImage).
var goldenDir = filepath.Join("..", "render", "testdata", "golden")

// minBaseline is the number of baseline pool corners committed today.
const minBaseline = 55

// defaultK8sVersion stands in when a render sets no Kubernetes version (the
// worker config differs only in image tags).
const defaultK8sVersion = "1.34.2"

func TestEveryGoldenPoolPatchIsReadByTalos(t *testing.T) {
	pools, baseline := goldenPools(t)
	if baseline < minBaseline {
		t.Fatalf("found %d baseline pool renders with a TalosConfigTemplate, want at least %d", baseline, minBaseline)
	}
	validated := 0
	for _, p := range pools {
		t.Run(p.file, func(t *testing.T) {
			if len(p.patches) == 0 {
				t.Fatalf("TalosConfigTemplate has no strategicPatches")
			}
			if err := applyAndValidate(p.talosVersion, p.k8sVersion, p.patches); err != nil {
				t.Fatal(err)
			}
			validated += len(p.patches)
		})
	}
	t.Logf("%d patches of %d pool renders (%d baseline) applied and strictly validated by Talos machinery", validated, len(pools), baseline)
}

// TestRegistryAuthAndMirrorsAreAccepted: the shapes the platform channel
// writes (registries.config with username/password and TLS, mirrors with
// several endpoints and overridePath) are read by Talos.
func TestRegistryAuthAndMirrorsAreAccepted(t *testing.T) {
	patch := `machine:
  install:
    image: factory.talos.dev/installer/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515:v1.13.6
  registries:
    mirrors:
      docker.io:
        endpoints:
        - https://registry.mirror.internal/v2/docker.io
        - https://registry-2.mirror.internal
        overridePath: true
      registry.mirror.internal:5000:
        endpoints:
        - http://registry.mirror.internal:5000
    config:
      registry.mirror.internal:
        auth:
          username: puller
          password: s3cr3t
        tls:
          insecureSkipVerify: false
      registry.mirror.internal:5000:
        auth:
          auth: cHVsbGVyOnMzY3IzdA==
`
	if err := applyAndValidate("v1.13", defaultK8sVersion, []string{patch}); err != nil {
		t.Fatal(err)
	}
}

// TestBadPatchesAreRejected is the negative control: the check above can fail.
func TestBadPatchesAreRejected(t *testing.T) {
	for name, patch := range map[string]string{
		"unknown field": `machine:
  install:
    image: factory.talos.dev/installer/abc:v1.13.6
    imageTypo: x
`,
		"mirror endpoints not a list": `machine:
  registries:
    mirrors:
      docker.io:
        endpoints: https://registry.mirror.internal
`,
		"null mirror": `machine:
  registries:
    mirrors:
      docker.io: null
`,
		"registry auth not an object": `machine:
  registries:
    config:
      registry.mirror.internal:
        auth: puller:s3cr3t
`,
		"install not an object": `machine:
  install: factory.talos.dev/installer/abc:v1.13.6
`,
		// Loads and applies, and Talos only warns about it: fails because
		// the validation is strict.
		"legacy machine type (a warning)": `machine:
  type: join
`,
	} {
		t.Run(name, func(t *testing.T) {
			err := applyAndValidate("v1.13", defaultK8sVersion, []string{patch})
			if err == nil {
				t.Fatalf("Talos accepted a bad patch:\n%s", patch)
			}
			t.Logf("rejected as expected: %v", err)
		})
	}
}

// applyAndValidate does what CABPT does with a TalosConfigTemplate (generate
// a worker config for the template's Talos version contract, load and apply
// the strategic patches with Talos's config patcher) and then validates the
// result strictly in cloud mode: every warning is a failure too.
func applyAndValidate(talosVersion, k8sVersion string, patches []string) error {
	contract, err := config.ParseContractFromVersion(talosVersion)
	if err != nil {
		return fmt.Errorf("talosVersion %q: %w", talosVersion, err)
	}
	bundle, err := secretsFor(contract)
	if err != nil {
		return fmt.Errorf("secrets bundle for %s: %w", contract, err)
	}
	in, err := generate.NewInput("kubernetes-acme", "https://kubernetes-acme.tenant-acme.svc:6443", strings.TrimPrefix(k8sVersion, "v"),
		generate.WithVersionContract(contract), generate.WithSecretsBundle(bundle))
	if err != nil {
		return fmt.Errorf("generate input: %w", err)
	}
	worker, err := in.Config(machine.TypeWorker)
	if err != nil {
		return fmt.Errorf("generate worker config: %w", err)
	}
	loaded, err := configpatcher.LoadPatches(patches)
	if err != nil {
		return fmt.Errorf("load patch: %w", err)
	}
	out, err := configpatcher.Apply(configpatcher.WithConfig(worker), loaded)
	if err != nil {
		return fmt.Errorf("apply patch: %w", err)
	}
	cfg, err := out.Config()
	if err != nil {
		return fmt.Errorf("patched config: %w", err)
	}
	warnings, err := cfg.Validate(cloudMode{}, validation.WithStrict())
	if err != nil {
		return fmt.Errorf("validate (cloud mode, strict): %w", err)
	}
	if len(warnings) > 0 {
		return fmt.Errorf("validate (cloud mode, strict): warnings %v", warnings)
	}
	// The patch took effect: the installer image Talos will use is the one
	// the last patch that sets it names.
	image := ""
	for _, p := range patches {
		var want struct {
			Machine struct {
				Install struct {
					Image string `json:"image"`
				} `json:"install"`
			} `json:"machine"`
		}
		if yaml.Unmarshal([]byte(p), &want) == nil && want.Machine.Install.Image != "" {
			image = want.Machine.Install.Image
		}
	}
	if got := cfg.Machine().Install().Image(); image != "" && got != image {
		return fmt.Errorf("patched config installs %q, the patch says %q", got, image)
	}
	return nil
}

var (
	bundlesMu sync.Mutex
	bundles   = map[string]*secrets.Bundle{}
)

// secretsFor returns one secrets bundle per version contract: generating its
// keys takes about a second, and the secrets play no part in what is checked.
func secretsFor(contract *config.VersionContract) (*secrets.Bundle, error) {
	bundlesMu.Lock()
	defer bundlesMu.Unlock()
	if b, ok := bundles[contract.String()]; ok {
		return b, nil
	}
	b, err := secrets.NewBundle(secrets.NewFixedClock(time.Now()), contract)
	if err != nil {
		return nil, err
	}
	bundles[contract.String()] = b
	return b, nil
}

// goldenPools reads every committed render holding a TalosConfigTemplate.
func goldenPools(t *testing.T) (pools []pool, baseline int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, f := range files {
		p, ok, err := readPool(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !ok {
			continue
		}
		pools = append(pools, p)
		if strings.HasPrefix(filepath.Base(f), "pool-cozystack-") {
			baseline++
		}
	}
	return pools, baseline
}

type object struct {
	Kind string `json:"kind"`
	Spec struct {
		Template struct {
			Spec struct {
				TalosVersion     string   `json:"talosVersion"`
				StrategicPatches []string `json:"strategicPatches"`
				Version          string   `json:"version"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

func readPool(path string) (pool, bool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return pool{}, false, err
	}
	p := pool{file: filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))}
	found := false
	for _, doc := range splitDocuments(raw) {
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return p, false, err
		}
		switch o.Kind {
		case "TalosConfigTemplate":
			if found {
				return p, false, fmt.Errorf("more than one TalosConfigTemplate")
			}
			found = true
			p.talosVersion = o.Spec.Template.Spec.TalosVersion
			p.patches = o.Spec.Template.Spec.StrategicPatches
			if p.talosVersion == "" {
				return p, false, fmt.Errorf("TalosConfigTemplate has no talosVersion")
			}
		case "MachineDeployment":
			p.k8sVersion = o.Spec.Template.Spec.Version
		}
	}
	if p.k8sVersion == "" {
		p.k8sVersion = defaultK8sVersion
	}
	return p, found, nil
}

// splitDocuments splits a multi-document YAML file on its `---` lines.
func splitDocuments(raw []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		if len(bytes.TrimSpace(cur.Bytes())) > 0 {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
		}
		cur.Reset()
	}
	for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
		if s := strings.TrimRight(string(line), " \r\n"); s == "---" || strings.HasPrefix(s, "--- ") {
			flush()
			continue
		}
		cur.Write(line)
	}
	flush()
	return docs
}
