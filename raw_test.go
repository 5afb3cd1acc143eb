package wield_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wieldhq/wield"
)

// TestRawNilSchema: a raw tool made with no schema takes no parameters and
// registers, its schema written as an object with no properties.
func TestRawNilSchema(t *testing.T) {
	h := wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"pong"`), nil
	})
	tool := wield.Raw("ping", "Answers pong.", nil, h)
	reg := wield.NewRegistry(nil)
	if err := reg.Register(tool); err != nil {
		t.Fatalf("register: %v", err)
	}
	got, err := json.Marshal(reg.Entry("ping").Tool.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"object","properties":{}}`; string(got) != want {
		t.Errorf("input schema = %s, want %s", got, want)
	}
}
