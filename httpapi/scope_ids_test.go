package httpapi

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestOtherScopesRecordsNotFound: a call or an approval of a tool outside
// a scoped key's toolsets is, to that key, one that does not exist (404, as
// for an unknown ID), as another key's artifact is. It was a 403 naming the
// tool: the key learnt that the ID was a call and which tool of another
// scope it called.
func TestOtherScopesRecordsNotFound(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	admin, _ := mustKey(t, file, nil, RightCall)
	reviewer, _ := mustKey(t, file, nil, RightApprove)
	math, _ := mustKey(t, file, []string{"math"}, RightCall)
	hs := keyedRightsServer(t, file)
	status, body := do(t, hs, "POST", "/v1/tools/echo/call", admin, `{"arguments":{"message":"secret plans"}}`)
	var res struct {
		CallID string `json:"call_id"`
	}
	if err := json.Unmarshal(body, &res); err != nil || status != 200 {
		t.Fatalf("echo: %d %s", status, body)
	}
	wait := callAsync(t, hs, admin, "purge", `{"table":"users"}`)
	a := pendingOf(t, hs, reviewer, "purge")
	defer func() {
		if status, b := do(t, hs, "POST", "/v1/approvals/"+a.ID+"/deny", reviewer, `{"digest":"`+a.Digest+`"}`); status != 200 {
			t.Errorf("deny: %d %s", status, b)
		}
		wait()
	}()
	for _, path := range []string{"/v1/calls/" + res.CallID, "/v1/approvals/" + a.ID} {
		status, got := do(t, hs, "GET", path, math, "")
		unknown := strings.Replace(path, path[strings.LastIndexByte(path, '/')+1:], "crafzzzzzzzzzzzzzzzzzzzzzzz", 1)
		ustatus, want := do(t, hs, "GET", unknown, math, "")
		if status != 404 || ustatus != 404 {
			t.Errorf("GET %s with the math key: %d %s (an unknown ID: %d %s), want 404 as for an unknown ID", path, status, got, ustatus, want)
		}
		if strings.Replace(string(got), path[strings.LastIndexByte(path, '/')+1:], "ID", -1) != strings.Replace(string(want), "crafzzzzzzzzzzzzzzzzzzzzzzz", "ID", -1) {
			t.Errorf("GET %s with the math key: %s; an unknown ID: %s", path, got, want)
		}
		if strings.Contains(string(got), "echo") || strings.Contains(string(got), "purge") {
			t.Errorf("GET %s with the math key names the tool: %s", path, got)
		}
	}
}
