package httpapi

import (
	"strings"
	"testing"
	"time"
)

// TestAnswersKeepText checks that the REST answers carrying a call's
// output (the call, its record, the batch, the list of calls) write <, >
// and & as they are: text in them is for a model or a person.
func TestAnswersKeepText(t *testing.T) {
	_, hs := newTestServer(t, nil)
	const code = `if a < b && c > d`
	body := `{"arguments":{"message":"` + code + `"},"id":"esc-1"}`
	for _, rq := range []struct{ method, path, body string }{
		{"POST", "/v1/tools/echo/call", body},
		{"GET", "/v1/calls/esc-1", ""},
		{"GET", "/v1/calls?tool=echo", ""},
		{"POST", "/v1/batch", `{"calls":[{"tool":"echo","arguments":{"message":"` + code + `"}}]}`},
	} {
		status, b := do(t, hs, rq.method, rq.path, "", rq.body)
		// The record may be saved just after the answer.
		for deadline := time.Now().Add(5 * time.Second); rq.method == "GET" && !strings.Contains(string(b), "esc-1") && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			status, b = do(t, hs, rq.method, rq.path, "", rq.body)
		}
		if status != 200 || !strings.Contains(string(b), code) || strings.Contains(string(b), `\u00`) {
			t.Errorf("%s %s: %d %s, want %q as it is", rq.method, rq.path, status, b, code)
		}
	}
}
