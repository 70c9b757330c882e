package support

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/cozystack/golden-worker-images/internal/render"
)

// CozystackChartEnv names the folder of Cozystack's own kubernetes-nodes
// chart (packages/apps/kubernetes-nodes of Cozystack at main 3c780acd4, its
// charts/cozy-lib resolving): the pre-feature chart the benchmarks measure this
// checkout's against (docs/upstream.md). The repository holds no copy of it.
const CozystackChartEnv = "COZYSTACK_CHART"

// ErrNoPreFeatureChart: there is no pre-feature chart to compare with here.
var ErrNoPreFeatureChart = errors.New("no pre-feature chart to compare with")

// CozystackChart is the folder CozystackChartEnv names, or ErrNoPreFeatureChart
// when it names none.
func CozystackChart() (string, error) {
	dir := os.Getenv(CozystackChartEnv)
	if dir == "" {
		return "", fmt.Errorf("%w: set %s to the folder of Cozystack's packages/apps/kubernetes-nodes (main 3c780acd4)", ErrNoPreFeatureChart, CozystackChartEnv)
	}
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		return "", fmt.Errorf("%w: %s=%s holds no chart (%v)", ErrNoPreFeatureChart, CozystackChartEnv, dir, err)
	}
	return dir, nil
}

// ErrNoChartAtCommit: the checkout has no history holding the commit asked
// for (a shallow clone, an exported tree).
var ErrNoChartAtCommit = errors.New("the pool chart of that commit is not in this checkout's history")

// RecordConfigMapCommit is the last commit whose pool chart recorded a pool's
// creation defaults in a ConfigMap of its own (<pool>-created-with) rather
// than in its MachineDeployment's annotation: the tier upgrades a pool it
// created to today's chart.
const RecordConfigMapCommit = "37295f0"

// ExtractChartAt writes paths (the pool chart, and the library charts its
// charts/ links point at when it had any) as they were at commit under dir,
// laid out as in a checkout, and returns the pool chart's folder.
func ExtractChartAt(commit, dir string, paths ...string) (string, error) {
	archive := exec.Command("git", append([]string{"archive", "--format=tar", commit}, paths...)...)
	archive.Dir = RepoRoot()
	untar := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		return "", fmt.Errorf("%w: tar: %v", ErrNoChartAtCommit, err)
	}
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		return "", fmt.Errorf("%w (commit %s): %v", ErrNoChartAtCommit, commit, err)
	}
	if err := untar.Wait(); err != nil {
		return "", err
	}
	return filepath.Join(dir, render.PoolChart), nil
}
