package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writeFiles writes files (path: content) under dir, making their folders.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var problemLine = regexp.MustCompile(`(?m)^[^\n]+:\d+:\d+: (warning: )?`)

// summaryOf is the summary validate should write for what it printed: the
// errors and warnings of out, counted ("" when there is neither).
func summaryOf(out string) string {
	errs, warnings := 0, 0
	for _, m := range problemLine.FindAllStringSubmatch(out, -1) {
		if strings.Contains(m[0], ": info: ") {
			continue
		}
		if m[1] != "" {
			warnings++
		} else {
			errs++
		}
	}
	switch {
	case errs > 0:
		return fmt.Sprintf("%s, %s\n", countOf(errs, "error"), countOf(warnings, "warning"))
	case warnings > 0:
		return countOf(warnings, "warning") + "\n"
	}
	return ""
}

// TestValidateCountsWhatItPrints: in every mode of validate (--config with
// the configuration's folders, --config and paths, a configuration given as
// a path, a configuration with errors), the configuration's warnings and
// errors are told on stdout with the others and the summary on stderr
// counts them: it said "1 error, 0 warnings" under a warning it had
// printed (or printed them on stderr before the command's own lines).
func TestValidateCountsWhatItPrints(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"wield.yaml":    "tool_dirs: [tools]\nallowed_paths: [./nope]\n",
		"bad.yaml":      "tool_dirs: [tools]\nallowed_paths: [./nope]\ntimeout: banana\n",
		"tools/a.yaml":  "name: a\ndescription: d\nentry: {type: command, command: [echo]}\n",
		"broken/b.yaml": "name: b\ndescription: d\nentry: {type: command, command: [echo]}\nbogus: 1\n",
	})
	cfg, bad := filepath.Join(dir, "wield.yaml"), filepath.Join(dir, "bad.yaml")
	tools, broken := filepath.Join(dir, "tools"), filepath.Join(dir, "broken")
	warning := `wield.yaml:2:17: warning: allowed_paths[0]: the folder "./nope"`
	for _, tc := range []struct {
		args     []string
		code     int
		want     []string // lines of stdout, in part
		wantLine string   // the summary
	}{
		{[]string{"validate", "--config", cfg}, 0, []string{warning, "ok"}, "1 warning\n"},
		{[]string{"validate", "--config", cfg, tools}, 0, []string{warning, "ok"}, "1 warning\n"},
		{[]string{"validate", "--config", cfg, broken}, 1, []string{warning, `b.yaml:4:1: tool: unknown field "bogus"`}, "1 error, 1 warning\n"},
		{[]string{"validate", cfg}, 0, []string{warning, "ok"}, "1 warning\n"},
		{[]string{"validate", cfg, broken}, 1, []string{warning, "bogus"}, "1 error, 1 warning\n"},
		{[]string{"validate", "--config", cfg, cfg}, 0, []string{warning, "ok"}, "1 warning\n"},
		{[]string{"validate", "--config", bad}, 1, []string{`bad.yaml:2:17: warning: allowed_paths[0]`, `bad.yaml:3:10: timeout: "banana" is not a duration`}, "1 error, 1 warning\n"},
		{[]string{"validate", "--config", bad, broken}, 1, []string{`bad.yaml:3:10: timeout`, "bogus"}, "2 errors, 1 warning\n"},
	} {
		code, out, errs := run(t, tc.args...)
		name := strings.Join(tc.args, " ")
		if code != tc.code || errs != tc.wantLine || errs != summaryOf(out) {
			t.Errorf("%s: exit %d, stderr %q (want exit %d and %q, the count of stdout %q)\nstdout:\n%s", name, code, errs, tc.code, tc.wantLine, summaryOf(out), out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: stdout lacks %q:\n%s", name, w, out)
			}
		}
		if n := strings.Count(out, "allowed_paths[0]"); n != 1 {
			t.Errorf("%s: the configuration's warning told %d times:\n%s", name, n, out)
		}
	}
}

// TestMissingToolFolderAtItsKey: a tool folder the configuration names
// that does not exist is a warning at the entry naming it (tool_dirs'
// item, tools_directory's value), in validate and in list, not at
// "missing:1:1", a place in no file.
func TestMissingToolFolderAtItsKey(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"wield.yaml":   "# tools\ntool_dirs:\n  - tools\n  - missing\n",
		"engine.yaml":  "tools_directory: ./gone\n",
		"tools/a.yaml": "name: a\ndescription: d\nentry: {type: command, command: [echo]}\n",
	})
	cfg, engine := filepath.Join(dir, "wield.yaml"), filepath.Join(dir, "engine.yaml")
	want := cfg + ":4:5: warning: tool folder \"" + filepath.Join(dir, "missing") + "\" does not exist (yet): no tools loaded from it"
	code, out, errs := run(t, "validate", "--config", cfg)
	if code != 0 || !strings.Contains(out, want+"\n") || strings.Contains(out, "missing:1:1") || errs != "1 warning\n" {
		t.Errorf("validate: exit %d, stderr %q\n%s\nwant %s", code, errs, out, want)
	}
	code, _, errs = run(t, "list", "--config", cfg)
	if code != 0 || !strings.Contains(errs, want+"\n") {
		t.Errorf("list: exit %d\n%s\nwant %s", code, errs, want)
	}
	want = engine + ":1:18: warning: tool folder \"" + filepath.Join(dir, "gone") + "\" does not exist (yet)"
	if code, out, _ := run(t, "validate", "--config", engine); code != 0 || !strings.Contains(out, want) {
		t.Errorf("validate engine.yaml: exit %d\n%s\nwant %s", code, out, want)
	}
}

// TestConfigInToolFolder: a configuration file (engine.yaml, wield.yaml,
// config.yml) in a folder of tool files is recognised, not read as a tool
// file ("toolset: missing name", "tool: unknown field"): validate checks it
// as the configuration it is; list leaves it out with one warning naming
// it; the configuration in use, in its own tool folder, is left out
// without a word.
func TestConfigInToolFolder(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"tools/a.yaml":      "name: a\ndescription: d\nentry: {type: command, command: [echo]}\n",
		"tools/engine.yaml": "tools_directory: .\nbogus_key: 1\n",
		"tools/config.yml":  "tools:\n  timeout: 5000\n",
		"wield.yaml":        "tool_dirs: [.]\n",
	})
	tools := filepath.Join(dir, "tools")
	code, out, _ := run(t, "validate", tools)
	if code != 1 || !strings.Contains(out, `engine.yaml:2:1: config: unknown field "bogus_key"`) || strings.Contains(out, "toolset") || strings.Contains(out, "tool:") || strings.Contains(out, "config.yml") {
		t.Errorf("validate tools: exit %d\n%s\nwant exit 1, engine.yaml checked as configuration, config.yml fine", code, out)
	}
	code, _, errs := run(t, "list", "--tools", tools)
	for _, f := range []string{"engine.yaml", "config.yml"} {
		want := filepath.Join(tools, f) + ":1:1: warning: a configuration file, not a tool file: left out"
		if code != 0 || strings.Count(errs, f) != 1 || !strings.Contains(errs, want) {
			t.Errorf("list --tools: exit %d\n%s\nwant exit 0 and one warning %s", code, errs, want)
		}
	}
	cfg := filepath.Join(dir, "wield.yaml")
	if code, out, errs := run(t, "list", "--config", cfg); code != 0 || strings.Contains(errs, cfg+":") || !strings.Contains(out, "\na ") {
		t.Errorf("list --config wield.yaml naming its own folder: exit %d, stderr:\n%s\nstdout:\n%s", code, errs, out)
	}
	if code, out, errs := run(t, "validate", "--config", cfg); code != 1 || strings.Contains(out, cfg+":") || errs != summaryOf(out) {
		t.Errorf("validate --config wield.yaml naming its own folder: exit %d (want 1, engine.yaml's error), stderr %q\n%s", code, errs, out)
	}
}
