package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestProgressLineWidth: the progress line shows at most progressWords
// characters of a tool's message, counted after its control and
// bidirectional characters are written as escapes, so that a message of
// escape sequences cannot wrap the line (the line is redrawn with a
// carriage return, which goes back one terminal row only).
func TestProgressLineWidth(t *testing.T) {
	for _, msg := range []string{
		strings.Repeat("\x1b", 100),
		strings.Repeat("\u202e", 100),
		strings.Repeat("\xff", 100),
		strings.Repeat("a", 1<<20),
	} {
		r := &lineReport{}
		r.ReportProgress(1, 2, msg)
		got := r.text()
		words := strings.TrimSuffix(strings.TrimPrefix(got, " (1 of 2: "), ")")
		if n := utf8.RuneCountInString(words); n > progressWords+1 { // and the mark of the cut
			t.Errorf("message %.8q: the line shows %d characters of it, want at most %d: %q", msg, n, progressWords+1, got)
		}
		if strings.ContainsAny(words, "\x1b\u202e") || !utf8.ValidString(words) {
			t.Errorf("message %.8q shown as %q: not escaped", msg, got)
		}
	}
}
