package schema

import (
	"path/filepath"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

const poolChart = render.PoolChart

func TestPoolSchemaAcceptsEveryExample(t *testing.T) {
	s := compile(t, poolChart)
	var files []string
	for _, glob := range []string{"examples/pools/*.yaml", "tests/render/testdata/golden/pool-cozystack-*.values.yaml"} {
		more, err := filepath.Glob(filepath.Join(support.RepoRoot(), glob))
		require.NoError(t, err)
		files = append(files, more...)
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		require.NoError(t, s.Validate(fileDocument(t, f)), f)
	}
}

func TestPoolSchema(t *testing.T) {
	s := compile(t, poolChart)
	checkCases(t, s, support.PoolSchemaCases.Accepted, support.PoolSchemaCases.Refused)
}
