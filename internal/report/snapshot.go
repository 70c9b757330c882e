package report

import (
	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/client-go/dynamic"
)

// poolOwnKinds are the objects each of which one pool's renders and plan
// read, and no other pool's: its HelmRelease, MachineDeployment and
// KubevirtMachineTemplate.
var poolOwnKinds = map[string]bool{"HelmRelease": true, "MachineDeployment": true, "KubevirtMachineTemplate": true}

// FleetSnapshot is render.Snapshot for a report over a fleet: what many
// pools read (cluster-scoped objects, the goldens and published defaults
// in cozy-public, a namespace's values Secret) is read once for them all,
// while each pool's own objects are read as they are asked for and not
// kept: kept, every pool's would be held until the report ends, a heap
// that grows with the fleet for answers asked once. nil stays nil.
func FleetSnapshot(p engine.ClientProvider) engine.ClientProvider {
	if p == nil {
		return nil
	}
	return ownObjectsDirect{shared: render.Snapshot(p), direct: p}
}

type ownObjectsDirect struct {
	shared, direct engine.ClientProvider
}

func (o ownObjectsDirect) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if poolOwnKinds[kind] {
		return o.direct.GetClientFor(apiVersion, kind)
	}
	return o.shared.GetClientFor(apiVersion, kind)
}
