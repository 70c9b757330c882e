package main

// The output helpers plan, rollcheck and pins share, so that their reports
// align, indent and spell empty values the same way.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

func writeJSON(out *bytes.Buffer, v interface{}) {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// table prints rows with each column padded to its widest cell; raw lines
// between rows keep the rows' alignment.
type table struct {
	lines []tableLine
}

type tableLine struct {
	cells []string
	raw   string
}

func (t *table) row(cells ...string) { t.lines = append(t.lines, tableLine{cells: cells}) }
func (t *table) raw(s string)        { t.lines = append(t.lines, tableLine{raw: s}) }

func (t *table) write(out *bytes.Buffer) {
	// A row's last cell is never padded, so it does not widen its column for
	// the rows that go on past it.
	var widths []int
	for _, l := range t.lines {
		for i, c := range l.cells {
			if i == len(l.cells)-1 {
				break
			}
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			if len(c) > widths[i] {
				widths[i] = len(c)
			}
		}
	}
	for _, l := range t.lines {
		if l.cells == nil {
			out.WriteString(l.raw + "\n")
			continue
		}
		var b strings.Builder
		for i, c := range l.cells {
			if i == len(l.cells)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c + strings.Repeat(" ", widths[i]-len(c)+2))
		}
		out.WriteString(strings.TrimRight(b.String(), " ") + "\n")
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
