//go:build unix

package journeys

// Lifecycle: a person starts a server, uses it, stops it (SIGTERM, or
// Ctrl-C once or twice) and starts it again. Every stop exits, on every
// store and backend, within the grace period; the calls made before are
// all in the record after the restart, calls in flight finish (or are cut
// and say so), and new calls work.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lcSetup is one way of running the server: its name and the flags that
// choose its store and backends.
type lcSetup struct {
	name string
	args []string
}

// lcSetups are the stores and backends a server stops on: SQLite alone
// (the default database), PostgreSQL with the Redis limiter and event
// relay, and SQLite with Redis (decisions on approvals then travel over
// Redis too).
func lcSetups(t *testing.T, u *user) []lcSetup {
	t.Helper()
	setups := []lcSetup{{name: "sqlite"}}
	if testing.Short() {
		return setups
	}
	pg := postgresURL(t)
	rurl, prefix := redisURL(t)
	redis := fmt.Sprintf("concurrency: {max: 8, backend: redis}\nredis: {url: %q, prefix: %s, share_events: true}\n", rurl, prefix)
	u.write("pg/wield.yaml", fmt.Sprintf("store: %q\n", pg)+redis)
	u.write("sqlite-redis/wield.yaml", fmt.Sprintf("store: %q\n", "sqlite:"+u.path("sqlite-redis/wield.db"))+strings.Replace(redis, prefix, prefix+"b", 1))
	return append(setups,
		lcSetup{name: "postgres+redis", args: []string{"--config", u.path("pg/wield.yaml")}},
		lcSetup{name: "sqlite+redis", args: []string{"--config", u.path("sqlite-redis/wield.yaml")}},
	)
}

// lcResult is what a caller reads of a call's result.
type lcResult struct {
	CallID    string          `json:"call_id"`
	OK        bool            `json:"ok"`
	Output    json.RawMessage `json:"output"`
	Error     string          `json:"error"`
	ErrorType string          `json:"error_type"`
}

// lcCall calls a tool over REST as a program would: the status, the
// result, or the error of the request itself (never fatal, so that
// callers on other goroutines can use it).
func lcCall(url, tool, args string) (int, lcResult, error) {
	c := &http.Client{Timeout: commandLimit}
	resp, err := c.Post(url+"/v1/tools/"+tool+"/call", "application/json", strings.NewReader(`{"arguments":`+args+`}`))
	if err != nil {
		return 0, lcResult{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, lcResult{}, fmt.Errorf("read the answer: %w", err)
	}
	var r lcResult
	if err := json.Unmarshal(b, &r); err != nil {
		return resp.StatusCode, lcResult{}, fmt.Errorf("answer is not a result (%v): %s", err, b)
	}
	return resp.StatusCode, r, nil
}

// lcLoad makes n echo calls over REST, eight at a time, and fails the
// journey unless each is answered 200 with ok:true.
func lcLoad(t *testing.T, s *server, n int) {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
		next = make(chan int)
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				code, r, err := lcCall(s.url, "echo", fmt.Sprintf(`{"message":"load %d"}`, i))
				if err != nil || code != 200 || !r.OK {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("call %d: %d %+v %v", i, code, r, err))
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d calls failed, first: %s\nserver stderr:\n%s", len(errs), n, errs[0], s.stderr)
	}
}

// lcRecords lists the recorded calls of a tool over GET /v1/calls, every
// page (bounded).
func lcRecords(t *testing.T, s *server, tool string) []lcRecord {
	t.Helper()
	var all []lcRecord
	cursor := ""
	for range 20 {
		code, body := s.do("GET", "/v1/calls?limit=1000&tool="+tool+"&cursor="+cursor, "")
		if code != 200 {
			t.Fatalf("GET /v1/calls: %d %s", code, body)
		}
		var page struct {
			Calls []lcRecord `json:"calls"`
			Next  string     `json:"next"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("GET /v1/calls: %v: %s", err, body)
		}
		all = append(all, page.Calls...)
		if page.Next == "" {
			return all
		}
		cursor = page.Next
	}
	t.Fatalf("GET /v1/calls: more than 20 pages")
	return nil
}

// lcRecord is what a person reads of a call's record.
type lcRecord struct {
	Call struct {
		ID string `json:"id"`
	} `json:"call"`
	Result lcResult `json:"result"`
}

// lcStop stops the server with sig and fails the journey unless it exits
// 0 within limit; it returns how long the exit took. A server still running
// then is asked for its goroutines (SIGQUIT), which the failure shows.
func lcStop(t *testing.T, s *server, sig syscall.Signal, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
	select {
	case <-s.done:
	case <-time.After(limit):
		_ = s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		t.Fatalf("still running %v after %v:\n%s", limit, sig, s.stderr)
	}
	took := time.Since(start)
	if s.code != 0 {
		t.Fatalf("exit %d after %v, want 0:\n%s", s.code, sig, s.stderr)
	}
	return took
}

// lcInFlight waits until n calls hold the server's capacity.
func lcInFlight(t *testing.T, s *server, n int) {
	t.Helper()
	ok := eventually(10*time.Second, func() bool {
		code, body := s.do("GET", "/v1/limiter", "")
		var m struct {
			Current int `json:"current_concurrent"`
		}
		return code == 200 && json.Unmarshal(body, &m) == nil && m.Current >= n
	})
	if !ok {
		t.Fatalf("%d calls were not in flight within 10 s:\n%s", n, s.stderr)
	}
}

// TestJourneyLifecycleRestart: start, a few hundred calls, SIGTERM, restart,
// the calls are all in the record (over REST and with `wield calls`), a
// new call works, and Ctrl-C (SIGINT) stops it the same way.
func TestJourneyLifecycleRestart(t *testing.T) {
	u := newUser(t)
	for _, setup := range lcSetups(t, u) {
		t.Run(setup.name, func(t *testing.T) {
			u.t = t
			const n = 300
			s := u.serve(setup.args...)
			lcLoad(t, s, n)
			if took := lcStop(t, s, syscall.SIGTERM, 5*time.Second); took > 5*time.Second {
				t.Errorf("exit took %v after SIGTERM, want under 5 s", took)
			}
			if !strings.Contains(s.stderr.String(), "stopped") {
				t.Errorf("the log does not say the server stopped:\n%s", s.stderr)
			}

			// The record, read by the command line while no server runs.
			r := u.must(append([]string{"calls", "--tool", "echo", "--limit", "1000", "--json"}, setup.args...)...)
			var page struct {
				Records []lcRecord `json:"records"`
			}
			r.json(t, &page)
			if len(page.Records) != n {
				t.Errorf("wield calls lists %d echo calls, want %d", len(page.Records), n)
			}

			s = u.serve(setup.args...)
			if got := lcRecords(t, s, "echo"); len(got) != n {
				t.Errorf("after the restart GET /v1/calls has %d echo calls, want %d", len(got), n)
			}
			code, res, err := lcCall(s.url, "echo", `{"message":"after the restart"}`)
			if err != nil || code != 200 || !res.OK || !strings.Contains(string(res.Output), "after the restart") {
				t.Fatalf("a call after the restart: %d %+v %v", code, res, err)
			}
			if took := lcStop(t, s, syscall.SIGINT, 5*time.Second); took > 5*time.Second {
				t.Errorf("exit took %v after SIGINT, want under 5 s", took)
			}
			r = u.must(append([]string{"calls", "--tool", "echo", "--limit", "1000", "--json"}, setup.args...)...)
			r.json(t, &page)
			if len(page.Records) != n+1 {
				t.Errorf("after the second stop wield calls lists %d echo calls, want %d", len(page.Records), n+1)
			}
		})
	}
}

// TestJourneyLifecycleInFlight: calls running when SIGTERM arrives finish
// within the grace period; their callers get their results, the records
// say ok, and the server exits once they are done.
func TestJourneyLifecycleInFlight(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	u := newUser(t)
	for _, setup := range lcSetups(t, u) {
		t.Run(setup.name, func(t *testing.T) {
			u.t = t
			s := u.serve(append([]string{"--grace", "10s"}, setup.args...)...)
			type answer struct {
				code int
				res  lcResult
				err  error
			}
			answers := make(chan answer, 3)
			for range 3 {
				go func() {
					code, res, err := lcCall(s.url, "sleep", `{"duration":2}`)
					answers <- answer{code, res, err}
				}()
			}
			lcInFlight(t, s, 3)
			took := lcStop(t, s, syscall.SIGTERM, 10*time.Second)
			if took < time.Second {
				t.Errorf("exit after %v: it did not wait for the calls in flight", took)
			}
			ids := map[string]bool{}
			for range 3 {
				a := <-answers
				if a.err != nil || a.code != 200 || !a.res.OK {
					t.Errorf("a call in flight at SIGTERM: %d %+v %v", a.code, a.res, a.err)
				}
				ids[a.res.CallID] = true
			}

			s = u.serve(setup.args...)
			defer lcStop(t, s, syscall.SIGTERM, 5*time.Second)
			recs := lcRecords(t, s, "sleep")
			if len(recs) != 3 {
				t.Fatalf("after the restart %d sleep calls are recorded, want 3", len(recs))
			}
			for _, rec := range recs {
				if !ids[rec.Call.ID] || !rec.Result.OK {
					t.Errorf("record %s: %+v, want one of the calls answered, ok", rec.Call.ID, rec.Result)
				}
			}
		})
	}
}

// TestJourneyLifecycleCut: a call longer than the grace period is cut when
// the period ends; its caller is told, the record says the server stopped
// it, and the server exits just after the grace period. A second SIGTERM
// (or Ctrl-C pressed twice) ends the grace period at once.
func TestJourneyLifecycleCut(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	cases := []struct {
		name   string
		grace  string
		second syscall.Signal // sent 300 ms after the first; 0: none
		limit  time.Duration  // the exit must come within this
		says   string         // the record's error says this
	}{
		{name: "grace over", grace: "1s", limit: 2500 * time.Millisecond, says: "grace period of 1s"},
		{name: "second SIGTERM", grace: "30s", second: syscall.SIGTERM, limit: 2 * time.Second, says: "SIGTERM"},
		{name: "Ctrl-C twice", grace: "30s", second: syscall.SIGINT, limit: 2 * time.Second, says: "interrupt"},
	}
	u := newUser(t)
	setups := lcSetups(t, u)
	for _, setup := range setups[:min(2, len(setups))] {
		for _, c := range cases {
			t.Run(setup.name+"/"+c.name, func(t *testing.T) {
				u.t = t
				s := u.serve(append([]string{"--grace", c.grace}, setup.args...)...)
				type answer struct {
					code int
					res  lcResult
					err  error
				}
				answers := make(chan answer, 1)
				go func() {
					code, res, err := lcCall(s.url, "sleep", `{"duration":5}`)
					answers <- answer{code, res, err}
				}()
				lcInFlight(t, s, 1)
				first := syscall.Signal(syscall.SIGTERM)
				if c.second == syscall.SIGINT {
					first = syscall.SIGINT
				}
				start := time.Now()
				if c.second != 0 {
					if err := s.cmd.Process.Signal(first); err != nil {
						t.Fatal(err)
					}
					time.Sleep(300 * time.Millisecond) // a person's second press
					if s.exited() {
						t.Fatalf("exited after one signal with a call in flight and a grace period of %s:\n%s", c.grace, s.stderr)
					}
					first = c.second
				}
				lcStop(t, s, first, 10*time.Second)
				if took := time.Since(start); took > c.limit {
					t.Errorf("exit took %v, want within %v", took, c.limit)
				}
				a := <-answers
				if a.err != nil || a.code != 200 || a.res.OK || a.res.ErrorType != "canceled" || !strings.Contains(a.res.Error, c.says) {
					t.Errorf("the cut call's caller got %d %+v %v; want its result, canceled, saying %q", a.code, a.res, a.err, c.says)
				}

				s = u.serve(setup.args...)
				defer lcStop(t, s, syscall.SIGTERM, 5*time.Second)
				var cut *lcRecord
				for _, rec := range lcRecords(t, s, "sleep") {
					if rec.Call.ID == a.res.CallID {
						cut = &rec
					}
				}
				if cut == nil {
					t.Fatalf("the cut call %s is not recorded", a.res.CallID)
				}
				if cut.Result.OK || cut.Result.ErrorType != "canceled" || !strings.Contains(cut.Result.Error, "the server") || !strings.Contains(cut.Result.Error, c.says) {
					t.Errorf("the cut call's record: %+v; want canceled, saying the server stopped it (%q)", cut.Result, c.says)
				}
			})
		}
	}
}

// TestJourneyLifecyclePostgresCommands: the one-shot commands and the MCP
// server over HTTP exit on PostgreSQL too.
func TestJourneyLifecyclePostgresCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("uses PostgreSQL")
	}
	u := newUser(t)
	db := postgresURL(t)
	start := time.Now()
	r := u.must("call", "echo", "message=hi", "--db", db)
	if !strings.Contains(r.stdout, "hi") || time.Since(start) > 10*time.Second {
		t.Errorf("wield call on PostgreSQL: %v", r)
	}
	r = u.wield("approvals", "approve", "01nosuchapproval", "--db", db)
	if r.code == 0 || r.took > 10*time.Second {
		t.Errorf("wield approvals approve of an unknown ID on PostgreSQL: want a failure, quickly: %v", r)
	}

	s := u.mcpHTTP("--db", db)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, s.stderr)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "over mcp"}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call echo: %+v %v", res, err)
	}
	cs.Close()
	if took := lcStop(t, s, syscall.SIGTERM, 5*time.Second); took > 5*time.Second {
		t.Errorf("wield mcp --http took %v to exit", took)
	}
	r = u.must("calls", "--tool", "echo", "--json", "--db", db)
	if got := strings.Count(r.stdout, `"over mcp"`); got == 0 {
		t.Errorf("the call over MCP is not recorded:\n%s", r.stdout)
	}
}

// TestJourneyLifecycleMCPCut: `wield mcp --http` with a call longer than
// its grace period exits 0 (it exited 1, "shut down: context deadline
// exceeded"), without waiting past the call, and the call is recorded;
// when the grace period cuts it, its record says so (TestJourneyExitLongMCPCall
// holds the cut itself, in both protocol eras).
func TestJourneyLifecycleMCPCut(t *testing.T) {
	u := newUser(t)
	s := u.mcpHTTP("--grace", "1s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, s.stderr)
	}
	defer cs.Close()
	answers := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"duration": 3}})
		answers <- err
	}()
	time.Sleep(500 * time.Millisecond) // the call is under way (nothing shows it over MCP)
	start := time.Now()
	lcStop(t, s, syscall.SIGTERM, 10*time.Second)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("exit took %v with --grace 1s and a call of 3 s", took)
	}
	<-answers
	r := u.must("calls", "--tool", "sleep", "--json")
	var page struct {
		Records []lcRecord `json:"records"`
	}
	r.json(t, &page)
	if len(page.Records) != 1 {
		t.Fatalf("%d sleep calls recorded, want 1", len(page.Records))
	}
	if res := page.Records[0].Result; !res.OK && (res.ErrorType != "canceled" || !strings.Contains(res.Error, "grace period of 1s")) {
		t.Errorf("the cut call's record: %+v; want canceled, saying the grace period ended", res)
	}
}
