package toolfile_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/toolfile"
)

func TestAllowedCallers(t *testing.T) {
	const head = "name: t\ndescription: d\npermission: confirm\nentry:\n  type: builtin\n  handler: echo\n"
	tests := []struct {
		yaml    string
		want    []string
		program bool
		errHas  string
	}{
		{head, nil, false, ""},
		{head + "allowed_callers: [direct, program]\n", []string{"direct", "program"}, true, ""},
		{head + "allowed_callers: [program]\n", []string{"program"}, true, ""},
		{head + "allowed_callers: [model]\n", nil, false, `t.yaml:7:19: allowed_callers: "model" is not direct or program`},
		{head + "allowed_callers: []\n", nil, false, "admits no caller"},
		{head + "allowed_callers: program\n", nil, false, "expected a list"},
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
		if !slices.Equal(tools[0].AllowedCallers, tc.want) || tools[0].AllowsCaller(wield.CallerProgram) != tc.program {
			t.Errorf("%q: allowed callers %v (program %v), want %v (program %v)", tc.yaml, tools[0].AllowedCallers, tools[0].AllowsCaller(wield.CallerProgram), tc.want, tc.program)
		}
	}
}

func load(t *testing.T, yaml string) ([]*wield.Tool, error) {
	t.Helper()
	l := &toolfile.Loader{Builtins: toolfile.HandlersOf(wield.Raw("echo", "echo", nil, wield.HandlerFunc(nil)))}
	set, err := l.Load(t.Context(), "t.yaml", []byte(yaml))
	if err != nil {
		return nil, err
	}
	return set.Tools, nil
}
