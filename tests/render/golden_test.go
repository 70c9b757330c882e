package render

import (
	"os"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

// TestGoldenRendersAreByteIdentical pins every chart output by its committed
// bytes (testdata/golden/cases.yaml): a change to any of them is a deliberate
// re-baseline (`make golden`), never a side effect.
func TestGoldenRendersAreByteIdentical(t *testing.T) {
	cases, found, err := support.GoldenCases()
	require.NoError(t, err)
	require.True(t, found, "the golden case table %s exists", support.GoldenCasesFile)
	require.NotEmpty(t, cases)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			require.True(t, strings.HasPrefix(c.Name, c.Chart+"-"), "case %s: name it after its chart (%s-...)", c.Name, c.Chart)
			m, err := c.Render(render.Render, true)
			require.NoError(t, err, "golden cases render; refusals are refusal tests")
			got := m.Text()
			if *update {
				require.NoError(t, os.WriteFile(c.GoldenFile, []byte(got), 0o644))
			}
			want, err := os.ReadFile(c.GoldenFile)
			require.NoError(t, err, "golden render missing: run `make golden` deliberately")
			require.Equal(t, string(want), got, "render of case %s differs from %s", c.Name, c.GoldenFile)
			if c.Chart == "pool" {
				d := doc(t, m, "KubevirtMachineTemplate")
				require.Equal(t, testPoolName+"-"+bodyHash(t, d), d.Name(), "the template is named by the hash of its own body")
			}
		})
	}
}
