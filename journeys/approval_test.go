//go:build unix

package journeys

// Approvals whose callers went away: a person approves a call after the
// program that asked for it stopped waiting (its HTTP client timed out, or
// the server was restarted), and the call still runs, once, and is recorded
// and announced.

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// markTool needs a person's approval; each run appends its message to
// ran.txt in the server's folder, so a journey counts the runs.
const markTool = `name: mark
description: Write a line to ran.txt, after a person approves
permission: confirm
parameters:
  - name: message
    type: string
entry:
  type: command
  command: ["sh", "-c", "echo \"$0\" >> ran.txt", "{message}"]
`

// abandon posts a call with a client that gives up after 300 ms, as a
// program whose user lost patience: the call waits for approval, the
// client leaves.
func abandon(t *testing.T, s *server, tool, args string) {
	t.Helper()
	c := &http.Client{Timeout: 300 * time.Millisecond}
	resp, err := c.Post(s.url+"/v1/tools/"+tool+"/call", "application/json", strings.NewReader(`{"arguments":`+args+`}`))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the call of %s answered (%s) instead of waiting for approval", tool, resp.Status)
	}
}

// pendingIDs waits (up to 5 s) until `wield approvals list` shows n pending
// approvals, and returns their IDs, oldest first.
func pendingIDs(t *testing.T, u *user, n int, db ...string) []string {
	t.Helper()
	var ids []string
	ok := eventually(5*time.Second, func() bool {
		r := u.must(append([]string{"approvals", "list", "--json"}, db...)...)
		var list []struct {
			ID string `json:"id"`
		}
		r.json(t, &list)
		ids = ids[:0]
		for _, a := range list {
			ids = append(ids, a.ID)
		}
		return len(ids) == n
	})
	if !ok {
		t.Fatalf("%d pending approvals, want %d", len(ids), n)
	}
	return ids
}

// events is an open GET /v1/events stream, read into a buffer.
type events struct {
	buf    lockedBuffer
	cancel context.CancelFunc
}

// openEvents opens the event stream and returns once it is connected.
func openEvents(t *testing.T, s *server) *events {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ev := &events{cancel: cancel}
	connected := make(chan struct{})
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		once := false
		for sc.Scan() {
			ev.buf.Write([]byte(sc.Text() + "\n"))
			if !once && strings.HasPrefix(sc.Text(), ": connected") {
				once = true
				close(connected)
			}
		}
	}()
	t.Cleanup(cancel)
	select {
	case <-connected:
	case <-time.After(5 * time.Second):
		t.Fatalf("the event stream did not connect:\n%s", ev.buf.String())
	}
	return ev
}

// saw reports whether the stream carried an event of type typ for call.
func (e *events) saw(typ, call string) bool {
	for _, line := range strings.Split(e.buf.String(), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == typ && ev.CallID == call {
			return true
		}
	}
	return false
}

// record is a call's record as GET /v1/calls shows it.
type record struct {
	Call struct {
		ID string `json:"id"`
	} `json:"call"`
	Result struct {
		OK        bool   `json:"ok"`
		Output    any    `json:"output"`
		ErrorType string `json:"error_type"`
		Error     string `json:"error"`
	} `json:"result"`
}

// records lists the calls of tool that the server shows.
func records(t *testing.T, s *server, tool string) []record {
	t.Helper()
	code, body := s.do("GET", "/v1/calls?tool="+tool, "")
	if code != 200 {
		t.Fatalf("GET /v1/calls: %d %s", code, body)
	}
	var page struct {
		Calls []record `json:"calls"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatalf("GET /v1/calls: %v: %s", err, body)
	}
	return page.Calls
}

// ranLines is what the runs of mark wrote.
func ranLines(t *testing.T, u *user) string {
	t.Helper()
	b, err := os.ReadFile(u.path("ran.txt"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// TestJourneyApprovalCallerLeft: the client that asked gave up; a person
// approves from the CLI afterwards; the call runs once, and its record and
// its event show within a second.
func TestJourneyApprovalCallerLeft(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	s := u.serve("--tools", "tools")
	abandon(t, s, "mark", `{"message":"one"}`)
	id := pendingIDs(t, u, 1)[0]
	if got := ranLines(t, u); got != "" {
		t.Fatalf("ran before approval: %q", got)
	}
	ev := openEvents(t, s)

	r := u.must("approvals", "approve", id)
	decided := time.Now()
	if !strings.Contains(r.stdout, "approved "+id) {
		t.Errorf("approve said:\n%s", r)
	}
	var recs []record
	if !eventually(time.Second, func() bool { recs = records(t, s, "mark"); return len(recs) == 1 }) {
		t.Fatalf("no record of the approved call a second after the decision:\n%s\nserver:\n%s", u.wield("calls"), s.stderr)
	}
	rec := recs[0]
	if !rec.Result.OK {
		t.Errorf("the approved call's record: %+v", rec.Result)
	}
	if !eventually(time.Second-time.Since(decided), func() bool { return ev.saw("execution_completed", rec.Call.ID) }) {
		t.Errorf("no execution_completed event for %s within a second:\n%s", rec.Call.ID, ev.buf.String())
	}
	calls := u.must("calls")
	if !strings.Contains(calls.stdout, rec.Call.ID) || !strings.Contains(calls.stdout, "mark") {
		t.Errorf("wield calls does not show the call:\n%s", calls)
	}

	// Approving again changes nothing: it ran once.
	again := u.wield("approvals", "approve", id)
	if again.code == 0 || !strings.Contains(again.stderr, "no longer pending") {
		t.Errorf("a second approve: %s", again)
	}
	time.Sleep(700 * time.Millisecond) // a server poll and more: nothing runs it again
	if got := ranLines(t, u); got != "one\n" {
		t.Errorf("ran.txt = %q, want one run", got)
	}
	if n := len(records(t, s, "mark")); n != 1 {
		t.Errorf("%d records, want 1", n)
	}
	var list []struct {
		ClaimedAt string `json:"claimed_at"`
	}
	u.must("approvals", "list", "--status", "approved", "--json").json(t, &list)
	if len(list) != 1 || list[0].ClaimedAt == "" {
		t.Errorf("the approval after its run: %+v, want claimed", list)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("serve exited %d after %v:\n%s", code, took, s.stderr)
	}
}

// TestJourneyApprovalAcrossRestart: the caller gave up and the server was
// stopped. One call is approved and one denied while no server runs, and
// one is approved after the restart; at start-up the decided ones are
// acted on, the other once decided, each within a second, each once.
func TestJourneyApprovalAcrossRestart(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	s := u.serve("--tools", "tools")
	for _, m := range []string{"before", "refused", "after"} {
		abandon(t, s, "mark", `{"message":"`+m+`"}`)
	}
	ids := pendingIDs(t, u, 3)
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, s.stderr)
	}

	u.must("approvals", "approve", ids[0])
	u.must("approvals", "deny", "--reason", "not that one", ids[1])
	s = u.serve("--tools", "tools")
	started := time.Now()
	byID := func() map[string]record {
		out := map[string]record{}
		for _, r := range records(t, s, "mark") {
			out[r.Call.ID] = r
		}
		return out
	}
	var recs map[string]record
	if !eventually(time.Second, func() bool { recs = byID(); return len(recs) == 2 }) {
		t.Fatalf("%d records a second after start-up, want the approved and the denied call:\n%s", len(recs), s.stderr)
	}
	t.Logf("decided offline: recorded %v after start-up", time.Since(started).Round(time.Millisecond))
	var ok, denied int
	for _, r := range recs {
		switch {
		case r.Result.OK:
			ok++
		case r.Result.ErrorType == "approval_denied" && strings.Contains(r.Result.Error, "not that one"):
			denied++
		default:
			t.Errorf("record %+v", r)
		}
	}
	if ok != 1 || denied != 1 {
		t.Errorf("%d ok and %d denied records, want 1 and 1", ok, denied)
	}
	if got := ranLines(t, u); got != "before\n" {
		t.Errorf("ran.txt = %q, want the approved call's one run", got)
	}

	ev := openEvents(t, s)
	u.must("approvals", "approve", ids[2])
	decided := time.Now()
	if !eventually(time.Second, func() bool { recs = byID(); return len(recs) == 3 }) {
		t.Fatalf("no record a second after approving a call left from before the restart:\n%s", s.stderr)
	}
	for id, r := range recs {
		if r.Result.OK && ev.saw("execution_completed", id) {
			t.Logf("approved after the restart: recorded and announced %v after the decision", time.Since(decided).Round(time.Millisecond))
		}
	}
	if got := ranLines(t, u); got != "before\nafter\n" {
		t.Errorf("ran.txt = %q, want before and after, once each", got)
	}
	if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, s.stderr)
	}
	// A third start finds nothing left to do.
	s = u.serve("--tools", "tools")
	time.Sleep(700 * time.Millisecond)
	if got := ranLines(t, u); got != "before\nafter\n" || len(byID()) != 3 {
		t.Errorf("after another restart: ran.txt %q, %d records", got, len(byID()))
	}
}

// TestJourneyApprovalPostgresTwoServers: two servers share PostgreSQL; the
// caller of one gave up; the CLI approves; exactly one server runs the call,
// within a second, and both show its one record.
func TestJourneyApprovalPostgresTwoServers(t *testing.T) {
	db := postgresURL(t)
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	one := u.serve("--tools", "tools", "--db", db)
	two := u.serve("--tools", "tools", "--db", db)
	abandon(t, one, "mark", `{"message":"shared"}`)
	id := pendingIDs(t, u, 1, "--db", db)[0]
	evs := []*events{openEvents(t, one), openEvents(t, two)}

	u.must("approvals", "approve", id, "--db", db)
	var recs []record
	if !eventually(time.Second, func() bool { recs = records(t, two, "mark"); return len(recs) == 1 }) {
		t.Fatalf("no record a second after the decision:\none:\n%s\ntwo:\n%s", one.stderr, two.stderr)
	}
	if !recs[0].Result.OK {
		t.Errorf("record %+v", recs[0].Result)
	}
	// The server that ran it announces it on its stream.
	if !eventually(time.Second, func() bool {
		return evs[0].saw("execution_completed", recs[0].Call.ID) || evs[1].saw("execution_completed", recs[0].Call.ID)
	}) {
		t.Errorf("no server announced the run of %s", recs[0].Call.ID)
	}
	time.Sleep(2 * time.Second) // past the other server's handover: it must not run it again
	if got := ranLines(t, u); got != "shared\n" {
		t.Errorf("ran.txt = %q, want one run", got)
	}
	if n := len(records(t, one, "mark")); n != 1 {
		t.Errorf("%d records, want 1", n)
	}
}
