package mcpbridge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

// TestServerListsAnySchemaAsObject checks that a property that may be
// anything is listed as {}, not true, which some clients refuse.
func TestServerListsAnySchemaAsObject(t *testing.T) {
	anyTool := &wield.Tool{Name: "any", Description: "Takes anything", Handler: wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"ok"`), nil
	}), InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"x": {},
		"y": {Type: "array", Items: &jsonschema.Schema{}},
		"z": {Type: "boolean", Default: json.RawMessage("true")},
	}}}
	f := srvNew(t, nil, nil, anyTool)
	cs := srvConnect(t, f, srvStdio, "", nil)
	ctx, cancel := context.WithTimeout(context.Background(), srvWait)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name != "any" {
			continue
		}
		b, _ := json.Marshal(tl.InputSchema)
		want := `{"properties":{"x":{},"y":{"items":{},"type":"array"},"z":{"default":true,"type":"boolean"}},"type":"object"}`
		if diff := cmp.Diff(want, string(b)); diff != "" {
			t.Errorf("input schema (-want +got):\n%s", diff)
		}
		return
	}
	t.Fatal("tool any is not listed")
}
