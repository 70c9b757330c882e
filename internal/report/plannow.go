// A pool planned as it is when the fleet is read to be planned
// (ReadPinsToPlan): its report, of which only what the rollout's plan reads
// is kept, and what planning reads of its render; the render itself is let
// go.

package report

import (
	"reflect"

	"github.com/cozystack/golden-worker-images/internal/fleet"
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// plannedNow is a pool planned as it is: its report, and what planning
// reads of its render (RenderRead).
type plannedNow struct {
	report *PlanReport
	read   RenderRead
}

// RenderRead is what the reports that plan a pool (rollout, adopt) read of
// a render besides its PlanReport, taken from it at once so the render
// itself need not be kept: a fleet's renders held at once would be most of
// the heap.
type RenderRead struct {
	// DiskSize is the worker disk's storage request in the
	// KubevirtMachineTemplate: what CDI's temporary claim in cozy-public
	// asks for while it clones.
	DiskSize string
	// Kubernetes is the release the MachineDeployment runs; minReplicas and
	// maxReplicas are its autoscaler annotations; rollingUpdate is its
	// rolling update.
	Kubernetes, minReplicas, maxReplicas string
	RollingUpdate                        RollingStrategy
	// CADigest names the certificates of the CA the worker disk's HTTP
	// import trusts (the ConfigMap its certConfigMap names, as rendered:
	// CertificatesDigest); "" when it trusts none but CDI's system store.
	CADigest string
	// CAPEM is that CA's text, what an image URL is checked trusting.
	CAPEM string
}

// The MachineDeployment's cluster-autoscaler annotations: the pool's
// minimum and maximum workers.
const (
	annAutoscalerMin = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	annAutoscalerMax = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
)

// renderedDocs is a render read whole (*render.Manifest) or as asked
// (*render.Rendered).
type renderedDocs interface {
	One(kind string) (render.Doc, error)
	Find(kind, name string) (render.Doc, bool)
}

// readRender reads a render for RenderRead; nothing of a render refused.
func ReadRender(m renderedDocs) RenderRead {
	var r RenderRead
	if m == nil || reflect.ValueOf(m).IsNil() {
		return r
	}
	if kmt, err := m.One("KubevirtMachineTemplate"); err == nil {
		dvts, _, _ := unstructured.NestedSlice(kmt.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
		if len(dvts) > 0 {
			dv, _ := dvts[0].(map[string]any)
			r.DiskSize = fleet.Text(dv, "spec", "storage", "resources", "requests", "storage")
			if name := fleet.Text(dv, "spec", "source", "http", "certConfigMap"); name != "" {
				if cm, ok := m.Find("ConfigMap", name); ok {
					r.CAPEM = fleet.Text(cm.Object, "data", fleet.CAKey)
					r.CADigest = CertificatesDigest(r.CAPEM)
				}
			}
		}
	}
	if md, err := m.One("MachineDeployment"); err == nil {
		r.Kubernetes = fleet.Text(md.Object, "spec", "template", "spec", "version")
		r.minReplicas = fleet.Text(md.Object, "metadata", "annotations", annAutoscalerMin)
		r.maxReplicas = fleet.Text(md.Object, "metadata", "annotations", annAutoscalerMax)
		r.RollingUpdate = ReadRollingUpdate(md.Object)
	}
	return r
}

// planWhole plans a pool as it is from its whole render's answers
// (renderWithFacts): the render rendered, or, refused, with the helpers'
// facts already asked (helperFacts). The render is read and let go, and of
// the report only what the rollout's plan reads is kept (forPlanning).
func planWhole(chrt *chart.Chart, t Target, rel render.Release, vals map[string]any, r *render.Rendered, facts *ChartFacts, err error) (*plannedNow, error) {
	rep, _, err := planFrom(chrt, t, rel, vals, r, facts, err, err != nil, false)
	if err != nil {
		return nil, err
	}
	return &plannedNow{report: rep.forPlanning(), read: ReadRender(r)}, nil
}

// forPlanning is the part of a pool's report as it is that the rollout's
// plan of it reads (planPool): a fleet's reports are held from its read until
// each pool is planned, and their checks and object lists would be most of
// them.
func (r *PlanReport) forPlanning() *PlanReport {
	kept := &PlanReport{Release: r.Release, Namespace: r.Namespace, Pool: r.Pool, Cluster: r.Cluster, Preview: r.Preview,
		MachineTemplate: r.MachineTemplate, Result: r.Result, Refusal: r.Refusal, CreatedWith: r.CreatedWith}
	if d := r.DiskSource; d != nil {
		kept.DiskSource = &DiskReport{Path: d.Path, Golden: d.Golden, SchematicID: d.SchematicID, Version: d.Version,
			ImageFactoryURL: d.ImageFactoryURL, ImageFactoryCA: d.ImageFactoryCA, CloneStrategy: d.CloneStrategy, Checked: d.Checked}
	}
	return kept
}
