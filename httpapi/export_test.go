package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

// TestExportAnswer: GET /v1/tools?format= answers the document of
// ExportTools as it is, with its media type and its problems in headers,
// and Client.Export gives back the same export.
func TestExportAnswer(t *testing.T) {
	s, hs := newTestServer(t, nil)
	bad := wield.Raw("files.read", "A name OpenAI and Anthropic refuse", &jsonschema.Schema{Type: "object"}, nil)
	s.reg.MustRegister(bad)
	c := NewClient(hs.URL, "")
	for _, f := range ExportFormats {
		want, err := ExportTools(f, s.reg.List(wield.Query{}))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Export(context.Background(), f, ToolQuery{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Client.Export differs from ExportTools (-want +got):\n%s", f, diff)
		}
		if (f == "openai" || f == "anthropic") && len(got.Problems) == 0 {
			t.Errorf("%s: no problem for %q", f, bad.Name)
		}
	}
}

func TestExportChoices(t *testing.T) {
	if _, err := ExportTools("cobol", nil); err == nil || err.Error() != `unknown format "cobol": the formats are `+strings.Join(ExportFormats, ", ") {
		t.Errorf("unknown format: %v", err)
	}
	// The dialects' own names are taken too.
	for alias, name := range map[string]string{"openai-responses": "responses", "openai-responses-strict": "responses-strict"} {
		a, err := ExportTools(alias, []*wield.Tool{wield.Raw("x", "X", &jsonschema.Schema{Type: "object"}, nil)})
		if err != nil {
			t.Fatalf("%s: %v", alias, err)
		}
		b, _ := ExportTools(name, []*wield.Tool{wield.Raw("x", "X", &jsonschema.Schema{Type: "object"}, nil)})
		if string(a.Body) != string(b.Body) {
			t.Errorf("%s differs from %s:\n%s\n%s", alias, name, a.Body, b.Body)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "keys.json")
	math, _, err := CreateKey(file, "math", RightCall, []string{"math"})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	s, hs := newTestServer(t, ring)
	if err := s.reg.DefineToolset(wield.Toolset{Name: "secret", Tools: []string{"echo"}}); err != nil {
		t.Fatal(err)
	}
	_, err = SelectTools(s.reg, ToolSelection{Toolset: "nope"}, nil)
	var ce *ChoiceError
	if !errors.As(err, &ce) || !slices.Equal(ce.Choices, []string{"math", "secret"}) {
		t.Errorf("unknown toolset: %v", err)
	}
	_, err = SelectTools(s.reg, ToolSelection{Agent: "nope"}, []string{"b", "a"})
	if err == nil || err.Error() != `unknown agent "nope": the agents are a, b` {
		t.Errorf("unknown agent: %v", err)
	}
	// A scoped key learns only of its own toolsets.
	code, body := do(t, hs, "GET", "/v1/tools?format=openai&toolset=nope", math, "")
	if code != 404 || !strings.Contains(string(body), `the toolsets are math`) || strings.Contains(string(body), "secret") {
		t.Errorf("scoped key, unknown toolset: %d %s", code, body)
	}
}

// TestExportDeferred: deferred=true answers the document for the
// provider's own tool search, load keeps tools loaded, and every option
// that cannot apply is a 400 saying why, never a plain export.
func TestExportDeferred(t *testing.T) {
	s, hs := newTestServer(t, nil)
	s.reg.MustRegister(wield.Raw("lookup", "Look up", &jsonschema.Schema{Type: "object"}, nil))
	names := func(body []byte) (out []string) {
		var vs []map[string]any
		if err := json.Unmarshal(body, &vs); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		for _, v := range vs {
			d := "loaded"
			if v["defer_loading"] == true {
				d = "deferred"
			}
			out = append(out, fmt.Sprint(v["name"], v["type"], " ", d))
		}
		return out
	}
	code, body := do(t, hs, "GET", "/v1/tools?format=anthropic&deferred=true&load=lookup", "", "")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	want := []string{"tool_search_tool_bm25tool_search_tool_bm25_20251119 loaded"}
	for _, tool := range s.reg.List(wield.Query{}) {
		if tool.Name == "lookup" {
			want = append(want, "lookup<nil> loaded")
		} else {
			want = append(want, tool.Name+"<nil> deferred")
		}
	}
	if diff := cmp.Diff(want, names(body)); diff != "" {
		t.Errorf("anthropic deferred (-want +got):\n%s", diff)
	}
	code, body = do(t, hs, "GET", "/v1/tools?format=responses&deferred=1", "", "")
	if got := names(body); code != 200 || got[0] != "<nil>tool_search loaded" || !strings.HasSuffix(got[1], "deferred") {
		t.Errorf("responses deferred: %d %v", code, got)
	}
	for _, tt := range []struct{ query, msg string }{
		{"format=openai&deferred=true", "no deferred loading"},
		{"format=xml&deferred=true", "is a prompt"},
		{"format=anthropic&deferred=maybe", `is not true or false`},
		{"format=anthropic&load=lookup", "ask for deferred too"},
		{"format=anthropic&deferred=true&load=nope", `load: no tool`},
		{"deferred=true", "give a format"},
		{"format=anthropic&deferred=true&namespaces=true", "no namespaces"},
		{"format=responses&namespaces=true", "ask for deferred too"},
		{"format=responses&deferred=true&namespaces=maybe", "is not true or false"},
	} {
		code, body := do(t, hs, "GET", "/v1/tools?"+tt.query, "", "")
		if code != 400 || !strings.Contains(string(body), tt.msg) {
			t.Errorf("%s: %d %s, want 400 with %q", tt.query, code, body, tt.msg)
		}
	}
	// Toolsets become namespaces of the Responses API.
	if err := s.reg.DefineToolset(wield.Toolset{Name: "look", Description: "Looking things up", Tools: []string{"lookup"}}); err != nil {
		t.Fatal(err)
	}
	code, body = do(t, hs, "GET", "/v1/tools?format=responses&deferred=true&namespaces=true", "", "")
	if code != 200 || !strings.Contains(string(body), `"type": "namespace",
    "name": "look",
    "description": "Looking things up",
    "tools": [`) {
		t.Errorf("responses namespaces: %d %s", code, body)
	}
	// The client passes the options through.
	x, err := NewClient(hs.URL, "").Export(context.Background(), "anthropic", ToolQuery{Deferred: true, Load: []string{"lookup"}})
	if err != nil || !strings.Contains(string(x.Body), `"defer_loading": true`) {
		t.Errorf("client: %v %s", err, x.Body)
	}
}

// TestScopedNamespaces: a key scoped to math exporting with namespaces
// gets its tools grouped in its own toolsets only: a tool that is also in
// a toolset out of its scope, sorted first, went into that namespace,
// whose name and description the key learnt (it learns of no toolset but
// its own elsewhere).
func TestScopedNamespaces(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	math, _, err := CreateKey(file, "math", RightCall, []string{"math"})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	s, hs := newTestServer(t, ring)
	if err := s.reg.DefineToolset(wield.Toolset{Name: "hidden_payroll", Description: "Payroll tools of the finance team", Tools: []string{"calculator", "echo"}}); err != nil {
		t.Fatal(err)
	}
	code, body := do(t, hs, "GET", "/v1/tools?format=responses&deferred=true&namespaces=true", math, "")
	if code != 200 || strings.Contains(string(body), "payroll") || strings.Contains(string(body), "Payroll") {
		t.Errorf("scoped key's export with namespaces names another toolset: %d %s", code, body)
	}
	if !strings.Contains(string(body), `"math"`) || !strings.Contains(string(body), `"calculator"`) {
		t.Errorf("scoped key's export lacks its namespace math with calculator: %s", body)
	}
}
