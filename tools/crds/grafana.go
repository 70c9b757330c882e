package main

// GrafanaDashboard (grafana.integreatly.org/v1beta1), from grafana-operator's
// API types (github.com/grafana/grafana-operator/v5 v5.13.0, the operator
// version Cozystack's grafana-operator package runs): the tier applies what
// `make grafana-dashboard` prints against it. Its package's other kinds
// (Grafana, GrafanaFolder, ...) are left out like any kind not in want. In a
// file of its own so the list in main.go stays as it is.
func init() {
	packages = append(packages, "github.com/grafana/grafana-operator/v5/api/v1beta1")
	want["grafanadashboards.grafana.integreatly.org"] = "Namespaced"
}
