//go:build unix

package journeys

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestJourneyValidateCountsConfigProblems: a first wield.yaml naming a tool
// folder not made yet and an allowed folder not made yet, beside a tool
// file with a mistake. `wield validate --config wield.yaml` prints the
// configuration's two warnings with the tool file's error, the missing
// folder at its tool_dirs item, and counts them all: "1 error, 2
// warnings" (it said "1 error, 1 warning" under three lines, the
// configuration's warning on stderr before them, the folder at
// "missing:1:1"). list tells the folder at the same place.
func TestJourneyValidateCountsConfigProblems(t *testing.T) {
	u := newUser(t)
	u.write("wield.yaml", "tool_dirs:\n  - tools\n  - tools/more\nallowed_paths: [./data]\n")
	u.write("tools/greet.yaml", "name: greet\ndescription: Say hello\nentry: {type: command, command: [echo, hello]}\ntimout: 5s\n")
	r := u.wield("validate", "--config", "wield.yaml")
	want := []string{
		`tools/greet.yaml:4:1: tool: unknown field "timout"`,
		`wield.yaml:3:5: warning: tool folder "tools/more" does not exist (yet): no tools loaded from it`,
		`wield.yaml:4:17: warning: allowed_paths[0]: the folder "./data"`,
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 1 || r.stderr != "1 error, 2 warnings\n" || len(lines) != len(want) {
		t.Fatalf("want exit 1, three lines and \"1 error, 2 warnings\":\n%s", r)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want it to start %q\n%s", i+1, lines[i], w, r)
		}
	}

	u.write("tools/greet.yaml", "name: greet\ndescription: Say hello\nentry: {type: command, command: [echo, hello]}\n")
	r = u.wield("validate", "--config", "wield.yaml")
	if r.code != 0 || r.stderr != "2 warnings\n" || !strings.HasSuffix(r.stdout, "\nok\n") {
		t.Errorf("fixed: want exit 0, ok and \"2 warnings\":\n%s", r)
	}
	r = u.must("list", "--config", "wield.yaml")
	if !strings.Contains(r.stderr, `wield.yaml:3:5: warning: tool folder "tools/more" does not exist (yet)`) || strings.Contains(r.stderr, "more:1:1") {
		t.Errorf("list: want the missing folder at its tool_dirs item:\n%s", r)
	}
}

// TestJourneyToolFolderHoldsConfig: a newcomer keeps the engine's
// engine.yaml (with a misspelt key) and a config.yml inside the tool folder
// they scan. `wield validate tools` checks both as the configurations they
// are (it said "toolset: missing name" and "tool: unknown field" five
// times); list and call leave them out, with one warning each naming the
// file, and run the tool beside them; wield.yaml naming its own folder
// (tool_dirs: [.]) is not spoken of.
func TestJourneyToolFolderHoldsConfig(t *testing.T) {
	u := newUser(t)
	u.write("tools/greet.yaml", "name: greet\ndescription: Say hello\nentry: {type: command, command: [echo, hello]}\n")
	u.write("tools/engine.yaml", "tools_directory: .\nwatch_for_change: true\n")
	u.write("tools/config.yml", "tools:\n  timeout: 5000\n")
	r := u.wield("validate", "tools")
	if r.code != 1 || strings.TrimSpace(r.stdout) != `tools/engine.yaml:2:1: config: unknown field "watch_for_change"` || r.stderr != "1 error, 0 warnings\n" {
		t.Errorf("validate tools: want the configuration's one error:\n%s", r)
	}
	u.write("tools/engine.yaml", "tools_directory: .\nwatch_for_changes: true\n")
	if r := u.wield("validate", "tools"); r.code != 0 || r.stdout != "ok\n" {
		t.Errorf("validate tools, engine.yaml fixed: want ok:\n%s", r)
	}
	r = u.must("call", "greet", "--tools", "tools")
	for _, f := range []string{"tools/config.yml", "tools/engine.yaml"} {
		if want := f + ":1:1: warning: a configuration file, not a tool file: left out"; strings.Count(r.stderr, f) != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("call --tools tools: want one warning %q:\n%s", want, r)
		}
	}
	if !strings.Contains(r.stdout, `"stdout": "hello\n"`) {
		t.Errorf("call greet:\n%s", r)
	}
	u.write("tools/wield.yaml", "tool_dirs: [.]\n")
	r = u.must("list", "--config", "tools/wield.yaml")
	if strings.Contains(r.stderr, "tools/wield.yaml:") || !strings.Contains(r.stdout, "\ngreet ") {
		t.Errorf("list --config tools/wield.yaml (tool_dirs: [.]): want greet and no word of wield.yaml:\n%s", r)
	}
}

// TestJourneyToolFolderOddFiles: a named pipe left in the tool folder, an
// empty file and a file of notes: validate, list and call finish at once
// (they waited for a writer to the pipe, for ever, SIGTERM ignored), each
// odd file told once at its name; the tool beside them runs.
func TestJourneyToolFolderOddFiles(t *testing.T) {
	u := newUser(t)
	u.write("tools/greet.yaml", "name: greet\ndescription: Say hello\nentry: {type: command, command: [echo, hello]}\n")
	u.write("tools/todo.yaml", "")
	u.write("tools/notes.yaml", "remember: add a search tool\n")
	if err := syscall.Mkfifo(u.path(filepath.Join("tools", "feed.yaml")), 0o644); err != nil {
		t.Fatal(err)
	}
	r := u.wield("validate", "tools")
	for _, want := range []string{
		"tools/feed.yaml:1:1: warning: not a regular file (a named pipe): left out",
		"tools/notes.yaml:1:1: not a tool, toolset or agent: expected name with entry (a tool), with tools (a toolset) or with tool_sets (an agent); found remember",
		"tools/todo.yaml:1:1: warning: empty file: no tool, toolset or agent in it",
	} {
		if !strings.Contains(r.stdout, want+"\n") {
			t.Errorf("validate lacks %q:\n%s", want, r)
		}
	}
	if r.code != 1 || r.stderr != "1 error, 2 warnings\n" {
		t.Errorf("validate: want exit 1 and 1 error, 2 warnings:\n%s", r)
	}
	u.write("tools/notes.yaml", "# remember: add a search tool\n")
	r = u.must("call", "greet", "--tools", "tools")
	if !strings.Contains(r.stderr, "named pipe") || !strings.Contains(r.stdout, `"stdout": "hello\n"`) {
		t.Errorf("call greet beside the pipe:\n%s", r)
	}
	if r := u.wield("validate", "tools/feed.yaml"); r.code != 1 || !strings.Contains(r.stdout, "tools/feed.yaml:1:1: not a regular file (a named pipe): expected a tool file or a folder of them") {
		t.Errorf("validate of the pipe by name: want exit 1 saying what it is:\n%s", r)
	}
}
