//go:build unix

package journeys

// What a hostile client can make the server hold: MCP sessions opened by an
// initialize flood and never closed, request bodies trickled a byte at a
// time, connections opened by the hundred. Each journey attacks the real
// binary from loopback and checks the bound a user would see.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// floodInit is the initialize request of the flood, as a client sends it.
const floodInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`

// mcpPost sends one MCP request to url (…/mcp) in session (none when "")
// with the headers given as pairs, and returns the status, the session ID
// of the answer and the JSON-RPC message (from JSON or an event stream).
func mcpPost(t *testing.T, c *http.Client, url, session, body string, header ...string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	var msg map[string]any
	text := string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(text) {
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				text = d
			}
		}
	}
	_ = json.Unmarshal([]byte(text), &msg)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), msg
}

// refusalText is the message of a JSON-RPC error, or "" without one.
func refusalText(msg map[string]any) string {
	e, _ := msg["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// TestJourneyAttackSessionFlood floods `wield serve` with initialize from
// one loopback client: 100 sessions open (the default bound per client),
// every later one is refused with 429 and a JSON-RPC error that says how to
// free one, and a DELETE frees one. With API keys, each key has its own
// bound.
func TestJourneyAttackSessionFlood(t *testing.T) {
	u := newUser(t)
	s := u.serve()
	c := &http.Client{Timeout: 30 * time.Second}
	var open []string
	refused := 0
	var text string
	for range 150 {
		code, id, msg := mcpPost(t, c, s.url+"/mcp", "", floodInit)
		switch {
		case code == 200 && id != "":
			open = append(open, id)
		case code == 429 && id == "":
			refused++
			text = refusalText(msg)
		default:
			t.Fatalf("initialize: status %d, session %q, answer %v", code, id, msg)
		}
	}
	if len(open) != 100 || refused != 50 {
		t.Fatalf("150 initialize from one client: %d sessions opened and %d refused, want 100 and 50", len(open), refused)
	}
	for _, part := range []string{"session limit reached", "100 MCP sessions open", "DELETE", "Mcp-Session-Id", "10m0s"} {
		if !strings.Contains(text, part) {
			t.Errorf("the refusal %q does not say %q", text, part)
		}
	}
	// The fast path serves a session within the bound.
	if code, _, msg := mcpPost(t, c, s.url+"/mcp", open[0], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != 200 || msg["result"] == nil {
		t.Fatalf("tools/list in an open session: %d %v", code, msg)
	}
	if code, _ := s.do("DELETE", "/mcp", "", "Mcp-Session-Id: "+open[0]); code != http.StatusNoContent {
		t.Fatalf("DELETE a session: status %d", code)
	}
	if code, id, msg := mcpPost(t, c, s.url+"/mcp", "", floodInit); code != 200 || id == "" {
		t.Fatalf("initialize after a DELETE: status %d, %v", code, msg)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("exit %d after %v:\n%s", code, took, s.stderr)
	}

	// With keys: counted per key, and the bound is the configuration's.
	u = newUser(t)
	u.setenv("KEY_A", "secret-a")
	u.setenv("KEY_B", "secret-b")
	u.write("wield.yaml", "server: {keys: [\"${KEY_A}\", \"${KEY_B}\"]}\nmcp: {max_sessions_per_client: 3}\n")
	s = u.serve("--config", "wield.yaml")
	for _, key := range []string{"secret-a", "secret-b"} {
		for i := range 4 {
			code, id, msg := mcpPost(t, c, s.url+"/mcp", "", floodInit, "Authorization", "Bearer "+key)
			if want := map[bool]int{true: 200, false: 429}[i < 3]; code != want || (code == 200) != (id != "") {
				t.Errorf("key %s, initialize %d: status %d (session %q), want %d: %v", key, i+1, code, id, want, msg)
			}
		}
	}
}

// TestJourneyAttackSessionIdle leaves sessions idle past mcp.session_idle:
// they are closed (404 to the next request), their place is free, and the
// goroutines they held are given back.
func TestJourneyAttackSessionIdle(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	u := newUser(t)
	u.write("wield.yaml", "mcp: {session_idle: 2s, max_sessions_per_client: 50}\n")
	s := u.serve("--config", "wield.yaml")
	c := &http.Client{Timeout: 30 * time.Second}
	idleGoroutines := metricsOf(t, s.url, "")["go_goroutines"]
	var ids []string
	for range 50 {
		code, id, msg := mcpPost(t, c, s.url+"/mcp", "", floodInit)
		if code != 200 || id == "" {
			t.Fatalf("initialize: %d %v", code, msg)
		}
		ids = append(ids, id)
	}
	if code, _, _ := mcpPost(t, c, s.url+"/mcp", "", floodInit); code != 429 {
		t.Fatalf("initialize past 50: status %d, want 429", code)
	}
	// Used every second, the first stays open; the others expire.
	for range 4 {
		time.Sleep(time.Second)
		if code, _, msg := mcpPost(t, c, s.url+"/mcp", ids[0], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != 200 {
			t.Fatalf("tools/list in a session used every second: %d %v", code, msg)
		}
	}
	if code, _, _ := mcpPost(t, c, s.url+"/mcp", ids[1], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != 404 {
		t.Errorf("tools/list in a session idle 4 s (session_idle 2s): status %d, want 404", code)
	}
	for range 49 {
		if code, id, _ := mcpPost(t, c, s.url+"/mcp", "", floodInit); code != 200 || id == "" {
			t.Fatalf("initialize once the idle sessions closed: status %d", code)
		}
	}
	time.Sleep(3 * time.Second)
	if !eventually(5*time.Second, func() bool {
		return metricsOf(t, s.url, "")["go_goroutines"] <= idleGoroutines+10
	}) {
		t.Errorf("goroutines: %v after every session expired, %v before any", metricsOf(t, s.url, "")["go_goroutines"], idleGoroutines)
	}
}

// trickle opens a connection to addr, sends the head of a request with a
// body of 1,000 bytes, and trickles the body a byte every 100 ms. It returns
// how long the server took to end the connection, and what it answered;
// it gives up after limit.
func trickle(t *testing.T, addr, path string, limit time.Duration) (time.Duration, string, bool) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(limit + 5*time.Second))
	start := time.Now()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n", path)
	answered := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(conn)
		answered <- string(b)
	}()
	for time.Since(start) < limit {
		conn.Write([]byte(" "))
		select {
		case b := <-answered:
			return time.Since(start), b, true
		case <-time.After(100 * time.Millisecond):
		}
	}
	return time.Since(start), "", false
}

// TestJourneyAttackTrickledBody trickles request bodies at `wield serve`
// (the REST API and /mcp) and at `wield mcp --http`: each is cut after
// server.body_timeout, while an event stream lasts as long as its client.
func TestJourneyAttackTrickledBody(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	u := newUser(t)
	u.write("wield.yaml", "server: {body_timeout: 1s}\n")
	s := u.serve("--config", "wield.yaml", "--heartbeat", "200ms")
	addr := strings.TrimPrefix(s.url, "http://")
	for _, path := range []string{"/v1/tools/echo/call", "/mcp"} {
		took, answer, cut := trickle(t, addr, path, 8*time.Second)
		if !cut {
			t.Errorf("serve %s: a body trickled for %v was not cut (body_timeout 1s)", path, took)
			continue
		}
		if took > 4*time.Second {
			t.Errorf("serve %s: a trickled body was cut after %v, want about 1s", path, took)
		}
		t.Logf("serve %s: cut after %v, answered %.60q", path, took.Round(10*time.Millisecond), answer)
	}
	// An event stream is a long response, not a slow request.
	resp, err := http.Get(s.url + "/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	beats := 0
	br := bufio.NewReader(resp.Body)
	for time.Since(start) < 3*time.Second {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream ended after %v (body_timeout 1s): %v", time.Since(start), err)
		}
		if strings.HasPrefix(line, ":") {
			beats++
		}
	}
	resp.Body.Close()
	if beats < 5 {
		t.Errorf("%d heartbeats in 3 s of the event stream, want about 15", beats)
	}

	m := u.mcpHTTP("--config", "wield.yaml")
	took, _, cut := trickle(t, strings.TrimPrefix(m.url, "http://"), "/mcp", 8*time.Second)
	if !cut || took > 4*time.Second {
		t.Errorf("wield mcp --http: a trickled body cut: %v, after %v; want cut after about 1s", cut, took)
	}
}

// holdConns opens n connections to addr, each having had one request
// answered (so the server keeps them, idle).
func holdConns(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var out []net.Conn
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("connection %d within the bound: %v %v", i+1, resp, err)
		}
		resp.Body.Close()
		out = append(out, c)
	}
	return out
}

// refusedConn opens one more connection to addr and reports what the
// server said before closing it, failing unless it closed within 5 s.
func refusedConn(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Errorf("a connection past the bound was held: %v", err)
	}
	return string(b)
}

// TestJourneyAttackConnections opens connections from one address past
// server.max_conns_per_client, at `wield serve` and `wield mcp --http`:
// the extra ones are refused at once with a 429 saying why, and a closed
// connection's place is taken again.
func TestJourneyAttackConnections(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "server: {max_conns_per_client: 8}\n")
	s := u.serve("--config", "wield.yaml")
	addr := strings.TrimPrefix(s.url, "http://")
	held := holdConns(t, addr, 8)
	for range 3 {
		got := refusedConn(t, addr)
		if !strings.HasPrefix(got, "HTTP/1.1 429 ") || !strings.Contains(got, "8 connections open") {
			t.Errorf("connection past 8: %q", got)
		}
	}
	if !strings.Contains(s.stderr.String(), "too many open from one address") {
		t.Errorf("the refusal is not logged:\n%s", s.stderr)
	}
	held[0].Close()
	if !eventually(5*time.Second, func() bool {
		resp, err := http.Get(s.url + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	}) {
		t.Error("a closed connection's place was not taken again")
	}

	m := u.mcpHTTP("--config", "wield.yaml")
	maddr := strings.TrimPrefix(m.url, "http://")
	for i := range 8 {
		c, err := net.DialTimeout("tcp", maddr, 5*time.Second)
		if err != nil {
			t.Fatalf("wield mcp --http, connection %d: %v", i+1, err)
		}
		t.Cleanup(func() { c.Close() })
	}
	time.Sleep(100 * time.Millisecond) // the server has accepted them
	if got := refusedConn(t, maddr); !strings.HasPrefix(got, "HTTP/1.1 429 ") {
		t.Errorf("wield mcp --http, connection past 8: %q", got)
	}
}

// metricsOf reads the gauges of /metrics that have no labels.
func metricsOf(t *testing.T, url, key string) map[string]float64 {
	t.Helper()
	m, err := readMetrics(url, key)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	return m
}

// gaugeOf reads one gauge of /metrics, from any goroutine.
func gaugeOf(url, name string) (float64, error) {
	m, err := readMetrics(url, "")
	return m[name], err
}

// rssOf is the resident memory of process pid, in bytes (VmRSS), or
// where there is no /proc what the server's /metrics at url says.
func rssOf(t *testing.T, url string, pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		v, err := gaugeOf(url, "process_resident_memory_bytes")
		if err != nil {
			t.Errorf("read the server's memory: %v", err)
		}
		return v
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}

func readMetrics(url, key string) (map[string]float64, error) {
	req, err := http.NewRequest("GET", url+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// floodFigures are what an initialize flood did to a server.
type floodFigures struct {
	opened, refused, failed      int64
	took                         time.Duration
	idleRSS, peakRSS, settledRSS float64 // bytes
	idleGo, peakGo, settledGo    float64
}

// envInt reads a positive integer from the environment, else def.
func envInt(t *testing.T, name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive number", name, s)
		}
		return n
	}
	return def
}

// TestJourneyMCPFlood floods `wield serve` with initialize requests from
// one loopback client until WIELD_FLOOD_SESSIONS sessions (2,000 by
// default; scripts/mcp-flood opens 50,000) have been opened, its bound per
// client raised so that only max_sessions (the default, 5,000) stops it:
// sessions idle for WIELD_FLOOD_IDLE seconds (2) expire and make room, so
// the flood goes on at the rate they do. RSS must stay under 200 MB
// throughout and WIELD_FLOOD_SETTLE seconds (5; 60 in the script) after
// the flood come back to at most floodRSSSlack above the idle figure, and
// the goroutines within 20% of theirs.
func TestJourneyMCPFlood(t *testing.T) {
	sessions := envInt(t, "WIELD_FLOOD_SESSIONS", 2000)
	idle := time.Duration(envInt(t, "WIELD_FLOOD_IDLE", 2)) * time.Second
	settle := time.Duration(envInt(t, "WIELD_FLOOD_SETTLE", 5)) * time.Second
	u := newUser(t)
	// Room for the requests in flight when the last session opens.
	u.write("wield.yaml", fmt.Sprintf("mcp: {session_idle: %v, max_sessions_per_client: %d}\n", idle, sessions+100))
	s := u.serve("--config", "wield.yaml", "--log-level", "warn")
	limit := 10 * time.Minute
	f := flood(t, s.url, s.cmd.Process.Pid, sessions, limit, settle)
	t.Logf("flood: %d sessions opened by initialize in %v (%.0f/s; session_idle %v, max_sessions 5000), %d initialize refused past max_sessions, %d failed",
		f.opened, f.took.Round(time.Millisecond), float64(f.opened)/f.took.Seconds(), idle, f.refused, f.failed)
	t.Logf("RSS: idle %.1f MB, peak %.1f MB, %v after the flood %.1f MB", f.idleRSS/1e6, f.peakRSS/1e6, settle, f.settledRSS/1e6)
	t.Logf("goroutines: idle %.0f, peak %.0f, %v after the flood %.0f", f.idleGo, f.peakGo, settle, f.settledGo)
	if f.failed > 0 {
		t.Errorf("%d initialize requests failed otherwise than by the session bound", f.failed)
	}
	if f.opened < int64(sessions) {
		t.Errorf("%d sessions opened in %v, want %d", f.opened, limit, sessions)
	}
	if f.peakGo > 5000+f.idleGo+100 {
		t.Errorf("peak goroutines %.0f: more sessions open than max_sessions (5000)", f.peakGo)
	}
	if f.peakRSS > 200e6 {
		t.Errorf("peak RSS %.1f MB, want under 200 MB", f.peakRSS/1e6)
	}
	if f.settledRSS > f.idleRSS+floodRSSSlack {
		t.Errorf("RSS %v after the flood %.1f MB, want at most %.0f MB above the idle %.1f MB", settle, f.settledRSS/1e6, floodRSSSlack/1e6, f.idleRSS/1e6)
	}
	if f.settledGo > f.idleGo*1.2 {
		t.Errorf("goroutines %v after the flood %.0f, want within 20%% of the idle %.0f", settle, f.settledGo, f.idleGo)
	}
}

// floodRSSSlack is how far above its idle figure the RSS of a server may
// stay after a flood of sessions: what the flood's own code paths (refusal,
// expiry, the return of memory) bring into memory of the program, which
// the idle figure does not hold since the server gives back its start-up
// pages. It was 20% of the idle figure while that was ~28 MB; a session
// that kept 3 KB past its end would exceed it at 2,000 sessions.
const floodRSSSlack = 6e6

// flood sends initialize requests to url's /mcp from 32 connections until
// n sessions are opened (or limit passes), sampling the RSS of process pid
// (from /proc) and its goroutines (from /metrics) during the flood and
// settle after it, and returns the figures. A refused request is followed
// by a pause of 10 ms on its connection.
func flood(t *testing.T, url string, pid, n int, limit, settle time.Duration) floodFigures {
	t.Helper()
	var f floodFigures
	// The idle figure is taken once a few sessions came and went, and the
	// code they run is in memory (which RSS counts too).
	warm := &http.Client{Timeout: 30 * time.Second}
	for i := range 20 {
		code, id, msg := mcpPost(t, warm, url+"/mcp", "", floodInit)
		if code != 200 || id == "" {
			t.Fatalf("warm-up initialize %d: %d %v", i, code, msg)
		}
		req, _ := http.NewRequest("DELETE", url+"/mcp", nil)
		req.Header.Set("Mcp-Session-Id", id)
		if resp, err := warm.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	warm.CloseIdleConnections()
	time.Sleep(2 * time.Second)
	f.idleRSS, f.idleGo = rssOf(t, url, pid), metricsOf(t, url, "")["go_goroutines"]
	f.peakRSS, f.peakGo = f.idleRSS, f.idleGo
	var mu sync.Mutex
	var samples int
	sample := func() {
		rss := rssOf(t, url, pid)
		mu.Lock()
		defer mu.Unlock()
		f.peakRSS = max(f.peakRSS, rss)
		if samples++; samples%5 == 0 { // /metrics answers slower than /proc
			if g, err := gaugeOf(url, "go_goroutines"); err == nil {
				f.peakGo = max(f.peakGo, g)
			}
		}
	}
	const workers = 32
	tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var opened, refused, failed atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				sample()
			}
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for opened.Load() < int64(n) && time.Since(start) < limit {
				req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(floodInit))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := c.Do(req)
				if err != nil {
					if failed.Add(1) <= 3 {
						t.Errorf("initialize: %v", err)
					}
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == 200 && resp.Header.Get("Mcp-Session-Id") != "":
					opened.Add(1)
				case resp.StatusCode == 503:
					refused.Add(1)
					time.Sleep(10 * time.Millisecond)
				default:
					if failed.Add(1) <= 3 {
						t.Errorf("initialize: status %d", resp.StatusCode)
					}
				}
			}
		})
	}
	wg.Wait()
	f.took = time.Since(start)
	tr.CloseIdleConnections() // the flood is over: its connections too
	sample()
	close(stop) // /metrics is read every 10 s from now on, as a scraper would
	<-sampled
	for waited := time.Duration(0); waited < settle; {
		step := min(10*time.Second, settle-waited)
		time.Sleep(step)
		waited += step
		t.Logf("%v after the flood: RSS %.1f MB, %.0f goroutines", waited, rssOf(t, url, pid)/1e6, metricsOf(t, url, "")["go_goroutines"])
	}
	f.settledRSS, f.settledGo = rssOf(t, url, pid), metricsOf(t, url, "")["go_goroutines"]
	f.opened, f.refused, f.failed = opened.Load(), refused.Load(), failed.Load()
	return f
}
