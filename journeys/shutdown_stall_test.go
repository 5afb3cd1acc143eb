//go:build unix

package journeys

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stallDozeTool answers after two seconds: a call still in flight when the
// server is told to stop.
const stallDozeTool = `name: doze
description: Answer after two seconds
entry:
  type: command
  command: ["sh", "-c", "sleep 2; printf rested"]
`

// TestJourneyShutdownStalledReader: a client pipelines requests for
// /openapi.json (140 MiB of answers) and stops reading; another has a
// call in flight (two seconds) on a keep-alive connection that already
// carried an answer. SIGTERM: the server exits within a few seconds (it
// waited some 30 s, the bound on a write that goes nowhere, for the
// connection of the client that reads nothing); the call in flight still
// finishes and its client gets its answer.
func TestJourneyShutdownStalledReader(t *testing.T) {
	u := newUser(t)
	u.write("tools/doze.yaml", stallDozeTool)
	s := u.serve("--tools", "tools")
	host := strings.TrimPrefix(s.url, "http://")

	stalled, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	_ = stalled.(*net.TCPConn).SetReadBuffer(4 << 10)
	req := "GET /openapi.json HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
	if _, err := stalled.Write([]byte(strings.Repeat(req, 3000))); err != nil {
		t.Fatal(err)
	}

	// The call in flight: on a connection that answered once already.
	client := &http.Client{Timeout: commandLimit, Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	if code, _ := getVia(t, client, s.url+"/healthz"); code != 200 {
		t.Fatalf("GET /healthz: %d", code)
	}
	type answer struct {
		code int
		body string
		err  error
	}
	napped := make(chan answer, 1)
	go func() {
		resp, err := client.Post(s.url+"/v1/tools/doze/call", "application/json", strings.NewReader(`{"arguments":{}}`))
		if err != nil {
			napped <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		napped <- answer{resp.StatusCode, string(b), err}
	}()
	time.Sleep(time.Second) // the stalled connection's buffers fill; the doze runs

	_, took := s.stop(syscall.SIGTERM, 60*time.Second)
	t.Logf("exit %v after SIGTERM with a client reading nothing and a call in flight", took)
	if took > 6*time.Second {
		t.Errorf("wield serve took %v to exit after SIGTERM with a client that reads nothing, want a few seconds; stderr:\n%s", took, tail(s.stderr.String(), 5))
	}
	select {
	case a := <-napped:
		var res struct {
			OK     bool            `json:"ok"`
			Output json.RawMessage `json:"output"`
		}
		if a.err != nil || a.code != 200 || json.Unmarshal([]byte(a.body), &res) != nil || !res.OK || !strings.Contains(string(res.Output), "rested") {
			t.Errorf("the call in flight at the SIGTERM: %d %s %v; want it finished and answered", a.code, a.body, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight at the SIGTERM was not answered 10 s after the exit")
	}
	if strings.Contains(s.stderr.String(), "canceling the calls still in flight") {
		t.Errorf("the shutdown canceled calls still in flight (the doze needs 2 s of a 30 s grace):\n%s", tail(s.stderr.String(), 5))
	}
}

// getVia sends a GET with client and returns the status and body.
func getVia(t *testing.T, client *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
