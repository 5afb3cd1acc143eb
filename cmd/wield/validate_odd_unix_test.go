//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runBounded runs the program, failing the test if it has not returned
// within limit (a read of a named pipe blocks until a writer comes).
func runBounded(t *testing.T, limit time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(limit):
		t.Fatalf("wield %s: still running after %v", strings.Join(args, " "), limit)
		return 0, "", ""
	}
}

// TestValidateOddFiles: what a newcomer's folder may hold besides tool
// files. A named pipe (in a folder, given by name, or as --config) is
// refused at once, not read until a writer comes; a folder given through a
// symbolic link is scanned; a symbolic link loop is an error naming it; an
// empty file and a document that is neither a tool, a toolset nor an
// agent say so in one line each, with what was expected; a configuration
// whose tools: is a list says where tool folders go.
func TestValidateOddFiles(t *testing.T) {
	t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(t.TempDir(), "wield.db"))
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"tools/a.yaml":       "name: a\ndescription: d\nentry: {type: command, command: [echo]}\n",
		"odd/empty.yaml":     "",
		"odd/neither.yaml":   "foo: 1\nbar: [1, 2]\n",
		"odd/bom.yaml":       "\ufeffname: bom\ndescription: d\nentry: {type: command, command: [echo]}\nbogus: 1\n",
		"odd/crlf.yaml":      "name: crlf\r\ndescription: d\r\nentry: {type: command, command: [echo]}\r\nbogus: 1\r\n",
		"listed/wield.yaml":  "tools:\n  - tools\n",
		"pipes/a.yaml":       "name: p\ndescription: d\nentry: {type: command, command: [echo]}\n",
		"loops/ok.yaml":      "name: l\ndescription: d\nentry: {type: command, command: [echo]}\n",
		"cfgpipe/.keep":      "",
		"linked/.keep":       "",
		"odd/sub/deeper.yml": "name: deeper\ndescription: d\nentry: {type: command, command: [echo]}\n",
	})
	for _, p := range []string{"pipes/p.yaml", "pipe.yaml", "cfgpipe/wield.yaml"} {
		if err := syscall.Mkfifo(filepath.Join(dir, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"loops/self.yaml": "self.yaml", "loops/back": "..", "linked/tools": "../tools"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	at := func(p string) string { return filepath.Join(dir, p) }
	for _, tc := range []struct {
		args    []string
		code    int
		want    []string
		notWant []string
	}{
		{[]string{"validate", at("pipes")}, 0, []string{at("pipes/p.yaml") + ":1:1: warning: not a regular file (a named pipe): left out"}, nil},
		{[]string{"validate", at("pipe.yaml")}, 1, []string{at("pipe.yaml") + ":1:1: not a regular file (a named pipe): expected a tool file or a folder of them"}, nil},
		{[]string{"validate", "--config", at("cfgpipe/wield.yaml")}, 1, []string{"not a regular file (a named pipe)"}, nil},
		{[]string{"validate", at("linked/tools")}, 0, []string{"ok"}, []string{"is a directory"}},
		{[]string{"validate", at("loops")}, 1, []string{at("loops/self.yaml") + ":1:1: ", "too many levels of symbolic links"}, nil},
		{[]string{"validate", at("odd")}, 1, []string{
			at("odd/empty.yaml") + ":1:1: warning: empty file: no tool, toolset or agent in it",
			at("odd/neither.yaml") + ":1:1: not a tool, toolset or agent: expected name with entry (a tool), with tools (a toolset) or with tool_sets (an agent); found foo, bar",
			at("odd/bom.yaml") + `:4:1: tool: unknown field "bogus"`,
			at("odd/crlf.yaml") + `:4:1: tool: unknown field "bogus"`,
		}, []string{"missing name", `tool ""`}},
		{[]string{"validate", at("listed/wield.yaml")}, 1, []string{at("listed/wield.yaml") + ":2:3: tools: expected a mapping, got list", "tool_dirs"}, []string{"toolset"}},
	} {
		t.Run(strings.ReplaceAll(strings.Join(tc.args, " "), dir, ""), func(t *testing.T) {
			code, out, errs := runBounded(t, 10*time.Second, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errs, w) {
					t.Errorf("lacks %q\nstdout:\n%s\nstderr:\n%s", w, out, errs)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out+errs, w) {
					t.Errorf("says %q\nstdout:\n%s\nstderr:\n%s", w, out, errs)
				}
			}
		})
	}
	// list, call and serve load the same way: a pipe in the folder does
	// not stop them.
	if code, out, errs := runBounded(t, 10*time.Second, "list", "--tools", at("pipes")); code != 0 || !strings.Contains(errs, "named pipe") || !strings.Contains(out, "\np ") {
		t.Errorf("list --tools pipes: exit %d\n%s\n%s", code, out, errs)
	}
}
