package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/render/helmv4"
	"github.com/cozystack/golden-worker-images/tests/support"
)

// Flux and the Helm CLI move from Helm v3 to v4: a chart that renders other
// bytes under v4 rolls every pool on that move. Every golden case and every
// baseline corner renders under both, with no cluster and with its fixtures;
// where both refuse, the refusals must read the same too.
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
	compared := 0
	for _, c := range cases {
		for _, withCluster := range []bool{false, true} {
			name := c.Name + "/offline"
			if withCluster {
				name = c.Name + "/cluster"
			}
			t.Run(name, func(t *testing.T) {
				v3 := outcome(c.Render(render.Render, withCluster))
				v4 := outcome(c.Render(helmv4.Render, withCluster))
				if line, a, b, differ := firstDifference(v3, v4); differ {
					t.Errorf("case %s (%s): Helm v3 and v4 differ at line %d:\n  v3: %q\n  v4: %q", c.Name, name[len(c.Name)+1:], line, a, b)
				}
			})
			compared++
		}
	}
	t.Logf("compared %d renders (%d cases, offline and with a cluster) under Helm v3 and v4", compared, len(cases))
}

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
