// Upstream's ApplicationDefinition and a pool this chart created. Cozystack's
// cozystack-api applies the schema defaults of the KubernetesNodes
// ApplicationDefinition when it reads a pool, and its next edit writes them
// into the pool's values. Upstream's schema defaults talos.imageFactoryURL to
// the public factory and talos.installerRepository to its installer: under
// upstream's ApplicationDefinition (a cluster that patched its chartRef
// instead of taking it over, or one that went back), any edit of a pool this
// chart created writes them, and a value of the pool's own beats what this
// chart gives it otherwise (the factory its creation record holds, the
// installer the platform publishes): the pool re-images onto the public
// factory. Upstream's dashboard form pre-fills the same values. Going back,
// upstream's chart reads no creation record and no published default at all.
//
// rollcheck names each such pool, with what this chart would give it and the
// fix, asking this chart (the one built in) what it resolves without those
// values: the chart decides, as everywhere.

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"helm.sh/helm/v3/pkg/chart"
)

// Upstream's ApplicationDefinition's schema defaults for the settings this
// chart resolves from a pool's creation record or the platform's published
// defaults (tests/render checks them against upstream's).
const (
	UpstreamImageFactoryURL     = PublicImageFactoryURL
	UpstreamInstallerRepository = "factory.talos.dev/installer"
)

// upstreamDefaulted are the values upstream's schema defaults that this
// chart may resolve otherwise, by their path in the values.
var upstreamDefaulted = []struct{ field, value string }{
	{"talos.imageFactoryURL", UpstreamImageFactoryURL},
	{"talos.installerRepository", UpstreamInstallerRepository},
}

// UpstreamDefault is one setting a pool takes from upstream's defaults at
// head, where this chart gives it another.
type UpstreamDefault struct {
	// Field is the values path, Value upstream's default, which the pool
	// takes at head: from its own values (Written: cozystack-api wrote it
	// under upstream's ApplicationDefinition, or upstream's dashboard form
	// did), or, unset, as upstream's chart's own default.
	Field   string `json:"field"`
	Value   string `json:"value"`
	Written bool   `json:"written"`
	// Instead is what this chart resolves for the pool without that value,
	// and InsteadFrom where it takes it from, in the chart's words.
	Instead     string `json:"instead"`
	InsteadFrom string `json:"insteadFrom"`
	// Fix is what to do, with the command.
	Fix string `json:"fix"`
}

// readsCreationRecord: the chart resolves a pool's settings from its
// creation record and the platform's published defaults (this chart, at any
// version that has them); upstream's does not.
func readsCreationRecord(chrt *chart.Chart) bool {
	return definesTemplate(chrt, "kubernetes-nodes.creationDefaults")
}

// upstreamDefaults names what the pool, a HelmRelease of the cluster, takes
// from upstream's defaults at head where this chart gives it another
// setting. With a head chart that reads the creation record (this one),
// only a value its values carry can: the fix is to remove it. With one that
// does not (going back to upstream's), whatever this chart resolves from the
// record or the published defaults is lost too: the fix is to write it into
// the pool's values first. Asked of poolChart (this chart) without those
// values, one render of its helpers, for the pools it concerns.
func upstreamDefaults(poolChart *chart.Chart, t Target, in RollInput, headReadsRecord bool) ([]UpstreamDefault, error) {
	ns, name, ok := strings.Cut(strings.TrimPrefix(in.source, "helmrelease "), "/")
	if !ok || !strings.HasPrefix(in.source, "helmrelease ") || in.unresolved != "" || poolChart == nil {
		return nil, nil
	}
	without := CopyMap(in.values)
	talos, _ := without["talos"].(map[string]any)
	written := map[string]bool{}
	for _, d := range upstreamDefaulted {
		key := strings.TrimPrefix(d.field, "talos.")
		if fleet.Text(in.values, "talos", key) == d.value {
			written[d.field] = true
			delete(talos, key)
		}
	}
	if len(written) == 0 && headReadsRecord {
		return nil, nil
	}
	facts, _, err := HelperFacts(poolChart, t.Options(in.release, without))
	if err != nil || facts == nil {
		return nil, err
	}
	var out []UpstreamDefault
	resolved := map[string]Sourced{"talos.installerRepository": {facts.MachineConfig.Installer.Repository, facts.MachineConfig.Installer.Source}}
	if ds := facts.DiskSource; !ds.Clone {
		resolved["talos.imageFactoryURL"] = Sourced{string(ds.ImageFactoryURL), string(ds.ImageFactoryURLSource)}
	}
	for _, d := range upstreamDefaulted {
		got, ok := resolved[d.field]
		if !ok || got.Value == "" || got.Value == d.value || (!written[d.field] && (headReadsRecord || fleet.Text(in.values, "talos", strings.TrimPrefix(d.field, "talos.")) != "")) {
			continue
		}
		u := UpstreamDefault{Field: d.field, Value: d.value, Written: written[d.field], Instead: got.Value, InsteadFrom: got.Source}
		if headReadsRecord {
			u.Fix = fmt.Sprintf("remove it from the pool's values (%s), once the ApplicationDefinition kubernetes-nodes is this chart's (docs/cozystack.md): under upstream's, the next edit writes it again", removeCommand(ns, name, d.field))
		} else {
			u.Fix = fmt.Sprintf("before going back, write it into the pool's values (%s): this chart renders it the same, and upstream's reads no creation record nor published default", setCommand(ns, name, d.field, got.Value))
			if d.field == "talos.imageFactoryURL" && facts.DiskSource.CertConfigMap != "" {
				u.Fix += fmt.Sprintf("; its import trusts a CA (ConfigMap %s), which upstream's chart cannot give it: keep the pool on this chart, or move it first to a factory CDI trusts by its system store", facts.DiskSource.CertConfigMap)
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// removeCommand and setCommand are the kubectl commands that remove a
// values field from a pool's HelmRelease, or set it.
func removeCommand(ns, name, field string) string {
	op, _ := json.Marshal([]map[string]string{{"op": "remove", "path": "/spec/values/" + strings.ReplaceAll(field, ".", "/")}})
	return fmt.Sprintf("kubectl patch helmrelease %s -n %s --type json -p %s", name, ns, ShellWord(string(op)))
}

func setCommand(ns, name, field, value string) string {
	patch := map[string]any{}
	SetIn(patch, append([]string{"spec", "values"}, strings.Split(field, ".")...), value)
	raw, _ := json.Marshal(patch)
	return fmt.Sprintf("kubectl patch helmrelease %s -n %s --type merge -p %s", name, ns, ShellWord(string(raw)))
}

// definesTemplate says whether the chart, or a chart it depends on, defines
// the named template: a chart of another version may not.
func definesTemplate(chrt *chart.Chart, name string) bool {
	needle := []byte(`define "` + name + `"`)
	for _, f := range chrt.Templates {
		if bytes.Contains(f.Data, needle) {
			return true
		}
	}
	for _, dep := range chrt.Dependencies() {
		if definesTemplate(dep, name) {
			return true
		}
	}
	return false
}
