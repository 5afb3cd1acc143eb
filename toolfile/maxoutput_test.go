package toolfile_test

import (
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/toolfile"
)

// TestToolMaxOutput: a tool file's max_output is the tool's output budget
// (wield.Tool.MaxOutput), a built-in re-declared without one keeps the
// built-in's, and zero, a negative number or text is refused at its line.
func TestToolMaxOutput(t *testing.T) {
	const head = "name: t\ndescription: d\nentry:\n  type: builtin\n  handler: echo\n"
	tests := []struct {
		yaml   string
		want   int
		errHas string
	}{
		{head, 0, ""},
		{head + "max_output: 1048576\n", 1 << 20, ""},
		{head + "max_output: 0\n", 0, "t.yaml:6:13: max_output: must be at least 1 (bytes; leave it out for the configuration's max_output, else 65536)"},
		{head + "max_output: -1\n", 0, "t.yaml:6:13: max_output: must be at least 1 (bytes; leave it out for the configuration's max_output, else 65536)"},
		{head + "max_output: 1MB\n", 0, "t.yaml:6:13: max_output: expected a non-negative integer, got string"},
	}
	for _, tc := range tests {
		tools, err := load(t, tc.yaml)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%q: error %v, want one containing %q", tc.yaml, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if got := tools[0].MaxOutput; got != tc.want {
			t.Errorf("%q: MaxOutput %d, want %d", tc.yaml, got, tc.want)
		}
	}

	// A built-in with a budget of its own keeps it unless the file says.
	bt := wield.Raw("echo", "echo", nil, wield.HandlerFunc(nil))
	bt.MaxOutput = 500
	l := &toolfile.Loader{Builtins: toolfile.HandlersOf(bt)}
	for yaml, want := range map[string]int{head: 500, head + "max_output: 9000\n": 9000} {
		set, err := l.Load(t.Context(), "t.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		if got := set.Tools[0].MaxOutput; got != want {
			t.Errorf("%q over a built-in of budget 500: MaxOutput %d, want %d", yaml, got, want)
		}
	}
}
