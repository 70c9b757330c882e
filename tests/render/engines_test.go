package render

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/render/helmv4"
	"github.com/cozystack/golden-worker-images/tests/support"
)

// Production renders with Helm v4 (Cozystack's helm-controller v1.5.0 links
// Helm v4.1), the CLI with Helm v3's SDK, and Flux and the Helm CLI move on
// to newer v4s: a chart that renders other bytes under one of them rolls
// every pool on that move. Every golden case (pool, catalog and platform)
// and every baseline corner renders under Helm v3, v4.1 (tools/helm-v4.1)
// and the newest v4 (go.mod's), with no cluster and with its fixtures;
// where they refuse, the refusals must read the same too.
func TestHelmV3AndV4RenderTheSameBytes(t *testing.T) {
	cases, err := support.BaselineCases()
	if err != nil {
		t.Fatal(err)
	}
	golden, found, err := support.GoldenCases()
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Logf("%s does not exist: comparing the baseline corners only", support.GoldenCasesFile)
	}
	cases = append(cases, golden...)
	v41 := helmV41(t)
	compared := 0
	for _, c := range cases {
		for _, withCluster := range []bool{false, true} {
			name := c.Name + "/offline"
			if withCluster {
				name = c.Name + "/cluster"
			}
			t.Run(name, func(t *testing.T) {
				v3 := outcome(c.Render(render.Render, withCluster))
				for _, v4 := range []struct {
					name   string
					render support.Renderer
				}{{"v4.1", v41.Render}, {"newest v4", helmv4.Render}} {
					got := outcome(c.Render(v4.render, withCluster))
					if line, a, b, differ := firstDifference(v3, got); differ {
						t.Errorf("case %s (%s): Helm v3 and %s differ at line %d:\n  v3: %q\n  %s: %q", c.Name, name[len(c.Name)+1:], v4.name, line, a, v4.name, b)
					}
				}
			})
			compared++
		}
	}
	t.Logf("compared %d renders (%d cases, offline and with a cluster) under Helm v3, v4.1 and the newest v4", compared, len(cases))
}

// helmV41 is the package's one Helm v4.1 process (tools/helm-v4.1, built by
// `make helm-v4.1`): missing, it fails the test in CI and skips it elsewhere.
func helmV41(t testing.TB) *support.HelmV41 {
	t.Helper()
	v41Once.Do(func() {
		path, ok, why := support.Tool(support.HelmV41Tool, support.HelmV41Env)
		if !ok {
			v41Err = errors.New(why)
			return
		}
		v41, v41Err = support.StartHelmV41(path)
	})
	if v41Err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(v41Err)
		}
		t.Skip(v41Err)
	}
	return v41
}

var (
	v41Once sync.Once
	v41     *support.HelmV41
	v41Err  error
)

// outcome is what a render leaves: its manifest as `helm template` prints
// it, or its error.
func outcome(m *render.Manifest, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return m.Text()
}

// firstDifference finds the first line (1-based) where a and b differ.
func firstDifference(a, b string) (line int, lineA, lineB string, differ bool) {
	if a == b {
		return 0, "", "", false
	}
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		x, y := at(la, i), at(lb, i)
		if x != y {
			return i + 1, x, y, true
		}
	}
	return 0, "", "", false
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return fmt.Sprintf("<end after %d lines>", len(lines))
}

func TestFirstDifferenceNamesTheLine(t *testing.T) {
	for _, tc := range []struct {
		a, b   string
		line   int
		la, lb string
		differ bool
	}{
		{"x\ny\n", "x\ny\n", 0, "", "", false},
		{"x\ny\nz", "x\nY\nz", 2, "y", "Y", true},
		{"x\n", "x\ny\n", 2, "", "y", true},
		{"x", "x\n", 2, "<end after 1 lines>", "", true},
	} {
		line, la, lb, differ := firstDifference(tc.a, tc.b)
		if line != tc.line || la != tc.la || lb != tc.lb || differ != tc.differ {
			t.Errorf("firstDifference(%q, %q) = %d %q %q %v, want %d %q %q %v", tc.a, tc.b, line, la, lb, differ, tc.line, tc.la, tc.lb, tc.differ)
		}
	}
}
