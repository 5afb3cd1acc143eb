package llm

import (
	"regexp"
	"strings"
	"testing"
)

// TestNamespaceName checks the hand-written rule against the regular
// expression it replaces.
func TestNamespaceName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	names := []string{"", "a", "Z9", "files_v2", "a-b", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"a.b", "a b", "a\n", "\na", "é", "a/b", "a$", "ünï", strings.Repeat("_", 63) + "-", "tools:x"}
	for c := 0; c < 256; c++ {
		names = append(names, string(rune(c)), "a"+string([]byte{byte(c)}))
	}
	for _, n := range names {
		if got, want := namespaceName(n), re.MatchString(n); got != want {
			t.Errorf("namespaceName(%q) = %v, the regular expression says %v", n, got, want)
		}
	}
}
