package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/internal/modeltest"
)

// TestToolSchemas: a schema with a $ref, additionalProperties and a oneOf
// reaches Gemini as the export converts it, in the OpenAPI subset its
// function declarations take: the reference inlined, additionalProperties
// false left out, oneOf as anyOf, types in upper case; on every turn.
func TestToolSchemas(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
	c, err := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "gemini-test", APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	tools := []*wield.Tool{modeltest.SchemaTool(t, "route", modeltest.RouteSchema)}
	for range 2 {
		if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi, Tools: tools}); err != nil {
			t.Fatal(err)
		}
	}
	point := func(desc string) map[string]any {
		p := map[string]any{"type": "OBJECT", "properties": map[string]any{"x": map[string]any{"type": "NUMBER"}, "y": map[string]any{"type": "NUMBER"}},
			"propertyOrdering": []any{"x", "y"}, "required": []any{"x", "y"}}
		if desc != "" {
			p["description"] = desc
		}
		return p
	}
	want := map[string]any{"name": "route", "description": "Plan a route.", "parameters": map[string]any{
		"type": "OBJECT",
		"properties": map[string]any{
			"from": point(""),
			"to":   point("Where to go"),
			"mode": map[string]any{"anyOf": []any{map[string]any{"type": "STRING", "enum": []any{"walk", "drive"}}, map[string]any{"type": "INTEGER", "minimum": 1.0}}},
		},
		"propertyOrdering": []any{"from", "mode", "to"},
		"required":         []any{"from", "to"},
	}}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		var body struct {
			Tools []struct {
				FunctionDeclarations []map[string]any `json:"functionDeclarations"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Tools) != 1 || len(body.Tools[0].FunctionDeclarations) != 1 {
			t.Fatalf("request %d: %v\n%s", i, err, r.Body)
		}
		got := body.Tools[0].FunctionDeclarations[0]
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("request %d: declaration (-want +got):\n%s", i, diff)
		}
		if ps := modeltest.GeminiSchemaProblems(got["parameters"]); len(ps) > 0 {
			t.Errorf("request %d: outside Gemini's schema: %v", i, ps)
		}
	}
}

// TestToolRefused: a tool whose schema Gemini cannot express (a map) is
// not sent changed nor dropped: Generate fails with an *llm.ToolsError
// naming it and where, before any request.
func TestToolRefused(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
	c, _ := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "gemini-test", APIKey: "k", BaseURL: srv.URL})
	headers := modeltest.SchemaTool(t, "fetch", `{"type":"object","properties":{"headers":{"type":"object","additionalProperties":{"type":"string"}}}}`)
	_, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi, Tools: []*wield.Tool{modeltest.SchemaTool(t, "route", modeltest.RouteSchema), headers}})
	var te *llm.ToolsError
	if !errors.As(err, &te) || len(te.Problems) != 1 || te.Problems[0].Tool != "fetch" || te.Problems[0].Path != "/properties/headers/additionalProperties" {
		t.Fatalf("error %v, want a ToolsError for fetch's headers", err)
	}
	if !strings.HasPrefix(err.Error(), `gemini: 1 tool cannot be offered: gemini: tool "fetch" at /properties/headers/additionalProperties: a map`) {
		t.Errorf("error %q", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
