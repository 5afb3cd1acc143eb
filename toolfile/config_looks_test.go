package toolfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLooksLikeConfig: a YAML file of configuration keys is one whatever
// its name; a tool, a toolset, an agent, a tools: list or a stream is not.
func TestLooksLikeConfig(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		want       bool
	}{
		{"engine.yaml", "tools_directory: ./tools\nconcurrency: {max_concurrent: 10}\n", true},
		{"layout.yml", "tools:\n  timeout: 30000\n", true},
		{"limits.yaml", "timeout: 10s\nconcurrency: {max: 4}\n", true},
		{"tool.yaml", "name: t\ntimeout: 5s\nentry: {type: builtin, handler: echo}\n", false},
		{"set.yaml", "name: s\ntools: [echo]\n", false},
		{"list.yaml", "tools:\n  - name: a\n    entry: {type: builtin, handler: echo}\n", false},
		{"kind.yaml", "kind: agent\ntool_sets: [x]\n", false},
		{"stream.yaml", "timeout: 5s\n---\nname: b\n", false},
		{"other.yaml", "description: nothing of either\n", false},
		{"engine.json", "{\"tools_directory\": \"./tools\"}", false},
		{"broken.yaml", "timeout: [\n", false},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := LooksLikeConfig(p); got != c.want {
			t.Errorf("LooksLikeConfig(%s) = %v, want %v", c.name, got, c.want)
		}
	}
	if LooksLikeConfig(filepath.Join(dir, "missing.yaml")) {
		t.Error("a missing file looks like a configuration")
	}
}

// TestConfigOnlyKeysAreConfig holds configOnlyKeys to the configuration's
// keys: each is one LoadConfig knows (an unknown key is refused as such).
func TestConfigOnlyKeysAreConfig(t *testing.T) {
	dir := t.TempDir()
	for _, k := range configOnlyKeys {
		p := filepath.Join(dir, "wield.yaml")
		if err := os.WriteFile(p, []byte(k+": ~\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(p); err != nil && strings.Contains(err.Error(), "unknown") {
			t.Errorf("%s: %v", k, err)
		}
	}
}
