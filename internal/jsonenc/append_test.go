package jsonenc

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnescape(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"if a \u003c b \u0026\u0026 c \u003e d"`, `"if a < b && c > d"`},
		{`"\u003C\u003E\u0026"`, `"<>&"`},
		{`"\\u003c"`, `"\\u003c"`},                           // an escaped backslash, then text
		{`"\\\u003c"`, `"\\<"`},                              // an escaped backslash, then an escape
		{`"\u0027\u2028\u00e9\/"`, `"\u0027\u2028\u00e9\/"`}, // other escapes stay
		{`{"\u003ck\u003e":["\u0026"]}`, `{"<k>":["&"]}`},
		{`"\u003"`, `"\u003"`},
		{`"\u003g"`, `"\u003g"`},
		{`plain`, `plain`},
		{``, ``},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, string(Unescape([]byte(tt.in)))); diff != "" {
			t.Errorf("Unescape(%s) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestAppendRaw(t *testing.T) {
	tests := []struct {
		raw  string
		want string // "" when left to Compact
		// compact is what Compact writes.
		compact string
	}{
		{`{"a":"<b> & c"}`, `{"a":"<b> & c"}`, `{"a":"<b> & c"}`},
		{`{"a":"\u003cb\u003e"}`, "", `{"a":"<b>"}`},
		{"\"\u2028\"", "\"\u2028\"", "\"\u2028\""},
		{` [1, "<"] `, "", `[1,"<"]`},
		{`"\\u003c"`, `"\\u003c"`, `"\\u003c"`},
		{`{"a":1,"a":2}`, `{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{"\"\xff\"", "\"\xff\"", "\"\xff\""},
	}
	for _, tt := range tests {
		got, ok := AppendRaw([]byte("x"), []byte(tt.raw))
		if want := "x" + tt.want; ok != (tt.want != "") || ok && string(got) != want {
			t.Errorf("AppendRaw(%s) = %s, %v; want %s", tt.raw, got, ok, want)
		}
		c, err := Compact([]byte("x"), []byte(tt.raw))
		if err != nil || string(c) != "x"+tt.compact {
			t.Errorf("Compact(%s) = %s, %v; want x%s", tt.raw, c, err, tt.compact)
		}
	}
	for _, bad := range []string{`{`, `"unterminated`, `[1,]`, ``} {
		if _, ok := AppendRaw(nil, []byte(bad)); ok {
			t.Errorf("AppendRaw(%q) took invalid JSON", bad)
		}
		if _, err := Compact(nil, []byte(bad)); err == nil {
			t.Errorf("Compact(%q) took invalid JSON", bad)
		}
	}
}

func TestMarshalIndent(t *testing.T) {
	got, err := MarshalIndent(map[string]any{"code": "a<b && c>d", "raw": json.RawMessage(`"\u003c"`)}, "  ")
	want := "{\n  \"code\": \"a<b && c>d\",\n  \"raw\": \"<\"\n}"
	if err != nil || string(got) != want {
		t.Errorf("MarshalIndent = %s, %v; want %s", got, err, want)
	}
}

// FuzzUnescape checks that Unescape keeps the JSON value: what it turns back
// decodes as what it was given.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`"\u003c\\u003e\u0026"`, `{"\u003C":[1,"\\\u003e"]}`, `"a"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var want any
		if json.Unmarshal(in, &want) != nil {
			return
		}
		out := Unescape(in)
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("Unescape(%s) = %s: %v", in, out, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Unescape(%s) = %s (-want +got):\n%s", in, out, diff)
		}
		if isHTMLEscapeIn(out) {
			t.Errorf("Unescape(%s) = %s kept an escape", in, out)
		}
	})
}

// isHTMLEscapeIn reports an escape of <, > or & left in JSON text.
func isHTMLEscapeIn(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' {
			if isHTMLEscape(b[i:]) {
				return true
			}
			i++
		}
	}
	return false
}
