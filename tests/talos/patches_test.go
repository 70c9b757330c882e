// Package talos checks that Talos itself reads every machine config the pool
// chart writes: the worker config of each committed pool render's
// TalosConfigTemplate, filled as its reconcile Job fills it
// (talosconfig_test.go), and the machine-config shapes the platform channel
// passes through (registry mirrors and auth, here). A config Talos rejects
// means no worker of the pool ever joins. This module has its own go.mod so
// that Talos's machinery and its dependencies never enter the main module's
// graph.
package talos

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cozystack/golden-worker-images/tests/talos/workerconfig"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/generate/secrets"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"sigs.k8s.io/yaml"
)

// defaultK8sVersion is the Kubernetes release the shape checks generate a
// worker config for (the config differs only in image tags).
const defaultK8sVersion = "1.35.6"

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
		// Talos reads tls.ca as base64 of the PEM: the PEM itself does not load.
		"registry CA as PEM, not base64": `machine:
  registries:
    config:
      registry.mirror.internal:
        tls:
          ca: |
            -----BEGIN CERTIFICATE-----
            MIIBmzCCAUGgAwIBAgIUV7GJd0igPXKenG2mfFMe6b16kxMwCgYIKoZIzj0EAwIw
            -----END CERTIFICATE-----
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
	if err := workerconfig.Check(cfg); err != nil {
		return err
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

// TestRegistryCertificatesLoadAsBase64: Talos loads a registry's CA and
// client identity written as base64 of the PEM, on one line or wrapped (the
// decoder skips line breaks), which is what the charts let through from the
// platform's registry config; a client certificate written as PEM does not
// load, as the CA's does not (TestBadPatchesAreRejected), which is why the
// charts refuse both.
func TestRegistryCertificatesLoadAsBase64(t *testing.T) {
	ca, err := os.ReadFile(filepath.Join("..", "render", "testdata", "ca", "registry-ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	oneLine := base64.StdEncoding.EncodeToString(ca)
	var wrapped strings.Builder
	for i := 0; i < len(oneLine); i += 76 {
		wrapped.WriteString("            " + oneLine[i:min(i+76, len(oneLine))] + "\n")
	}
	patch := func(tls string) string {
		return "machine:\n  registries:\n    config:\n      registry.mirror.internal:\n        tls:\n" + tls
	}
	for name, tls := range map[string]string{
		"CA on one line":  "          ca: " + oneLine + "\n",
		"CA wrapped":      "          ca: |\n" + wrapped.String(),
		"client identity": "          clientIdentity:\n            crt: " + oneLine + "\n            key: " + oneLine + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := applyAndValidate("v1.13", defaultK8sVersion, []string{patch(tls)}); err != nil {
				t.Fatalf("Talos refuses %s:\n%s\n%v", name, patch(tls), err)
			}
		})
	}
	pemCrt := "          clientIdentity:\n            crt: |\n              " + strings.ReplaceAll(strings.TrimSpace(string(ca)), "\n", "\n              ") + "\n"
	if err := applyAndValidate("v1.13", defaultK8sVersion, []string{patch(pemCrt)}); err == nil {
		t.Fatalf("Talos loads a client certificate written as PEM:\n%s", patch(pemCrt))
	} else {
		t.Logf("a client certificate as PEM is refused: %v", err)
	}
}
