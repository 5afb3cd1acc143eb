//go:build unix

package journeys

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneyMCPImportTask: a `wield serve` whose tool nap runs only as an
// MCP task (`task: required`) is imported by another wield (mcp_servers),
// a one-shot `wield call` and then a `wield serve`. A call of the imported
// tool looks like any call: `wield call` prints the result, and `wield
// calls` shows one record. The outer call's timeout, and an interrupted
// `wield call` (SIGINT), cancel the inner task: the inner server's record
// of it says canceled.
func TestJourneyMCPImportTask(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	in := newUser(t)
	in.write("tools/nap.yaml", napTool)
	inner := in.serve("--tools", "tools")

	out := newUser(t)
	out.write("config.yml", fmt.Sprintf("mcp_servers:\n  - {name: inner, url: %q}\n", inner.url+"/mcp"))
	r := out.must("call", "--config", "config.yml", "inner__nap", "duration:=1")
	var res struct {
		CallID    string         `json:"call_id"`
		OK        bool           `json:"ok"`
		Output    map[string]any `json:"output"`
		Error     string         `json:"error"`
		ErrorType string         `json:"error_type"`
	}
	r.json(t, &res)
	if !res.OK || res.Output["slept"] == nil {
		t.Errorf("call of the imported task tool = %+v, want the sleep's result", res)
	}
	calls := out.must("calls", "--config", "config.yml")
	if n := strings.Count(calls.stdout, "inner__nap"); n != 1 || !strings.Contains(calls.stdout, res.CallID) {
		t.Errorf("wield calls shows %d records of inner__nap, want the one call %s:\n%s", n, res.CallID, calls)
	}
	innerRecords := func() (ok, canceled int, messages []string) {
		code, body := inner.do("GET", "/v1/calls?tool=nap", "")
		var page struct {
			Calls []struct {
				Result struct {
					OK        bool   `json:"ok"`
					ErrorType string `json:"error_type"`
					Error     string `json:"error"`
				} `json:"result"`
			} `json:"calls"`
		}
		if code != 200 || json.Unmarshal(body, &page) != nil {
			t.Fatalf("GET /v1/calls?tool=nap on the inner server: %d %s", code, body)
		}
		for _, c := range page.Calls {
			switch {
			case c.Result.OK:
				ok++
			case c.Result.ErrorType == "canceled":
				canceled++
				messages = append(messages, c.Result.Error)
			}
		}
		return ok, canceled, messages
	}
	if ok, canceled, _ := innerRecords(); ok != 1 || canceled != 0 {
		t.Errorf("inner records: %d ok, %d canceled; want the one task, ok", ok, canceled)
	}

	// The outer call times out: the inner task is canceled.
	r = out.wield("call", "--config", "config.yml", "--timeout", "1s", "inner__nap", "duration:=60")
	r.json(t, &res)
	if r.code != 1 || res.ErrorType != "timeout" || r.took > 15*time.Second {
		t.Errorf("call past its timeout: exit %d, %+v after %v; want a timeout", r.code, res, r.took)
	}
	var msgs []string
	if !eventually(10*time.Second, func() bool { _, c, m := innerRecords(); msgs = m; return c == 1 }) {
		t.Fatalf("the inner task of the timed-out call is not recorded canceled: %q", msgs)
	}
	if !strings.Contains(msgs[0], "tasks/cancel") {
		t.Errorf("inner record of the canceled task says %q, want the client's tasks/cancel", msgs[0])
	}

	// An interrupted `wield call` cancels the inner task too.
	cmd := exec.Command(bin, "call", "--config", "config.yml", "inner__nap", "duration:=60")
	cmd.Dir, cmd.Env = out.dir, out.env
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
			<-done
		}
	})
	// Interrupted once the task runs on the inner server (its limiter
	// counts it).
	if !eventually(30*time.Second, func() bool {
		code, body := inner.do("GET", "/v1/limiter", "")
		var m struct {
			Current int `json:"current_concurrent"`
		}
		return code == 200 && json.Unmarshal(body, &m) == nil && m.Current > 0
	}) {
		t.Fatalf("the inner task never started:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("wield call still runs 15 s after SIGINT:\n%s\n%s", stdout.String(), stderr.String())
	}
	if !eventually(10*time.Second, func() bool { _, c, m := innerRecords(); msgs = m; return c == 2 }) {
		t.Fatalf("the inner task of the interrupted call is not recorded canceled: %q\nouter stderr:\n%s", msgs, stderr.String())
	}

	// `wield serve` importing it: the same through the outer server.
	outer := out.serve("--config", "config.yml")
	if !eventually(20*time.Second, func() bool {
		_, b := outer.do("GET", "/v1/tools", "")
		return strings.Contains(string(b), "inner__nap")
	}) {
		t.Fatalf("the outer serve does not list inner__nap:\n%s", outer.stderr)
	}
	r = out.must("call", "--server", outer.url, "inner__nap", "duration:=1")
	r.json(t, &res)
	if !res.OK || res.Output["slept"] == nil {
		t.Errorf("call through the outer serve = %+v, want the sleep's result", res)
	}
	calls = out.must("calls", "--server", outer.url)
	// The user's store has the three one-shot calls before it.
	if n := strings.Count(calls.stdout, "inner__nap"); n != 4 || strings.Count(calls.stdout, res.CallID) != 1 {
		t.Errorf("wield calls --server shows %d records of inner__nap, want 4, the call %s once:\n%s", n, res.CallID, calls)
	}
	r = out.wield("call", "--server", outer.url, "--timeout", "1s", "inner__nap", "duration:=60")
	r.json(t, &res)
	if r.code != 1 || res.ErrorType != "timeout" {
		t.Errorf("call through the outer serve past its timeout: exit %d, %+v", r.code, res)
	}
	if !eventually(10*time.Second, func() bool { _, c, m := innerRecords(); msgs = m; return c == 3 }) {
		t.Fatalf("the inner task of the outer serve's timed-out call is not recorded canceled: %q", msgs)
	}
	if ok, _, _ := innerRecords(); ok != 2 {
		t.Errorf("inner records: %d ok, want 2", ok)
	}
	if code, took := outer.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("outer serve after SIGTERM: exit %d after %v", code, took)
	}
	if code, took := inner.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("inner serve after SIGTERM: exit %d after %v", code, took)
	}
}
