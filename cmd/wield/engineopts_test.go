package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigReachesEngine: wield.yaml's max_output and approval_timeout,
// and a tool file's max_output, are what the engine runs calls with: an
// echo longer than the budget comes back cut (the tool's own budget
// winning), and a confirm call's approval would expire after the
// configured time.
func TestConfigReachesEngine(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wield.yaml")
	tools := filepath.Join(dir, "tools")
	if err := os.WriteFile(cfg, []byte("tool_dirs: [tools]\nmax_output: 300\napproval_timeout: 90s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"short.yaml":   "name: short_echo\ndescription: echo, cut short\nmax_output: 120\nparameters: [{name: message, type: string}]\nentry: {type: builtin, handler: echo}\n",
		"confirm.yaml": "name: careful_echo\ndescription: echo, approved first\npermission: confirm\nparameters: [{name: message, type: string}]\nentry: {type: builtin, handler: echo}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(tools, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := "message=" + strings.Repeat("x", 2000)
	for tool, budget := range map[string]int{"echo": 300, "short_echo": 120} {
		code, out, errs := run(t, "call", tool, long, "--config", cfg)
		if code != 0 {
			t.Fatalf("call %s: exit %d\n%s%s", tool, code, out, errs)
		}
		var res struct {
			Output   json.RawMessage `json:"output"`
			Metadata map[string]any  `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("call %s: %v\n%s", tool, err, out)
		}
		if len(res.Output) > budget || res.Metadata["truncated"] != true {
			t.Errorf("call %s: %d bytes of output, metadata %v; want at most %d, truncated", tool, len(res.Output), res.Metadata, budget)
		}
	}
	code, out, errs := run(t, "call", "careful_echo", "message=hi", "--dry-run", "--json", "--config", cfg)
	if code != 0 || !strings.Contains(out, `"expires_after_ms": 90000`) {
		t.Errorf("dry run of a confirm tool: exit %d, want its approval to expire after 90000 ms:\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, "list", "--json", "--config", cfg)
	if code != 0 || !strings.Contains(out, `"max_output": 120`) {
		t.Errorf("list --json: exit %d, want short_echo's max_output shown:\n%s%s", code, out, errs)
	}
}

// TestConfigRetryReachesEngine: wield.yaml's retry is the engine's retry
// policy, as a dry run of an idempotent tool reports it.
func TestConfigRetryReachesEngine(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools", "again.yaml"), []byte("name: again\ndescription: echo, retried\nannotations: {idempotent: true}\nparameters: [{name: message, type: string}]\nentry: {type: builtin, handler: echo}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type retry struct {
		MaxAttempts  int   `json:"max_attempts"`
		BackoffMS    int64 `json:"backoff_ms"`
		MaxBackoffMS int64 `json:"max_backoff_ms"`
	}
	for src, want := range map[string]retry{
		"": {3, 100, 2000},
		"retry: {max_attempts: 5, backoff: 250ms, max_backoff: 4s}\n": {5, 250, 4000},
		"retry: {max_attempts: 1}\n":                                  {MaxAttempts: 1},
	} {
		cfg := filepath.Join(dir, "wield.yaml")
		if err := os.WriteFile(cfg, []byte("tool_dirs: [tools]\n"+src), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := run(t, "call", "again", "message=hi", "--dry-run", "--json", "--config", cfg)
		var dry struct {
			Retry retry `json:"retry"`
		}
		if err := json.Unmarshal([]byte(out), &dry); code != 0 || err != nil || dry.Retry != want {
			t.Errorf("%q: exit %d, retry %+v (%v); want %+v\n%s%s", src, code, dry.Retry, err, want, out, errs)
		}
	}
}
