package httpapi

import (
	"context"
	"errors"
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
