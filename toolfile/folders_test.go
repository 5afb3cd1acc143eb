package toolfile

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIsConfig(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      bool
	}{
		{"engine.yaml", "tools_directory: ./tools\n", true},
		{"engine.yaml", "tools:\n  timeout: 5000\n", true},
		{"anything.yml", "store: sqlite:x.db\n", true},
		{"wield.yaml", "", true},
		{"wield.yaml", "bogus_key: 1\n", true},      // by its name: the configuration says the key is unknown
		{"config.yml", "tools:\n  - tools\n", true}, // a mistaken configuration: it says tool folders go in tool_dirs
		{"config.yaml", "tools:\n  - {name: a, description: d, entry: {type: builtin, handler: echo}}\n", false},
		{"config.yaml", "name: config\ndescription: d\nentry: {type: builtin, handler: echo}\n", false},
		{"wield.yaml", "- name: a\n", false},
		{"wield.yaml", "name: a\n---\nname: b\n", false},
		{"set.yaml", "name: s\ntools: [echo]\n", false},
		{"neither.yaml", "foo: 1\n", false},
		{"engine.json", `{"tools_directory": "x"}`, false},
	} {
		if got := IsConfig(filepath.Join("dir", tt.name), []byte(tt.src)); got != tt.want {
			t.Errorf("IsConfig(%s, %q) = %v, want %v", tt.name, tt.src, got, tt.want)
		}
	}
}

// TestLoadDirsConfigsAndPlaces: a configuration file in a tool folder is
// left out with a warning, checked with CheckConfigs, and left out without
// a word when it is ConfigFile; a missing folder is told where DirAt says.
func TestLoadDirsConfigsAndPlaces(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"say.yaml":    "name: say\ndescription: Say it\nentry: {type: builtin, handler: echo}\n",
		"engine.yaml": "tools_directory: .\nbogus_key: 1\n",
		"wield.yaml":  "tool_dirs:\n  - .\n  - gone\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(dir, "wield.yaml")
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	engine, gone := filepath.Join(dir, "engine.yaml"), filepath.Join(dir, "gone")
	missing := Problem{File: cfgPath, Line: 3, Col: 5, Warning: true, Message: "tool folder \"" + gone + "\" does not exist (yet): no tools loaded from it"}
	for _, tt := range []struct {
		name string
		l    Loader
		want []Problem
	}{
		{"serve", Loader{ConfigFile: cfgPath, DirAt: cfg.ToolDirAt}, []Problem{
			{File: engine, Line: 1, Col: 1, Warning: true, Message: "a configuration file, not a tool file: left out (wield reads a configuration given with --config; wield validate checks this one)"},
			missing,
		}},
		{"validate", Loader{ConfigFile: cfgPath, DirAt: cfg.ToolDirAt, CheckConfigs: true}, []Problem{
			{File: engine, Line: 2, Col: 1, Message: `config: unknown field "bogus_key"`},
			missing,
		}},
		{"no configuration", Loader{}, []Problem{
			{File: engine, Line: 1, Col: 1, Warning: true, Message: "a configuration file, not a tool file: left out (wield reads a configuration given with --config; wield validate checks this one)"},
			{File: gone, Line: 1, Col: 1, Warning: true, Message: "tool folder does not exist (yet): no tools loaded from it"},
			{File: cfgPath, Line: 1, Col: 1, Warning: true, Message: "a configuration file, not a tool file: left out (wield reads a configuration given with --config; wield validate checks this one)"},
		}},
	} {
		set, _ := tt.l.LoadDirs(context.Background(), cfg.ToolDirs...)
		if len(set.Tools) != 1 || set.Tools[0].Name != "say" {
			t.Errorf("%s: tools %v, want say alone", tt.name, set.Tools)
		}
		Problems(set.Problems).Sort()
		if diff := cmp.Diff(tt.want, set.Problems); diff != "" {
			t.Errorf("%s: problems (-want +got):\n%s", tt.name, diff)
		}
	}
}
