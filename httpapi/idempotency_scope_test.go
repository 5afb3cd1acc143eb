package httpapi

import (
	"encoding/json"
	"path/filepath"
	"strings"
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
	hs := keyedRightsServer(t, file)
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

// TestIdempotencyKeyScopeUnsaid: the API key's prefix of an idempotency key
// is the server's own bookkeeping; the error of a key used again with other
// arguments does not show it (it read idempotency key "key:ID/order-1"
// to a client that sent order-1).
func TestIdempotencyKeyScopeUnsaid(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	a, _ := mustKey(t, file, nil, RightCall)
	hs := keyedRightsServer(t, file)
	for i, message := range []string{"hi", "bye"} {
		status, body := do(t, hs, "POST", "/v1/tools/echo/call", a, `{"arguments":{"message":"`+message+`"},"idempotency_key":"order-1"}`)
		var ans struct {
			OK        bool   `json:"ok"`
			ErrorType string `json:"error_type"`
			Error     string `json:"error"`
		}
		if err := json.Unmarshal(body, &ans); err != nil || status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		if i == 0 {
			continue
		}
		if ans.OK || ans.ErrorType != "validation_error" || !strings.Contains(ans.Error, "other arguments") {
			t.Fatalf("the key again with other arguments: %s, want a validation_error", body)
		}
		if strings.Contains(ans.Error, "key:") {
			t.Errorf("the error shows the server's prefix of the idempotency key: %s", ans.Error)
		}
	}
}
