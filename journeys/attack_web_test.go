//go:build unix

package journeys

// A hostile REST client of `wield serve`: what it can make the server
// hold must be let go, and must not hold anyone else.

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
