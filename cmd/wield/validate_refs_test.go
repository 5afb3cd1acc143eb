package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateRefsThatStopTheOthers: a toolset or an agent naming a tool or
// toolset that nothing defines stops list, call and serve (exit 1); validate
// says so as an error, at the name, exit 1, where it said "ok". A tool of a
// configured MCP server (server__tool), which validate cannot list, stays a
// warning, and so does run_program or the programs toolset with programs
// on, which setup offers beside the files.
func TestValidateRefsThatStopTheOthers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("set.yaml", "name: data_analysis_set\ntools:\n  - sql_tool\n  - echo\n")
	code, out, _ := runIn(t, "", "validate", dir)
	if want := `set.yaml:3:5: toolset "data_analysis_set": tool "sql_tool" is not defined: no tool file, built-in tool or MCP server of the configuration defines it`; code != 1 || !strings.Contains(out, want) || strings.Contains(out, "ok\n") {
		t.Errorf("validate: exit %d\n%s\nwant exit 1 and %s", code, out, want)
	}
	if code, _, errs := runIn(t, "", "list", "--tools", dir); code != 1 || !strings.Contains(errs, "sql_tool") {
		t.Errorf("list: exit %d, stderr %s; want 1 naming sql_tool (what validate foretells)", code, errs)
	}

	os.Remove(filepath.Join(dir, "set.yaml"))
	write("agent.yaml", "name: lead\ntool_sets: [nowhere]\n")
	if code, out, _ := runIn(t, "", "validate", dir); code != 1 || !strings.Contains(out, `agent.yaml:2:13: agent "lead": toolset "nowhere" is not defined: no file defines it`) {
		t.Errorf("validate, agent of an undefined toolset: exit %d\n%s", code, out)
	}
	write("agent.yaml", "name: lead\ntool_sets: [programs]\ntools: [run_program]\n")
	if code, out, _ := runIn(t, "", "validate", "--programs", dir); code != 0 || strings.Contains(out, "run_program") {
		t.Errorf("validate --programs, agent of run_program and the programs toolset: exit %d\n%s", code, out)
	}

	os.Remove(filepath.Join(dir, "agent.yaml"))
	write("set.yaml", "name: s\ntools: [inner__echo]\n")
	cfg := filepath.Join(t.TempDir(), "wield.yaml")
	os.WriteFile(cfg, []byte("mcp_servers:\n  - name: inner\n    command: [wield, mcp]\n"), 0o644)
	if code, out, _ := runIn(t, "", "validate", "--config", cfg, dir); code != 0 || !strings.Contains(out, `warning: toolset "s": tool "inner__echo" is not defined`) {
		t.Errorf("validate, a tool of a configured MCP server: exit %d\n%s\nwant 0 and a warning", code, out)
	}
}

// TestRefsToAnOffBuiltin: an agent or a toolset naming a built-in tool that
// a setting turns on (web_search without web_search in wield.yaml, the file
// tools without allowed_paths) is refused by validate and list with the
// setting that turns it on, not with "no tool file, built-in tool or MCP
// server defines it", which sent a reader of docs/toolsets-and-agents.md
// looking for a tool wield has. Once the setting is there, both accept it.
func TestRefsToAnOffBuiltin(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lead.yaml"), []byte("kind: agent\nname: lead\ntools: [web_search, read_file]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantSearch := `lead.yaml:3:9: agent "lead": tool "web_search" is not defined: the built-in tool web_search is off (set web_search: {provider, api_key} in wield.yaml)`
	wantRead := `lead.yaml:3:21: agent "lead": tool "read_file" is not defined: the built-in tool read_file is off (set allowed_paths in wield.yaml)`
	code, out, _ := runIn(t, "", "validate", dir)
	if code != 1 || !strings.Contains(out, wantSearch) || !strings.Contains(out, wantRead) {
		t.Errorf("validate: exit %d\n%s\nwant exit 1 and\n%s\n%s", code, out, wantSearch, wantRead)
	}
	code, _, errs := runIn(t, "", "list", "--tools", dir)
	if code != 1 || !strings.Contains(errs, wantSearch) || !strings.Contains(errs, wantRead) {
		t.Errorf("list: exit %d\n%s\nwant exit 1 and\n%s\n%s", code, errs, wantSearch, wantRead)
	}

	cfg := filepath.Join(t.TempDir(), "wield.yaml")
	if err := os.WriteFile(cfg, []byte("web_search: {provider: duckduckgo}\nallowed_paths: [.]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runIn(t, "", "validate", "--config", cfg, dir); code != 0 || strings.Contains(out, "is off") {
		t.Errorf("validate with the settings: exit %d\n%s", code, out)
	}
	if code, out, errs := runIn(t, "", "list", "--config", cfg, "--tools", dir, "--agent", "lead"); code != 0 || !strings.Contains(out, "web_search") || !strings.Contains(out, "read_file") {
		t.Errorf("list --agent lead with the settings: exit %d\n%s%s", code, out, errs)
	}
}

// TestCallsLimitRange: --limit takes 1 to 1000, as its help and the REST
// API's limit say; 0 was taken as the default 20.
func TestCallsLimitRange(t *testing.T) {
	for _, n := range []string{"0", "-1", "1001"} {
		if code, _, errs := run(t, "calls", "--limit", n); code != 2 || !strings.Contains(errs, "--limit "+n+": use 1 to 1000") {
			t.Errorf("calls --limit %s: exit %d, stderr %q; want 2 and the range", n, code, errs)
		}
	}
	if code, _, errs := run(t, "calls", "--limit", "1"); code != 0 {
		t.Errorf("calls --limit 1: exit %d, stderr %q", code, errs)
	}
}

// TestServerKeyHint: a command sent with --server to a server that wants a
// key says how to give one from the command line (--key, WIELD_KEY), not
// only the server's words about HTTP headers; and a key the server does
// not know is said to be that.
func TestServerKeyHint(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"code":"unauthorized","message":"a valid API key is required: send Authorization: Bearer KEY or X-API-Key: KEY"}}`))
	}))
	defer hs.Close()
	t.Setenv("WIELD_KEY", "")
	for _, args := range [][]string{{"list"}, {"call", "echo", "message=x"}, {"calls"}, {"stats"}, {"approvals", "list"}} {
		code, _, errs := run(t, append(args, "--server", hs.URL)...)
		if code != 1 || !strings.Contains(errs, "give --key KEY or set WIELD_KEY") {
			t.Errorf("%v --server: exit %d, stderr %q; want 1 and how to give a key", args, code, errs)
		}
	}
	if code, _, errs := run(t, "list", "--server", hs.URL, "--key", "wield_nope"); code != 1 || !strings.Contains(errs, "the server does not know the key of --key") {
		t.Errorf("list --server --key unknown: exit %d, stderr %q", code, errs)
	}
}

// TestListOffByFlag: `wield list --programs=off` with wield.yaml's programs
// enabled says run_program is off because of the flag; it told the reader
// to set programs: {enabled: true}, which the file already says.
func TestListOffByFlag(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "wield.yaml")
	if err := os.WriteFile(cfg, []byte("programs: {enabled: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runIn(t, "", "list", "--config", cfg, "--programs=off")
	if want := "run_program (--programs=off turns it off)"; code != 0 || strings.Contains(out, "run_program") || !strings.Contains(errs, want) {
		t.Errorf("list --programs=off: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 0, no run_program listed, and %q", code, out, errs, want)
	}
	if code, _, errs := runIn(t, "", "list"); code != 0 || !strings.Contains(errs, "run_program (pass --programs, or set programs: {enabled: true} in wield.yaml)") {
		t.Errorf("list without programs: exit %d\nstderr:\n%s", code, errs)
	}
}

// TestValidateEngineYAML: docs/configuration.md's engine.yaml, given to
// validate by its path, is checked as the configuration it is (it was read
// as a tool file: nine errors of "tool: unknown field tools_directory" and
// the like, exit 1); a mistake in it is reported as the configuration's.
func TestValidateEngineYAML(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "engine.yaml")
	body := "tools_directory: ./tools\nauto_reload: true\nreload_interval: 5\nwatch_for_changes: true\nstrict_validation: true\nconcurrency:\n  max_concurrent: 10\n  default_timeout: 30\n  bucket_limits: {http: 5, ai: 3}\n  strategy: priority\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runIn(t, "", "validate", p); code != 0 || out != "ok\n" {
		t.Errorf("validate engine.yaml: exit %d\n%s%s\nwant exit 0 and ok", code, out, errs)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(body, "strategy: priority", "strategy: lifo", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runIn(t, "", "validate", p); code != 1 || !strings.Contains(out, `engine.yaml:10:13: strategy: "lifo" is not fifo, priority or reject`) || strings.Contains(out, "tool:") {
		t.Errorf("validate engine.yaml with strategy lifo: exit %d\n%s\nwant exit 1 and the configuration's error", code, out)
	}
}
