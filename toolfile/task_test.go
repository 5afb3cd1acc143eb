package toolfile

import (
	"context"
	"testing"

	"github.com/wieldhq/wield"
)

func TestTaskKey(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    wield.TaskSupport
		problem string
	}{
		{"optional", wield.TaskOptional, ""},
		{"required", wield.TaskRequired, ""},
		{"never", "", ""},
		{"always", "", `task: "always" is not optional, required or never`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			src := "tools:\n  - name: slow\n    description: Sleeps.\n    task: " + tc.value + "\n    entry: {type: builtin, handler: slow}\n"
			l := Loader{Builtins: map[string]wield.Handler{"slow": wield.HandlerFunc(nil)}}
			set, _ := l.Load(context.Background(), "tools.yaml", []byte(src))
			if tc.problem != "" {
				if len(set.Problems) != 1 || set.Problems[0].Message != tc.problem || set.Problems[0].Line != 4 {
					t.Fatalf("problems = %+v, want one at line 4 saying %q", set.Problems, tc.problem)
				}
				return
			}
			if len(set.Problems) > 0 || len(set.Tools) != 1 {
				t.Fatalf("tools %d, problems %+v", len(set.Tools), set.Problems)
			}
			if got := set.Tools[0].Task; got != tc.want {
				t.Errorf("Task = %q, want %q", got, tc.want)
			}
		})
	}
}
