package httpapi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
)

// TestCallIDReused is a client that reuses a call ID, to have a call run
// with no record of its own: 409 call_id_taken before anything runs, for a
// call and for a batch (two calls of one ID, or one of a recorded ID), and
// the shape of the IDs the server makes is refused as a chosen ID.
func TestCallIDReused(t *testing.T) {
	s, hs := newTestServer(t, nil)
	call := `{"id":"mine","arguments":{"message":"first"}}`
	if code, body := do(t, hs, "POST", "/v1/tools/echo/call", "", call); code != 200 {
		t.Fatalf("first call: %d %s", code, body)
	}
	for _, c := range []struct{ path, body string }{
		{"/v1/tools/echo/call", `{"id":"mine","arguments":{"message":"second"}}`},
		{"/v1/tools/calculator/call", `{"id":"mine","arguments":{"expression":"1+1"}}`},
		{"/v1/batch", `{"calls":[{"tool":"echo","id":"fresh-1","arguments":{"message":"a"}},{"tool":"echo","id":"mine","arguments":{"message":"b"}}]}`},
		{"/v1/batch", `{"calls":[{"tool":"echo","id":"twin","arguments":{"message":"a"}},{"tool":"echo","id":"twin","arguments":{"message":"b"}}]}`},
		{"/v1/batch", `{"mode":"sequential","calls":[{"tool":"echo","id":"twin","arguments":{"message":"a"}},{"tool":"echo","id":"twin","arguments":{"message":"b"}}]}`},
	} {
		code, body := do(t, hs, "POST", c.path, "", c.body)
		if code != 409 || errorCode(body) != CodeCallIDTaken {
			t.Errorf("POST %s %s: %d %s, want 409 call_id_taken", c.path, c.body, code, body)
		}
	}
	ctx := context.Background()
	rec, err := s.store.Call(ctx, "mine")
	if err != nil || !strings.Contains(string(rec.Arguments), "first") {
		t.Errorf("the record of mine: %+v, %v; want the first call's", rec, err)
	}
	for _, id := range []string{"fresh-1", "twin"} {
		if _, err := s.store.Call(ctx, id); !errors.Is(err, wield.ErrNotFound) {
			t.Errorf("call %s of a refused batch: %v, want not recorded (nothing ran)", id, err)
		}
	}
	id := wield.NewID()
	code, body := do(t, hs, "POST", "/v1/tools/echo/call", "", `{"id":"`+id+`","arguments":{"message":"x"}}`)
	if code != 400 || !strings.Contains(string(body), "shape of the IDs the server makes") {
		t.Errorf("a chosen ID of the server's shape: %d %s, want 400", code, body)
	}
	c := NewClient(hs.URL, "")
	_, err = c.Call(ctx, "echo", CallRequest{ID: "mine", Arguments: []byte(`{"message":"third"}`)})
	if !errors.Is(err, wield.ErrCallIDTaken) {
		t.Errorf("Client.Call with a taken ID: %v, want one that is wield.ErrCallIDTaken", err)
	}
}
