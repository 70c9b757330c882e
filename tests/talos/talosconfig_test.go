package talos

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/talos/workerconfig"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"sigs.k8s.io/yaml"
)

// goldenDir holds the committed renders. Every pool render carries the
// ConfigMap <pool>-talos-config, whose talosconfigtemplate.yaml is the
// TalosConfigTemplate its reconcile Job applies once it has filled the
// parent cluster's live values in; pool-cozystack-* are the baseline grid.
var goldenDir = filepath.Join("..", "render", "testdata", "golden")

// minBaseline is the number of baseline pool corners committed today.
const minBaseline = 55

// A pool render, as its reconcile Job and CABPT read it.
type poolRender struct {
	file       string
	template   string // the ConfigMap's talosconfigtemplate.yaml
	k8sVersion string // the MachineDeployment's spec.template.spec.version
}

// parentValues are the parent cluster's live values in the form its objects
// hold them, from a Talos secrets bundle: the Secrets' base64 of each CA's
// PEM, the tokens and cluster id and secret as the parent chart writes them,
// the Service addresses and the KamajiControlPlane's uid.
func parentValues(t *testing.T) map[string]string {
	t.Helper()
	contract, err := config.ParseContractFromVersion("v1.13.6")
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := secretsFor(contract)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"@TALOS_TOKEN@":       bundle.TrustdInfo.Token,
		"@TALOS_CA@":          base64.StdEncoding.EncodeToString(bundle.Certs.OS.Crt),
		"@CLUSTER_ID@":        bundle.Cluster.ID,
		"@CLUSTER_SECRET@":    bundle.Cluster.Secret,
		"@BOOTSTRAP_TOKEN@":   bundle.Secrets.BootstrapToken,
		"@KUBERNETES_CA@":     base64.StdEncoding.EncodeToString(bundle.Certs.K8s.Crt),
		"@SERVICE_IP@":        "10.96.43.17",
		"@DNS_IP@":            "10.96.0.10",
		"@CONTROL_PLANE_UID@": "5d0f3f5e-8d31-4c55-9a47-5a2b9d0c7e11",
	}
}

// fill substitutes every placeholder, as the Job's sed does.
func fill(text string, values map[string]string) string {
	for k, v := range values {
		text = strings.ReplaceAll(text, k, v)
	}
	return text
}

// tctSpec is what CABPT reads of a TalosConfigTemplate with generateType none.
type tctSpec struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string `json:"name"`
		OwnerReferences []struct {
			Kind string `json:"kind"`
			UID  string `json:"uid"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		Template struct {
			Spec struct {
				GenerateType string `json:"generateType"`
				TalosVersion string `json:"talosVersion"`
				Data         string `json:"data"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// TestEveryGoldenPoolWorkerConfigIsReadByTalos: each committed pool render's
// worker config, filled with a parent cluster's values, is loaded by Talos's
// own config loader and validated strictly (warnings fail too) in cloud mode;
// it is a worker config that joins that control plane, installs the
// flavor the pool boots and runs the kubelet of the pool's Kubernetes release.
func TestEveryGoldenPoolWorkerConfigIsReadByTalos(t *testing.T) {
	pools := goldenPoolRenders(t)
	baseline := 0
	for _, p := range pools {
		if strings.HasPrefix(filepath.Base(p.file), "pool-cozystack-") {
			baseline++
		}
	}
	if baseline < minBaseline {
		t.Fatalf("found %d baseline pool renders with a TalosConfigTemplate, want at least %d", baseline, minBaseline)
	}
	values := parentValues(t)
	for _, p := range pools {
		t.Run(p.file, func(t *testing.T) {
			if left := strings.Count(p.template, "@"); left < len(values) {
				t.Fatalf("the template holds %d placeholder marks, fewer than the %d values the Job fills", left, len(values))
			}
			var tct tctSpec
			if err := yaml.Unmarshal([]byte(fill(p.template, values)), &tct); err != nil {
				t.Fatal(err)
			}
			spec := tct.Spec.Template.Spec
			if tct.Kind != "TalosConfigTemplate" || spec.GenerateType != "none" {
				t.Fatalf("kind %q, generateType %q: want a TalosConfigTemplate whose data CABPT uses as it is", tct.Kind, spec.GenerateType)
			}
			if len(tct.Metadata.OwnerReferences) != 1 || tct.Metadata.OwnerReferences[0].Kind != "KamajiControlPlane" || tct.Metadata.OwnerReferences[0].UID != values["@CONTROL_PLANE_UID@"] {
				t.Fatalf("owner references %+v: want the parent's KamajiControlPlane", tct.Metadata.OwnerReferences)
			}
			cfg, err := workerconfig.Load([]byte(spec.Data))
			if err != nil {
				t.Fatalf("%v\n%s", err, spec.Data)
			}
			if got := cfg.Machine().Type().String(); got != "worker" {
				t.Errorf("machine type %q", got)
			}
			if got, want := cfg.Cluster().Endpoint().String(), "https://kubernetes-"; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, ".svc:6443") {
				t.Errorf("control plane endpoint %q: want the parent's Service", got)
			}
			if got := cfg.Machine().Security().Token(); got != values["@TALOS_TOKEN@"] {
				t.Errorf("machine token %q", got)
			}
			if got := cfg.Cluster().Token().Secret(); !strings.HasSuffix(values["@BOOTSTRAP_TOKEN@"], got) {
				t.Errorf("bootstrap token secret %q", got)
			}
			image := cfg.Machine().Install().Image()
			if !strings.HasSuffix(image, ":"+spec.TalosVersion) {
				t.Errorf("installs %q, but the template is for Talos %s: the installer and the disk disagree", image, spec.TalosVersion)
			}
			if got, want := cfg.Machine().Kubelet().Image(), "ghcr.io/siderolabs/kubelet:"+p.k8sVersion; got != want {
				t.Errorf("kubelet image %q, the MachineDeployment runs %s", got, p.k8sVersion)
			}
			if hosts := cfg.RawV1Alpha1().MachineConfig.MachineNetwork.ExtraHostEntries; len(hosts) != 1 || hosts[0].HostIP != values["@SERVICE_IP@"] {
				t.Errorf("extra host entries %v: want the parent's Service address", hosts)
			}
		})
	}
	t.Logf("%d pool renders (%d baseline): worker configs loaded and strictly validated by Talos machinery", len(pools), baseline)
}

// The control: the same config with a placeholder left unfilled, or a value of
// another shape, is refused by Talos.
func TestUnfilledOrBrokenWorkerConfigsAreRefused(t *testing.T) {
	pools := goldenPoolRenders(t)
	if len(pools) == 0 {
		t.Fatal("no pool render")
	}
	values := parentValues(t)
	for name, broken := range map[string]map[string]string{
		"Kubernetes CA left unfilled": {"@KUBERNETES_CA@": "@KUBERNETES_CA@"},
		"Talos CA not base64":         {"@TALOS_CA@": "not base64!"},
	} {
		t.Run(name, func(t *testing.T) {
			v := map[string]string{}
			for k, x := range values {
				v[k] = x
			}
			for k, x := range broken {
				v[k] = x
			}
			var tct tctSpec
			if err := yaml.Unmarshal([]byte(fill(pools[0].template, v)), &tct); err != nil {
				t.Logf("refused as expected (YAML): %v", err)
				return
			}
			if _, err := workerconfig.Load([]byte(tct.Spec.Template.Spec.Data)); err == nil {
				t.Fatalf("Talos accepted a worker config with %s", name)
			} else {
				t.Logf("refused as expected: %v", err)
			}
		})
	}
}

// goldenPoolRenders reads every committed render that holds a pool's
// talos-config ConfigMap.
func goldenPoolRenders(t *testing.T) []poolRender {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []poolRender
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := poolRender{file: filepath.Base(f)}
		for _, doc := range splitDocuments(raw) {
			var o struct {
				Kind     string                `json:"kind"`
				Metadata struct{ Name string } `json:"metadata"`
				Data     map[string]string     `json:"data"`
				Spec     struct {
					Template struct {
						Spec struct {
							Version string `json:"version"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(doc, &o); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			switch {
			case o.Kind == "ConfigMap" && strings.HasSuffix(o.Metadata.Name, "-talos-config"):
				p.template = o.Data["talosconfigtemplate.yaml"]
			case o.Kind == "MachineDeployment":
				p.k8sVersion = o.Spec.Template.Spec.Version
			}
		}
		if p.template == "" {
			continue
		}
		if p.k8sVersion == "" {
			t.Fatalf("%s: a pool render without a MachineDeployment version", f)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		t.Fatalf("no pool render with a talos-config ConfigMap in %s", goldenDir)
	}
	return out
}
