package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Formats every verb prints, -o's values.
var Formats = []string{"text", "json", "yaml"}

// Options say how to write a report.
type Options struct {
	// Format is text, json or yaml.
	Format string
	// Width is the terminal's width: text lines that are prose wrap to it.
	// 0 (a pipe, a file) wraps nothing.
	Width int
}

func writeJSON(out *bytes.Buffer, v any) {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// table prints rows with each column padded to its widest cell; raw lines
// between rows keep the rows' alignment. With a width (a terminal's), a row's
// last cell and a line added with wrap break at spaces to fit it, their
// continuation lines indented under where they started; otherwise nothing
// is wrapped, so a pipe or a file gets one line per item.
type table struct {
	lines []tableLine
	width int
}

type tableLine struct {
	cells []string
	raw   string
	wrap  bool
}

// newTable is a table for the output options (their terminal width).
func newTable(o Options) table { return table{width: o.Width} }

// row and raw take text that may hold strings from the cluster, values or
// file names: each cell, and each raw line, is escaped (TermSafe) as it is
// added, so the widths are those of what is printed.
func (t *table) row(cells ...string) {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = TermSafe(c)
	}
	t.lines = append(t.lines, tableLine{cells: safe})
}

func (t *table) raw(s string) { t.lines = append(t.lines, tableLine{raw: TermSafe(s)}) }

// wrap is a raw line that may break to fit a terminal: prose, never YAML
// to paste.
func (t *table) wrap(s string) { t.lines = append(t.lines, tableLine{raw: TermSafe(s), wrap: true}) }

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
			if l.wrap {
				indent := len(l.raw) - len(strings.TrimLeft(l.raw, " "))
				out.WriteString(wrapText(l.raw, indent, indent+2, t.width) + "\n")
				continue
			}
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
		line := strings.TrimRight(b.String(), " ")
		if len(l.cells) > 1 {
			start := len(line) - len(l.cells[len(l.cells)-1])
			line = wrapText(line, start, start, t.width)
		}
		out.WriteString(line + "\n")
	}
}

// wrapText breaks s at spaces so no line is wider than width (in runes):
// the text after its first start bytes is wrapped, each continuation line
// indented by indent spaces; a word wider than the room stays whole. width 0
// (not a terminal), or a room under 20 columns, leaves s as it is.
func wrapText(s string, start, indent, width int) string {
	room := width - max(start, indent)
	if width <= 0 || room < 20 || utf8.RuneCountInString(s) <= width {
		return s
	}
	head, rest := s[:start], s[start:]
	var lines []string
	var cur strings.Builder
	curLen := 0
	for _, word := range strings.Split(rest, " ") {
		n := utf8.RuneCountInString(word)
		if curLen > 0 && curLen+1+n > room {
			lines = append(lines, cur.String())
			cur.Reset()
			curLen = 0
		}
		if curLen > 0 {
			cur.WriteByte(' ')
			curLen++
		}
		cur.WriteString(word)
		curLen += n
	}
	lines = append(lines, cur.String())
	return head + strings.Join(lines, "\n"+strings.Repeat(" ", indent))
}

// TermSafe is s as a terminal shows it without acting on it, as kubectl
// escapes what it prints: control characters (newline, carriage return, ESC,
// BEL, NUL and the C1 range), bidirectional overrides and other format
// characters, line separators and invalid UTF-8 are written as Go escapes
// (\x1b, \u202e, \xff); everything printable, and the space, stays as is.
// JSON and YAML output never goes through it: they stay exact.
func TermSafe(s string) string {
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

// orNotRecorded names a golden's source URL, or says it is not recorded.
func orNotRecorded(url string) string {
	if url == "" {
		return "not recorded (no DataVolume source URL, no CDI import endpoint on its PVC)"
	}
	return url
}
