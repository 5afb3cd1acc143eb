package llm

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks, for any text and every format, that Parse never panics;
// that each call has a name and a JSON object for arguments; that no call is
// invented from prose: text with none of the characters every format starts
// with ('<', '{', '[') gives nothing, and each call's name is in the text
// (unless escapes, CDATA sections joined with the text around them or
// invalid UTF-8 could have changed it); that prose before
// a call does not change what is found; and that the calls found, written
// back in the Hermes format, read back the same.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.text)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "parse", "*.txt"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, format := range Formats {
			calls, err := Parse(text, &ParseOptions{Format: format})
			if calls == nil {
				t.Fatalf("%s: nil slice", format)
			}
			var ie *IncompleteError
			if err != nil && !errors.As(err, &ie) && !isProvider(format) {
				t.Fatalf("%s: error %v from a text format is not an *IncompleteError", format, err)
			}
			if ie != nil && ie.Recovered != len(calls) {
				t.Fatalf("%s: Recovered = %d with %d calls", format, ie.Recovered, len(calls))
			}
			for _, c := range calls {
				if strings.TrimSpace(c.Name) == "" {
					t.Fatalf("%s: call with an empty name in %q", format, text)
				}
				var obj map[string]any
				if err := json.Unmarshal(c.Arguments, &obj); err != nil || obj == nil {
					t.Fatalf("%s: call %s: arguments %q are not a JSON object", format, c.Name, c.Arguments)
				}
				if !strings.Contains(text, c.Name) && !strings.ContainsAny(text, `&\`) && utf8.ValidString(text) &&
					!strings.Contains(strings.ToLower(text), "<![cdata[") {
					t.Fatalf("%s: call name %q is not in the text %q", format, c.Name, text)
				}
			}
			// Provider formats may say the text is not JSON, but nothing more.
			if !strings.ContainsAny(text, "<{[") && (len(calls) > 0 || ie != nil) {
				t.Fatalf("%s: text without markers gave %v, %v", format, calls, err)
			}
		}
		// The calls found, written back as Hermes calls, read back the same.
		if calls, _ := Parse(text, nil); len(calls) > 0 && utf8.ValidString(text) {
			var b strings.Builder
			for _, c := range calls {
				line, err := json.Marshal(c)
				if err != nil {
					t.Fatal(err)
				}
				b.WriteString("<tool_call>\n")
				b.Write(line)
				b.WriteString("\n</tool_call>\n")
			}
			again, err := Parse(b.String(), nil)
			if err != nil {
				t.Fatalf("reading back %q: %v", b.String(), err)
			}
			if diff := cmp.Diff(parseCanon(t, calls), parseCanon(t, again)); diff != "" {
				t.Fatalf("calls written back read differently (-want +got):\n%s", diff)
			}
		}
		// Prose in front of a text changes nothing (provider formats want
		// the whole text to be JSON, so only the text formats are checked).
		want, wantErr := Parse(text, nil)
		got, gotErr := Parse("Sure, let me look that up.\n"+text, nil)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("prose in front changed the calls (-want +got):\n%s", diff)
		}
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Fatalf("prose in front changed the error from %v to %v", wantErr, gotErr)
		}
	})
}

func isProvider(f Format) bool {
	return f == FormatOpenAI || f == FormatAnthropic || f == FormatGemini
}

// parseCanon decodes arguments so calls compare as JSON values.
func parseCanon(t *testing.T, calls []ParsedCall) []parseGot {
	t.Helper()
	out := []parseGot{}
	for _, c := range calls {
		var v any
		if err := json.Unmarshal(c.Arguments, &v); err != nil {
			t.Fatalf("call %s: %v", c.Name, err)
		}
		out = append(out, parseGot{Name: c.Name, Args: v})
	}
	return out
}
