package fleet

import (
	"encoding/json"
	"fmt"
	"sort"

	charts "github.com/cozystack/golden-worker-images"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/engine"
	"sigs.k8s.io/yaml"
)

// Who uses a golden is the catalog chart's own rule, the one its retirement
// guard refuses by (kubernetes-worker-image.goldenUsers): the fleet reports
// render that helper against the same cluster instead of deciding again.
// The golden names go in as a file of the rendered copy, not as values, so
// no values key is added to the catalog.
const (
	usersTemplate = "templates/0-workerimage-users.yaml"
	usersFile     = "workerimage-golden-names.json"
	usersKind     = "WorkerImageGoldenUsers"
	usersBody     = `{{- $names := dict -}}
{{- range fromJsonArray (.Files.Get "` + usersFile + `") -}}
{{- $_ := set $names . true -}}
{{- end -}}
{{- $users := dict -}}
{{- $noPool := dict -}}
{{- if $names -}}
{{- include "kubernetes-worker-image.goldenUsers" (dict "root" . "names" $names "out" $users "noPool" $noPool) -}}
{{- end }}
{{- include "kubernetes-worker-image.ensureDefaults" . }}
kind: ` + usersKind + `
users: {{ $users | toJson }}
noPool: {{ $noPool | toJson }}
defaults: {{ ._kubernetesWorkerImageDefaults | toJson }}
`
)

// Users are, by golden name, what keeps each golden in use in the catalog's
// eyes, as "<namespace>/<kind>/<name>": its worker disks (DataVolumes and PVCs
// annotated with it, in any namespace) and the KubevirtMachineTemplates that
// clone it. NoPool are those disks that belong to no pool (their namespace
// holds no MachineDeployment named by their pool annotation).
type Users struct {
	Users, NoPool map[string][]string
	// Defaults are the flavors new pools take by default, by golden name
	// (kubernetes-worker-image.ensureDefaults, the rule the catalog's
	// retirement guard refuses by): in use before any pool runs them.
	Defaults map[string]DefaultFlavor
}

// DefaultFlavor is a flavor new pools take by default, and where each of
// its fields came from, in the catalog chart's words.
type DefaultFlavor struct {
	SchematicID string `json:"schematicID"`
	Version     string `json:"version"`
	Name        string `json:"name"`
	From        string `json:"from"`
}

// CatalogChart is the catalog chart built into this binary.
func CatalogChart() (*chart.Chart, error) {
	return render.LoadChartFS(charts.FS, render.CatalogChart)
}

// GoldenUsers asks the catalog chart who uses each of names on the cluster p,
// and which flavors new pools take by default under tenantWorkers (the
// catalog's values of that key; nil for its built-in values).
func GoldenUsers(catalog *chart.Chart, p engine.ClientProvider, names []string, tenantWorkers any) (*Users, error) {
	if names == nil {
		names = []string{}
	}
	list, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	c := render.WithTemplate(render.HelpersOnly(catalog), usersTemplate, []byte(usersBody))
	c.Files = append(append([]*chart.File{}, c.Files...), &chart.File{Name: usersFile, Data: list})
	var values map[string]any
	if tenantWorkers != nil {
		values = map[string]any{"tenantWorkers": tenantWorkers}
	}
	m, err := render.Render(c, render.Options{
		Release: render.Release{Name: "kubernetes-worker-image", Namespace: "cozy-public", Upgrade: true},
		Cluster: p,
		Values:  values,
	})
	if err != nil {
		return nil, err
	}
	for _, d := range m.Docs {
		if d.Kind() != usersKind {
			continue
		}
		var raw struct {
			Users    map[string]map[string]bool `json:"users"`
			NoPool   map[string]map[string]bool `json:"noPool"`
			Defaults map[string]DefaultFlavor   `json:"defaults"`
		}
		if err := yaml.Unmarshal([]byte(d.Text), &raw); err != nil {
			return nil, fmt.Errorf("reading the catalog's golden users: %w", err)
		}
		defaults := map[string]DefaultFlavor{}
		for _, f := range raw.Defaults {
			defaults[f.Name] = f
		}
		return &Users{Users: setsToLists(raw.Users), NoPool: setsToLists(raw.NoPool), Defaults: defaults}, nil
	}
	return nil, fmt.Errorf("the catalog render has no %s document", usersKind)
}

func setsToLists(m map[string]map[string]bool) map[string][]string {
	out := map[string][]string{}
	for golden, set := range m {
		l := []string{}
		for u := range set {
			l = append(l, u)
		}
		sort.Strings(l)
		out[golden] = l
	}
	return out
}
