package httpapi

import (
	"encoding/json"
	"testing"
)

// TestNotFoundSaysWhat: a 404 for an ID that is not there says what was
// asked for ("no such call"); it said "not found" alone. The words do not
// depend on the ID, so that a call out of a key's sight reads as a missing
// one, byte for byte.
func TestNotFoundSaysWhat(t *testing.T) {
	_, hs := newTestServer(t, nil)
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/v1/calls/nope", "", "no such call"},
		{"GET", "/v1/approvals/nope", "", "no such approval"},
		{"POST", "/v1/approvals/nope/approve", `{"digest":"00"}`, "no such approval"},
		{"GET", "/v1/artifacts/nope", "", "no such artifact"},
		{"GET", "/v1/artifacts/nope?version=3", "", "no such artifact, or no such version of it"},
		{"PUT", "/v1/artifacts/nope", `{"content":"x"}`, "no such artifact"},
	} {
		code, body := do(t, hs, c.method, c.path, "", c.body)
		var e errorBody
		if code != 404 || json.Unmarshal(body, &e) != nil || e.Error == nil || e.Error.Code != CodeNotFound || e.Error.Message != c.want {
			t.Errorf("%s %s: %d %s, want 404 not_found %q", c.method, c.path, code, body, c.want)
		}
	}
}
