package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTablesNoTrailingSpaces: no line of a table wield prints ends in a
// space (stats ended every row with a tab, calls pads the column before an
// empty CONVERSATION).
func TestTablesNoTrailingSpaces(t *testing.T) {
	t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(t.TempDir(), "w.db"))
	run(t, "call", "echo", "message=one", "--conversation", "c1")
	run(t, "call", "echo", "message=two") // no conversation: the last column empty
	keys := filepath.Join(t.TempDir(), "keys.json")
	if code, _, errs := run(t, "keys", "create", "--keys", keys, "--rights", "call", "--name", "agent"); code != 0 {
		t.Fatalf("keys create: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{
		{"list"},
		{"calls"},
		{"stats"},
		{"stats", "--conversation", "c1"},
		{"keys", "list", "--keys", keys},
	} {
		code, out, errs := run(t, args...)
		if code != 0 || !strings.Contains(out, "\n") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
			continue
		}
		for i, line := range strings.Split(out, "\n") {
			if strings.TrimRight(line, " \t") != line {
				t.Errorf("%v: line %d ends in spaces: %q", args, i+1, line)
			}
		}
	}
}

func TestTableTrims(t *testing.T) {
	var b strings.Builder
	tw := newTable(&b)
	tw.Write([]byte("A\tBB\tC\t\nxxx\t\t\n"))
	tw.Write([]byte("y\tz"))
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "A    BB  C\nxxx\ny    z"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}
