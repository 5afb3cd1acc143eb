package toolfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestLoadConfigPrograms(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("programs: {enabled: true, on_approval: fail, max_calls: 7, timeout: 5s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Programs{Enabled: true, OnApproval: "fail", MaxCalls: 7, Timeout: 5 * time.Second}); cfg.Programs != want {
		t.Errorf("programs = %+v, want %+v", cfg.Programs, want)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("programs:\n  enabled: yes please\n  on_approval: later\n  max_calls: -1\n  timeout: soon\n  nesting: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := configProblems(t, bad)
	want := []string{
		bad + ":2:12: enabled: expected true or false, got string",
		bad + `:3:16: programs.on_approval: "later" is not wait or fail`,
		bad + ":4:14: max_calls: must not be negative",
		bad + `:5:12: timeout: "soon" is not a duration like "30s"`,
		bad + `:6:3: programs: unknown field "nesting"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%q\nwant\n%q", got, want)
	}
}
