package support

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RepoRoot is the checkout's top folder, found from this source file so that
// every test package resolves paths the same way from any working directory.
func RepoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("support: cannot locate source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Path is a path in the checkout, given from its root.
func Path(rel ...string) string {
	return filepath.Join(append([]string{RepoRoot()}, rel...)...)
}

// Fixture is a path under tests/render/testdata, where the render fixtures
// every tier shares live.
func Fixture(rel string) string {
	return Path("tests", "render", "testdata", rel)
}

// LoadChart loads a chart of this checkout; a relative path is taken from its root.
func LoadChart(dir string) (*chart.Chart, error) {
	if !filepath.IsAbs(dir) {
		dir = Path(dir)
	}
	return render.LoadChart(dir)
}

// ReleasedCharts are the chart folders a release versions, packages and
// pushes, in the Makefile's CHARTS order (tests/release holds the two equal).
var ReleasedCharts = []string{
	"packages/library/worker-image-lib",
	"packages/library/kubernetes-nodes-lib",
	render.PoolChart,
	render.CatalogChart,
	render.PlatformChart,
	"packages/system/kubernetes-nodes-rd",
}

// MakePrints runs `make -s TARGET` from the checkout's root, as a reader of the
// docs types it, and returns what it prints; MAKELEVEL and MAKEFLAGS are
// cleared so a test run by make (make test) gets what a shell gets. A failure
// carries make's standard error.
func MakePrints(target string) ([]byte, error) {
	cmd := exec.Command("make", "-s", target)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "MAKELEVEL=", "MAKEFLAGS=", "MFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("make -s %s: %w\n%s", target, err, stderr.String())
	}
	return out, nil
}

// ExampleObjects is the example cluster (examples/cluster-state.yaml), less
// the objects of the kinds drop names: the fleet the report and rollout
// tests read.
func ExampleObjects(t testing.TB, drop ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := render.LoadObjects(Path("examples", "cluster-state.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		keep := true
		for _, kind := range drop {
			keep = keep && o.GetKind() != kind
		}
		if keep {
			out = append(out, o)
		}
	}
	return out
}
