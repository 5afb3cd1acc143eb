//go:build unix

package journeys

// Dry runs: a person asks `wield call --dry-run` what a call would do
// before making it, against a running server. Each error class gets the
// answer the real call then gets; a confirm tool says it needs approval
// and nobody is asked; nothing a dry run does leaves a record.

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// dryTools: mark needs approval and writes ran.txt when it runs; forbidden
// may never run; note runs at once; hold keeps the one slot for a while.
var dryTools = map[string]string{
	"tools/mark.yaml": markTool,
	"tools/forbidden.yaml": `name: forbidden
description: Never allowed
permission: deny
parameters:
  - name: message
    type: string
entry:
  type: command
  command: ["sh", "-c", "echo \"$0\" >> ran.txt", "{message}"]
`,
	"tools/note.yaml": `name: note
description: Do nothing with a message
parameters:
  - name: message
    type: string
entry:
  type: command
  command: ["true"]
`,
	"tools/hold.yaml": `name: hold
description: Keep the slot for two seconds
entry:
  type: command
  command: ["sleep", "2"]
`,
}

// dryReport is what `wield call --dry-run --json` prints.
type dryReport struct {
	WouldRun  bool   `json:"would_run"`
	Stage     string `json:"stage"`
	ErrorType string `json:"error_type"`
	Error     string `json:"error"`
	Approval  *struct {
		Required bool   `json:"required"`
		Deciders string `json:"deciders"`
	} `json:"approval"`
	Limit *struct {
		Outcome  string `json:"outcome"`
		InFlight int    `json:"in_flight"`
	} `json:"limit"`
}

func TestJourneyDryRun(t *testing.T) {
	u := newUser(t)
	for name, body := range dryTools {
		u.write(name, body)
	}
	u.write("wield.yaml", "tool_dirs: [tools]\nconcurrency:\n  max: 1\n  strategy: reject\n")
	s := u.serve("--config", "wield.yaml")
	srv := "--server=" + s.url

	// dry runs the real call of the same arguments, and compares.
	same := func(class string, args ...string) {
		t.Helper()
		d := u.wield(append([]string{"call", srv, "--dry-run", "--json"}, args...)...)
		var rep dryReport
		d.json(t, &rep)
		if d.code != 1 || rep.WouldRun || rep.ErrorType != class || d.took > 10*time.Second {
			t.Fatalf("dry run, want %s and exit 1 at once:\n%s", class, d)
		}
		r := u.wield(append([]string{"call", srv}, args...)...)
		var res callResult
		r.json(t, &res)
		if r.code != 1 || res.ErrorType != rep.ErrorType || res.Error != rep.Error {
			t.Fatalf("the real call answers otherwise than its dry run (%s: %q):\n%s", rep.ErrorType, rep.Error, r)
		}
	}
	same("validation_error", "mark", "message:=[1]", "extra=1")
	same("permission_denied", "forbidden", "message=hi")
	same("tool_not_found", "nope")

	// A call that would run: the report for a person, exit 0.
	d := u.must("call", srv, "--dry-run", "mark", "message=first")
	for _, want := range []string{"dry run of mark: would run", `arguments   {"message":"first"}`, "permission  confirm", "approval    needed, from a person", "limiter     bucket", "would run now; 0 of 1 units in flight", "timeout     30s (default)", "retries     none"} {
		if !strings.Contains(d.stdout, want) {
			t.Errorf("the report lacks %q:\n%s", want, d)
		}
	}
	if l := u.must("approvals", "list", "--json"); strings.TrimSpace(l.stdout) != "[]" {
		t.Errorf("a dry run left an approval pending:\n%s", l)
	}

	// The one slot taken, the limiter would reject: as the real call is.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Post(s.url+"/v1/tools/hold/call", "application/json", strings.NewReader(`{"arguments":{}}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	if !eventually(5*time.Second, func() bool {
		code, b := s.do("GET", "/v1/limiter", "")
		return code == 200 && strings.Contains(string(b), `"current_concurrent":1`)
	}) {
		t.Fatal("the hold call did not take the slot within 5 s")
	}
	same("rejected", "note", "message=second")
	// mark would still wait for approval first: the limiter comes after.
	d = u.must("call", srv, "--dry-run", "mark", "message=second")
	if !strings.Contains(d.stdout, "would be rejected now") {
		t.Errorf("the report of a confirm call does not show the full limiter:\n%s", d)
	}
	wg.Wait()

	// Only the real calls are recorded: three refused ones, the rejected
	// one and hold; mark never ran.
	var page struct {
		Records []struct {
			Call struct {
				Tool string `json:"tool"`
			} `json:"call"`
		} `json:"records"`
	}
	u.must("calls", srv, "--json").json(t, &page)
	var tools []string
	for _, r := range page.Records {
		tools = append(tools, r.Call.Tool)
	}
	if len(tools) != 5 || strings.Count(strings.Join(tools, " "), "mark") != 1 {
		t.Errorf("records: %v; want the 5 real calls (one of mark, refused as invalid)", tools)
	}
	if _, err := os.Stat(u.path("ran.txt")); err == nil {
		t.Error("mark ran: ran.txt exists")
	}
	var rep json.RawMessage
	code, b := s.do("POST", "/v1/tools/mark/call?dry_run=maybe", `{"arguments":{"message":"x"}}`)
	if code != 400 || !strings.Contains(string(b), "dry_run") || json.Unmarshal(b, &rep) != nil {
		t.Errorf("dry_run=maybe: %d %s; want a 400 naming dry_run", code, b)
	}
}
