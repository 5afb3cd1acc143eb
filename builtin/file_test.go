package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

// fileEnv is a tree with the file tools over it in a real engine.
type fileEnv struct {
	fileTree
	files *fileSet
	eng   *engine.Engine
}

func approveFileCalls(context.Context, *wield.ApprovalRequest) (wield.Decision, error) {
	return wield.Decision{Approved: true, By: "test"}, nil
}

// newFileEnv builds the tools over a fresh tree; AllowedPaths default to
// root and may use the {root}, {out} and {base} placeholders.
func newFileEnv(t testing.TB, opts FileOptions, approver wield.Approver) *fileEnv {
	t.Helper()
	return makeFileTree(t).env(t, opts, approver)
}

// env builds the tools over the tree d.
func (d fileTree) env(t testing.TB, opts FileOptions, approver wield.Approver) *fileEnv {
	t.Helper()
	if opts.AllowedPaths == nil {
		opts.AllowedPaths = []string{d.root}
	}
	for i, p := range opts.AllowedPaths {
		opts.AllowedPaths[i] = d.expand(p)
	}
	f, err := newFiles(opts)
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(f.tools()...)
	e := engine.New(reg, &engine.Options{Approver: approver})
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return &fileEnv{fileTree: d, files: f, eng: e}
}

func (env *fileEnv) call(t testing.TB, tool string, args map[string]any, caller wield.Caller) *wield.Result {
	t.Helper()
	for k, v := range args {
		if s, ok := v.(string); ok {
			args[k] = env.expand(s)
		}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := env.eng.Call(context.Background(), wield.Call{Tool: tool, Arguments: raw, Caller: caller})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// scrubFileOutput replaces what depends on the clock and the umask: modification
// times become "set", the mode of anything but a file its type letter.
func scrubFileOutput(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "modified":
				if n, ok := x.(float64); ok && n > 0 {
					v[k] = "set"
				}
			case "mode":
				if s, ok := x.(string); ok && s != "" && s[0] != '-' {
					v[k] = s[:1]
				}
			default:
				v[k] = scrubFileOutput(x)
			}
		}
	case []any:
		for i := range v {
			v[i] = scrubFileOutput(v[i])
		}
	}
	return v
}

type fileStep struct {
	tool    string
	args    map[string]any
	want    string // output JSON, after scrub and expand
	errType wield.ErrorType
	errText string
}

func runFileSteps(t *testing.T, env *fileEnv, caller wield.Caller, steps []fileStep) {
	t.Helper()
	for i, s := range steps {
		name := fmt.Sprintf("step %d %s %v", i, s.tool, s.args)
		res := env.call(t, s.tool, s.args, caller)
		if s.errType != "" {
			if res.OK || res.ErrorType != s.errType || !strings.Contains(res.Error, env.expand(s.errText)) {
				t.Errorf("%s: got ok=%v %s %q %s, want %s containing %q", name, res.OK, res.ErrorType, res.Error, res.Output, s.errType, s.errText)
			}
			continue
		}
		if !res.OK {
			t.Errorf("%s: failed: %s %s", name, res.ErrorType, res.Error)
			continue
		}
		var got, want any
		if err := json.Unmarshal(res.Output, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := json.Unmarshal([]byte(env.expand(s.want)), &want); err != nil {
			t.Fatalf("%s: want: %v", name, err)
		}
		if diff := cmp.Diff(want, scrubFileOutput(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

type fileArgs = map[string]any

func TestFileTools(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, wield.ApproverFunc(approveFileCalls))
	for _, name := range []string{"etc", "out", "outrel", "secret", "secretrel", "sub/up"} {
		if err := os.Remove(filepath.Join(env.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "write_file", args: fileArgs{"path": "notes.txt", "content": "héllo"}, want: `{"bytesWritten":6,"path":"notes.txt"}`},
		{tool: "read_file", args: fileArgs{"path": "notes.txt"}, want: `{"content":"héllo","size":6,"encoding":"utf-8"}`},
		{tool: "read_file", args: fileArgs{"path": "{root}/notes.txt", "encoding": "hex"}, want: `{"content":"68c3a96c6c6f","size":6,"encoding":"hex"}`},
		{tool: "write_file", args: fileArgs{"path": "sub/deep/a.go", "content": "package a"}, want: `{"bytesWritten":9,"path":"sub/deep/a.go"}`},
		{tool: "write_file", args: fileArgs{"path": "./bin.dat", "content": "AAEC/w==", "encoding": "base64"}, want: `{"bytesWritten":4,"path":"bin.dat"}`},
		{tool: "read_file", args: fileArgs{"path": "bin.dat", "encoding": "base64"}, want: `{"content":"AAEC/w==","size":4,"encoding":"base64"}`},
		{tool: "read_file", args: fileArgs{"path": "bin.dat"}, errType: wield.ErrExecution, errText: `read "bin.dat": the file is not UTF-8 text; read it with encoding base64 or hex`},
		{tool: "write_file", args: fileArgs{"path": "x.bin", "content": "zz", "encoding": "hex"}, errType: wield.ErrValidation, errText: "content is not valid hex"},
		{tool: "read_file", args: fileArgs{"path": "missing.txt"}, errType: wield.ErrExecution, errText: `read "missing.txt": not found`},
		{tool: "read_file", args: fileArgs{"path": "sub"}, errType: wield.ErrExecution, errText: "it is a directory; use list_files"},
		{tool: "write_file", args: fileArgs{"path": "sub", "content": "x"}, errType: wield.ErrExecution, errText: `write "sub": it is a directory`},
		{tool: "write_file", args: fileArgs{"path": ".", "content": "x"}, errType: wield.ErrExecution, errText: "it is an allowed folder itself"},
		{tool: "write_file", args: fileArgs{"path": "notes.txt/x", "content": "x"}, errType: wield.ErrExecution, errText: "a part of the path is a file, not a folder"},
		{tool: "get_file_info", args: fileArgs{"path": "notes.txt"}, want: `{"exists":true,"size":6,"modified":"set","path":"notes.txt","is_dir":false,"is_symlink":false,"mode":"-rw-r--r--"}`},
		{tool: "get_file_info", args: fileArgs{"path": "sub"}, want: `{"exists":true,"size":0,"modified":"set","path":"sub","is_dir":true,"is_symlink":false,"mode":"d"}`},
		{tool: "get_file_info", args: fileArgs{"path": "missing.txt"}, want: `{"exists":false,"size":0,"modified":0,"path":"missing.txt","is_dir":false,"is_symlink":false}`},
		{tool: "get_file_info", args: fileArgs{"path": "notes.txt/x"}, want: `{"exists":false,"size":0,"modified":0,"path":"notes.txt/x","is_dir":false,"is_symlink":false}`},
		{tool: "get_file_info", args: fileArgs{"path": "."}, want: `{"exists":true,"size":0,"modified":"set","path":".","is_dir":true,"is_symlink":false,"mode":"d"}`},
		{tool: "list_files", args: fileArgs{"path": "."}, want: `{"files":[
			{"path":"bin.dat","name":"bin.dat","is_dir":false,"size":4,"modified":"set"},
			{"path":"notes.txt","name":"notes.txt","is_dir":false,"size":6,"modified":"set"},
			{"path":"sub","name":"sub","is_dir":true,"size":0,"modified":"set"},
			{"path":"victim.txt","name":"victim.txt","is_dir":false,"size":6,"modified":"set"}]}`},
		{tool: "list_files", args: fileArgs{"path": ".", "recursive": true, "pattern": "*.go"}, want: `{"files":[
			{"path":"sub/deep/a.go","name":"a.go","is_dir":false,"size":9,"modified":"set"}]}`},
		{tool: "list_files", args: fileArgs{"path": "sub", "recursive": true}, want: `{"files":[
			{"path":"sub/deep","name":"deep","is_dir":true,"size":0,"modified":"set"},
			{"path":"sub/deep/a.go","name":"a.go","is_dir":false,"size":9,"modified":"set"}]}`},
		{tool: "list_files", args: fileArgs{"path": "{root}", "recursive": true, "pattern": "sub/**/*.go"}, want: `{"files":[
			{"path":"{root}/sub/deep/a.go","name":"a.go","is_dir":false,"size":9,"modified":"set"}]}`},
		{tool: "list_files", args: fileArgs{"path": ".", "recursive": false, "pattern": "sub/*"}, want: `{"files":[]}`},
		{tool: "list_files", args: fileArgs{"path": "notes.txt"}, errType: wield.ErrExecution, errText: `list "notes.txt": not a directory`},
		{tool: "list_files", args: fileArgs{"path": "nowhere"}, errType: wield.ErrExecution, errText: `list "nowhere": not found`},
		{tool: "list_files", args: fileArgs{"path": ".", "pattern": "[a-"}, errType: wield.ErrValidation, errText: "is not a valid glob"},
		{tool: "move_file", args: fileArgs{"from": "notes.txt", "to": "docs/notes.md"}, want: `{"success":true}`},
		{tool: "read_file", args: fileArgs{"path": "notes.txt"}, errType: wield.ErrExecution, errText: "not found"},
		{tool: "read_file", args: fileArgs{"path": "docs/notes.md"}, want: `{"content":"héllo","size":6,"encoding":"utf-8"}`},
		{tool: "move_file", args: fileArgs{"from": "bin.dat", "to": "docs/notes.md"}, errType: wield.ErrExecution, errText: "the destination already exists; pass overwrite true"},
		{tool: "move_file", args: fileArgs{"from": "bin.dat", "to": "docs/notes.md", "overwrite": true}, want: `{"success":true}`},
		{tool: "read_file", args: fileArgs{"path": "docs/notes.md", "encoding": "hex"}, want: `{"content":"000102ff","size":4,"encoding":"hex"}`},
		{tool: "move_file", args: fileArgs{"from": "missing", "to": "x"}, errType: wield.ErrExecution, errText: `move "missing" to "x": not found`},
		{tool: "move_file", args: fileArgs{"from": "sub", "to": "sub/deep/sub"}, errType: wield.ErrValidation, errText: "cannot be moved into itself"},
		{tool: "move_file", args: fileArgs{"from": "sub", "to": "{root}/moved"}, want: `{"success":true}`},
		{tool: "read_file", args: fileArgs{"path": "moved/deep/a.go"}, want: `{"content":"package a","size":9,"encoding":"utf-8"}`},
		{tool: "move_file", args: fileArgs{"from": ".", "to": "x"}, errType: wield.ErrPermissionDenied, errText: "Access denied: an allowed folder itself cannot be moved"},
		{tool: "delete_file", args: fileArgs{"path": "docs/notes.md"}, want: `{"deleted":true,"path":"docs/notes.md"}`},
		{tool: "delete_file", args: fileArgs{"path": "docs/notes.md"}, want: `{"deleted":false,"path":"docs/notes.md"}`},
		{tool: "delete_file", args: fileArgs{"path": "docs"}, want: `{"deleted":true,"path":"docs"}`},
		{tool: "delete_file", args: fileArgs{"path": "moved"}, errType: wield.ErrExecution, errText: "the folder is not empty"},
		{tool: "delete_file", args: fileArgs{"path": "."}, errType: wield.ErrPermissionDenied, errText: "Access denied: \".\" is an allowed folder itself"},
		{tool: "delete_file", args: fileArgs{"path": "{root}"}, errType: wield.ErrPermissionDenied, errText: "Access denied"},
		{tool: "read_file", args: fileArgs{"path": ""}, errType: wield.ErrValidation, errText: "path"},
		{tool: "read_file", args: fileArgs{"path": "a", "encoding": "latin1"}, errType: wield.ErrValidation, errText: "encoding"},
		// Names that resolve would read otherwise come back as ./name.
		{tool: "write_file", args: fileArgs{"path": "./~/t.txt", "content": "tilde"}, want: `{"bytesWritten":5,"path":"./~/t.txt"}`},
		{tool: "list_files", args: fileArgs{"path": ".", "recursive": true, "pattern": "t.txt"}, want: `{"files":[{"path":"./~/t.txt","name":"t.txt","is_dir":false,"size":5,"modified":"set"}]}`},
		{tool: "read_file", args: fileArgs{"path": "./~/t.txt"}, want: `{"content":"tilde","size":5,"encoding":"utf-8"}`},
		{tool: "get_file_info", args: fileArgs{"path": "c:"}, errType: wield.ErrPermissionDenied, errText: "Windows drive path"},
		{tool: "write_file", args: fileArgs{"path": "./c:", "content": ""}, want: `{"bytesWritten":0,"path":"./c:"}`},
		{tool: "write_file", args: fileArgs{"path": "c:d", "content": ""}, want: `{"bytesWritten":0,"path":"c:d"}`},
	})
	env.checkOutside(t)
}

func TestFileSymlinksInside(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, wield.ApproverFunc(approveFileCalls))
	if err := os.Symlink("victim.txt", filepath.Join(env.root, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("gone", filepath.Join(env.root, "dangling")); err != nil {
		t.Fatal(err)
	}
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "read_file", args: fileArgs{"path": "alias"}, want: `{"content":"victim","size":6,"encoding":"utf-8"}`},
		{tool: "get_file_info", args: fileArgs{"path": "alias"}, want: `{"exists":true,"size":6,"modified":"set","path":"alias","is_dir":false,"is_symlink":true,"mode":"-rw-r--r--"}`},
		{tool: "get_file_info", args: fileArgs{"path": "dangling"}, want: `{"exists":false,"size":0,"modified":0,"path":"dangling","is_dir":false,"is_symlink":true}`},
		{tool: "write_file", args: fileArgs{"path": "alias", "content": "x"}, errType: wield.ErrValidation, errText: "it is a symbolic link"},
		{tool: "list_files", args: fileArgs{"path": ".", "pattern": "[ad]*"}, want: `{"files":[
			{"path":"alias","name":"alias","is_dir":false,"size":10,"modified":"set","is_symlink":true},
			{"path":"dangling","name":"dangling","is_dir":false,"size":4,"modified":"set","is_symlink":true}]}`},
		// A link is deleted and moved as itself, never through.
		{tool: "move_file", args: fileArgs{"from": "secret", "to": "sub/secret-link"}, want: `{"success":true}`},
		{tool: "delete_file", args: fileArgs{"path": "sub/secret-link"}, want: `{"deleted":true,"path":"sub/secret-link"}`},
		{tool: "delete_file", args: fileArgs{"path": "alias"}, want: `{"deleted":true,"path":"alias"}`},
		{tool: "read_file", args: fileArgs{"path": "victim.txt"}, want: `{"content":"victim","size":6,"encoding":"utf-8"}`},
	})
	env.checkOutside(t)
}

func TestFileToolsDescribed(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, nil)
	type desc struct {
		Annotations wield.Annotations
		Permission  wield.Permission
		Timeout     time.Duration
		Tags        []string
	}
	want := map[string]desc{
		"read_file":     {wield.Annotations{ReadOnly: true, Idempotent: true}, wield.PermissionAuto, 30 * time.Second, []string{"file", "read", "builtin"}},
		"write_file":    {wield.Annotations{Idempotent: true}, wield.PermissionAuto, 30 * time.Second, []string{"file", "write", "builtin"}},
		"list_files":    {wield.Annotations{ReadOnly: true, Idempotent: true}, wield.PermissionAuto, 30 * time.Second, []string{"file", "read", "builtin"}},
		"delete_file":   {wield.Annotations{Destructive: true, Idempotent: true}, wield.PermissionConfirm, 10 * time.Second, []string{"file", "write", "builtin"}},
		"move_file":     {wield.Annotations{Destructive: true}, wield.PermissionConfirm, 30 * time.Second, []string{"file", "write", "builtin"}},
		"get_file_info": {wield.Annotations{ReadOnly: true, Idempotent: true}, wield.PermissionAuto, 10 * time.Second, []string{"file", "read", "builtin"}},
	}
	got := map[string]desc{}
	for _, tl := range env.files.tools() {
		got[tl.Name] = desc{tl.Annotations, tl.EffectivePermission(), tl.Timeout, tl.Tags}
		if tl.Category != wield.CategoryFile || tl.Version != "1.0.0" || tl.Source != "builtin" || !strings.Contains(tl.Description, env.root) {
			t.Errorf("%s: category %q, version %q, source %q, description %q", tl.Name, tl.Category, tl.Version, tl.Source, tl.Description)
		}
		if err := tl.Check(); err != nil {
			t.Error(err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// Without an approver the destructive tools do not run: the engine asks for
// a person's confirmation first.
func TestFileDestructiveNeedConfirmation(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, nil)
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "delete_file", args: fileArgs{"path": "victim.txt"}, errType: wield.ErrApprovalDenied, errText: "Tool 'delete_file' needs a person's approval and no approver is configured"},
		{tool: "move_file", args: fileArgs{"from": "victim.txt", "to": "v2.txt"}, errType: wield.ErrApprovalDenied, errText: "Tool 'move_file' needs a person's approval"},
		{tool: "read_file", args: fileArgs{"path": "victim.txt"}, want: `{"content":"victim","size":6,"encoding":"utf-8"}`},
		{tool: "write_file", args: fileArgs{"path": "new.txt", "content": ""}, want: `{"bytesWritten":0,"path":"new.txt"}`},
	})
	denied := wield.ApproverFunc(func(context.Context, *wield.ApprovalRequest) (wield.Decision, error) {
		return wield.Decision{Reason: "keep it"}, nil
	})
	env2 := newFileEnv(t, FileOptions{}, denied)
	runFileSteps(t, env2, wield.Caller{}, []fileStep{
		{tool: "delete_file", args: fileArgs{"path": "victim.txt"}, errType: wield.ErrApprovalDenied, errText: "The user denied the call of tool 'delete_file': keep it"},
		{tool: "get_file_info", args: fileArgs{"path": "victim.txt"}, want: `{"exists":true,"size":6,"modified":"set","path":"victim.txt","is_dir":false,"is_symlink":false,"mode":"-rw-r--r--"}`},
	})
}

func TestFileCallerAllowedPaths(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, wield.ApproverFunc(approveFileCalls))
	for _, p := range []string{"a/x.txt", "b/y.txt"} {
		name := filepath.Join(env.root, p)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		allowed []string
		steps   []fileStep
	}{
		{[]string{"a"}, []fileStep{
			{tool: "read_file", args: fileArgs{"path": "x.txt"}, want: `{"content":"a/x.txt","size":7,"encoding":"utf-8"}`},
			{tool: "read_file", args: fileArgs{"path": "{root}/a/x.txt"}, want: `{"content":"a/x.txt","size":7,"encoding":"utf-8"}`},
			{tool: "read_file", args: fileArgs{"path": "../b/y.txt"}, errType: wield.ErrPermissionDenied, errText: "Access denied"},
			{tool: "read_file", args: fileArgs{"path": "{root}/b/y.txt"}, errType: wield.ErrPermissionDenied, errText: "is outside the allowed folders ({root}/a)"},
			{tool: "delete_file", args: fileArgs{"path": "."}, errType: wield.ErrPermissionDenied, errText: "Access denied"},
			{tool: "write_file", args: fileArgs{"path": "new.txt", "content": "n"}, want: `{"bytesWritten":1,"path":"new.txt"}`},
		}},
		{[]string{"{root}/b", "a"}, []fileStep{
			{tool: "read_file", args: fileArgs{"path": "y.txt"}, want: `{"content":"b/y.txt","size":7,"encoding":"utf-8"}`},
			{tool: "read_file", args: fileArgs{"path": "../a/x.txt"}, want: `{"content":"a/x.txt","size":7,"encoding":"utf-8"}`},
			{tool: "move_file", args: fileArgs{"from": "{root}/a/new.txt", "to": "{root}/b/new.txt"}, want: `{"success":true}`},
			{tool: "read_file", args: fileArgs{"path": "new.txt"}, want: `{"content":"n","size":1,"encoding":"utf-8"}`},
			{tool: "list_files", args: fileArgs{"path": "{root}/a"}, want: `{"files":[{"path":"{root}/a/x.txt","name":"x.txt","is_dir":false,"size":7,"modified":"set"}]}`},
			{tool: "move_file", args: fileArgs{"from": "{root}/a", "to": "{root}/b/a"}, errType: wield.ErrPermissionDenied, errText: "an allowed folder itself cannot be moved"},
		}},
		{[]string{"{out}"}, []fileStep{
			{tool: "read_file", args: fileArgs{"path": "secret.txt"}, errType: wield.ErrPermissionDenied, errText: "Access denied: the caller's allowed path"},
		}},
		{[]string{"{root}/../outside"}, []fileStep{
			{tool: "list_files", args: fileArgs{"path": "."}, errType: wield.ErrPermissionDenied, errText: "Access denied"},
		}},
		{[]string{"out"}, []fileStep{
			{tool: "get_file_info", args: fileArgs{"path": "secret.txt"}, errType: wield.ErrPermissionDenied, errText: "cannot be opened inside the configured folders"},
		}},
		{[]string{"a", "missing"}, []fileStep{
			{tool: "read_file", args: fileArgs{"path": "x.txt"}, errType: wield.ErrPermissionDenied, errText: "Access denied"},
		}},
		{[]string{"~"}, []fileStep{
			{tool: "read_file", args: fileArgs{"path": "x.txt"}, errType: wield.ErrPermissionDenied, errText: "Access denied"},
		}},
	}
	for _, tt := range tests {
		allowed := make([]string, len(tt.allowed))
		for i, p := range tt.allowed {
			allowed[i] = env.expand(p)
		}
		t.Run(strings.Join(tt.allowed, ","), func(t *testing.T) {
			runFileSteps(t, env, wield.Caller{ID: "agent", AllowedPaths: allowed}, tt.steps)
		})
	}
	env.checkOutside(t)
}

func TestFileSeveralFolders(t *testing.T) {
	d := makeFileTree(t)
	if err := os.Mkdir(filepath.Join(d.base, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := d.env(t, FileOptions{AllowedPaths: []string{"{root}", "{root}/sub", "{base}/other"}}, wield.ApproverFunc(approveFileCalls))
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "write_file", args: fileArgs{"path": "{base}/other/o.txt", "content": "other"}, want: `{"bytesWritten":5,"path":"{base}/other/o.txt"}`},
		{tool: "write_file", args: fileArgs{"path": "sub/s.txt", "content": "sub"}, want: `{"bytesWritten":3,"path":"sub/s.txt"}`},
		// Nested folders share a root: a plain rename.
		{tool: "move_file", args: fileArgs{"from": "sub/s.txt", "to": "s.txt"}, want: `{"success":true}`},
		// Separate folders: copied, then deleted.
		{tool: "move_file", args: fileArgs{"from": "{base}/other/o.txt", "to": "o.txt"}, want: `{"success":true}`},
		{tool: "read_file", args: fileArgs{"path": "o.txt"}, want: `{"content":"other","size":5,"encoding":"utf-8"}`},
		{tool: "get_file_info", args: fileArgs{"path": "{base}/other/o.txt"}, want: `{"exists":false,"size":0,"modified":0,"path":"{base}/other/o.txt","is_dir":false,"is_symlink":false}`},
		{tool: "move_file", args: fileArgs{"from": "sub", "to": "{base}/other/sub"}, errType: wield.ErrPermissionDenied, errText: "an allowed folder itself"},
		{tool: "write_file", args: fileArgs{"path": "d/f.txt", "content": "f"}, want: `{"bytesWritten":1,"path":"d/f.txt"}`},
		{tool: "move_file", args: fileArgs{"from": "d", "to": "{base}/other/d"}, errType: wield.ErrExecution, errText: "only regular files move between different allowed folders, and this is a directory"},
		{tool: "move_file", args: fileArgs{"from": "o.txt", "to": "{base}/other/x.txt"}, want: `{"success":true}`},
		{tool: "write_file", args: fileArgs{"path": "o.txt", "content": "again"}, want: `{"bytesWritten":5,"path":"o.txt"}`},
		{tool: "move_file", args: fileArgs{"from": "o.txt", "to": "{base}/other/x.txt"}, errType: wield.ErrExecution, errText: "it already exists; pass overwrite true"},
		{tool: "delete_file", args: fileArgs{"path": "{base}/other"}, errType: wield.ErrPermissionDenied, errText: "Access denied"},
	})
}

// A first run names folders nobody has made yet: the tools are built
// anyway, a call into a missing folder says so, and once the folder is
// created the same tools use it, without being built again.
func TestFileFolderCreatedLater(t *testing.T) {
	d := makeFileTree(t)
	env := d.env(t, FileOptions{AllowedPaths: []string{"{base}/data", "{root}", "{base}/docs", "{root}/sub/later"}}, wield.ApproverFunc(approveFileCalls))
	missing := func(p, dir string) fileStep {
		return fileStep{tool: "read_file", args: fileArgs{"path": p}, errType: wield.ErrExecution, errText: "the allowed folder " + dir + " does not exist (yet)"}
	}
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		// Relative paths start at the first folder, which is missing.
		missing("x.txt", "{base}/data"),
		{tool: "list_files", args: fileArgs{"path": "."}, errType: wield.ErrExecution, errText: "{base}/data does not exist (yet)"},
		{tool: "write_file", args: fileArgs{"path": "{base}/docs/x.txt", "content": "x"}, errType: wield.ErrExecution, errText: "{base}/docs does not exist (yet)"},
		missing("{base}/docs/x.txt", "{base}/docs"),
		{tool: "get_file_info", args: fileArgs{"path": "{base}/docs"}, errType: wield.ErrExecution, errText: "{base}/docs does not exist (yet)"},
		// A missing folder inside an existing one: the existing one serves.
		{tool: "write_file", args: fileArgs{"path": "{root}/sub/later/l.txt", "content": "l"}, want: `{"bytesWritten":1,"path":"{root}/sub/later/l.txt"}`},
		// What is outside every folder is still refused as such.
		{tool: "read_file", args: fileArgs{"path": "{base}/elsewhere/x.txt"}, errType: wield.ErrPermissionDenied, errText: "is outside the allowed folders"},
	})
	if env.files.ready.Load() != nil {
		t.Fatal("the folders were taken as all present while two are missing")
	}
	for _, dir := range []string{"docs", "data"} {
		if err := os.Mkdir(filepath.Join(d.base, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d.base, "docs", "x.txt"), []byte("made later"), 0o644); err != nil {
		t.Fatal(err)
	}
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "read_file", args: fileArgs{"path": "{base}/docs/x.txt"}, want: `{"content":"made later","size":10,"encoding":"utf-8"}`},
		{tool: "list_files", args: fileArgs{"path": "{base}/docs"}, want: `{"files":[{"path":"{base}/docs/x.txt","name":"x.txt","is_dir":false,"size":10,"modified":"set"}]}`},
		{tool: "write_file", args: fileArgs{"path": "d.txt", "content": "data"}, want: `{"bytesWritten":4,"path":"d.txt"}`},
		{tool: "read_file", args: fileArgs{"path": "{base}/data/d.txt"}, want: `{"content":"data","size":4,"encoding":"utf-8"}`},
		{tool: "move_file", args: fileArgs{"from": "d.txt", "to": "{base}/docs/d.txt"}, want: `{"success":true}`},
		{tool: "list_files", args: fileArgs{"path": "."}, want: `{"files":[]}`},
	})
	if env.files.ready.Load() == nil {
		t.Error("once every folder exists, the folders are still looked for at each call")
	}
	// A caller narrowed to a folder that is missing is told so.
	runFileSteps(t, env, wield.Caller{ID: "agent", AllowedPaths: []string{d.expand("{root}/sub/later/l.txt")}}, []fileStep{
		{tool: "read_file", args: fileArgs{"path": "x"}, errType: wield.ErrPermissionDenied, errText: "cannot be opened inside the configured folders"},
	})
	d2 := makeFileTree(t)
	env2 := d2.env(t, FileOptions{AllowedPaths: []string{"{root}", "{base}/gone"}}, nil)
	runFileSteps(t, env2, wield.Caller{ID: "agent", AllowedPaths: []string{d2.expand("{base}/gone/inner")}}, []fileStep{
		{tool: "read_file", args: fileArgs{"path": "x"}, errType: wield.ErrExecution, errText: "the caller's allowed path \"{base}/gone/inner\": the allowed folder {base}/gone does not exist (yet)"},
	})
	// A folder that appears as a file instead fails the calls into it, and
	// only those.
	if err := os.WriteFile(filepath.Join(d2.base, "gone"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	runFileSteps(t, env2, wield.Caller{}, []fileStep{
		{tool: "read_file", args: fileArgs{"path": "{base}/gone/x"}, errType: wield.ErrExecution, errText: "the allowed folder {base}/gone cannot be opened: not a directory"},
		{tool: "read_file", args: fileArgs{"path": "victim.txt"}, want: `{"content":"victim","size":6,"encoding":"utf-8"}`},
	})
}

// An allowed folder named through a link answers to its real name too, and
// what the link's target holds is reached through the link's root.
func TestFileAllowedPathIsLink(t *testing.T) {
	d := makeFileTree(t)
	if err := os.Symlink("root", filepath.Join(d.base, "ws")); err != nil {
		t.Fatal(err)
	}
	env := d.env(t, FileOptions{AllowedPaths: []string{"{base}/ws"}}, nil)
	want := `{"content":"victim","size":6,"encoding":"utf-8"}`
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "read_file", args: fileArgs{"path": "victim.txt"}, want: want},
		{tool: "read_file", args: fileArgs{"path": "{base}/ws/victim.txt"}, want: want},
		{tool: "read_file", args: fileArgs{"path": "{root}/victim.txt"}, want: want},
		{tool: "read_file", args: fileArgs{"path": "{base}/ws/../outside/secret.txt"}, errType: wield.ErrPermissionDenied, errText: "Access denied"},
		{tool: "read_file", args: fileArgs{"path": "{root}/out/secret.txt"}, errType: wield.ErrPermissionDenied, errText: "Access denied"},
	})
	if err := os.Remove(filepath.Join(d.base, "ws")); err != nil {
		t.Fatal(err)
	}
	env.checkOutside(t)
}

func TestFileOptions(t *testing.T) {
	d := makeFileTree(t)
	for _, tt := range []struct {
		opts FileOptions
		err  string
	}{
		{FileOptions{}, "file tools: no allowed paths"},
		{FileOptions{AllowedPaths: []string{""}}, "file tools: an allowed path is empty"},
		{FileOptions{AllowedPaths: []string{filepath.Join(d.outside, "secret.txt")}}, "not a directory"},
	} {
		if _, err := FileTools(tt.opts); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%+v: got %v, want %q", tt.opts, err, tt.err)
		}
	}
	f, err := newFiles(FileOptions{AllowedPaths: []string{d.root}})
	if err != nil {
		t.Fatal(err)
	}
	if f.maxRead != 10<<20 || f.maxWrite != 10<<20 || f.cache == nil || f.cache.max != 32<<20 {
		t.Errorf("defaults: read %d, write %d, cache %+v", f.maxRead, f.maxWrite, f.cache)
	}
	if f, _ := newFiles(FileOptions{AllowedPaths: []string{d.root}, CacheBytes: -1}); f.cache != nil {
		t.Error("a negative CacheBytes left the cache on")
	}
}

// leftTempFiles lists the temporary files left anywhere under dir.
func leftTempFiles(t testing.TB, dir string) []string {
	t.Helper()
	var left []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(e.Name(), ".wield-tmp-") {
			left = append(left, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}

func TestFileLimits(t *testing.T) {
	env := newFileEnv(t, FileOptions{MaxReadBytes: 10, MaxWriteBytes: 16}, nil)
	big := filepath.Join(env.root, "big.bin")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 100<<20); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.root, "ten.txt"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.root, "eleven.txt"), []byte("0123456789A"), 0o644); err != nil {
		t.Fatal(err)
	}
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "read_file", args: fileArgs{"path": "big.bin", "encoding": "base64"}, errType: wield.ErrExecution, errText: `read "big.bin": the file is 104857600 bytes, over the read limit of 10 bytes`},
		{tool: "read_file", args: fileArgs{"path": "eleven.txt"}, errType: wield.ErrExecution, errText: "the file is 11 bytes, over the read limit of 10 bytes"},
		{tool: "read_file", args: fileArgs{"path": "ten.txt"}, want: `{"content":"0123456789","size":10,"encoding":"utf-8"}`},
		{tool: "write_file", args: fileArgs{"path": "w.txt", "content": "0123456789abcdef"}, want: `{"bytesWritten":16,"path":"w.txt"}`},
		{tool: "write_file", args: fileArgs{"path": "w.txt", "content": "0123456789abcdefg"}, errType: wield.ErrValidation, errText: "content is 17 bytes, over the write limit of 16 bytes"},
		{tool: "write_file", args: fileArgs{"path": "w2.txt", "content": "MDEyMzQ1Njc4OWFiY2RlZmc=", "encoding": "base64"}, errType: wield.ErrValidation, errText: "content is 17 bytes"},
		{tool: "get_file_info", args: fileArgs{"path": "w2.txt"}, want: `{"exists":false,"size":0,"modified":0,"path":"w2.txt","is_dir":false,"is_symlink":false}`},
		{tool: "read_file", args: fileArgs{"path": "w.txt", "encoding": "hex"}, errType: wield.ErrExecution, errText: "over the read limit"},
	})
	if b, err := os.ReadFile(filepath.Join(env.root, "w.txt")); err != nil || string(b) != "0123456789abcdef" {
		t.Errorf("w.txt = %q, %v", b, err)
	}
	if left := leftTempFiles(t, env.root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// The default limit refuses the 100 MB file too.
	env2 := newFileEnv(t, FileOptions{}, nil)
	if err := os.WriteFile(filepath.Join(env2.root, "big.bin"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(env2.root, "big.bin"), 100<<20); err != nil {
		t.Fatal(err)
	}
	runFileSteps(t, env2, wield.Caller{}, []fileStep{
		{tool: "read_file", args: fileArgs{"path": "big.bin"}, errType: wield.ErrExecution, errText: "the file is 104857600 bytes, over the read limit of 10485760 bytes"},
	})
}

// A write that fails after its temporary file was made removes it and leaves
// the old content.
func TestFileWriteAtomicFailure(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, nil)
	sb, err := env.files.sandbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tg, err := sb.resolve("deep/er/victim.txt")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, target := range []fileTarget{tg, {sp: tg.sp, rel: "victim.txt", abs: filepath.Join(env.root, "victim.txt"), shown: "victim.txt"}} {
		err := env.files.writeAtomic(ctx, tg.sp.root, target, []byte("new"), true)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want canceled", target.shown, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(env.root, "victim.txt")); err != nil || string(b) != "victim" {
		t.Errorf("victim.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(env.root, "deep/er/victim.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("deep/er/victim.txt: %v", err)
	}
	if left := leftTempFiles(t, env.root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestFileWriteKeepsMode(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, nil)
	name := filepath.Join(env.root, "run.sh")
	if err := os.WriteFile(name, []byte("#!/bin/sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, 0o750); err != nil {
		t.Fatal(err)
	}
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "write_file", args: fileArgs{"path": "run.sh", "content": "#!/bin/sh\necho hi"}, want: `{"bytesWritten":17,"path":"run.sh"}`},
	})
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("mode after write: %v %v", fi.Mode(), err)
	}
}

// Reading a FIFO must not wait for a writer.
func TestFileReadFIFO(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, nil)
	if err := exec.Command("mkfifo", filepath.Join(env.root, "pipe")).Run(); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	runFileSteps(t, env, wield.Caller{}, []fileStep{
		{tool: "read_file", args: fileArgs{"path": "pipe"}, errType: wield.ErrExecution, errText: `read "pipe": not a regular file`},
		{tool: "get_file_info", args: fileArgs{"path": "pipe"}, want: `{"exists":true,"size":0,"modified":"set","path":"pipe","is_dir":false,"is_symlink":false,"mode":"p"}`},
	})
}

// ageFile sets a file's modification time an hour back, out of the racy window.
func ageFile(t testing.TB, name string, by time.Duration) {
	t.Helper()
	old := time.Now().Add(-by)
	if err := os.Chtimes(name, old, old); err != nil {
		t.Fatal(err)
	}
}

func TestFileCache(t *testing.T) {
	env := newFileEnv(t, FileOptions{}, wield.ApproverFunc(approveFileCalls))
	c := env.files.cache
	name := filepath.Join(env.root, "c.txt")
	read := func(want string) {
		t.Helper()
		res := env.call(t, "read_file", fileArgs{"path": "c.txt"}, wield.Caller{})
		var out ReadFileOutput
		if !res.OK || json.Unmarshal(res.Output, &out) != nil || out.Content != want {
			t.Fatalf("read c.txt: got %s %s, want %q", res.Output, res.Error, want)
		}
	}
	type counts struct{ Hits, Misses int64 }
	check := func(step string, want counts) {
		t.Helper()
		h, m, _ := c.stats()
		if diff := cmp.Diff(want, counts{h, m}); diff != "" {
			t.Errorf("%s: cache counts (-want +got):\n%s", step, diff)
		}
	}
	write := func(content string) {
		t.Helper()
		if res := env.call(t, "write_file", fileArgs{"path": "c.txt", "content": content}, wield.Caller{}); !res.OK {
			t.Fatal(res.Error)
		}
	}

	write("one")
	read("one")
	read("one")
	check("a file just written is not cached (racy window)", counts{0, 2})
	ageFile(t, name, time.Hour)
	read("one")
	read("one")
	read("one")
	check("second read from the cache", counts{2, 3})

	write("two")
	ageFile(t, name, time.Hour)
	read("two")
	read("two")
	check("write_file invalidates", counts{3, 4})

	// Changed behind the tools' back, in place, same size, new time.
	if err := os.WriteFile(name, []byte("TWO"), 0o644); err != nil {
		t.Fatal(err)
	}
	ageFile(t, name, 2*time.Hour)
	read("TWO")
	check("an external change is seen", counts{3, 5})

	// Replaced behind the tools' back by another file with the same size
	// and modification time: the identity differs.
	mtime := time.Now().Add(-3 * time.Hour)
	if err := os.Chtimes(name, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	read("TWO")
	read("TWO")
	check("cached again", counts{4, 6})
	other := filepath.Join(env.root, "other.txt")
	if err := os.WriteFile(other, []byte("2wo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(other, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, name); err != nil {
		t.Fatal(err)
	}
	read("2wo")
	check("an external replacement is seen", counts{4, 7})
	read("2wo")
	check("cached again", counts{5, 7})

	if res := env.call(t, "move_file", fileArgs{"from": "c.txt", "to": "d.txt"}, wield.Caller{}); !res.OK {
		t.Fatal(res.Error)
	}
	if _, _, used := c.stats(); used != 0 {
		t.Errorf("move_file left %d bytes cached", used)
	}
	if res := env.call(t, "read_file", fileArgs{"path": "c.txt"}, wield.Caller{}); res.OK || !strings.Contains(res.Error, "not found") {
		t.Errorf("read after move: %s %s", res.Output, res.Error)
	}
	if res := env.call(t, "move_file", fileArgs{"from": "d.txt", "to": "c.txt"}, wield.Caller{}); !res.OK {
		t.Fatal(res.Error)
	}
	read("2wo")
	read("2wo")
	if _, _, used := c.stats(); used == 0 {
		t.Error("nothing cached after two reads")
	}
	if res := env.call(t, "delete_file", fileArgs{"path": "c.txt"}, wield.Caller{}); !res.OK {
		t.Fatal(res.Error)
	}
	if _, _, used := c.stats(); used != 0 {
		t.Errorf("delete_file left %d bytes cached", used)
	}
	if res := env.call(t, "read_file", fileArgs{"path": "c.txt"}, wield.Caller{}); res.OK || !strings.Contains(res.Error, "not found") {
		t.Errorf("read after delete: %s %s", res.Output, res.Error)
	}
}

func TestFileCacheBound(t *testing.T) {
	const size = 400
	env := newFileEnv(t, FileOptions{CacheBytes: 2 * (size + 300)}, nil)
	for _, n := range []string{"a", "b", "c"} {
		name := filepath.Join(env.root, n)
		if err := os.WriteFile(name, []byte(strings.Repeat(n, size)), 0o644); err != nil {
			t.Fatal(err)
		}
		ageFile(t, name, time.Hour)
	}
	var got []bool
	for _, n := range []string{"a", "b", "a", "c", "b", "a", "c"} {
		h0, _, _ := env.files.cache.stats()
		if res := env.call(t, "read_file", fileArgs{"path": n}, wield.Caller{}); !res.OK {
			t.Fatal(res.Error)
		}
		h1, _, used := env.files.cache.stats()
		got = append(got, h1 > h0)
		if used > env.files.cache.max {
			t.Fatalf("cache holds %d bytes, over its bound %d", used, env.files.cache.max)
		}
	}
	// Two entries fit: c evicts b (a was used since), b evicts a, a evicts c.
	want := []bool{false, false, true, false, false, false, false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}

	off := newFileEnv(t, FileOptions{CacheBytes: -1}, nil)
	for range 2 {
		if res := off.call(t, "read_file", fileArgs{"path": "victim.txt"}, wield.Caller{}); !res.OK {
			t.Fatal(res.Error)
		}
	}
	if h, m, u := off.files.cache.stats(); h+m+u != 0 {
		t.Errorf("disabled cache counted %d %d %d", h, m, u)
	}
}

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "sub/deep/a.go", true},
		{"*.go", "a.gox", false},
		{"sub/*.go", "sub/a.go", true},
		{"sub/*.go", "sub/deep/a.go", false},
		{"sub/**/*.go", "sub/a.go", true},
		{"sub/**/*.go", "sub/x/y/a.go", true},
		{"**/*.go", "a.go", true},
		{"**", "a/b/c", true},
		{"src/**", "src", true},
		{"src/**", "lib/a", false},
		{"a?c", "abc", true},
		{"[ab]*", "b1", true},
		{"[^ab]*", "b1", false},
		{"[^ab]*", "c1", true},
	}
	for _, tt := range tests {
		if got := matchGlob(tt.pattern, tt.name); got != tt.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
	for _, p := range []string{"[", "a/[b", `x\`, "**/**/**/**/**"} {
		if err := checkGlob(p); err == nil {
			t.Errorf("checkGlob(%q) accepted", p)
		}
	}
}

func ExampleFileTools() {
	dir, err := os.MkdirTemp("", "wield-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	tools, err := FileTools(FileOptions{AllowedPaths: []string{dir}})
	if err != nil {
		panic(err)
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(tools...)
	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	ctx := context.Background()
	for _, c := range []wield.Call{
		{Tool: "write_file", Arguments: json.RawMessage(`{"path":"notes/todo.txt","content":"buy milk"}`)},
		{Tool: "read_file", Arguments: json.RawMessage(`{"path":"notes/todo.txt"}`)},
		{Tool: "read_file", Arguments: json.RawMessage(`{"path":"../../etc/passwd"}`)},
		{Tool: "delete_file", Arguments: json.RawMessage(`{"path":"notes/todo.txt"}`)},
	} {
		res, err := e.Call(ctx, c)
		if err != nil {
			panic(err)
		}
		if res.OK {
			fmt.Println(c.Tool, string(res.Output))
		} else {
			fmt.Println(c.Tool, res.ErrorType, strings.ReplaceAll(res.Error, dir, "DIR"))
		}
	}
	// Output:
	// write_file {"bytesWritten":8,"path":"notes/todo.txt"}
	// read_file {"content":"buy milk","size":8,"encoding":"utf-8"}
	// read_file permission_denied Access denied: "../../etc/passwd" is outside the allowed folders (DIR)
	// delete_file approval_denied Tool 'delete_file' needs a person's approval and no approver is configured
}

func benchmarkReadFile(b *testing.B, cacheBytes int64) {
	env := newFileEnv(b, FileOptions{CacheBytes: cacheBytes}, nil)
	name := filepath.Join(env.root, "bench.txt")
	if err := os.WriteFile(name, []byte(strings.Repeat("wield ", 700)), 0o644); err != nil {
		b.Fatal(err)
	}
	ageFile(b, name, time.Hour)
	ctx := context.Background()
	in := ReadFileInput{Path: "bench.txt"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := env.files.read(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFile(b *testing.B) {
	b.Run("cached", func(b *testing.B) { benchmarkReadFile(b, 0) })
	b.Run("uncached", func(b *testing.B) { benchmarkReadFile(b, -1) })
}

func BenchmarkResolve(b *testing.B) {
	env := newFileEnv(b, FileOptions{}, nil)
	sb, err := env.files.sandbox(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	paths := []string{"a/b/c.txt", env.root + "/x/y.txt", "../outside/secret.txt"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, _ = sb.resolve(paths[i%len(paths)])
	}
}
