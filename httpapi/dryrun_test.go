package httpapi

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// recorded is how many calls the server's store holds.
func recorded(t *testing.T, hs *httptest.Server, key string) int {
	t.Helper()
	var list CallList
	status, b := do(t, hs, "GET", "/v1/calls", key, "")
	if status != 200 || json.Unmarshal(b, &list) != nil {
		t.Fatalf("GET /v1/calls: %d %s", status, b)
	}
	return len(list.Calls)
}

// TestDryRunREST: ?dry_run=true (or 1) on the call route, which the fast
// path serves, answers a DryRun with the error type and message the call
// then gets, and records nothing; bad values are a 400 and nothing runs.
func TestDryRunREST(t *testing.T) {
	_, hs := newTestServer(t, nil)
	tests := []struct {
		name, tool, body string
		want             wield.ErrorType
	}{
		{"runs", "echo", `{"arguments":{"message":"hi"}}`, ""},
		{"validation_error", "echo", `{"arguments":{"message":7,"x":1}}`, wield.ErrValidation},
		{"tool_not_found", "nope", `{"arguments":{}}`, wield.ErrToolNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := recorded(t, hs, "")
			for _, q := range []string{"true", "1"} {
				status, b := do(t, hs, "POST", "/v1/tools/"+tt.tool+"/call?dry_run="+q, "", tt.body)
				var d wield.DryRun
				if status != 200 || json.Unmarshal(b, &d) != nil {
					t.Fatalf("dry_run=%s: %d %s", q, status, b)
				}
				if d.WouldRun != (tt.want == "") || d.ErrorType != tt.want {
					t.Errorf("dry_run=%s: would_run %v, error_type %q; want %q", q, d.WouldRun, d.ErrorType, tt.want)
				}
				if got := recorded(t, hs, ""); got != before {
					t.Errorf("dry_run=%s: %d records written", q, got-before)
				}
				status, b = do(t, hs, "POST", "/v1/tools/"+tt.tool+"/call", "", tt.body)
				var res wield.Result
				if status != 200 || json.Unmarshal(b, &res) != nil {
					t.Fatalf("the call: %d %s", status, b)
				}
				if diff := cmp.Diff([]any{res.ErrorType, res.Error, res.ValidationErrors}, []any{d.ErrorType, d.Error, d.ValidationErrors}); diff != "" {
					t.Errorf("dry run against the call (-call +dry):\n%s", diff)
				}
				before++
			}
		})
	}
	t.Run("false is the call", func(t *testing.T) {
		before := recorded(t, hs, "")
		for _, q := range []string{"false", "0"} {
			status, b := do(t, hs, "POST", "/v1/tools/echo/call?dry_run="+q, "", `{"arguments":{"message":"hi"}}`)
			if status != 200 || !strings.Contains(string(b), `"ok":true`) {
				t.Errorf("dry_run=%s: %d %s", q, status, b)
			}
		}
		if got := recorded(t, hs, ""); got != before+2 {
			t.Errorf("records: %d, want %d", got, before+2)
		}
	})
	t.Run("bad values", func(t *testing.T) {
		before := recorded(t, hs, "")
		for _, q := range []string{"dry_run=yes", "dry_run=", "dry_run=true&dry_run=false", "dry_run=TRUE"} {
			status, b := do(t, hs, "POST", "/v1/tools/echo/call?"+q, "", `{"arguments":{"message":"hi"}}`)
			if status != 400 || errorCode(b) != CodeBadRequest || !strings.Contains(string(b), "dry_run") {
				t.Errorf("%s: %d %s; want 400 naming dry_run", q, status, b)
			}
		}
		if got := recorded(t, hs, ""); got != before {
			t.Errorf("a refused dry run ran the call: %d records", got-before)
		}
	})
	t.Run("not for batches", func(t *testing.T) {
		before := recorded(t, hs, "")
		status, b := do(t, hs, "POST", "/v1/batch?dry_run=true", "", `{"calls":[{"tool":"echo","arguments":{"message":"hi"}}]}`)
		if status != 400 || !strings.Contains(string(b), "dry_run is not offered for batches") {
			t.Errorf("batch with dry_run: %d %s; want 400", status, b)
		}
		if got := recorded(t, hs, ""); got != before {
			t.Errorf("a refused batch ran %d calls", got-before)
		}
	})
	t.Run("client", func(t *testing.T) {
		c := NewClient(hs.URL, "")
		d, err := c.DryRun(context.Background(), "echo", CallRequest{Arguments: json.RawMessage(`{"message":"5"}`), TimeoutMS: 1500})
		if err != nil {
			t.Fatal(err)
		}
		if !d.WouldRun || d.TimeoutFrom != "call" || d.Timeout.Milliseconds() != 1500 || d.Limit == nil || d.Limit.Outcome != "run" {
			t.Errorf("client dry run: %+v", d)
		}
	})
}

// TestDryRunApprovalREST: a dry run of a confirm tool says who may decide,
// as this server decides it, and leaves no approval pending.
func TestDryRunApprovalREST(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	agent, agentID := mustKey(t, file, nil, RightCall)
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	_, hs, _ := rightsServer(t, ring, Options{})
	status, b := do(t, hs, "POST", "/v1/tools/purge/call?dry_run=true", agent, `{"arguments":{"table":"users"}}`)
	var d wield.DryRun
	if status != 200 || json.Unmarshal(b, &d) != nil {
		t.Fatalf("dry run: %d %s", status, b)
	}
	if !d.WouldRun || d.Approval == nil || !d.Approval.Required || d.Approval.RequestedBy != "key:"+agentID ||
		!strings.Contains(d.Approval.Deciders, "approve right") || !strings.Contains(d.Approval.Deciders, "other than the key that asked (key:"+agentID+")") {
		t.Errorf("dry run of a confirm tool: %s", b)
	}
	var list ApprovalList
	if _, b := do(t, hs, "GET", "/v1/approvals", agent, ""); json.Unmarshal(b, &list) != nil || len(list.Approvals) != 0 {
		t.Errorf("approvals after a dry run: %s", b)
	}
	if n := recorded(t, hs, agent); n != 0 {
		t.Errorf("records after a dry run: %d", n)
	}
}
