//go:build unix

package journeys

// Settings that only Go code could change before, now keys of wield.yaml:
// the bound on a request's body (server.max_body, REST and MCP alike), the
// file tools' size limits (max_file_read, max_file_write), the shared
// limiter's poll interval (redis.poll_interval) and what the MCP server
// tells clients as they connect (mcp.instructions).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	goredis "github.com/redis/go-redis/v9"
)

// settingPost posts body to url with headers, chunked (no Content-Length)
// when asked, and returns the status and answer.
func settingPost(t *testing.T, url, body string, chunked bool, headers map[string]string) (int, string) {
	t.Helper()
	var rd io.Reader = strings.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // its length unknown: sent chunked
	}
	req, err := http.NewRequest("POST", url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: commandLimit}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// padded is head, x's and tail, n bytes in all.
func padded(head, tail string, n int) string {
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// settingMCPHeaders are those of a 2026-07-28 client's tools/call of echo.
var settingMCPHeaders = map[string]string{"Accept": "application/json, text/event-stream",
	"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}

// settingMCPCall is a 2026-07-28 tools/call of echo, n bytes long.
func settingMCPCall(n int) string {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"journey","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	return padded(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{`+meta+`,"name":"echo","arguments":{"message":"`, `"}}}`, n)
}

// TestJourneySettingMaxBody: wield.yaml's server.max_body bounds a
// request's body on every HTTP face of wield: a REST call one byte over it
// is a 413 too_large naming the limit, an MCP request one byte over it a
// 413 with a JSON-RPC error naming it, whether the body says its length
// or not; at the limit both are served, through `wield serve` and `wield
// mcp --http`. A limit over the engine's own 8 MiB bound on arguments
// raises it: a 9 MiB argument is called. A max_body of 0 is refused by
// `wield validate` at its line.
func TestJourneySettingMaxBody(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	const limit = 6000
	u.write("wield.yaml", fmt.Sprintf("server:\n  max_body: %d\n", limit))
	named := fmt.Sprintf("over the limit of %d bytes", limit)
	rest := func(n int) string { return padded(`{"arguments": {"message": "`, `"}}`, n) }

	s := u.serve("--config", "wield.yaml")
	for _, chunked := range []bool{false, true} {
		code, body := settingPost(t, s.url+"/v1/tools/echo/call", rest(limit+1), chunked, nil)
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, `"too_large"`) || !strings.Contains(body, named) {
			t.Errorf("serve, REST, %d bytes (chunked %v): %d %.300s; want 413 too_large saying %q", limit+1, chunked, code, body, named)
		}
		if code, body := settingPost(t, s.url+"/v1/tools/echo/call", rest(limit), chunked, nil); code != 200 || !strings.Contains(body, `"ok":true`) {
			t.Errorf("serve, REST, %d bytes (chunked %v): %d %.300s; want the call made", limit, chunked, code, body)
		}
	}
	servers := map[string]*server{"serve": s, "mcp --http": u.mcpHTTP("--config", "wield.yaml")}
	for name, srv := range servers {
		for _, chunked := range []bool{false, true} {
			code, body := settingPost(t, srv.url+"/mcp", settingMCPCall(limit+1), chunked, settingMCPHeaders)
			var answer struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &answer); code != http.StatusRequestEntityTooLarge || err != nil || answer.Error.Code != -32600 || !strings.Contains(answer.Error.Message, named) {
				t.Errorf("%s, MCP, %d bytes (chunked %v): %d %.300s; want 413 with a JSON-RPC error saying %q", name, limit+1, chunked, code, body, named)
			}
			if code, body := settingPost(t, srv.url+"/mcp", settingMCPCall(limit), chunked, settingMCPHeaders); code != 200 || !strings.Contains(body, `"result"`) || strings.Contains(body, `"isError":true`) {
				t.Errorf("%s, MCP, %d bytes (chunked %v): %d %.300s; want echo's result", name, limit, chunked, code, body)
			}
		}
	}

	// Without the key: the defaults, 8 MiB for REST and 4 MiB for MCP.
	d := u.serve()
	if code, body := settingPost(t, d.url+"/v1/tools/echo/call", rest(limit+1), false, nil); code != 200 {
		t.Errorf("no max_body, REST, %d bytes: %d %.300s; want the call made", limit+1, code, body)
	}
	if code, body := settingPost(t, d.url+"/mcp", settingMCPCall(5<<20), false, settingMCPHeaders); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "over the limit of 4194304 bytes") {
		t.Errorf("no max_body, MCP, 5 MiB: %d %.300s; want 413 naming MCP's default, 4194304 bytes", code, body)
	}

	u.write("big/wield.yaml", "server: {max_body: 12582912}\n")
	b := u.serve("--config", "big/wield.yaml")
	if code, body := settingPost(t, b.url+"/v1/tools/echo/call", rest(9<<20), false, nil); code != 200 || !strings.Contains(body[:min(len(body), 200)], `"ok":true`) {
		t.Errorf("max_body 12 MiB, REST, an argument of 9 MiB: %d %.300s; want the call made", code, body)
	}
	if code, body := settingPost(t, b.url+"/mcp", settingMCPCall(9<<20), false, settingMCPHeaders); code != 200 || !strings.Contains(body, `"result"`) || strings.Contains(body, `"isError":true`) {
		t.Errorf("max_body 12 MiB, MCP, an argument of 9 MiB: %d %.300s; want echo's result", code, body)
	}

	u.write("zero/wield.yaml", "server:\n  max_body: 0\n")
	r := u.wield("validate", "zero/wield.yaml")
	if want := "zero/wield.yaml:2:13: server.max_body: must be at least 1 (bytes; leave it out for the defaults, 8388608 for REST and 4194304 for MCP)"; r.code != 1 || !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("max_body: 0: want exit 1 and %q:\n%s", want, r)
	}
}

// TestJourneySettingFileLimits: max_file_read and max_file_write bound the
// file tools through `wield serve`: read_file of a file one byte over the
// read limit fails saying the limit, of one at it reads it; write_file of
// content one byte over the write limit is refused saying the limit, at
// it writes the file. Without the keys, 10 MiB: a 2 MiB file is read. A
// limit written "1MB" is refused at its line.
func TestJourneySettingFileLimits(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	u.write("data/at.txt", strings.Repeat("a", 1000))
	u.write("data/over.txt", strings.Repeat("a", 1001))
	u.write("data/large.txt", strings.Repeat("a", 2<<20))
	u.write("wield.yaml", "allowed_paths: [data]\nmax_file_read: 1000\nmax_file_write: 500\n")
	s := u.serve("--config", "wield.yaml")
	call := func(s *server, tool, args string) string {
		_, body := s.do("POST", "/v1/tools/"+tool+"/call", `{"arguments": `+args+`}`)
		return string(body)
	}
	if got := call(s, "read_file", `{"path": "at.txt"}`); !strings.Contains(got, `"size":1000`) {
		t.Errorf("read_file of 1000 bytes under max_file_read 1000: %.300s; want it read", got)
	}
	if got := call(s, "read_file", `{"path": "over.txt"}`); !strings.Contains(got, `"ok":false`) || !strings.Contains(got, "over the read limit of 1000 bytes") {
		t.Errorf("read_file of 1001 bytes under max_file_read 1000: %.300s; want it refused naming the limit", got)
	}
	if got := call(s, "write_file", `{"path": "w.txt", "content": "`+strings.Repeat("b", 500)+`"}`); !strings.Contains(got, `"ok":true`) {
		t.Errorf("write_file of 500 bytes under max_file_write 500: %.300s; want it written", got)
	}
	if got := call(s, "write_file", `{"path": "w.txt", "content": "`+strings.Repeat("c", 501)+`"}`); !strings.Contains(got, `"ok":false`) || !strings.Contains(got, "over the write limit of 500 bytes") {
		t.Errorf("write_file of 501 bytes under max_file_write 500: %.300s; want it refused naming the limit", got)
	}
	if b, err := os.ReadFile(u.path("data/w.txt")); err != nil || string(b) != strings.Repeat("b", 500) {
		t.Errorf("data/w.txt holds %d bytes (%v); want the 500 b's, the refused write leaving it", len(b), err)
	}

	u.write("plain/wield.yaml", "allowed_paths: [../data]\n")
	d := u.serve("--config", "plain/wield.yaml")
	if got := call(d, "read_file", `{"path": "large.txt"}`); !strings.Contains(got, `"ok":true`) {
		t.Errorf("read_file of 2 MiB without max_file_read: %.300s; want it read (10 MiB by default)", got)
	}

	u.write("bad/wield.yaml", "allowed_paths: [../data]\nmax_file_read: 1MB\n")
	r := u.wield("validate", "bad/wield.yaml")
	if want := "bad/wield.yaml:2:16: max_file_read: expected a non-negative integer, got string"; r.code != 1 || !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("max_file_read: 1MB: want exit 1 and %q:\n%s", want, r)
	}
}

// TestJourneySettingRedisPoll: redis.poll_interval reaches the limiter
// that `wield serve` shares through Redis. With one slot held, a second
// call waits in Redis's queue, and its entry says when it is given up for
// dead if its server stops trying: three poll intervals on (300 ms by
// default). With poll_interval: 20s, that is a minute away. A
// poll_interval of 0 is refused at its line.
func TestJourneySettingRedisPoll(t *testing.T) {
	t.Parallel()
	rurl, prefix := redisURL(t)
	u := newUser(t)
	u.write("tools/nap.yaml", "name: nap\ndescription: Sleep for three seconds\nentry: {type: command, command: [sleep, \"3\"]}\n")
	u.write("wield.yaml", fmt.Sprintf("tool_dirs: [tools]\nconcurrency: {max: 1, backend: redis}\nredis: {url: %q, prefix: %s, poll_interval: 20s}\n", rurl, prefix))
	s := u.serve("--config", "wield.yaml")

	rdb := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer func() {
		keys, _ := rdb.Keys(context.Background(), "{"+prefix+":limit}*").Result()
		if len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	}()

	var wg sync.WaitGroup
	results := make([]string, 2)
	for i := range 2 {
		if i == 1 {
			// The first call holds the slot before the second asks.
			if !eventually(10*time.Second, func() bool {
				_, b := s.do("GET", "/v1/limiter", "")
				return strings.Contains(string(b), `"current_concurrent":1`)
			}) {
				t.Fatalf("the first call did not take the slot:\n%s", s.stderr)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := settingPost(t, s.url+"/v1/tools/nap/call", `{"arguments": {}}`, false, nil)
			results[i] = fmt.Sprint(code, " ", body)
		}()
	}
	wexp := "{" + prefix + ":limit}:wexp"
	var waiter []goredis.Z
	if !eventually(10*time.Second, func() bool {
		waiter, _ = rdb.ZRangeWithScores(ctx, wexp, 0, -1).Result()
		return len(waiter) == 1
	}) {
		t.Fatalf("no waiter in %s within 10 s:\n%s", wexp, s.stderr)
	}
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Duration(waiter[0].Score-float64(now.UnixMilli())) * time.Millisecond; left < 30*time.Second || left > 61*time.Second {
		t.Errorf("the waiter expires %v from now; want about a minute (3 × poll_interval 20s), not 300 ms", left)
	}
	wg.Wait()
	for i, r := range results {
		if !strings.HasPrefix(r, "200 ") || !strings.Contains(r, `"ok":true`) {
			t.Errorf("call %d: %.300s; want both calls made, one after the other", i+1, r)
		}
	}

	u.write("zero/wield.yaml", fmt.Sprintf("redis:\n  url: %q\n  poll_interval: 0\n", rurl))
	r := u.wield("validate", "zero/wield.yaml")
	if want := "zero/wield.yaml:3:18: redis.poll_interval: must be more than 0 (leave it out for the default, 100ms)"; r.code != 1 || !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("poll_interval: 0: want exit 1 and %q:\n%s", want, r)
	}
}

// TestJourneySettingMCPInstructions: mcp.instructions is what an MCP
// client reads as the server's instructions when it connects: to `wield
// serve` and `wield mcp --http`, in a session (2025-11-25) and without
// one (2026-07-28), and to `wield mcp` over stdio. Without the key there
// are none.
func TestJourneySettingMCPInstructions(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	const want = "Use calculator for arithmetic.\nAsk the user before deleting a file.\n"
	u.write("wield.yaml", "mcp:\n  instructions: |\n    Use calculator for arithmetic.\n    Ask the user before deleting a file.\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, s := range map[string]*server{"serve": u.serve("--config", "wield.yaml"), "mcp --http": u.mcpHTTP("--config", "wield.yaml")} {
		for _, version := range []string{"", "2025-11-25"} {
			cs := connect2026(ctx, t, s.url+"/mcp", version)
			if got := cs.InitializeResult().Instructions; got != want {
				t.Errorf("%s, protocol %s: instructions %q, want %q", name, cs.InitializeResult().ProtocolVersion, got, want)
			}
			cs.Close()
		}
	}

	cmd := exec.Command(bin, "mcp", "--config", "wield.yaml")
	cmd.Dir, cmd.Env = u.dir, u.env
	client := mcp.NewClient(&mcp.Implementation{Name: "journey", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to wield mcp over stdio: %v", err)
	}
	if got := cs.InitializeResult().Instructions; got != want {
		t.Errorf("stdio: instructions %q, want %q", got, want)
	}
	cs.Close()

	plain := u.serve()
	cs = connect2026(ctx, t, plain.url+"/mcp", "")
	if got := cs.InitializeResult().Instructions; got != "" {
		t.Errorf("without mcp.instructions: %q, want none", got)
	}
}
