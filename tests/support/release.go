package support

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// ReleaseEntry is one release of CHANGELOG.md: its version and its "Running
// pools:" line.
type ReleaseEntry struct {
	Version *semver.Version
	Pools   string
}

var (
	releaseHeading = regexp.MustCompile(`^## (\S+)\s*$`)
	poolLine       = regexp.MustCompile(`^Running pools: (.+)$`)
)

// ParseChangelog reads the releases, newest first, each with its
// running-pools line; a heading that is no version, versions out of order, or
// an entry without the line is an error naming it.
func ParseChangelog(text string) ([]ReleaseEntry, error) {
	var out []ReleaseEntry
	for i, line := range strings.Split(text, "\n") {
		if m := releaseHeading.FindStringSubmatch(line); m != nil {
			v, err := semver.StrictNewVersion(m[1])
			if err != nil {
				return nil, fmt.Errorf("CHANGELOG.md line %d: release %q is not a semantic version (MAJOR.MINOR.PATCH): %v", i+1, m[1], err)
			}
			if n := len(out); n > 0 {
				if out[n-1].Pools == "" {
					return nil, fmt.Errorf("CHANGELOG.md: release %s has no \"Running pools:\" line", out[n-1].Version)
				}
				if !v.LessThan(out[n-1].Version) {
					return nil, fmt.Errorf("CHANGELOG.md line %d: release %s is listed below %s; newest first", i+1, v, out[n-1].Version)
				}
			}
			out = append(out, ReleaseEntry{Version: v})
			continue
		}
		if m := poolLine.FindStringSubmatch(line); m != nil && len(out) > 0 && out[len(out)-1].Pools == "" {
			out[len(out)-1].Pools = strings.TrimSpace(m[1])
		}
	}
	if len(out) == 0 {
		return nil, errors.New("CHANGELOG.md lists no release (## MAJOR.MINOR.PATCH)")
	}
	if out[len(out)-1].Pools == "" {
		return nil, fmt.Errorf("CHANGELOG.md: release %s has no \"Running pools:\" line", out[len(out)-1].Version)
	}
	return out, nil
}

// Changelog is CHANGELOG.md's releases, newest first.
func Changelog() ([]ReleaseEntry, error) {
	raw, err := os.ReadFile(Path("CHANGELOG.md"))
	if err != nil {
		return nil, err
	}
	return ParseChangelog(string(raw))
}

// PreviousRelease is the release before the newest, and the folder its
// archives are kept in (releases/<version>).
func PreviousRelease() (ReleaseEntry, string, error) {
	releases, err := Changelog()
	if err != nil {
		return ReleaseEntry{}, "", err
	}
	if len(releases) < 2 {
		return ReleaseEntry{}, "", errors.New("CHANGELOG.md lists one release: nothing to compare with")
	}
	prev := releases[1]
	return prev, Path("releases", prev.Version.String()), nil
}

// PreviousPoolChart is the previous release's pool chart as helm-controller
// gets it: its kept archive (releases/<version>/kubernetes-nodes-<version>.tgz,
// its libraries inside) read by Helm's archive loader; and the archive's path.
func PreviousPoolChart() (*chart.Chart, string, error) {
	prev, dir, err := PreviousRelease()
	if err != nil {
		return nil, "", err
	}
	archive := filepath.Join(dir, "kubernetes-nodes-"+prev.Version.String()+".tgz")
	c, err := loader.LoadFile(archive)
	if err != nil {
		return nil, archive, err
	}
	return c, archive, nil
}
