package report

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Count spells n of a noun, as every report counts: "1 pool", "2 pools".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// OrNone spells an empty value as "(none)".
func OrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// OneLine keeps the chart's own words of a Helm error on one line: it strips
// Helm's "execution error at (file:line:col): " prefix and joins lines. Helm
// starts a refusal's error with that prefix; the same words anywhere else are
// text the message quotes (a tenant's value), and stay.
func OneLine(msg string) string {
	const helmPrefix = "execution error at ("
	if strings.HasPrefix(msg, helmPrefix) {
		if j := strings.Index(msg, "): "); j >= 0 {
			msg = msg[j+3:]
		}
	}
	return strings.Join(strings.Fields(msg), " ")
}

// SortedKeys are a map's keys in order, so every report lists them the same way.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// FirstFive names at most five items, as the catalog's refusals do.
func FirstFive(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:5], ", "), len(items)-5)
}

// WithoutPath is a file error without the path, for messages that name the file already.
func WithoutPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// ShellWord is a as a shell reads it back: as it is when it holds only
// characters no shell treats specially, else single-quoted.
func ShellWord(a string) string {
	for _, r := range a {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r)) {
			return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	if a == "" {
		return "''"
	}
	return a
}
