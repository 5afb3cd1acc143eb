package mcpbridge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield/mcpbridge"
)

// FuzzParseOAuthRedirect checks the reading of a redirect URL, which an
// authorization server (or a person pasting it) controls: it never panics,
// and a result always has a code.
func FuzzParseOAuthRedirect(f *testing.F) {
	for _, s := range []string{"", "http://127.0.0.1/cb?code=c&state=s", "?code=", "?error=x&code=c", "%zz", "http://[::1/cb",
		"http://127.0.0.1/cb?code=a&code=b&iss=https%3A%2F%2Fas"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := mcpbridge.ParseOAuthRedirect(s)
		if err == nil && (r == nil || r.Code == "") {
			t.Fatalf("ParseOAuthRedirect(%q) = %+v without an error", s, r)
		}
	})
}

// FuzzElicitDefaults checks the answer to a form schema, which a server
// controls: it never panics, and it accepts only with content that has
// every required field.
func FuzzElicitDefaults(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"type":"object","properties":{"a":{"type":"string","default":"x"}},"required":["a"]}`,
		`{"properties":{"a":{"default":[1,{"b":null}]}},"required":["b"]}`, `{"properties":{"a":null}}`, `{"required":[""]}`, `[1]`, `"s"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var schema any
		if json.Unmarshal([]byte(s), &schema) != nil {
			return
		}
		res, err := mcpbridge.ElicitDefaults(context.Background(), "s", &mcp.ElicitParams{RequestedSchema: schema})
		if err != nil {
			t.Fatalf("ElicitDefaults(%s): %v", s, err)
		}
		switch res.Action {
		case "decline":
		case "accept":
			obj, _ := schema.(map[string]any)
			req, _ := obj["required"].([]any)
			for _, r := range req {
				if name, ok := r.(string); ok {
					if _, ok := res.Content[name]; !ok {
						t.Fatalf("ElicitDefaults(%s) accepted without the required %q: %v", s, name, res.Content)
					}
				}
			}
		default:
			t.Fatalf("ElicitDefaults(%s): action %q", s, res.Action)
		}
	})
}
