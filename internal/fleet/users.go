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
kind: ` + usersKind + `
users: {{ $users | toJson }}
noPool: {{ $noPool | toJson }}
`
)

// Users are, by golden name, what keeps each golden in use in the catalog's
// eyes, as "<namespace>/<kind>/<name>": its worker disks (DataVolumes and PVCs
// annotated with it, in any namespace) and the KubevirtMachineTemplates that
// clone it. NoPool are those disks that belong to no pool (their namespace
// holds no MachineDeployment named by their pool annotation).
type Users struct {
	Users, NoPool map[string][]string
}

// CatalogChart is the catalog chart built into this binary.
func CatalogChart() (*chart.Chart, error) {
	return render.LoadChartFS(charts.FS, render.CatalogChart)
}

// GoldenUsers asks the catalog chart who uses each of names on the cluster p.
func GoldenUsers(catalog *chart.Chart, p engine.ClientProvider, names []string) (*Users, error) {
	if names == nil {
		names = []string{}
	}
	list, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	c := render.WithTemplate(render.HelpersOnly(catalog), usersTemplate, []byte(usersBody))
	c.Files = append(append([]*chart.File{}, c.Files...), &chart.File{Name: usersFile, Data: list})
	m, err := render.Render(c, render.Options{
		Release: render.Release{Name: "kubernetes-worker-image", Namespace: "cozy-public", Upgrade: true},
		Cluster: p,
	})
	if err != nil {
		return nil, err
	}
	for _, d := range m.Docs {
		if d.Kind() != usersKind {
			continue
		}
		var raw struct {
			Users  map[string]map[string]bool `json:"users"`
			NoPool map[string]map[string]bool `json:"noPool"`
		}
		if err := yaml.Unmarshal([]byte(d.Text), &raw); err != nil {
			return nil, fmt.Errorf("reading the catalog's golden users: %w", err)
		}
		return &Users{Users: setsToLists(raw.Users), NoPool: setsToLists(raw.NoPool)}, nil
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
