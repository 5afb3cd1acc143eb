package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReloadSaysWhatChanged: a reload of unchanged files changes nothing,
// and the watcher tells of new policies and of new errors only.
func TestReloadSaysWhatChanged(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "p.cedar")
	write := func(src string) {
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("permit(principal, action, resource);\n")
	s, err := Load(Enforce, dir)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := s.reload(); changed || err != nil {
		t.Errorf("unchanged files: changed %v, %v", changed, err)
	}
	write("forbid(principal, action, resource);\n")
	if changed, err := s.reload(); !changed || err != nil {
		t.Errorf("a changed file: changed %v, %v", changed, err)
	}

	news := make(chan error, 8)
	stop, err := s.Watch(0, func(err error) { news <- err })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	write("forbid(principal action, resource);\n")
	select {
	case err := <-news:
		if err == nil || !strings.Contains(err.Error(), "p.cedar:1:") {
			t.Errorf("the broken file's news: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no news of the broken file within 10 s")
	}
	write("permit(principal, action, resource);\n")
	select {
	case err := <-news:
		if err != nil {
			t.Errorf("the mended file's news: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no news of the mended file within 10 s")
	}
	if s.Len() != 1 {
		t.Errorf("%d policies in force, want 1", s.Len())
	}
}
