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

// ErrNoPreFeatureChart: the checkout has no history holding PreFeatureCommit
// (a shallow clone, an exported tree), so there is nothing to compare with.
var ErrNoPreFeatureChart = errors.New("the pre-feature pool chart is not in this checkout's history")

// ExtractPreFeatureChart writes the pool chart as it was at PreFeatureCommit
// from git history under dir, and returns the chart's folder.
func ExtractPreFeatureChart(dir string) (string, error) {
	archive := exec.Command("git", "archive", "--format=tar", PreFeatureCommit, render.PoolChart)
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
		return "", fmt.Errorf("%w (commit %s): %v", ErrNoPreFeatureChart, PreFeatureCommit, err)
	}
	if err := untar.Wait(); err != nil {
		return "", err
	}
	return filepath.Join(dir, render.PoolChart), nil
}
