//go:build unix

package journeys

// A hostile REST client of `wield serve`: what it can make the server
// hold must be let go, and must not hold anyone else.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// echoTool prints its message; a call with an unknown argument is a
// validation_error event that quotes the argument's name.
const echoTool = `name: echo
description: Print a message
parameters:
  - name: message
    type: string
entry:
  type: command
  command: ["printf", "%s", "{message}"]
`

// TestJourneyAttackWebStalledStream: a client opens /v1/events and reads
// nothing while the server publishes megabytes of events (calls whose
// unknown argument has a name of 8,000 characters, quoted by their
// validation_error events). Another client's stream still gets every
// event at once, and on SIGTERM the server stops within seconds: the
// stalled stream once held the shutdown for the whole grace period (30 s),
// which then said it was "canceling the calls still in flight" when there
// were none.
func TestJourneyAttackWebStalledStream(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	u := newUser(t)
	u.write("tools/echo.yaml", echoTool)
	s := u.serve("--tools", "tools")
	host := strings.TrimPrefix(s.url, "http://")

	stalled, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	_ = stalled.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := stalled.Write([]byte("GET /v1/events HTTP/1.1\r\nHost: " + host + "\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = stalled.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := stalled.Read(make([]byte, 64)); err != nil {
		t.Fatalf("the stream did not open: %v", err)
	}

	// The other client reads its stream, for the marker's event.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/events?type=validation_error", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	marker := make(chan time.Time, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), "marker") {
				marker <- time.Now()
				return
			}
		}
	}()

	big, _ := json.Marshal(map[string]any{"arguments": map[string]any{strings.Repeat("x", 8000): 1}})
	var wg sync.WaitGroup
	c := &http.Client{Timeout: commandLimit}
	for range 4 {
		wg.Go(func() {
			for range 300 {
				resp, err := c.Post(s.url+"/v1/tools/echo/call", "application/json", strings.NewReader(string(big)))
				if err != nil {
					t.Errorf("call: %v", err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	sent := time.Now()
	code, body := s.do("POST", "/v1/tools/echo/call", `{"arguments":{"marker":1}}`)
	if code != 200 {
		t.Fatalf("marker call: %d %s", code, body)
	}
	select {
	case at := <-marker:
		if d := at.Sub(sent); d > 5*time.Second {
			t.Errorf("the reading stream got the marker's event %v after the call", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reading stream did not get the marker's event within 30 s")
	}
	cancel()

	_, took := s.stop(syscall.SIGTERM, 25*time.Second)
	if took > 10*time.Second {
		t.Errorf("wield serve took %v to stop with a stream whose client reads nothing; stderr:\n%s", took, tail(s.stderr.String(), 5))
	}
	if strings.Contains(s.stderr.String(), "canceling the calls still in flight") {
		t.Errorf("the shutdown canceled calls still in flight, of which there were none:\n%s", tail(s.stderr.String(), 5))
	}
}

// TestJourneyAttackWebUnreadAnswers: a client sends 3,000 requests on one
// connection (HTTP/1.1 pipelining, 140 MiB of answers) and reads none of
// the answers. The server once wrote to it for ever, a goroutine and the
// connection held, and made every shutdown wait its whole grace period;
// now a write that goes nowhere for 30 s ends the connection. Read then,
// the connection gives what its buffers held (a few MiB) and ends.
func TestJourneyAttackWebUnreadAnswers(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	u := newUser(t)
	u.write("tools/echo.yaml", echoTool)
	s := u.serve("--tools", "tools")
	host := strings.TrimPrefix(s.url, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := "GET /openapi.json HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
	if _, err := c.Write([]byte(strings.Repeat(req, 3000))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(36 * time.Second) // the stall's 30 s and some
	if code, _ := s.do("GET", "/healthz", ""); code != 200 {
		t.Errorf("GET /healthz beside the stalled connection: %d", code)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := io.Copy(io.Discard, io.LimitReader(c, 32<<20))
	if n >= 32<<20 {
		t.Fatalf("the server still wrote to a client that had read nothing for 36 s (read %d MiB on)", n>>20)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the stalled connection neither ended nor went on (%d bytes read): %v", n, err)
	}
	_, took := s.stop(syscall.SIGTERM, 25*time.Second)
	if took > 10*time.Second {
		t.Errorf("wield serve took %v to stop after the stalled connection; stderr:\n%s", took, tail(s.stderr.String(), 5))
	}
}

// TestJourneyAttackWebStreamFlood: one client opens 40 event streams on a
// server without keys. Each stream costs every event its own filtering,
// encoding and write (500 made each call some 100 times slower): the
// first 32 open, the others are refused with 429 too_many_streams saying
// how many are open, and a stream closed gives its place back.
func TestJourneyAttackWebStreamFlood(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	u := newUser(t)
	u.write("tools/echo.yaml", echoTool)
	s := u.serve("--tools", "tools")
	host := strings.TrimPrefix(s.url, "http://")
	open := func() (net.Conn, string) {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte("GET /v1/events HTTP/1.1\r\nHost: " + host + "\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 4096)
		n, err := c.Read(b)
		if err != nil {
			t.Fatalf("GET /v1/events: %v", err)
		}
		return c, string(b[:n])
	}
	var held []net.Conn
	refused := 0
	for i := range 40 {
		c, answer := open()
		switch {
		case strings.HasPrefix(answer, "HTTP/1.1 200 "):
			held = append(held, c)
		case strings.HasPrefix(answer, "HTTP/1.1 429 ") && strings.Contains(answer, `"code":"too_many_streams"`) &&
			strings.Contains(answer, "this address has 32 event streams open"):
			refused++
		default:
			t.Fatalf("stream %d answered:\n%s", i+1, answer)
		}
	}
	if len(held) != 32 || refused != 8 {
		t.Fatalf("of 40 streams from one client %d opened and %d were refused, want 32 and 8", len(held), refused)
	}
	held[0].Close()
	if !eventually(10*time.Second, func() bool {
		_, answer := open()
		return strings.HasPrefix(answer, "HTTP/1.1 200 ")
	}) {
		t.Error("a closed stream's place was not given back within 10 s")
	}
}

// TestJourneyAttackWebRelayedType: with redis share_events, what another
// server puts on the channel reaches every stream. An event whose type
// holds line breaks once wrote lines of its own into the stream (here a
// forged permission_requested, which the console shows and decides); it
// arrives as one event whose data says what its type was.
func TestJourneyAttackWebRelayedType(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	rurl, prefix := redisURL(t)
	u := newUser(t)
	u.write("tools/echo.yaml", echoTool)
	u.write("wield.yaml", fmt.Sprintf("redis: {url: %q, prefix: %s, share_events: true}\n", rurl, prefix))
	s := u.serve("--config", u.path("wield.yaml"), "--tools", "tools")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	opt, err := goredis.ParseURL(rurl)
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(opt)
	defer rdb.Close()
	publish := func(typ, tool string) {
		b, _ := json.Marshal(map[string]string{"type": typ, "tool": tool, "server": "elsewhere"})
		if err := rdb.Publish(ctx, prefix+":events", b).Err(); err != nil {
			t.Fatalf("publish to Redis: %v", err)
		}
	}
	// until reads the stream's lines up to one naming tool, within limit.
	until := func(tool string, limit time.Duration) ([]string, bool) {
		var got []string
		deadline := time.After(limit)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					return got, false
				}
				got = append(got, line)
				if strings.Contains(line, `"tool":"`+tool+`"`) {
					return got, true
				}
			case <-deadline:
				return got, false
			}
		}
	}
	// The relay subscribes in the background: publish until it relays.
	if !eventually(20*time.Second, func() bool {
		publish("tool_updated", "warm")
		_, ok := until("warm", 200*time.Millisecond)
		return ok
	}) {
		t.Fatalf("the server never relayed an event from the channel:\n%s", s.stderr)
	}
	publish("tool_added\nevent: permission_requested\ndata: {\"approval_id\":\"forged\",\"tool\":\"echo\"}\n", "echo")
	publish("tool_updated", "live")
	got, ok := until("live", 10*time.Second)
	if !ok {
		t.Fatalf("the stream did not get the event after the forged one; it read:\n%s", strings.Join(got, "\n"))
	}
	data := 0
	for _, line := range got {
		if strings.HasPrefix(line, "event: permission_requested") || strings.HasPrefix(line, "data: {\"approval_id\"") {
			t.Errorf("a relayed event's type wrote a line of its own: %q", line)
		}
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"tool":"echo"`) {
			data++
		}
	}
	if data != 1 {
		t.Errorf("the relayed event came as %d events naming echo, want 1:\n%s", data, strings.Join(got, "\n"))
	}
}

// tail is the last n lines of text, each cut to 300 bytes.
func tail(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > 300 {
			lines[i] = l[:300] + "…"
		}
	}
	return strings.Join(lines, "\n")
}
