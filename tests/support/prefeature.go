package support

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/cozystack/golden-worker-images/internal/render"
)

// PreFeatureCommit is the last commit of the pool chart without osImage: the
// cost every pool paid before the feature, which the benchmarks measure
// today's chart against.
const PreFeatureCommit = "9ee3c71"

// ErrNoPreFeatureChart: the checkout has no history holding the commit asked
// for (a shallow clone, an exported tree), so there is nothing to compare with.
var ErrNoPreFeatureChart = errors.New("the pool chart of that commit is not in this checkout's history")

// RecordConfigMapCommit is the last commit whose pool chart recorded a pool's
// creation defaults in a ConfigMap of its own (<pool>-created-with) rather
// than in its MachineDeployment's annotation: the tier upgrades a pool it
// created to today's chart.
const RecordConfigMapCommit = "37295f0"

// ExtractPreFeatureChart writes the pool chart as it was at PreFeatureCommit
// from git history under dir, and returns the chart's folder.
func ExtractPreFeatureChart(dir string) (string, error) {
	return ExtractChartAt(PreFeatureCommit, dir, render.PoolChart)
}

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
		return "", fmt.Errorf("%w: tar: %v", ErrNoPreFeatureChart, err)
	}
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		return "", fmt.Errorf("%w (commit %s): %v", ErrNoPreFeatureChart, commit, err)
	}
	if err := untar.Wait(); err != nil {
		return "", err
	}
	return filepath.Join(dir, render.PoolChart), nil
}
