package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFirstHunk(t *testing.T) {
	a := []string{"a", "b", "c", "d", "e"}
	line, diff := firstHunk(a, []string{"a", "B", "c", "d", "E"}, 6)
	assert.Equal(t, 2, line)
	assert.Equal(t, []string{"-b", "+B"}, diff, "only the first change")

	line, diff = firstHunk(a, []string{"a", "b", "x", "c", "d", "e"}, 6)
	assert.Equal(t, 3, line)
	assert.Equal(t, []string{"+x"}, diff, "an insertion")

	line, diff = firstHunk(a, []string{"a"}, 2)
	assert.Equal(t, 2, line)
	assert.Equal(t, []string{"-b", "-c", "..."}, diff, "cut at max")
}
