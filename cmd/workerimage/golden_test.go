package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/require"
)

// cliGoldenCase is one command whose whole output is pinned. Args are run from
// the repository root, so the paths printed are the ones an operator types.
type cliGoldenCase struct {
	name string
	args []string
	// rollingHead, when set, is an edit of the pool chart's values.yaml that a
	// temporary head checkout gets (its path prints as HEAD).
	rollingHead func(string) string
	code        int
}

func cliGoldenCases(t *testing.T) []cliGoldenCase {
	t.Helper()
	pools, err := filepath.Glob(filepath.Join(support.RepoRoot(), "examples", "pools", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, pools)
	// Refused examples exit 1 on purpose (docs/design.md: plan exits 1 on a refusal).
	refused := map[string]bool{"golden-local": true, "oversized": true}
	var cases []cliGoldenCase
	for _, p := range pools {
		pool := strings.TrimSuffix(filepath.Base(p), ".yaml")
		code := exitOK
		if refused[pool] {
			code = exitAttn
		}
		for _, format := range []string{"text", "json"} {
			cases = append(cases, cliGoldenCase{
				name: "plan-" + pool + "." + format,
				args: []string{"plan", "-values", "examples/pools/" + pool + ".yaml", "-cluster", "examples/cluster-state.yaml", "-o", format},
				code: code,
			})
		}
	}
	moreDisk := func(values string) string {
		return strings.Replace(values, "diskSize: 20Gi", "diskSize: 25Gi", 1)
	}
	for _, format := range []string{"text", "json"} {
		cases = append(cases,
			cliGoldenCase{
				name: "rollcheck-unchanged." + format,
				args: []string{"rollcheck", "-base", ".", "-head", ".", "-values", "examples/pools/*.yaml", "-cluster", "examples/cluster-state.yaml", "-o", format},
				code: exitOK, // two examples are refused at both sides, which does not fail the check
			},
			cliGoldenCase{
				name:        "rollcheck-disk-default-grows." + format,
				args:        []string{"rollcheck", "-base", ".", "-head", "HEAD", "-values", "examples/pools/*.yaml", "-cluster", "examples/cluster-state.yaml", "-o", format},
				rollingHead: moreDisk,
				code:        exitAttn,
			},
			cliGoldenCase{
				name: "pins." + format,
				args: []string{"pins", "-cluster", "examples/cluster-state.yaml", "-o", format},
				code: exitOK,
			},
			// A per-class golden, from the CLI's own fixtures: an example of
			// one in examples/ would change every report made from it.
			cliGoldenCase{
				name: "plan-per-class." + format,
				args: []string{"plan", "-values", "cmd/workerimage/testdata/pools/builtin-fast.yaml", "-cluster", "cmd/workerimage/testdata/state/per-class.yaml", "-o", format},
				code: exitOK,
			},
			cliGoldenCase{
				name: "pins-per-class." + format,
				args: []string{"pins", "-cluster", "cmd/workerimage/testdata/pins/per-class.yaml", "-o", format},
				code: exitOK,
			},
			// A stock Cozystack: the catalog's own values and its Package,
			// previewed and said which; the catalog change as that Package.
			cliGoldenCase{
				name: "catalog-stock." + format,
				args: []string{"catalog", "-f", "examples/stock-cozystack/catalog-values.yaml", "--cluster", "cmd/workerimage/testdata/stock/cluster.yaml", "-o", format},
				code: exitOK,
			},
			cliGoldenCase{
				name: "catalog-stock-package." + format,
				args: []string{"catalog", "-f", "cmd/workerimage/testdata/stock/package.yaml", "--cluster", "cmd/workerimage/testdata/stock/cluster.yaml", "-o", format},
				code: exitOK,
			},
			cliGoldenCase{
				name: "adopt-stock." + format,
				args: []string{"adopt", "--cluster", "cmd/workerimage/testdata/stock/cluster.yaml", "-o", format},
				code: exitOK,
			},
			// A namespace narrows the pools, never the goldens.
			cliGoldenCase{
				name: "pins-namespace." + format,
				args: []string{"pins", "-n", "tenant-gamma", "--cluster", "cmd/workerimage/testdata/stock/cluster.yaml", "-o", format},
				code: exitOK,
			},
			cliGoldenCase{
				name: "adopt." + format,
				args: []string{"adopt", "-cluster", "examples/cluster-state.yaml", "-o", format},
				code: exitOK,
			},
			// The chart against what the example cluster runs.
			cliGoldenCase{
				name: "rollcheck-deployed." + format,
				args: []string{"rollcheck", "packages/apps/kubernetes-nodes", "--cluster", "cmd/workerimage/testdata/rollcheck/deployed.yaml", "-o", format},
				code: exitAttn, // gamma-big never rendered and head refuses it
			},
			// The example cluster's catalog as it runs: the values of its
			// Package, previewed against its goldens.
			cliGoldenCase{
				name: "catalog-package." + format,
				args: []string{"catalog", "--cluster", "examples/cluster-state.yaml", "-o", format},
				code: exitOK,
			},
			// The closed-networks page's platform values against the
			// platform example: refused as an edit; then the cutover as
			// the catalog takes it.
			cliGoldenCase{
				name: "catalog-closed-network." + format,
				args: []string{"catalog", "-f", "examples/platform/closed-network.yaml", "--cluster", "examples/platform/cluster-state.yaml", "-o", format},
				code: exitAttn,
			},
			cliGoldenCase{
				name: "catalog-cutover." + format,
				args: []string{"catalog", "-f", "examples/platform/closed-network-cutover.yaml", "--cluster", "examples/platform/cluster-state.yaml", "-o", format},
				code: exitOK,
			},
			cliGoldenCase{
				name: "pins-one." + format,
				args: []string{"pins", "talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.5", "--cluster", "examples/cluster-state.yaml", "-o", format},
				code: exitOK,
			},
			// The mixed fleet: every outcome, and the pools listed apart.
			cliGoldenCase{
				name: "adopt-fleet." + format,
				args: []string{"adopt", "-cluster", "cmd/workerimage/testdata/adopt/fleet.yaml", "-o", format},
				code: exitOK,
			},
			// The deployed example fleet from v1.13.6 to v1.13.7 in waves
			// of 3, its golden imported: gamma-big, which never deployed,
			// is listed apart and holds nobody; the two HTTP pools on the
			// public factory are blocked, the catalog publishing a mirror,
			// with the --to-factory that fixes them.
			cliGoldenCase{
				name: "rollout." + format,
				args: []string{"rollout", "--to-talos", "v1.13.7", "--flavor", defaultSchematic + "/v1.13.6", "--wave", "3", "--cluster", "cmd/workerimage/testdata/rollout/cluster.yaml", "-o", format},
				code: exitAttn,
			},
			// The CVE fix on a stock Cozystack: the pool the dashboard created
			// before the takeover keeps the public factory: blocked, the
			// catalog publishing a mirror, with the command that moves both
			// in one re-image.
			cliGoldenCase{
				name: "rollout-stock." + format,
				args: []string{"rollout", "--to-talos", "v1.13.7", "--flavor", defaultSchematic + "/v1.13", "--cluster", "cmd/workerimage/testdata/rollout/stock.yaml", "-o", format},
				code: exitAttn,
			},
			// The same, clones bounded: beta-golden alone would clone its 3
			// disks at once, so its values change takes maxSurge 1; the
			// others are within the bound and change the move alone; the
			// plan says the surge is restored after the last wave.
			cliGoldenCase{
				name: "rollout-stock-max-clones." + format,
				args: []string{"rollout", "--to-talos", "v1.13.7", "--flavor", defaultSchematic + "/v1.13", "--max-clones", "2", "--cluster", "cmd/workerimage/testdata/rollout/stock.yaml", "-o", format},
				code: exitAttn,
			},
			// Every patch of the minor, waves bounded by workers and clones;
			// the HTTP pools on the public factory blocked, as above.
			cliGoldenCase{
				name: "rollout-minor." + format,
				args: []string{"rollout", "--to-talos", "v1.13.7", "--flavor", defaultSchematic + "/v1.13", "--max-workers", "3", "--max-clones", "1", "--cluster", "cmd/workerimage/testdata/rollout/cluster.yaml", "-o", format},
				code: exitAttn,
			},
		)
	}
	cases = append(cases,
		// Without the v1.13.7 golden: the catalog entry to add.
		cliGoldenCase{
			name: "rollout-catalog-entry.text",
			args: []string{"rollout", "--to-talos", "v1.13.7", "-n", "tenant-beta", "--cluster", "examples/cluster-state.yaml"},
			code: exitAttn,
		},
		cliGoldenCase{
			name: "rollout-builtin.text",
			args: []string{"rollout", "--to-builtin", "-n", "tenant-acme", "--cluster", "cmd/workerimage/testdata/rollout/cluster.yaml"},
			code: exitOK,
		},
		cliGoldenCase{
			name: "rollout-factory.text",
			args: []string{"rollout", "--to-factory", "https://factory.mirror.internal", "--cluster", "cmd/workerimage/testdata/rollout/cluster.yaml", "--pool", "kubernetes-acme-workers,tenant-beta/kubernetes-nodes-beta-web,kubernetes-nodes-beta-batch"},
			code: exitOK,
		},
		cliGoldenCase{
			name: "rollout-minor.yaml",
			args: []string{"rollout", "--to-talos", "v1.13.7", "--flavor", defaultSchematic + "/v1.13", "--max-workers", "3", "--max-clones", "1", "--cluster", "cmd/workerimage/testdata/rollout/cluster.yaml", "-o", "yaml"},
			code: exitAttn,
		},
		cliGoldenCase{
			name: "rollout-factory-ca.text",
			args: []string{"rollout", "--to-factory", "https://factory.mirror.internal", "--factory-ca", "examples/platform/mirror-ca.pem", "-n", "tenant-beta", "--cluster", "cmd/workerimage/testdata/rollout/cluster.yaml"},
			code: exitOK,
		},
		cliGoldenCase{
			name: "rollout-defaults.text",
			args: []string{"rollout", "--to-defaults", "-n", "tenant-gamma", "--cluster", "cmd/workerimage/testdata/rollout/cluster.yaml"},
			code: exitOK, // gamma-big never deployed: listed apart
		},
	)
	cases = append(cases,
		cliGoldenCase{
			name: "pins-tree.text",
			args: []string{"pins", "--tree", "--cluster", "cmd/workerimage/testdata/rollcheck/deployed.yaml"},
			code: exitOK,
		},
		cliGoldenCase{
			name: "pins-tree-per-class.text",
			args: []string{"pins", "--tree", "--cluster", "cmd/workerimage/testdata/pins/per-class.yaml"},
			code: exitOK,
		},
	)
	return cases
}

// TestCLIReportsAreByteIdentical pins what plan, rollcheck, pins and adopt print on
// the examples: operators and scripts read these bytes.
func TestCLIReportsAreByteIdentical(t *testing.T) {
	t.Chdir(support.RepoRoot())
	for _, c := range cliGoldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string(nil), c.args...)
			head := ""
			if c.rollingHead != nil {
				head = chartCopy(t, render.PoolChart+"/values.yaml", c.rollingHead)
				for i, a := range args {
					if a == "HEAD" {
						args[i] = head
					}
				}
			}
			r := cli(t, args...)
			require.Empty(t, r.stderr)
			require.Equal(t, c.code, r.code, "exit code of %v", c.args)
			got := r.stdout
			if head != "" {
				got = strings.ReplaceAll(got, head, "HEAD")
			}
			path := filepath.Join(support.RepoRoot(), "cmd", "workerimage", "testdata", "golden", c.name[:strings.LastIndex(c.name, ".")]+".golden"+c.name[strings.LastIndex(c.name, "."):])
			if *support.Update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "golden report missing: run `make golden` deliberately")
			require.Equal(t, string(want), got, "output of %v differs from %s", c.args, path)
		})
	}
}
