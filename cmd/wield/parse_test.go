package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	dir := t.TempDir()
	tool := "name: lookup\ndescription: Find a customer by code.\nparameters:\n  - {name: code, type: string, required: true}\n  - {name: limit, type: integer}\nentry: {type: builtin, handler: echo}\n"
	if err := os.WriteFile(filepath.Join(dir, "lookup.yaml"), []byte(tool), 0o644); err != nil {
		t.Fatal(err)
	}
	xml := "<tool_call>\n<name>lookup</name>\n<params>\n<code><![CDATA[007]]></code>\n<limit><![CDATA[5]]></limit>\n</params>\n</tool_call>"
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
		err   string
	}{
		{"no schema: seed 000 conversion", xml, nil, 0, `[{"name":"lookup","arguments":{"code":7,"limit":5}}]`, ""},
		{"schema from --tools keeps the string", xml, []string{"--tools", dir}, 0, `[{"name":"lookup","arguments":{"code":"007","limit":5}}]`, ""},
		{"hermes", `<tool_call>{"name": "echo", "arguments": {"message": "007"}}</tool_call>`, nil, 0, `[{"name":"echo","arguments":{"message":"007"}}]`, ""},
		{"prose", "No tools needed; the answer is 4.", nil, 0, `[]`, ""},
		{"json that is not a call", `{"answer": 4}`, nil, 0, `[]`, ""},
		{"format restricts", `<tool_call>{"name": "echo", "arguments": {}}</tool_call>`, []string{"--format", "invoke"}, 0, `[]`, ""},
		{"cut off", "<tool_call>{\"name\": \"echo\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"calculator\", \"argu", nil, 1, `[{"name":"echo","arguments":{}}]`, "incomplete:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runIn(t, tt.stdin, append([]string{"parse"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errs, tt.err) {
				t.Fatalf("exit %d (want %d), stderr %q", code, tt.code, errs)
			}
			var got, want any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			json.Unmarshal([]byte(tt.want), &want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if code, _, errs := runIn(t, "", "parse", "--format", "yaml"); code != 2 || !strings.Contains(errs, "unknown --format") {
		t.Errorf("bad format: exit %d %s", code, errs)
	}
}

func TestChat(t *testing.T) {
	var turn atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || !strings.Contains(string(body), `"model":"tiny-model"`) {
			http.Error(w, `{"error":{"message":"unexpected request"}}`, 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		msg := `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"calculator","arguments":"{\"expression\":\"6*7\"}"}}]}`
		finish := "tool_calls"
		if turn.Add(1) == 2 {
			if !strings.Contains(string(body), `\"result\":42`) {
				t.Errorf("second turn lacks the result: %s", body)
			}
			msg, finish = `{"role":"assistant","content":"It is 42."}`, "stop"
		}
		io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"tiny-model","choices":[{"index":0,"message":`+msg+`,"finish_reason":"`+finish+`"}]}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	agentFile := filepath.Join(dir, "math.yaml")
	os.WriteFile(agentFile, []byte("kind: agent\nname: math\ntools: [calculator]\noutput_strategy: {function_calling: true, fallback_to_structured_output: true}\n"), 0o644)
	code, out, errs := runIn(t, "What is 6*7?\n", "chat", "--model", srv.URL+"/v1/tiny-model", "--agent", agentFile)
	if code != 0 || strings.TrimSpace(out) != "It is 42." || !strings.Contains(errs, "→ calculator") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// A bare name is a model at the provider's own endpoint; a URL needs
	// the name after it.
	if code, _, errs := runIn(t, "", "chat", "--model", srv.URL+"/v1/"); code != 2 || !strings.Contains(errs, "no model name after the URL") {
		t.Errorf("bad --model: exit %d %s", code, errs)
	}
}

func TestConfigBuiltins(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o755)
	os.WriteFile(filepath.Join(data, "note.txt"), []byte("hello from a file"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("TOPSECRET"), 0o644)
	cfg := filepath.Join(dir, "wield.yaml")
	os.WriteFile(cfg, []byte("allowed_paths: [./data]\nenv_allow: [WIELD_CFG_TEST]\nweb_search: {provider: duckduckgo}\n"), 0o644)
	t.Setenv("WIELD_CFG_TEST", "visible")
	code, out, errs := runIn(t, "", "--config", cfg, "call", "read_file", "path=note.txt")
	if code != 0 || !strings.Contains(out, "hello from a file") {
		t.Fatalf("read_file: exit %d %s %s", code, out, errs)
	}
	code, out, _ = runIn(t, "", "--config", cfg, "call", "read_file", "path=../secret.txt")
	if code != 1 || !strings.Contains(out, "permission_denied") || strings.Contains(out, "TOPSECRET") {
		t.Errorf("escape: exit %d %s", code, out)
	}
	code, out, _ = runIn(t, "", "--config", cfg, "call", "get_env", "key=WIELD_CFG_TEST")
	if code != 0 || !strings.Contains(out, "visible") {
		t.Errorf("get_env: exit %d %s", code, out)
	}
	code, out, _ = runIn(t, "", "--config", cfg, "list")
	for _, want := range []string{"read_file", "web_search", "move_file"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %s:\n%s", want, out)
		}
	}
}

func TestConfigRedisLimiter(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "wield.yaml")
	os.WriteFile(cfg, []byte("concurrency: {backend: redis, max: 2}\nredis: {url: \"redis://127.0.0.1:6379/0\", prefix: \"wield-test-"+t.Name()+"\"}\n"), 0o644)
	code, out, errs := runIn(t, "", "--config", cfg, "call", "echo", "message=through redis")
	if code != 0 || !strings.Contains(out, "through redis") {
		t.Fatalf("exit %d %s %s", code, out, errs)
	}
}

func TestValidateDialects(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "t.yaml"), []byte("# a tool\nname: files.read\ndescription: Read a file\nparameters:\n  - {name: path, type: string, required: true}\n  - {name: meta, type: object}\nentry: {type: builtin, handler: echo}\n"), 0o644)
	code, out, _ := runIn(t, "", "validate", dir)
	want := []string{
		`t.yaml:2:1: warning: openai: tool "files.read": name "files.read" is not accepted`,
		`t.yaml:2:1: warning: anthropic: tool "files.read": name`,
		`t.yaml:2:1: warning: gemini: tool "files.read" at /properties/meta: a free-form object`,
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	// Dialect refusals nobody asked about are warnings: they do not fail
	// validate. Naming the dialect makes its refusals errors.
	if code != 0 || strings.Contains(out, "mcp:") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if code, out, _ := runIn(t, "", "validate", "--dialect", "openai", dir); code != 1 || !strings.Contains(out, `t.yaml:2:1: openai: tool "files.read"`) {
		t.Errorf("--dialect openai: exit %d, want 1 with the refusal as an error:\n%s", code, out)
	}
	if code, out, _ := runIn(t, "", "validate", "--dialect", "mcp", dir); code != 0 || strings.TrimSpace(out) != "ok" {
		t.Errorf("mcp only: exit %d %s", code, out)
	}
	if code, _, errs := runIn(t, "", "validate", "--dialect", "cohere", dir); code != 2 || !strings.Contains(errs, `unknown --dialect "cohere"`) {
		t.Errorf("unknown dialect: exit %d %s", code, errs)
	}
}

func TestLargeCatalogOffersSearch(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("t%02d.yaml", i)), []byte(fmt.Sprintf("name: crm_field_%02d\ndescription: Update field %d of a customer record in the CRM\nentry: {type: builtin, handler: echo}\n", i, i)), 0o644)
	}
	code, out, errs := runIn(t, "", "--tools", dir, "call", "search_tools", "query=evaluate an arithmetic expression")
	if code != 0 || !strings.Contains(out, `"name": "calculator"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	// A small catalog has no search_tools.
	if code, out, _ := runIn(t, "", "list"); code != 0 || strings.Contains(out, "search_tools") {
		t.Errorf("search_tools in a small catalog:\n%s", out)
	}
}
