//go:build unix

package journeys

import (
	"strings"
	"testing"
)

// TestJourneyNotFoundSaysWhat: a person who mistypes an ID in a curl to
// `wield serve` reads what was not found ("no such call", "no such
// approval", "no such artifact"), as for a tool ("no tool 'x'"); the answer
// said "not found" alone.
func TestJourneyNotFoundSaysWhat(t *testing.T) {
	u := newUser(t)
	s := u.serve()
	for path, want := range map[string]string{
		"/v1/calls/crab00":              `{"error":{"code":"not_found","message":"no such call"}}`,
		"/v1/approvals/crab00":          `{"error":{"code":"not_found","message":"no such approval"}}`,
		"/v1/artifacts/art_x":           `{"error":{"code":"not_found","message":"no such artifact"}}`,
		"/v1/artifacts/art_x?version=2": `{"error":{"code":"not_found","message":"no such artifact, or no such version of it"}}`,
		"/v1/tools/nope":                `{"error":{"code":"not_found","message":"no tool 'nope'"}}`,
	} {
		if code, b := s.do("GET", path, ""); code != 404 || strings.TrimSpace(string(b)) != want {
			t.Errorf("GET %s: %d %s, want 404 %s", path, code, b, want)
		}
	}
}

// TestJourneyCallsLimitZero: `wield calls --limit 0` is a usage error
// naming the range (exit 2), as `?limit=0` is a 400; it listed 20 calls.
func TestJourneyCallsLimitZero(t *testing.T) {
	u := newUser(t)
	if r := u.wield("calls", "--limit", "0"); r.code != 2 || !strings.Contains(r.stderr, "--limit 0: use 1 to 1000") {
		t.Errorf("want exit 2 naming the range:\n%s", r)
	}
}

// TestJourneyServerKeyHint: with a key made (`wield keys create`), `wield
// serve` wants one; `wield list --server URL` without it says how to give
// it (--key, WIELD_KEY) beside the server's words, exit 1; with the key it
// lists.
func TestJourneyServerKeyHint(t *testing.T) {
	u := newUser(t)
	key := strings.TrimSpace(u.must("keys", "create", "--name", "me").stdout)
	s := u.serve()
	r := u.wield("list", "--server", s.url)
	if r.code != 1 || !strings.Contains(r.stderr, "wield: the server needs an API key: give --key KEY or set WIELD_KEY") {
		t.Errorf("list --server without a key: want exit 1 and how to give one:\n%s", r)
	}
	u.must("list", "--server", s.url, "--key", key)
}

// TestJourneyCallArgsNotObject: `wield call echo --args '[1]'` says what
// was given instead of an object ("got an array"), exit 2; it printed Go's
// own "cannot unmarshal array into Go value of type map[string]json.RawMessage".
func TestJourneyCallArgsNotObject(t *testing.T) {
	u := newUser(t)
	r := u.wield("call", "echo", "--args", "[1]")
	if r.code != 2 || !strings.Contains(r.stderr, `--args must be a JSON object, like '{"message":"hi"}': got an array`) || strings.Contains(r.stderr, "Go value") {
		t.Errorf("want exit 2 saying it got an array:\n%s", r)
	}
}
