//go:build unix

package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

// linkEnv is an allowed folder holding a hard link to a file outside it,
// and the file tools over it (and over a second allowed folder).
type linkEnv struct {
	dir, other, secret string
	eng                *engine.Engine
}

func newLinkEnv(t *testing.T, allow bool) *linkEnv {
	t.Helper()
	base := t.TempDir()
	env := &linkEnv{dir: filepath.Join(base, "allowed"), other: filepath.Join(base, "other"), secret: filepath.Join(base, "outside", "secret.txt")}
	for _, d := range []string{env.dir, env.other, filepath.Dir(env.secret)} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(env.secret, []byte("outside secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(env.secret, filepath.Join(env.dir, "link.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if err := os.WriteFile(filepath.Join(env.dir, "plain.txt"), []byte("plain"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := newFiles(FileOptions{AllowedPaths: []string{env.dir, env.other}, AllowHardLinks: allow})
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(f.tools()...)
	env.eng = engine.New(reg, &engine.Options{Approver: wield.ApproverFunc(approveFileCalls)})
	t.Cleanup(func() { _ = env.eng.Close(context.Background()); f.close() })
	return env
}

func (env *linkEnv) call(t *testing.T, tool string, args map[string]any) *wield.Result {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := env.eng.Call(context.Background(), wield.Call{Tool: tool, Arguments: raw})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (env *linkEnv) secretIs(t *testing.T, want string) {
	t.Helper()
	if b, err := os.ReadFile(env.secret); err != nil || string(b) != want {
		t.Errorf("the file outside holds %q (%v), want %q", b, err, want)
	}
}

// TestFileHardLinkRefused: a hard link in an allowed folder to a file
// outside is refused to read_file, to write_file and to move_file's copy
// between folders, with a message that says why; the folder's other files
// are unaffected, and delete_file removes the link alone.
func TestFileHardLinkRefused(t *testing.T) {
	env := newLinkEnv(t, false)
	refused := func(tool string, args map[string]any) {
		t.Helper()
		res := env.call(t, tool, args)
		if res.OK || res.ErrorType != wield.ErrPermissionDenied || !strings.Contains(res.Error, "Access denied") || !strings.Contains(res.Error, "has more than one link") {
			t.Errorf("%s %v: ok=%v %s %q, want permission_denied saying it has more than one link", tool, args, res.OK, res.ErrorType, res.Error)
		}
		if strings.Contains(string(res.Output), "outside secret") {
			t.Errorf("%s %v: the outside file's content reached the model", tool, args)
		}
	}
	refused("read_file", map[string]any{"path": filepath.Join(env.dir, "link.txt")})
	refused("read_file", map[string]any{"path": "link.txt", "encoding": "base64"})
	refused("write_file", map[string]any{"path": "link.txt", "content": "changed"})
	refused("move_file", map[string]any{"from": "link.txt", "to": filepath.Join(env.other, "copy.txt")})
	env.secretIs(t, "outside secret")
	if _, err := os.Stat(filepath.Join(env.other, "copy.txt")); err == nil {
		t.Error("move_file copied the outside file into another folder")
	}

	if res := env.call(t, "read_file", map[string]any{"path": "plain.txt"}); !res.OK {
		t.Errorf("a plain file: %s", res.Error)
	}
	if res := env.call(t, "write_file", map[string]any{"path": "new.txt", "content": "new"}); !res.OK {
		t.Errorf("a new file: %s", res.Error)
	}
	// Deleting the name in the folder leaves the file's other name alone.
	if res := env.call(t, "delete_file", map[string]any{"path": "link.txt"}); !res.OK {
		t.Errorf("delete_file of the link: %s", res.Error)
	}
	env.secretIs(t, "outside secret")
}

// TestFileHardLinkAllowed: with AllowHardLinks the tools use such a file,
// and write_file still replaces the name in the folder, never the file
// outside.
func TestFileHardLinkAllowed(t *testing.T) {
	env := newLinkEnv(t, true)
	res := env.call(t, "read_file", map[string]any{"path": "link.txt"})
	if !res.OK || !strings.Contains(string(res.Output), "outside secret") {
		t.Fatalf("read_file with hard links allowed: ok=%v %s %s", res.OK, res.Error, res.Output)
	}
	if res := env.call(t, "write_file", map[string]any{"path": "link.txt", "content": "changed"}); !res.OK {
		t.Fatalf("write_file with hard links allowed: %s", res.Error)
	}
	env.secretIs(t, "outside secret")
	if b, _ := os.ReadFile(filepath.Join(env.dir, "link.txt")); string(b) != "changed" {
		t.Errorf("the folder's file holds %q", b)
	}
}
