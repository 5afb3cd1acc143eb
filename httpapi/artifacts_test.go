package httpapi

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestArtifactsOfOtherKeys is key A, scoped to toolset math, that knows the
// ID of key B's artifact: reading, updating and rewriting it answer 404 as
// for an ID that does not exist, B's artifact is unchanged, and A may make
// an artifact of the same ID, its own.
func TestArtifactsOfOtherKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	a, _, err := CreateKey(file, "a", RightCall, []string{"math"})
	if err != nil {
		t.Fatal(err)
	}
	b, bKey, err := CreateKey(file, "b", RightCall, nil)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, ring)

	code, body := do(t, hs, "POST", "/v1/artifacts", b, `{"id":"plan","content":"B's plan"}`)
	if code != 201 {
		t.Fatalf("B creates: %d %s", code, body)
	}
	var made struct{ ID, Owner, Content string }
	if err := json.Unmarshal(body, &made); err != nil || made.Owner != "key:"+bKey.ID {
		t.Fatalf("B's artifact %s: owner %q, want key:%s", body, made.Owner, bKey.ID)
	}
	code, body = do(t, hs, "POST", "/v1/artifacts", b, `{"content":"B's other plan"}`)
	var gen struct{ ID string }
	if code != 201 || json.Unmarshal(body, &gen) != nil || gen.ID == "" {
		t.Fatalf("B creates without an ID: %d %s", code, body)
	}
	for _, id := range []string{"plan", gen.ID} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/v1/artifacts/" + id, ""},
			{"GET", "/v1/artifacts/" + id + "?version=1", ""},
			{"PATCH", "/v1/artifacts/" + id, `{"old":"plan","new":"stolen"}`},
			{"PUT", "/v1/artifacts/" + id, `{"content":"overwritten"}`},
		} {
			code, body := do(t, hs, c.method, c.path, a, c.body)
			if code != 404 || errorCode(body) != CodeNotFound {
				t.Errorf("key A %s %s: %d %s, want 404 not_found", c.method, c.path, code, body)
			}
		}
	}
	code, body = do(t, hs, "GET", "/v1/artifacts/plan", b, "")
	if code != 200 || json.Unmarshal(body, &made) != nil || made.Content != "B's plan" {
		t.Errorf("B reads its own after A's attempts: %d %s, want B's plan unchanged", code, body)
	}
	code, body = do(t, hs, "POST", "/v1/artifacts", a, `{"id":"plan","content":"A's plan"}`)
	if code != 201 {
		t.Fatalf("A creates an artifact of an ID B uses: %d %s, want 201 (IDs are per key)", code, body)
	}
	if code, body = do(t, hs, "POST", "/v1/artifacts", a, `{"id":"plan","content":"again"}`); code != 409 {
		t.Errorf("A creates its own ID again: %d %s, want 409", code, body)
	}
	for key, want := range map[string]string{a: "A's plan", b: "B's plan"} {
		code, body := do(t, hs, "GET", "/v1/artifacts/plan", key, "")
		if code != 200 || json.Unmarshal(body, &made) != nil || made.Content != want {
			t.Errorf("GET plan: %d %s, want %q", code, body, want)
		}
	}
}
