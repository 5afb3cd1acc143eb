//go:build unix

package journeys

// Attacks through the network tools: a model led by a prompt injection
// turns http_get on wield's own API, and secrets it sends or receives end
// up written in the clear.

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolResult is the answer of POST /v1/tools/{name}/call.
type toolResult struct {
	CallID    string          `json:"call_id"`
	OK        bool            `json:"ok"`
	Output    json.RawMessage `json:"output"`
	Error     string          `json:"error"`
	ErrorType string          `json:"error_type"`
}

// callTool calls a tool over REST, as an agent's client does.
func callTool(t *testing.T, s *server, tool string, args any) (toolResult, []byte) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	code, body := s.do("POST", "/v1/tools/"+tool+"/call", string(b))
	var r toolResult
	if err := json.Unmarshal(body, &r); err != nil || code != http.StatusOK && r.CallID == "" {
		t.Fatalf("POST /v1/tools/%s/call: %d %s", tool, code, body)
	}
	return r, body
}

// loopbackServer is a test server on 127.0.0.1 with a port of its own.
func loopbackServer(t *testing.T, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	return srv, port
}

// TestJourneyAttackSelfAPI: with the README's http_allow: [127.0.0.1/32]
// and a keyless serve on loopback, a model limited to http_get and
// http_post reached wield's own API (read files through
// /v1/tools/read_file/call, every record, approved a pending delete_file).
// wield's own address is refused, whether named directly, as localhost, or
// reached by a redirect from an allowed server, while another loopback
// port stays reachable; http_allow with a port allows that port only.
func TestJourneyAttackSelfAPI(t *testing.T) {
	u := newUser(t)
	var selfURL atomic.Value
	selfURL.Store("")
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "fine") })
	mux.HandleFunc("/redir", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, selfURL.Load().(string)+"/v1/calls", http.StatusFound)
	})
	test, testPort := loopbackServer(t, mux)
	other, _ := loopbackServer(t, mux)

	u.write("wield.yaml", "http_allow: [127.0.0.1/32]\n")
	s := u.serve("--config", "wield.yaml")
	selfURL.Store(s.url)
	_, selfPort, _ := net.SplitHostPort(strings.TrimPrefix(s.url, "http://"))

	refused := map[string]string{
		"its own address":         s.url + "/v1/calls",
		"localhost":               "http://localhost:" + selfPort + "/v1/calls",
		"a redirect to it":        test.URL + "/redir",
		"its unspecified address": "http://0.0.0.0:" + selfPort + "/v1/calls",
	}
	for what, target := range refused {
		r, body := callTool(t, s, "http_get", map[string]any{"url": target})
		if r.OK || r.ErrorType != "permission_denied" {
			t.Errorf("http_get of wield's own API through %s (%s): want permission_denied, got %s", what, target, body)
		}
	}
	r, body := callTool(t, s, "http_post", map[string]any{"url": s.url + "/v1/tools/current_time/call", "body": map[string]any{"arguments": map[string]any{}}})
	if r.OK || r.ErrorType != "permission_denied" {
		t.Errorf("http_post to wield's own API: want permission_denied, got %s", body)
	}
	if r, body := callTool(t, s, "http_get", map[string]any{"url": test.URL + "/ok"}); !r.OK || !strings.Contains(string(r.Output), `"fine"`) {
		t.Errorf("http_get of another loopback port, allowed by 127.0.0.1/32: %s", body)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Fatalf("serve exited %d after %v:\n%s", code, took, s.stderr)
	}

	// A port in http_allow opens that port only.
	u.write("wield.yaml", fmt.Sprintf("http_allow: [\"127.0.0.1:%s\"]\n", testPort))
	s = u.serve("--config", "wield.yaml")
	if r, body := callTool(t, s, "http_get", map[string]any{"url": test.URL + "/ok"}); !r.OK {
		t.Errorf("http_get of the port http_allow names: %s", body)
	}
	for _, target := range []string{other.URL + "/ok", s.url + "/v1/calls"} {
		if r, body := callTool(t, s, "http_get", map[string]any{"url": target}); r.OK || r.ErrorType != "permission_denied" {
			t.Errorf("http_get of %s, a port http_allow does not name: want permission_denied, got %s", target, body)
		}
	}
	s.stop(syscall.SIGTERM, 10*time.Second)

	// Naming wield's own address with its port is the explicit way to
	// allow it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	own := ln.Addr().String()
	ln.Close()
	u.write("wield.yaml", fmt.Sprintf("http_allow: [%q]\n", own))
	addrFile := filepath.Join(t.TempDir(), "addr")
	s = u.start(addrFile, "serve", "--addr", own, "--addr-file", addrFile, "--config", "wield.yaml")
	if r, body := callTool(t, s, "http_get", map[string]any{"url": "http://" + own + "/v1/tools"}); !r.OK {
		t.Errorf("http_get of wield's own address named with its port in http_allow: %s", body)
	}
	s.stop(syscall.SIGTERM, 10*time.Second)

	u.write("bad.yaml", "http_allow: [\"127.0.0.1:http\"]\n")
	if r := u.wield("list", "--config", "bad.yaml"); r.code == 0 || !strings.Contains(r.stderr, "bad.yaml:1:") || !strings.Contains(r.stderr, "127.0.0.1:http") {
		t.Errorf("a bad port in http_allow: want an error naming the file, line and entry:\n%s", r)
	}
}

// TestJourneyAttackSecretsWritten: header values (X-Api-Key, Cookie), a
// key in the URL's query and a cookie set by the answer were written in the
// clear to the record, the serve log's INFO line and the output's url.
// Nothing the server writes (the call's answer, the record through wield
// calls --json, stderr, the event stream, the files under the user's
// folders) holds them; the server still received them.
func TestJourneyAttackSecretsWritten(t *testing.T) {
	u := newUser(t)
	var gotKey, gotCookie, gotQuery atomic.Value
	gotKey.Store("")
	gotCookie.Store("")
	gotQuery.Store("")
	mux := http.NewServeMux()
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		gotKey.Store(r.Header.Get("X-Api-Key"))
		gotCookie.Store(r.Header.Get("Cookie"))
		gotQuery.Store(r.URL.Query().Get("api_key"))
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "abc"})
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"rows":3}`)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/data?"+r.URL.RawQuery, http.StatusFound)
	})
	test, _ := loopbackServer(t, mux)

	u.write("wield.yaml", "http_allow: [127.0.0.1/32]\nsecret_names: [pin]\n")
	s := u.serve("--config", "wield.yaml")
	ev := openEvents(t, s)
	r, answer := callTool(t, s, "http_get", map[string]any{
		"url":     "http://user:hunter2@" + strings.TrimPrefix(test.URL, "http://") + "/hop?api_key=s3cret&page=2",
		"headers": map[string]string{"X-Api-Key": "s3cret", "Cookie": "sid=abc", "Accept": "application/json"},
	})
	if !r.OK {
		t.Fatalf("http_get: %s", answer)
	}
	if gotKey.Load() != "s3cret" || gotCookie.Load() != "sid=abc" || gotQuery.Load() != "s3cret" {
		t.Errorf("the server did not get the real values: key %q cookie %q query %q", gotKey.Load(), gotCookie.Load(), gotQuery.Load())
	}
	var out struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Body    map[string]any    `json:"body"`
	}
	if err := json.Unmarshal(r.Output, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.URL, "page=2") || !strings.Contains(out.URL, "/data?") || out.Body["rows"] != float64(3) {
		t.Errorf("the output lost what is not secret: %s", r.Output)
	}
	// A failure that quotes the URL, and a secret_names entry of the
	// configuration beside the defaults.
	callTool(t, s, "http_request", map[string]any{"url": "http://127.0.0.1:1/x?token=s3cret", "query": map[string]string{"pin": "p1n-v4lue"}})
	if !eventually(5*time.Second, func() bool { return strings.Count(ev.buf.String(), "execution_") >= 2 }) {
		t.Fatalf("the events of the calls did not come:\n%s", ev.buf.String())
	}
	code, took := s.stop(syscall.SIGTERM, 10*time.Second)
	if code != 0 {
		t.Fatalf("serve exited %d after %v:\n%s", code, took, s.stderr)
	}
	calls := u.must("calls", "--json", "--config", "wield.yaml")
	if !strings.Contains(calls.stdout, "[REDACTED]") || !strings.Contains(calls.stdout, "page=2") {
		t.Errorf("wield calls --json shows no redacted record:\n%s", calls.stdout)
	}
	if !strings.Contains(s.stderr.String(), `msg=call`) && !strings.Contains(s.stderr.String(), `"msg":"call"`) {
		t.Errorf("the serve log has no INFO line of the call:\n%s", s.stderr)
	}
	written := map[string]string{
		"the call's answer":  string(answer),
		"wield calls --json": calls.stdout,
		"the serve log":      s.stderr.String(),
		"the event stream":   ev.buf.String(),
	}
	_ = filepath.WalkDir(u.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".yaml") {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil {
			written[p] = string(b)
		}
		return nil
	})
	for where, text := range written {
		for _, secret := range []string{"s3cret", "sid=abc", "hunter2", "p1n-v4lue"} {
			if i := strings.Index(text, secret); i >= 0 {
				t.Errorf("%s holds %q: …%q…", where, secret, text[max(0, i-120):min(len(text), i+60)])
			}
		}
	}
}

// TestJourneyAttackSelfMCP: `wield mcp --http` is wield's own server too:
// its http_get cannot reach its own /mcp endpoint, with loopback allowed.
func TestJourneyAttackSelfMCP(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "http_allow: [127.0.0.1/32]\n")
	srv := u.mcpHTTP("--config", "wield.yaml")
	url := srv.url + "/mcp"
	stderr := srv.stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "http_get", Arguments: map[string]any{"url": url}})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	if len(res.Content) > 0 {
		if c, ok := res.Content[0].(*mcp.TextContent); ok {
			text = c.Text
		}
	}
	if !res.IsError || !strings.Contains(text, "wield's own server") {
		t.Errorf("http_get of wield mcp's own endpoint: %v %q; want a refusal", res.IsError, text)
	}
}
