package toolfile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

func TestLint(t *testing.T) {
	echo := wield.HandlerFunc(nil)
	l := Loader{Builtins: map[string]wield.Handler{"echo": echo}}
	var got []string
	for _, p := range l.Lint("testdata/lint") {
		got = append(got, p.String())
	}
	want := []string{
		`testdata/lint/a_ok.yaml:1:1: tool "greet" is defined again at testdata/lint/d_duplicate.yaml:1`,
		`testdata/lint/b_mistakes.yaml:3:1: tool: unknown field "colour"`,
		"testdata/lint/b_mistakes.yaml:8:16: parameter \"query\": pattern: error parsing regexp: missing closing ]: `[a-z`",
		`testdata/lint/b_mistakes.yaml:13:12: parameter "limit": min: expected a number, got string`,
		`testdata/lint/b_mistakes.yaml:16:14: parameter "order": default "random" does not fit its rules: must be one of "asc", "desc"; got string "random"`,
		`testdata/lint/b_mistakes.yaml:22:14: parameter "code": required parameter has a default, which is never used`,
		`testdata/lint/b_mistakes.yaml:22:14: parameter "code": default "ab" does not fit its rules: must be at most 1 character long, got 2`,
		`testdata/lint/b_mistakes.yaml:27:12: entry: builtin handler "search_index" is not provided`,
		"testdata/lint/c_entries.yaml:5:13: entry type http is not given to this loader (Loader.Kinds): the tool loads, and its calls answer executor_not_found",
		`testdata/lint/c_entries.yaml:9:13: unknown entry type "wormhole"`,
		"testdata/lint/c_entries.yaml:13:13: entry type external has no executor in wield: the tool loads, and its calls answer executor_not_found",
		`testdata/lint/d_duplicate.yaml:1:1: duplicate tool "greet" is shadowed by the one at testdata/lint/a_ok.yaml:1`,
		`testdata/lint/e_toolset.yaml:5:5: toolset "helpers": tool "translate" is not defined`,
		"testdata/lint/f_syntax.yaml:2:1: syntax error: found unexpected end of stream",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lint (-want +got):\n%s", diff)
	}
}
