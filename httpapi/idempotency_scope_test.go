package httpapi

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestIdempotencyKeyIsTheKeys: an idempotency key is its API key's own. It
// was the server's: another key that sent the same idempotency key with the
// same arguments got the first key's output replayed (a tool that answers
// each caller differently, read_artifact among them, answered it with the
// first caller's answer), and one with other arguments learnt the key was
// taken.
func TestIdempotencyKeyIsTheKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	a, _ := mustKey(t, file, nil, RightCall)
	b, _ := mustKey(t, file, nil, RightCall)
	c, _ := mustKey(t, file, nil, RightCall)
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs, _ := rightsServer(t, ring, Options{})
	type answer struct {
		CallID    string         `json:"call_id"`
		OK        bool           `json:"ok"`
		ErrorType string         `json:"error_type"`
		Metadata  map[string]any `json:"metadata"`
	}
	call := func(key, message string) answer {
		t.Helper()
		status, body := do(t, hs, "POST", "/v1/tools/echo/call", key, `{"arguments":{"message":"`+message+`"},"idempotency_key":"order-1"}`)
		var ans answer
		if err := json.Unmarshal(body, &ans); err != nil || status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		return ans
	}
	first := call(a, "hi")
	if !first.OK || first.Metadata["replayed"] != nil {
		t.Fatalf("the first call: %+v", first)
	}
	other := call(b, "hi")
	if !other.OK || other.Metadata["replayed"] != nil {
		t.Errorf("another key, the same idempotency key and arguments: %+v, want a call of its own, not a replay of %s", other, first.CallID)
	}
	if o := call(c, "bye"); !o.OK || o.Metadata["replayed"] != nil {
		t.Errorf("another key, the same idempotency key and other arguments: %+v, want no word of the first key's use", o)
	}
	if again := call(a, "hi"); again.Metadata["replayed"] != true || again.Metadata["replay_of"] != first.CallID {
		t.Errorf("the first key again: %+v, want a replay of %s", again, first.CallID)
	}
}
