package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/internal/modeltest"
)

// TestToolSchemas: a schema with a $ref, additionalProperties and a oneOf
// reaches the Messages API as JSON Schema, as it is (the API takes them
// below the top level), and a map as well; on every turn.
func TestToolSchemas(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
	c, err := anthropic.NewClient(anthropic.ClientOptions{Model: "claude-test", APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	const mapSchema = `{"type":"object","properties":{"headers":{"type":"object","additionalProperties":{"type":"string"}}}}`
	tools := []*wield.Tool{modeltest.SchemaTool(t, "route", modeltest.RouteSchema), modeltest.SchemaTool(t, "fetch", mapSchema)}
	for range 2 {
		if _, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi, Tools: tools}); err != nil {
			t.Fatal(err)
		}
	}
	var route, fetch any
	json.Unmarshal([]byte(modeltest.RouteSchema), &route)
	json.Unmarshal([]byte(mapSchema), &fetch)
	want := []map[string]any{
		{"name": "route", "description": "Plan a route.", "input_schema": route},
		{"name": "fetch", "description": "Plan a fetch.", "input_schema": fetch},
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		var body struct {
			Tools []map[string]any `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, body.Tools); diff != "" {
			t.Errorf("request %d: tools (-want +got):\n%s", i, diff)
		}
	}
}

// TestToolRefused: a tool with oneOf at the top of its schema, which the
// Messages API answers 400 for (failing the whole request), is refused
// before any request with an *llm.ToolsError naming it.
func TestToolRefused(t *testing.T) {
	srv := modeltest.Serve(t, modeltest.Reply{Body: okReply})
	c, _ := anthropic.NewClient(anthropic.ClientOptions{Model: "claude-test", APIKey: "k", BaseURL: srv.URL})
	either := modeltest.SchemaTool(t, "lookup", `{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},"oneOf":[{"required":["id"]},{"required":["name"]}]}`)
	_, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: hi, Tools: []*wield.Tool{either}})
	var te *llm.ToolsError
	if !errors.As(err, &te) || len(te.Problems) != 1 || te.Problems[0].Tool != "lookup" {
		t.Fatalf("error %v, want a ToolsError for lookup", err)
	}
	if want := `anthropic: 1 tool cannot be offered: anthropic: tool "lookup": input_schema cannot have oneOf, anyOf or allOf at the top level`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want %q...", err, want)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
