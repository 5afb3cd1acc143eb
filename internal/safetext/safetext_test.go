package safetext

import (
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	tests := []struct{ in, line, text string }{
		{"plain text, ünïcode 日本 and a \\ backslash", "plain text, ünïcode 日本 and a \\ backslash", "plain text, ünïcode 日本 and a \\ backslash"},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`, `\x1b]0;pwned\x07title`},
		{"safe\rEVIL", `safe\rEVIL`, `safe\rEVIL`},
		{"a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`, `\x1b[2J\x1b[31mred`},
		{"\x00\x7f", `\x00\x7f`, `\x00\x7f`},
		{"csi\u009b31m", `csi\u009b31m`, `csi\u009b31m`},
		{"/tmp/\u202etxt.sdrawkcab", `/tmp/\u202etxt.sdrawkcab`, `/tmp/\u202etxt.sdrawkcab`},
		{"\u2066x\u2069\u200e\u200f\u061c", `\u2066x\u2069\u200e\u200f\u061c`, `\u2066x\u2069\u200e\u200f\u061c`},
		{"para\u2029sep", `para\u2029sep`, `para\u2029sep`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://evil\x1b\link\x1b]8;;\x1b\`, `\x1b]8;;http://evil\x1b\link\x1b]8;;\x1b\`},
	}
	for _, tc := range tests {
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if got := Text(tc.in); got != tc.text {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
		}
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "a\x1bb", "\u202e", "\xff", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Text(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%q: invalid UTF-8 out", s)
			}
			for _, r := range out {
				if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
					t.Fatalf("%q: %U kept", s, r)
				}
			}
		}
		for _, r := range Line(s) {
			if r == '\n' || r == '\t' {
				t.Fatalf("Line(%q) keeps %U", s, r)
			}
		}
	})
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"}, // é is 2 bytes: not cut in half
		{"ééé", 5, "éé…"},
		{"é", 0, "…"},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
