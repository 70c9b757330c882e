// Package docs runs every console example of the README and docs/ as written,
// from the repository root, and requires the output the page shows.
package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cozystack/golden-worker-images/tests/support"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// example is one "$ command" line of a console block and the lines up to the
// next command or the block's end: what a terminal shows for it.
type example struct {
	page, command, output string
}

var consoleBlock = regexp.MustCompile("(?s)```console\n(.*?)```")

func examplesIn(t *testing.T, page string) []example {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(support.RepoRoot(), page))
	require.NoError(t, err)
	var out []example
	for _, block := range consoleBlock.FindAllStringSubmatch(string(raw), -1) {
		var cur *example
		for _, line := range strings.SplitAfter(block[1], "\n") {
			if line == "" {
				continue
			}
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				// A blank line before the next command only separates the two.
				if cur != nil {
					cur.output = strings.TrimSuffix(cur.output, "\n\n") + map[bool]string{true: "\n", false: ""}[strings.HasSuffix(cur.output, "\n\n")]
				}
				out = append(out, example{page: page, command: strings.TrimSuffix(cmd, "\n")})
				cur = &out[len(out)-1]
				continue
			}
			require.NotNil(t, cur, "%s: a console block starts with a command: %q", page, line)
			cur.output += line
		}
	}
	return out
}

// The pages that carry examples a reader runs; every .md under docs/ is read.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(support.RepoRoot(), "docs", "*.md"))
	require.NoError(t, err)
	list := []string{"README.md"}
	for _, d := range docs {
		list = append(list, filepath.Join("docs", filepath.Base(d)))
	}
	return list
}

// Every example runs as written after the build the README documents, and
// prints what the page shows, byte for byte. An empty output means the page
// shows none: the command must print nothing.
func TestDocumentedExamplesRunAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI and runs every documented example")
	}
	root := support.RepoRoot()
	build := exec.Command("go", "build", "-trimpath", "-o", "bin/workerimage", "./cmd/workerimage")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "the README's build: %s", out)

	var all []example
	for _, page := range pages(t) {
		all = append(all, examplesIn(t, page)...)
	}
	require.NotEmpty(t, all, "the docs show examples")
	seen := map[string]bool{}
	for _, ex := range all {
		seen[ex.page] = true
		cmd := exec.Command("bash", "-c", ex.command)
		cmd.Dir = root
		cmd.Env = readersEnv()
		got, _ := cmd.CombinedOutput()
		assert.Equal(t, ex.output, string(got), "%s: %s", ex.page, ex.command)
	}
	require.True(t, seen["docs/cli.md"], "the CLI reference's examples ran")
}

// readersEnv is this process's environment as a reader's shell has it: run
// under make (make unit), the examples would inherit make's recursion
// variables, and a `make` they call would print "Entering directory".
func readersEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "MAKELEVEL" && name != "MAKEFLAGS" && name != "MFLAGS" {
			env = append(env, kv)
		}
	}
	return env
}
