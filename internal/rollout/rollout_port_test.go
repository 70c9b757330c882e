package rollout_test

import (
	"testing"

	"github.com/cozystack/golden-worker-images/internal/report"
	"github.com/cozystack/golden-worker-images/internal/rollout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --to-factory is checked by the chart's own URL pattern (ResolveTarget
// renders it as a new pool's talos.imageFactoryURL): a port outside 1 to
// 65535 is refused in the chart's words, the ports at the ends are taken.
func TestRolloutToFactoryPortIsOneTo65535(t *testing.T) {
	chrt, err := report.LoadPoolChart("")
	require.NoError(t, err)
	for _, port := range []string{"0", "65536", "99999"} {
		_, _, err := rollout.ResolveTarget(chrt, rollout.RolloutTarget{FactoryURL: "https://factory.mirror.internal:" + port})
		require.Error(t, err, port)
		assert.Contains(t, err.Error(), "the target is refused by the chart", port)
		assert.Contains(t, err.Error(), `imageFactoryURL "https://factory.mirror.internal:`+port+`" (from talos.imageFactoryURL) is malformed`, port)
	}
	for _, port := range []string{"1", "65535"} {
		_, _, err := rollout.ResolveTarget(chrt, rollout.RolloutTarget{FactoryURL: "https://factory.mirror.internal:" + port})
		require.NoError(t, err, port)
	}
}
