//go:build unix

package journeys

// Events across restarts: a client that follows GET /v1/events and comes
// back with the last ID it saw gets what it missed, or is told with ": lost"
// that the server cannot give it; it never gets silence where events were.
// IDs are unique across restarts and across servers sharing the Redis
// relay.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sseFrame is one message of an event stream, or a comment.
type sseFrame struct {
	id, typ, data string
	comment       string // set for a comment line (": lost"), without the colon
	server        string // the event's server, when relayed
	callID        string
}

// sseClient is an open GET /v1/events, its frames read into a channel.
type sseClient struct {
	frames chan sseFrame
	cancel context.CancelFunc
}

// openSSE opens the stream of s, resuming after last when it is not empty,
// and returns once the server has answered.
func openSSE(t *testing.T, s *server, last string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/events?type=execution_completed", nil)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := (&http.Client{Timeout: 0}).Do(req)
	if err != nil {
		cancel()
		t.Fatalf("open the event stream: %v\n%s", err, s.stderr)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("GET /v1/events: status %d", resp.StatusCode)
	}
	c := &sseClient{frames: make(chan sseFrame, 1024), cancel: cancel}
	t.Cleanup(cancel)
	go func() {
		defer resp.Body.Close()
		defer close(c.frames)
		sc := bufio.NewScanner(resp.Body)
		var f sseFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if f.data != "" {
					var ev struct {
						ID     json.RawMessage `json:"id"` // a number before IDs were unique
						Server string          `json:"server"`
						CallID string          `json:"call_id"`
					}
					if json.Unmarshal([]byte(f.data), &ev) == nil {
						f.server, f.callID = ev.Server, ev.CallID
						if id := strings.Trim(string(ev.ID), `"`); id != f.id {
							f.comment = "data id " + id + " differs from the frame's " + f.id
						}
					}
					c.frames <- f
				}
				f = sseFrame{}
			case strings.HasPrefix(line, ":"):
				if text := strings.TrimSpace(line[1:]); text != "ping" && text != "connected" {
					c.frames <- sseFrame{comment: text}
				}
			default:
				k, v, _ := strings.Cut(line, ": ")
				switch k {
				case "id":
					f.id = v
				case "event":
					f.typ = v
				case "data":
					f.data = v
				}
			}
		}
	}()
	return c
}

// read returns the frames up to and including the n-th event, waiting up
// to limit; fewer when the time is up or the stream ends.
func (c *sseClient) read(n int, limit time.Duration) []sseFrame {
	var out []sseFrame
	deadline := time.After(limit)
	for events := 0; events < n; {
		select {
		case f, ok := <-c.frames:
			if !ok {
				return out
			}
			out = append(out, f)
			if f.id != "" {
				events++
			}
		case <-deadline:
			return out
		}
	}
	return out
}

// echoCalls makes n echo calls on s and returns their call IDs.
func echoCalls(t *testing.T, s *server, what string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		code, res, err := lcCall(s.url, "echo", fmt.Sprintf(`{"message":"%s %d"}`, what, i))
		if err != nil || code != 200 || !res.OK {
			t.Fatalf("echo call: %d %+v %v\n%s", code, res, err, s.stderr)
		}
		ids = append(ids, res.CallID)
	}
	return ids
}

func frameCalls(fs []sseFrame) (calls []string, lost []string) {
	for _, f := range fs {
		if f.comment != "" {
			lost = append(lost, f.comment)
		} else {
			calls = append(calls, f.callID)
		}
	}
	return calls, lost
}

// TestJourneyEventsRestart: a client reads events, the server is stopped
// with SIGTERM and started again on the same state folder, and the client
// resumes with the last ID it saw: the stream says ": lost" (the events
// between its last and the stop are gone with the process) before it goes
// on with the new server's events, whose IDs are new and sort after. Within
// one run, a resume replays exactly what was missed and says nothing lost.
func TestJourneyEventsRestart(t *testing.T) {
	u := newUser(t)
	s := u.serve()
	c := openSSE(t, s, "")
	first := echoCalls(t, s, "first", 3)
	fs := c.read(3, 10*time.Second)
	calls, lost := frameCalls(fs)
	if fmt.Sprint(calls) != fmt.Sprint(first) || len(lost) != 0 {
		t.Fatalf("live stream: calls %v lost %q, want %v and nothing lost", calls, lost, first)
	}
	seen := map[string]bool{}
	for _, f := range fs {
		seen[f.id] = true
	}
	last := fs[len(fs)-1].id
	c.cancel()

	// Missed while away, same run: replayed exactly.
	missed := echoCalls(t, s, "missed", 2)
	again := openSSE(t, s, fs[0].id)
	fs2 := again.read(4, 10*time.Second)
	calls, lost = frameCalls(fs2)
	if want := append(append([]string{}, first[1:]...), missed...); fmt.Sprint(calls) != fmt.Sprint(want) || len(lost) != 0 {
		t.Errorf("resume within the run: calls %v lost %q, want %v and nothing lost", calls, lost, want)
	}
	again.cancel()

	start := time.Now()
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("SIGTERM: exit %d after %v, want 0 within 5 s", code, took)
	}
	s = u.serve()
	t.Logf("restarted in %v", time.Since(start).Round(time.Millisecond))

	// The missed calls of before the stop are gone with the process: the
	// resume says so, then streams on.
	resumed := openSSE(t, s, last)
	after := echoCalls(t, s, "after", 2)
	fs3 := resumed.read(2, 10*time.Second)
	calls, lost = frameCalls(fs3)
	if len(fs3) == 0 || fs3[0].comment != "lost" {
		t.Errorf("the resumed stream does not begin with ': lost': %+v", fs3)
	}
	if fmt.Sprint(calls) != fmt.Sprint(after) || len(lost) != 1 {
		t.Errorf("after the restart: calls %v, comments %q; want %v and one ': lost'", calls, lost, after)
	}
	for _, f := range fs3 {
		if f.id == "" {
			continue
		}
		if seen[f.id] || f.id <= last {
			t.Errorf("event ID %s after the restart repeats one or does not sort after %s", f.id, last)
		}
	}
	resumed.cancel()

	// The old numeric form of an ID, or garbage, is no error either: said
	// lost, then the stream.
	for _, bad := range []string{"3", "not-an-id"} {
		b := openSSE(t, s, bad)
		echoCalls(t, s, "bad", 1)
		fs := b.read(1, 10*time.Second)
		if len(fs) < 2 || fs[0].comment != "lost" || fs[1].id == "" {
			t.Errorf("resume after %q: %+v, want ': lost' then the event", bad, fs)
		}
		b.cancel()
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("SIGTERM: exit %d after %v, want 0 within 5 s", code, took)
	}
}

// TestJourneyEventsTwoServers: two servers share PostgreSQL and the Redis
// event relay; a client on each sees the calls of both, no event ID
// is ever given twice (a relayed event gets the receiving server's own),
// each stream's IDs increase, and a client that moves from one server to
// the other with its last ID is told ": lost", then streams on.
func TestJourneyEventsTwoServers(t *testing.T) {
	pg := postgresURL(t)
	rurl, prefix := redisURL(t)
	u := newUser(t)
	u.write("wield.yaml", fmt.Sprintf("store: %q\nredis: {url: %q, prefix: %s, share_events: true}\n", pg, rurl, prefix))
	one := u.serve("--config", u.path("wield.yaml"))
	two := u.serve("--config", u.path("wield.yaml"))
	c1, c2 := openSSE(t, one, ""), openSSE(t, two, "")

	// The relays subscribe in the background: call on one until two has
	// heard one of its events (bounded), then the real traffic.
	var warm []sseFrame
	if !eventually(20*time.Second, func() bool {
		echoCalls(t, one, "warm", 1)
		warm = append(warm, c2.read(1, 200*time.Millisecond)...)
		return len(warm) > 0
	}) {
		t.Fatalf("server two never relayed server one's events:\n%s", two.stderr)
	}
	if !eventually(20*time.Second, func() bool {
		echoCalls(t, two, "warm", 1)
		return len(c1.read(1, 200*time.Millisecond)) > 0
	}) {
		t.Fatalf("server one never relayed server two's events:\n%s", one.stderr)
	}
	drainFrames := func(c *sseClient) {
		for len(c.read(1, 300*time.Millisecond)) > 0 {
		}
	}
	drainFrames(c1)
	drainFrames(c2)

	const each = 20
	calls := append(echoCalls(t, one, "one", each), echoCalls(t, two, "two", each)...)
	f1, f2 := c1.read(2*each, 15*time.Second), c2.read(2*each, 15*time.Second)
	ids := map[string]string{}
	for name, fs := range map[string][]sseFrame{"one": f1, "two": f2} {
		got, lost := frameCalls(fs)
		if len(got) != 2*each || len(lost) != 0 {
			t.Errorf("server %s's stream: %d events, comments %q; want %d, none lost", name, len(got), lost, 2*each)
		}
		relayed := 0
		prev := ""
		for _, f := range fs {
			if other, dup := ids[f.id]; dup {
				t.Errorf("event ID %s given on %s and on %s", f.id, other, name)
			}
			ids[f.id] = name
			if f.id <= prev {
				t.Errorf("server %s: event ID %s after %s", name, f.id, prev)
			}
			prev = f.id
			if f.server != "" {
				relayed++
			}
		}
		if relayed != each {
			t.Errorf("server %s's stream relayed %d events, want %d", name, relayed, each)
		}
	}
	if len(ids) != 4*each {
		t.Errorf("%d distinct IDs over both streams, want %d (calls %d)", len(ids), 4*each, len(calls))
	}

	// A client moves from one to two with one's last ID: two does not hold
	// it, and says so.
	moved := openSSE(t, two, f1[len(f1)-1].id)
	echoCalls(t, two, "moved", 1)
	fs := moved.read(1, 10*time.Second)
	if len(fs) == 0 || fs[0].comment != "lost" {
		t.Errorf("resume on another server with its ID: %+v, want ': lost' first", fs)
	}
	for _, s := range []*server{one, two} {
		if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
			t.Errorf("SIGTERM: exit %d after %v, want 0 within 5 s", code, took)
		}
	}
}
