//go:build unix

package journeys

// Settings of the engine that only Go code could change before: the output
// budget (max_output: how much of a call's output a model gets), how long a
// call of a confirm tool waits for a person (approval_timeout), and how
// transient failures of idempotent tools are retried (retry).

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// numbersTool prints 1 to 50000, one a line: about 289 KB, all of which its
// command entry keeps (max_output there is what is kept of stdout).
const numbersTool = `name: numbers
description: Print the numbers from 1 to 50000
entry:
  type: command
  command: ["seq", "1", "50000"]
  max_output: 1048576
`

// budgetResult is what a journey reads of a call's result.
type budgetResult struct {
	OK       bool            `json:"ok"`
	Output   json.RawMessage `json:"output"`
	Metadata map[string]any  `json:"metadata"`
}

// TestJourneyOutputBudget: a command tool's whole output is kept by its
// entry, but the model gets 64 KiB of it, cut in the middle; the
// configuration's max_output raises that for every tool, a tool file's
// max_output sets a tool's own (winning over the configuration's), on the
// command line and through `wield serve` alike; a budget that is not a
// positive number of bytes stops wield at its line.
func TestJourneyOutputBudget(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	u.write("tools/numbers.yaml", numbersTool)
	u.write("tools/few.yaml", strings.Replace(strings.Replace(numbersTool, "name: numbers", "name: few_numbers", 1), "description:", "max_output: 2000\ndescription:", 1))

	var res budgetResult
	u.must("call", "numbers", "--tools", "tools").json(t, &res)
	if !res.OK || res.Metadata["truncated"] != true || len(res.Output) > 64<<10 || res.Metadata["original_bytes"].(float64) < 250_000 {
		t.Fatalf("without a budget set: ok %v, %d bytes, metadata %v; want the 64 KiB default cutting a larger output", res.OK, len(res.Output), res.Metadata)
	}
	if !strings.Contains(string(res.Output), "50000") {
		t.Errorf("the cut output lost its tail:\n%.300s", res.Output)
	}

	u.write("wield.yaml", "tool_dirs: [tools]\nmax_output: 1048576\n")
	res = budgetResult{}
	u.must("call", "numbers", "--config", "wield.yaml").json(t, &res)
	if !res.OK || res.Metadata["truncated"] != nil {
		t.Fatalf("with max_output: 1048576: metadata %v, want the output whole", res.Metadata)
	}
	var whole struct {
		Stdout string `json:"stdout"`
	}
	if err := json.Unmarshal(res.Output, &whole); err != nil || strings.Count(whole.Stdout, "\n") != 50000 {
		t.Fatalf("with max_output: 1048576: not the 50000 lines (%v):\n%.300s", err, res.Output)
	}
	res = budgetResult{}
	u.must("call", "few_numbers", "--config", "wield.yaml").json(t, &res)
	if res.Metadata["truncated"] != true || len(res.Output) > 2000 {
		t.Errorf("a tool's max_output: 2000 under the configuration's 1048576: %d bytes, metadata %v; want at most 2000, truncated", len(res.Output), res.Metadata)
	}

	s := u.serve("--config", "wield.yaml")
	code, body := s.do("POST", "/v1/tools/numbers/call", `{"arguments": {}}`)
	res = budgetResult{}
	if err := json.Unmarshal(body, &res); code != 200 || err != nil || !res.OK || res.Metadata["truncated"] != nil || len(res.Output) < 250_000 {
		t.Errorf("wield serve with max_output: 1048576: %d, %d bytes, metadata %v; want the whole output", code, len(res.Output), res.Metadata)
	}
	code, body = s.do("GET", "/v1/tools", "")
	var list struct {
		Tools []struct {
			Name      string `json:"name"`
			MaxOutput int    `json:"max_output"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &list); code != 200 || err != nil {
		t.Fatalf("GET /v1/tools: %d %v", code, err)
	}
	for _, tl := range list.Tools {
		if want := map[string]int{"few_numbers": 2000}[tl.Name]; tl.MaxOutput != want {
			t.Errorf("GET /v1/tools: %s has max_output %d, want %d", tl.Name, tl.MaxOutput, want)
		}
	}

	for src, want := range map[string]string{
		"max_output: 0\n":    "wield.yaml:1:13: max_output: must be at least 1 (bytes; leave it out for the default, 65536)",
		"max_output: 64KB\n": "wield.yaml:1:13: max_output: expected a non-negative integer, got string",
	} {
		u.write("wield.yaml", src)
		r := u.wield("call", "echo", "message=hi", "--config", "wield.yaml")
		if r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
			t.Errorf("%q: want exit 1 saying %q, nothing run:\n%s", src, want, r)
		}
	}
	u.write("tools/bad.yaml", "name: bad\ndescription: d\nmax_output: -1\nentry: {type: builtin, handler: echo}\n")
	r := u.wield("validate", "tools")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "tools/bad.yaml:3:13: max_output: must be at least 1") {
		t.Errorf("a tool file's max_output: -1: want wield validate to refuse it at its line:\n%s", r)
	}
}

// TestJourneyApprovalTimeout: a call of a confirm tool that nobody decides
// waits 15 minutes by default; approval_timeout: 2s in the configuration
// makes `wield serve` answer it approval_denied, "expired", after about 2 s,
// the tool not run and the approval listed as expired; 0 or a word is
// refused at its line before anything starts.
func TestJourneyApprovalTimeout(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)

	var dry struct {
		Approval struct {
			ExpiresAfterMS int64 `json:"expires_after_ms"`
		} `json:"approval"`
	}
	u.must("call", "mark", "message=a", "--tools", "tools", "--dry-run", "--json").json(t, &dry)
	if dry.Approval.ExpiresAfterMS != (15 * time.Minute).Milliseconds() {
		t.Errorf("dry run without approval_timeout: expires after %d ms, want 15 minutes", dry.Approval.ExpiresAfterMS)
	}
	u.write("wield.yaml", "tool_dirs: [tools]\napproval_timeout: 2s\n")
	dry.Approval.ExpiresAfterMS = 0
	u.must("call", "mark", "message=a", "--config", "wield.yaml", "--dry-run", "--json").json(t, &dry)
	if dry.Approval.ExpiresAfterMS != 2000 {
		t.Errorf("dry run with approval_timeout: 2s: expires after %d ms, want 2000", dry.Approval.ExpiresAfterMS)
	}

	s := u.serve("--config", "wield.yaml")
	start := time.Now()
	code, body := s.do("POST", "/v1/tools/mark/call", `{"arguments": {"message": "late"}}`)
	took := time.Since(start)
	var res struct {
		OK        bool   `json:"ok"`
		Error     string `json:"error"`
		ErrorType string `json:"error_type"`
	}
	if err := json.Unmarshal(body, &res); code != 200 || err != nil || res.ErrorType != "approval_denied" || !strings.Contains(res.Error, "expired") {
		t.Fatalf("an undecided call under approval_timeout: 2s: %d %s; want approval_denied, expired", code, body)
	}
	if took < 1500*time.Millisecond || took > 15*time.Second {
		t.Errorf("the undecided call was answered after %v, want about 2 s", took)
	}
	var approvals []struct {
		Status    string    `json:"status"`
		CreatedAt time.Time `json:"created_at"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	code, body = s.do("GET", "/v1/approvals?status=expired", "")
	var page struct {
		Approvals json.RawMessage `json:"approvals"`
	}
	if err := json.Unmarshal(body, &page); code != 200 || err != nil || json.Unmarshal(page.Approvals, &approvals) != nil || len(approvals) != 1 {
		t.Fatalf("GET /v1/approvals?status=expired: %d %s; want the one approval", code, body)
	}
	if a := approvals[0]; a.ExpiresAt.Sub(a.CreatedAt) != 2*time.Second {
		t.Errorf("the approval lived %v, want 2s", a.ExpiresAt.Sub(a.CreatedAt))
	}
	if _, err := os.Stat(u.path("ran.txt")); err == nil {
		t.Errorf("the tool ran although nobody approved it")
	}

	for src, want := range map[string]string{
		"approval_timeout: 0\n":     "wield.yaml:1:19: approval_timeout: must be more than 0 (leave it out for the default, 15m)",
		"approval_timeout: never\n": `wield.yaml:1:19: approval_timeout: "never" is not a duration like "30s"`,
	} {
		u.write("wield.yaml", src)
		r := u.wield("serve", "--addr", "127.0.0.1:0", "--config", "wield.yaml")
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("%q: want wield serve to exit 1 saying %q:\n%s", src, want, r)
		}
	}
}

// flakyTool reads a status page at an address (%s): an idempotent GET, so a transport
// failure is retried.
const flakyTool = `name: status
description: Read the service's status page
annotations: {idempotent: true, read_only: true}
entry:
  type: http
  method: GET
  url: "http://%s/status"
`

// TestJourneyRetry: an idempotent tool whose server drops every connection
// is tried 3 times by default; retry: {max_attempts: 1} in wield.yaml tries
// it once, {max_attempts: 5} five times, through `wield call` and `wield
// serve`, each call answering the transport failure; a max_backoff shorter
// than the first wait, or 0 attempts, stops wield at its line.
func TestJourneyRetry(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	// A port of its own, where every connection is accepted and closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dials, ok := cfgCountDials(t, addr)
	if !ok {
		t.Fatalf("port %s was taken between two listens", addr)
	}
	u.write("tools/status.yaml", fmt.Sprintf(flakyTool, addr))
	allow := fmt.Sprintf("tool_dirs: [tools]\nhttp_allow: [\"%s\"]\n", addr)

	attempts := func(r *run) int {
		t.Helper()
		var res struct {
			OK        bool   `json:"ok"`
			ErrorType string `json:"error_type"`
			Attempts  int    `json:"attempts"`
		}
		r.json(t, &res)
		if res.OK || res.ErrorType != "execution_error" {
			t.Errorf("a call whose server drops the connection: ok %v, %s; want an execution_error\n%s", res.OK, res.ErrorType, r)
		}
		return res.Attempts
	}
	for src, want := range map[string]int{"": 3, "retry: {max_attempts: 1}\n": 1, "retry: {max_attempts: 5, backoff: 10ms, max_backoff: 40ms}\n": 5} {
		u.write("wield.yaml", allow+src)
		before := dials.Load()
		got := attempts(u.wield("call", "status", "--config", "wield.yaml"))
		if n := dials.Load() - before; got != want || int(n) != want {
			t.Errorf("%q: %d attempts recorded, %d connections; want %d", src, got, n, want)
		}
	}

	u.write("wield.yaml", allow+"retry: {max_attempts: 2, backoff: 10ms}\n")
	s := u.serve("--config", "wield.yaml")
	before := dials.Load()
	code, body := s.do("POST", "/v1/tools/status/call", `{"arguments": {}}`)
	var res struct {
		Attempts int `json:"attempts"`
	}
	if err := json.Unmarshal(body, &res); code != 200 || err != nil || res.Attempts != 2 || dials.Load()-before != 2 {
		t.Errorf("wield serve with max_attempts: 2: %d %s, %d connections; want 2 attempts", code, body, dials.Load()-before)
	}

	for src, want := range map[string]string{
		"retry: {max_attempts: 0}\n":                 "wield.yaml:1:23: retry.max_attempts: must be at least 1 (1: no retries; leave it out for the default, 3)",
		"retry: {backoff: 1s, max_backoff: 500ms}\n": "wield.yaml:1:35: retry: max_backoff 500ms is shorter than backoff 1s, the first wait: raise max_backoff or lower backoff",
	} {
		u.write("wield.yaml", src)
		r := u.wield("call", "echo", "message=hi", "--config", "wield.yaml")
		if r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
			t.Errorf("%q: want exit 1 saying %q, nothing run:\n%s", src, want, r)
		}
	}
}
