package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeysNames: `wield keys create --name` refuses a name a key not
// revoked has (exit 2, naming that key), as POST /v1/keys does, and `wield
// keys revoke` takes a key's name as DELETE /v1/keys/{id} does.
func TestKeysNames(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys.json")
	create := func(name string) (int, string, string) {
		return run(t, "keys", "create", "--keys", keys, "--rights", "call", "--name", name)
	}
	if code, _, errs := create("agent"); code != 0 {
		t.Fatalf("keys create --name agent: exit %d: %s", code, errs)
	}
	code, out, errs := create("agent")
	if code != 2 || out != "" || !strings.Contains(errs, `already named "agent"`) {
		t.Errorf("a second key named agent: exit %d, stdout %q, stderr %q; want exit 2 saying the name is taken", code, out, errs)
	}
	if code, _, errs := run(t, "keys", "revoke", "--keys", keys, "agent"); code != 0 || !strings.Contains(errs, "revoked key key_") {
		t.Fatalf("keys revoke agent: exit %d: %s", code, errs)
	}
	// Revoked, the name is free again; a name no key has is a usage error.
	if code, _, errs := create("agent"); code != 0 {
		t.Errorf("a key named agent after the first was revoked: exit %d: %s", code, errs)
	}
	if code, _, errs := run(t, "keys", "revoke", "--keys", keys, "nobody"); code != 2 || !strings.Contains(errs, `"nobody"`) {
		t.Errorf("keys revoke nobody: exit %d: %s", code, errs)
	}
	_, out, _ = run(t, "keys", "list", "--keys", keys)
	if strings.Count(out, "active") != 1 || strings.Count(out, "revoked") != 1 {
		t.Errorf("keys list after revoking agent and making it again:\n%s", out)
	}
}

// TestKeysToolsets: `wield keys create --toolset` takes only a toolset that
// the tool files of --tools (or --config) define, as POST /v1/keys does: an
// unknown one is a usage error (exit 2) that lists those there are, and no
// key is made.
func TestKeysToolsets(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	tools := filepath.Join(dir, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"math.toolset.yaml": "name: math\ndescription: Sums\ntools: [echo]\n",
		"text.toolset.yaml": "name: text\ndescription: Words\ntools: [echo]\n",
	} {
		if err := os.WriteFile(filepath.Join(tools, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args []string
		code int
		errs string // in stderr
	}{
		{[]string{"--tools", tools, "--toolset", "math", "--toolset", "text"}, 0, "on toolsets math, text"},
		{[]string{"--tools", tools, "--toolset", "maths"}, 2, `--toolset: unknown toolset "maths": the toolsets are math, text`},
		{[]string{"--tools", tools, "--toolset", "math", "--toolset", "math"}, 2, `--toolset: "math" is named twice`},
		{[]string{"--toolset", "math"}, 2, `--toolset: unknown toolset "math": there are no toolsets (toolsets are defined by the tool files of --config or --tools`},
	}
	for _, tt := range tests {
		args := append([]string{"keys", "create", "--keys", keys, "--rights", "read"}, tt.args...)
		code, out, errs := run(t, args...)
		if code != tt.code || !strings.Contains(errs, tt.errs) || (code != 0) != (out == "") {
			t.Errorf("wield %s: exit %d, stdout %q, stderr %q; want exit %d saying %q", strings.Join(args, " "), code, out, errs, tt.code, tt.errs)
		}
	}
	_, out, _ := run(t, "keys", "list", "--keys", keys)
	if n := strings.Count(out, "active"); n != 1 {
		t.Errorf("keys list: %d keys, want the one made with known toolsets:\n%s", n, out)
	}
}

// TestKeysToolsetPrograms: the programs toolset, which a server offering
// run_program has (--programs, or programs.enabled in wield.yaml) without
// any tool file defining it, is a toolset keys create takes; without
// programs it is refused like any toolset the server does not have.
func TestKeysToolsetPrograms(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	cfg := filepath.Join(dir, "wield.yaml")
	if err := os.WriteFile(cfg, []byte("programs:\n  enabled: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	off := filepath.Join(dir, "off.yaml")
	if err := os.WriteFile(off, []byte("programs:\n  enabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"--programs", "--name", "a"}, 0},
		{[]string{"--config", cfg, "--name", "b"}, 0},
		{[]string{"--config", cfg, "--programs=off", "--name", "c"}, 2},
		{[]string{"--config", off, "--name", "d"}, 2},
		{[]string{"--name", "e"}, 2},
	} {
		args := append([]string{"keys", "create", "--keys", keys, "--rights", "call", "--toolset", "programs"}, tt.args...)
		if code, _, errs := run(t, args...); code != tt.code {
			t.Errorf("wield %s: exit %d, want %d\n%s", strings.Join(args, " "), code, tt.code, errs)
		}
	}
}
