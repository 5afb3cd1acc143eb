package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/internal/modeltest"
	"github.com/wieldhq/wield/llm/openai"
)

var hi = []llm.Message{{Role: llm.RoleUser, Content: "hi"}}

// TestToolSchemas: a schema with a $ref, additionalProperties and a oneOf
// reaches Chat Completions as JSON Schema, as it is, and in strict mode
// as StrictSchema rewrites it (oneOf as anyOf, every property required);
// on every turn.
func TestToolSchemas(t *testing.T) {
	var route map[string]any
	json.Unmarshal([]byte(modeltest.RouteSchema), &route)
	point := route["$defs"].(map[string]any)["Point"].(map[string]any)
	strictRoute := map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"from", "mode", "to"},
		"$defs": map[string]any{"Point": point},
		"properties": map[string]any{
			"from": map[string]any{"$ref": "#/$defs/Point"},
			"to":   map[string]any{"type": "object", "description": "Where to go", "properties": point["properties"], "required": []any{"x", "y"}, "additionalProperties": false},
			"mode": map[string]any{"anyOf": []any{map[string]any{"type": "string", "enum": []any{"walk", "drive"}}, map[string]any{"type": "integer", "minimum": 1.0}, map[string]any{"type": "null"}}},
		},
	}
	for _, tt := range []struct {
		strict bool
		want   map[string]any
	}{
		{false, map[string]any{"type": "function", "function": map[string]any{"name": "route", "description": "Plan a route.", "parameters": route}}},
		{true, map[string]any{"type": "function", "function": map[string]any{"name": "route", "description": "Plan a route.", "parameters": strictRoute, "strict": true}}},
	} {
		srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
		c, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: srv.URL, Strict: tt.strict})
		tools := []*wield.Tool{modeltest.SchemaTool(t, "route", modeltest.RouteSchema)}
		for range 2 {
			if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi, Tools: tools}); err != nil {
				t.Fatal(err)
			}
		}
		for i, r := range srv.Requests() {
			var body struct {
				Tools []map[string]any `json:"tools"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Tools) != 1 {
				t.Fatalf("request %d: %v\n%s", i, err, r.Body)
			}
			if diff := cmp.Diff(tt.want, body.Tools[0]); diff != "" {
				t.Errorf("strict %v, request %d: tool (-want +got):\n%s", tt.strict, i, diff)
			}
		}
	}
}

// TestToolRefused: a tool with oneOf at the top of its parameters, which
// OpenAI answers 400 for (failing the whole request), is refused before
// any request with an *llm.ToolsError naming it.
func TestToolRefused(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
	c, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: srv.URL})
	either := modeltest.SchemaTool(t, "lookup", `{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},"oneOf":[{"required":["id"]},{"required":["name"]}]}`)
	_, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi, Tools: []*wield.Tool{either, builtin.Echo()}})
	var te *llm.ToolsError
	if !errors.As(err, &te) || len(te.Problems) != 1 || te.Problems[0].Tool != "lookup" {
		t.Fatalf("error %v, want a ToolsError for lookup", err)
	}
	if want := `openai: 1 tool cannot be offered: openai: tool "lookup": function parameters cannot have oneOf at the top level`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want %q...", err, want)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
