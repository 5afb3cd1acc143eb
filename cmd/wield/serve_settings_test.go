package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeSettings writes a wield.yaml of src into a folder of the test's own
// and returns its path.
func writeSettings(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wield.yaml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServeSettingInstructions: mcp.instructions is what an MCP client
// reads as the server's instructions when it connects, in a session
// (initialize) and without one (2026-07-28, server/discover).
func TestServeSettingInstructions(t *testing.T) {
	const want = "Use calculator for arithmetic.\nAsk before deleting anything.\n"
	cfg := writeSettings(t, "mcp:\n  instructions: |\n    Use calculator for arithmetic.\n    Ask before deleting anything.\n")
	s := startServe(t, "", "--config", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, version := range []string{"2025-11-25", ""} {
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		var opts *mcp.ClientSessionOptions
		if version != "" {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
		}
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", MaxRetries: -1}, opts)
		if err != nil {
			t.Fatalf("connect (%q): %v", version, err)
		}
		if got := cs.InitializeResult().Instructions; got != want {
			t.Errorf("protocol %s: instructions %q, want %q", cs.InitializeResult().ProtocolVersion, got, want)
		}
		cs.Close()
	}
}

// echoBody is a REST call of echo whose body is n bytes long.
func echoBody(n int) string {
	head, tail := `{"arguments": {"message": "`, `"}}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// mcpEchoBody is an MCP tools/call of echo whose body is n bytes long.
func mcpEchoBody(n int) string {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	head, tail := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+meta+`,"name":"echo","arguments":{"message":"`, `"}}}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// mcpPost posts body to url's /mcp as a client of 2026-07-28, without a
// Content-Length when chunked, and returns the status and answer.
func mcpPost(t *testing.T, url, body string, chunked bool) (int, string) {
	t.Helper()
	var rd io.Reader = strings.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // hides the length: sent chunked
	}
	req, err := http.NewRequest("POST", url+"/mcp", rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeSettingMaxBody: server.max_body bounds the body of a REST call
// and of an MCP request alike: one byte over is a 413 naming the limit,
// whether the body says its length or not; one at the limit is served.
func TestServeSettingMaxBody(t *testing.T) {
	const limit = 4096
	s := startServe(t, "", "--config", writeSettings(t, fmt.Sprintf("server: {max_body: %d}\n", limit)))
	named := fmt.Sprintf("%d bytes", limit)

	code, body := s.request(t, "POST", "/v1/tools/echo/call", "", echoBody(limit+1))
	if code != http.StatusRequestEntityTooLarge || errCode(body) != "too_large" || !strings.Contains(string(body), named) {
		t.Errorf("REST, %d bytes: %d %s; want 413 too_large naming %s", limit+1, code, body, named)
	}
	code, body = s.request(t, "POST", "/v1/tools/echo/call", "", echoBody(limit))
	if code != http.StatusOK || !strings.Contains(string(body), `"ok": true`) && !strings.Contains(string(body), `"ok":true`) {
		t.Errorf("REST, %d bytes: %d %.300s; want the call made", limit, code, body)
	}
	for _, chunked := range []bool{false, true} {
		code, answer := mcpPost(t, s.url, mcpEchoBody(limit+1), chunked)
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(answer, named) {
			t.Errorf("MCP, %d bytes (chunked %v): %d %.300s; want 413 naming %s", limit+1, chunked, code, answer, named)
		}
		code, answer = mcpPost(t, s.url, mcpEchoBody(limit), chunked)
		if code != http.StatusOK || !strings.Contains(answer, `"result"`) {
			t.Errorf("MCP, %d bytes (chunked %v): %d %.300s; want the call's result", limit, chunked, code, answer)
		}
	}
}

// TestServeSettingMaxBodyRaised: a max_body over the engine's own bound on
// arguments (8 MiB) raises that bound too, so a client may send what the
// setting says: a 9 MiB argument is called, over REST and over MCP.
func TestServeSettingMaxBodyRaised(t *testing.T) {
	s := startServe(t, "", "--config", writeSettings(t, "server: {max_body: 12582912}\n"))
	const size = 9 << 20
	code, body := s.request(t, "POST", "/v1/tools/echo/call", "", echoBody(size))
	if code != http.StatusOK || !json.Valid(body) || !strings.Contains(string(body), `"ok": true`) && !strings.Contains(string(body), `"ok":true`) {
		t.Errorf("REST, 9 MiB: %d %.300s; want the call made", code, body)
	}
	code, answer := mcpPost(t, s.url, mcpEchoBody(size), false)
	if code != http.StatusOK || !strings.Contains(answer, `"result"`) || strings.Contains(answer, `"isError":true`) {
		t.Errorf("MCP, 9 MiB: %d %.300s; want the call's result", code, answer)
	}
}

// TestCallSettingFileLimits: max_file_read and max_file_write bound what
// read_file reads and write_file writes, saying the limit when refused,
// and let through what is within it.
func TestCallSettingFileLimits(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"small.txt": 100, "big.txt": 101} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(strings.Repeat("a", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "wield.yaml")
	if err := os.WriteFile(cfg, []byte("allowed_paths: [data]\nmax_file_read: 100\nmax_file_write: 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"read_file", "path=small.txt"}, `"size": 100`},
		{[]string{"read_file", "path=big.txt"}, "over the read limit of 100 bytes"},
		{[]string{"write_file", "path=w.txt", "content=" + strings.Repeat("b", 50)}, `"ok": true`},
		{[]string{"write_file", "path=w.txt", "content=" + strings.Repeat("b", 51)}, "over the write limit of 50 bytes"},
	} {
		_, out, errs := run(t, append(append([]string{"call"}, tt.args...), "--config", cfg)...)
		if !strings.Contains(out, tt.want) {
			t.Errorf("call %s: want %q in\n%.500s%s", tt.args[0]+" "+tt.args[1], tt.want, out, errs)
		}
	}
}
