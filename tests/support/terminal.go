package support

import (
	"strconv"
	"testing"
	"unicode/utf8"
)

// HostileText holds what a tenant can put in a string the CLI prints: clear
// screen, an OSC 8 link, an OSC 52 clipboard write, BEL, a carriage return, a
// newline, NUL, DEL, a C1 CSI, bidi overrides and isolates and a line
// separator (an API object holds only UTF-8; file names are tested with a
// byte that is not).
const HostileText = "a\x1b[2J\x1b]8;;http://evil/\x07link\x1b]8;;\x07\x1b]52;c;cm0gLXJm\x07\r\nb\x00\x7f\u009b31m\u202egnp.exe\u2066\u2069\u2028z"

// RequireTerminalSafe fails when text holds anything a terminal acts on, other
// than the newlines that end its lines.
func RequireTerminalSafe(t *testing.T, what, text string) {
	t.Helper()
	for i, r := range text {
		if r == '\n' {
			continue
		}
		if r == utf8.RuneError || !strconv.IsPrint(r) && r != ' ' {
			t.Fatalf("%s: byte %d is %q, which a terminal would act on:\n%s", what, i, r, text)
		}
	}
}
