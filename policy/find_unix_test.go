//go:build unix

package policy

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFindLeavesOutPipes: a named pipe named like a policy file, in a tool
// folder or given by name, is not a policy file: reading it waited for a
// writer, and wield validate, list and serve with it.
func TestFindLeavesOutPipes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "allow.cedar"), []byte("permit(principal, action, resource);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "deny.cedar")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("deny.cedar", filepath.Join(dir, "link.cedar")); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var files int
	var err error
	go func() {
		defer close(done)
		files, _, err = Check(dir, pipe)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Check is still reading after 10s")
	}
	if err != nil || files != 1 {
		t.Errorf("Check: %d files, %v; want allow.cedar alone", files, err)
	}
}

// TestFindThroughLink: the policies of a tool folder given through a
// symbolic link are found, as its tool files are. Before, the walk visited
// the link alone: the folder's policies were silently not in force (a
// forbid the user wrote did not apply).
func TestFindThroughLink(t *testing.T) {
	real := t.TempDir()
	if err := os.WriteFile(filepath.Join(real, "allow.cedar"), []byte("permit(principal, action, resource);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(real, "more"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "more", "deny.cedar"), []byte("forbid(principal, action, resource);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "tools")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	files, _, err := Check(link)
	if err != nil || files != 2 {
		t.Errorf("Check(link): %d files, %v; want allow.cedar and more/deny.cedar", files, err)
	}
}
