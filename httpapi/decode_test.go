package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBodiesDecodedStrictly sends bodies a lenient decoder would take, each
// to an endpoint that reads a body: every one is a 400 whose message names
// the key or field at fault, and nothing runs.
func TestBodiesDecodedStrictly(t *testing.T) {
	_, hs := newTestServer(t, nil)
	tests := []struct {
		name, path, body, says string
	}{
		{"key in another case beside the real one", "/v1/tools/echo/call",
			`{"ARGUMENTS":{"message":"a"},"arguments":{"message":"b"}}`, `unknown key "ARGUMENTS" (keys are case-sensitive: did you mean "arguments"?)`},
		{"key in another case alone", "/v1/tools/echo/call", `{"Arguments":{"message":"a"}}`, `unknown key "Arguments"`},
		{"duplicate key", "/v1/tools/echo/call", `{"arguments":{"message":"a"},"arguments":{"message":"b"}}`, `duplicate key "arguments"`},
		{"duplicate key inside the arguments", "/v1/tools/echo/call", `{"arguments":{"message":"a","message":"b"}}`, `duplicate key "message" in arguments`},
		{"duplicate key in the caller", "/v1/tools/echo/call", `{"arguments":{"message":"a"},"caller":{"type":"direct","type":"workflow_node"}}`, `duplicate key "type" in caller`},
		{"invalid UTF-8", "/v1/tools/echo/call", "{\"arguments\":{\"message\":\"\xff\"}}", `not valid UTF-8`},
		{"timeout_ms as a float too large", "/v1/tools/echo/call", `{"arguments":{"message":"a"},"timeout_ms":1e30}`, `timeout_ms: 1e30 is not an integer`},
		{"timeout_ms over int64", "/v1/tools/echo/call", `{"arguments":{"message":"a"},"timeout_ms":99999999999999999999}`, `timeout_ms: 99999999999999999999 is not an integer`},
		{"timeout_ms that overflows a duration", "/v1/tools/echo/call", `{"arguments":{"message":"a"},"timeout_ms":9223372036854775}`, `timeout_ms: 9223372036854775 is not from 0`},
		{"timeout_ms over a day", "/v1/tools/echo/call", `{"arguments":{"message":"a"},"timeout_ms":86400001}`, `timeout_ms: 86400001 is not from 0`},
		{"timeout_ms negative", "/v1/tools/echo/call", `{"arguments":{"message":"a"},"timeout_ms":-1}`, `timeout_ms: -1 is not from 0`},
		{"timeout_ms with a fraction", "/v1/tools/echo/call", `{"arguments":{"message":"a"},"timeout_ms":1.5}`, `timeout_ms: 1.5 is not an integer`},
		{"batch: a call's unknown key", "/v1/batch", `{"calls":[{"tool":"echo","arguments":{"message":"a"},"TOOL":"calculator"}]}`, `unknown key "TOOL" in calls/0`},
		{"batch: a call's timeout", "/v1/batch", `{"calls":[{"tool":"echo","arguments":{"message":"a"}},{"tool":"echo","timeout_ms":90000000}]}`, `calls/1: timeout_ms: 90000000 is not from 0`},
		{"batch: duplicate calls", "/v1/batch", `{"calls":[],"calls":[{"tool":"echo"}]}`, `duplicate key "calls"`},
		{"decision", "/v1/approvals/x/approve", `{"digest":"a","DIGEST":"b"}`, `unknown key "DIGEST"`},
		{"artifact", "/v1/artifacts", `{"content":"a","content":"b"}`, `duplicate key "content"`},
		{"parse", "/v1/parse", `{"text":"a","Text":"b"}`, `unknown key "Text"`},
		{"trailing data", "/v1/parse", `{"text":"a"} {}`, `after top-level value`},
		{"empty", "/v1/parse", ` `, `the request body is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, b := do(t, hs, "POST", tt.path, "", tt.body)
			var eb errorBody
			if err := json.Unmarshal(b, &eb); err != nil || eb.Error == nil {
				t.Fatalf("%d %s: not an API error", code, b)
			}
			if code != 400 || eb.Error.Code != CodeBadRequest || !strings.Contains(eb.Error.Message, tt.says) {
				t.Errorf("got %d %s %q, want 400 bad_request saying %q", code, eb.Error.Code, eb.Error.Message, tt.says)
			}
		})
	}
	// What was refused never ran.
	code, b := do(t, hs, "GET", "/v1/calls", "", "")
	if code != 200 || strings.Contains(string(b), `"echo"`) {
		t.Errorf("calls recorded after refused bodies: %d %s", code, b)
	}
	// The same bodies, written plainly, still work.
	code, b = do(t, hs, "POST", "/v1/tools/echo/call", "", `{"arguments":{"message":"b"},"timeout_ms":86400000}`)
	if code != 200 || !strings.Contains(string(b), `"ok":true`) {
		t.Errorf("a plain call: %d %s", code, b)
	}
}
