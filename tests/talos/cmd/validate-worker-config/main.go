// Command validate-worker-config asks Talos, through workerconfig (the check
// tests/talos runs), whether a worker boots with each machine config file it
// is given, and prints, as JSON, what Talos reads of each: the machine type,
// the installer, the kubelet, the control plane endpoint, the registry
// mirrors and the registry CAs. It exits 1 when Talos refuses any file, 2 when
// it cannot run. The integration tier builds it from this module (Talos's
// machinery never enters the main module) and runs it over the bootstrap data
// the Talos bootstrap provider generates.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/cozystack/golden-worker-images/tests/talos/workerconfig"
)

// Result is what Talos reads of one file; Error is empty when it accepts it.
type Result struct {
	File         string              `json:"file"`
	Error        string              `json:"error,omitempty"`
	MachineType  string              `json:"machineType,omitempty"`
	InstallImage string              `json:"installImage,omitempty"`
	KubeletImage string              `json:"kubeletImage,omitempty"`
	Endpoint     string              `json:"endpoint,omitempty"`
	Mirrors      map[string][]string `json:"mirrors,omitempty"`
	RegistryCAs  map[string]string   `json:"registryCAs,omitempty"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: validate-worker-config FILE...")
		os.Exit(2)
	}
	refused := false
	var out []Result
	for _, file := range os.Args[1:] {
		r := Result{File: file}
		raw, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		cfg, err := workerconfig.Load(raw)
		if err != nil {
			r.Error = err.Error()
			refused = true
		}
		if cfg != nil && cfg.Machine() != nil {
			r.MachineType = cfg.Machine().Type().String()
			r.InstallImage = cfg.Machine().Install().Image()
			r.KubeletImage = cfg.Machine().Kubelet().Image()
			if cfg.Cluster() != nil && cfg.Cluster().Endpoint() != nil {
				r.Endpoint = cfg.Cluster().Endpoint().String()
			}
			for host, m := range cfg.RegistryMirrorConfigs() {
				if r.Mirrors == nil {
					r.Mirrors = map[string][]string{}
				}
				for _, e := range m.Endpoints() {
					r.Mirrors[host] = append(r.Mirrors[host], e.Endpoint())
				}
			}
			for host, c := range cfg.RegistryTLSConfigs() {
				if ca := c.CA(); len(ca) > 0 {
					if r.RegistryCAs == nil {
						r.RegistryCAs = map[string]string{}
					}
					r.RegistryCAs[host] = string(ca)
				}
			}
		}
		out = append(out, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if refused {
		os.Exit(1)
	}
}
