package schema

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestFormats is the table of each checked format: values it accepts and
// values it refuses, with the edge cases of its grammar.
func TestFormats(t *testing.T) {
	tests := []struct {
		format  string
		ok, bad []string
	}{
		{"date-time",
			[]string{"2024-05-01T13:45:00Z", "2024-05-01t13:45:00z", "2024-05-01T13:45:00.123+02:00", "2016-12-31T23:59:60Z", "2024-02-29T00:00:00-05:30"},
			[]string{"", "2024-05-01", "2024-05-01 13:45:00Z", "2024-05-01T13:45:00", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T13:45:00.Z", "2024-05-01T13:45:00+2:00", "yesterday"}},
		{"date",
			[]string{"2024-05-01", "2024-02-29"},
			[]string{"2024-5-1", "2023-02-29", "2024-05-01T00:00:00Z", "01/05/2024", ""}},
		{"time",
			[]string{"13:45:00Z", "23:59:60+01:00", "00:00:00.5z"},
			[]string{"13:45:00", "13:45Z", "25:00:00Z", "13:60:00Z", "13:45:00+24:00", "1:45:00Z"}},
		{"email",
			[]string{"ann@example.com", "first.last+tag@sub.example.org"},
			[]string{"", "ann", "ann@", "@example.com", "Ann <ann@example.com>", "ann @example.com", "ann@example.com\n"}},
		{"uri",
			[]string{"https://example.com/a?b=c#d", "mailto:ann@example.com", "urn:isbn:0451450523"},
			[]string{"", "/relative/path", "example.com", "https://exa mple.com", "http://[::1", "https:\\\\example.com"}},
		{"uri-reference",
			[]string{"/relative/path?q=1", "https://example.com", "#frag", ""},
			[]string{"http://[::1", "a b"}},
		{"uuid",
			[]string{"123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000", "123E4567-E89B-12D3-A456-426614174000"},
			[]string{"", "123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400", "g23e4567-e89b-12d3-a456-426614174000", "{123e4567-e89b-12d3-a456-426614174000}"}},
		{"ipv4",
			[]string{"192.0.2.1", "0.0.0.0", "255.255.255.255"},
			[]string{"", "256.0.0.1", "010.0.0.1", "1.2.3", "::1", "::ffff:192.0.2.1", "1.2.3.4 "}},
		{"ipv6",
			[]string{"::1", "2001:db8::1", "::ffff:192.0.2.1", "fe80::1"},
			[]string{"", "192.0.2.1", "fe80::1%eth0", "2001:db8:::1", "[::1]"}},
		{"hostname",
			[]string{"localhost", "api.example.com", "example.com.", "a-b.c1", strings.Repeat("a", 63) + ".com"},
			[]string{"", ".", "-a.com", "a-.com", "a..com", "a_b.com", "exa mple.com", strings.Repeat("a", 64) + ".com", strings.Repeat("a.", 127) + "ab"}},
		{"regex",
			[]string{"^[a-z]+$", "a|b"},
			[]string{"(", "[a-"}},
	}
	for _, tt := range tests {
		check := formats[tt.format]
		if check == nil {
			t.Fatalf("format %q has no check", tt.format)
		}
		for _, s := range tt.ok {
			if !check(s) {
				t.Errorf("format %s refuses %q", tt.format, s)
			}
		}
		for _, s := range tt.bad {
			if check(s) {
				t.Errorf("format %s accepts %q", tt.format, s)
			}
		}
		if formatWhat[tt.format] == "" {
			t.Errorf("format %s has no description for messages", tt.format)
		}
	}
}

// TestFormatChecked shows a format refusing a value in a message a model can
// act on, an unknown format staying an annotation, and format applying to
// strings only.
func TestFormatChecked(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{
		"email":{"type":"string","format":"email"},
		"when":{"type":"string","format":"date-time"},
		"color":{"type":"string","format":"x-color"},
		"n":{"format":"email"}}}`)
	got, errs := v.Normalize([]byte(`{"email":"ann@example.com","when":"2024-05-01T13:45:00Z","color":"teal","n":5}`))
	if errs != nil {
		t.Fatalf("valid values refused: %v", errs)
	}
	if string(got) != `{"email":"ann@example.com","when":"2024-05-01T13:45:00Z","color":"teal","n":5}` {
		t.Errorf("output = %s", got)
	}
	_, errs = v.Normalize([]byte(`{"email":"ann at example","when":"tomorrow"}`))
	want := []FieldError{
		{"email", `must be an email address, like name@example.com (format email), got string "ann at example"`},
		{"when", `must be a date and time in RFC 3339 form, like 2024-05-01T13:45:00Z (format date-time), got string "tomorrow"`},
	}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// FuzzFormats feeds every format check any string: none panics, and an
// accepted value is valid UTF-8 where the format is textual.
func FuzzFormats(f *testing.F) {
	for _, s := range []string{"2024-05-01T13:45:00Z", "ann@example.com", "https://x/y", "::1", "1.2.3.4", "a.b", "123e4567-e89b-12d3-a456-426614174000", "13:45:00Z", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, check := range formats {
			if check(s) && name != "regex" && name != "uri-reference" && !utf8.ValidString(s) {
				t.Errorf("format %s accepts invalid UTF-8 %q", name, s)
			}
		}
	})
}
