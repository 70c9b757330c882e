package main

// The output helpers plan, rollcheck, pins and adopt share, so that their
// reports align, indent and spell empty values the same way. Every line of a
// text report goes through a table, which escapes what a terminal would act on.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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

// row and raw take text that may hold strings from the cluster, values or
// file names: each cell, and each raw line, is escaped (termSafe) as it is
// added, so the widths are those of what is printed.
func (t *table) row(cells ...string) {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = termSafe(c)
	}
	t.lines = append(t.lines, tableLine{cells: safe})
}

func (t *table) raw(s string) { t.lines = append(t.lines, tableLine{raw: termSafe(s)}) }

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

// termSafe is s as a terminal shows it without acting on it, as kubectl
// escapes what it prints: control characters (newline, carriage return, ESC,
// BEL, NUL and the C1 range), bidirectional overrides and other format
// characters, line separators and invalid UTF-8 are written as Go escapes
// (\x1b, \u202e, \xff); everything printable, and the space, stays as is.
// JSON and YAML output never goes through it: they stay exact.
func termSafe(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (r != ' ' && !strconv.IsPrint(r)) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r != ' ' && !strconv.IsPrint(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
