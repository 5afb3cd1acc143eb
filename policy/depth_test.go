package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDeepPolicyRefused: a policy nested past what the parser's recursion
// can hold (a million "!", parentheses, an "&&" chain) is refused with its
// file and place before cedar-go reads it, instead of exhausting the stack
// (a fatal error no recover catches: the server died on reload), and a
// reload keeps the last good policies; a long flat policy still loads.
func TestDeepPolicyRefused(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "p.cedar")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("@id(\"all\") permit(principal, action, resource);\n")
	set, err := Load(Enforce, f)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1_000_000
	for name, expr := range map[string]string{
		"not":   strings.Repeat("!", n) + "true",
		"paren": strings.Repeat("(", n) + "true" + strings.Repeat(")", n),
		"and":   strings.Repeat("true && ", n/4) + "true",
		"if":    strings.Repeat("if true then ", n/8) + "true" + strings.Repeat(" else false", n/8),
	} {
		t.Run(name, func(t *testing.T) {
			write("@id(\"all\") permit(principal, action, resource);\n// a comment (((\npermit(principal, action, resource) when { \"((\" == \"((\" && " + expr + " };\n")
			err := set.Reload()
			var fe *FileError
			if !errors.As(err, &fe) || fe.File != f || fe.Line != 3 || !strings.Contains(fe.Message, "nests too deep") {
				t.Fatalf("reload of a deep policy: %v", err)
			}
			if set.Len() != 1 {
				t.Errorf("after the refused reload %d policies are in force, want the last good 1", set.Len())
			}
			if _, problems, err := Check(f); err != nil || len(problems) != 1 || !strings.Contains(problems[0].Message, "nests too deep") {
				t.Errorf("Check: %v %v", problems, err)
			}
		})
	}

	// Many policies, and one long flat one, are not deep.
	var b strings.Builder
	for range 2000 {
		b.WriteString(`permit(principal, action, resource) when { resource.name == "a" || resource.name == "b" };` + "\n")
	}
	b.WriteString(`permit(principal, action, resource) when { ["` + strings.Repeat(`x", "`, 20000) + `y"].contains(resource.name) };` + "\n")
	write(b.String())
	if err := set.Reload(); err != nil {
		t.Fatalf("reload of many flat policies: %v", err)
	}
	if set.Len() != 2001 {
		t.Errorf("%d policies in force, want 2001", set.Len())
	}
}

// TestNestingCount: the count bounds the depth from above, and operators
// of two characters count once: a generated policy comparing a name with
// 5,000 values loads, 20,001 "!" (each a level) do not.
func TestNestingCount(t *testing.T) {
	var alts []string
	for i := range 5000 {
		alts = append(alts, `resource.name == "t`+strconv.Itoa(i)+`"`)
	}
	if fe := checkNesting("p.cedar", []byte("permit(principal, action, resource) when { "+strings.Join(alts, " || ")+" };")); fe != nil {
		t.Errorf("5,000 alternatives: %v", fe)
	}
	if fe := checkNesting("p.cedar", []byte("permit(principal, action, resource) when { "+strings.Repeat("!", 20_001)+"true };")); fe == nil {
		t.Error("20,001 '!' were not refused")
	}
	if fe := checkNesting("p.cedar", []byte("permit(principal, action, resource) when { "+strings.Repeat("!", 19_990)+"true };")); fe != nil {
		t.Errorf("19,990 '!': %v", fe)
	}
}
