package support

import (
	"reflect"
	"testing"
)

// A page's sh block is read as the shell reads it: one command a line,
// unless the line ends in a backslash, a pipe or &&; comments and blank
// lines are no commands.
func TestBlockCommands(t *testing.T) {
	b := Block{Lang: "sh", Text: `# a comment
kubectl get ns

now=$(date -u +%s) &&
kubectl get hr -A -o name |
  while read -r hr; do echo "$hr"; done
kubectl annotate hr x \
  a=b
`}
	want := []string{
		"kubectl get ns",
		`now=$(date -u +%s) && kubectl get hr -A -o name | while read -r hr; do echo "$hr"; done`,
		"kubectl annotate hr x a=b",
	}
	if got := b.Commands(); !reflect.DeepEqual(got, want) {
		t.Errorf("Commands() = %q, want %q", got, want)
	}
}
