package schema

import (
	"strings"
	"testing"
)

func TestNormalizeStrict(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"n":{"type":"integer"},"b":{"type":"boolean"},"s":{"type":"string","default":"x"}},"required":["n"]}`)
	tests := []struct {
		in, want, err string
	}{
		{`{"n":5,"b":true}`, `{"n":5,"b":true,"s":"x"}`, ""},
		{`{"n":5.0}`, `{"n":5,"s":"x"}`, ""},
		{`{"n":"5"}`, "", "expected integer"},
		{`{"n":5,"b":"true"}`, "", "expected boolean"},
		{`{"n":5,"s":7}`, "", "expected string"},
		{`"{\"n\":5}"`, "", "expected object"},
	}
	for _, tt := range tests {
		out, errs := v.NormalizeStrict([]byte(tt.in))
		if tt.err != "" {
			if len(errs) == 0 || !strings.Contains(errs[0].Message, tt.err) {
				t.Errorf("%s: got %s %v, want an error with %q", tt.in, out, errs, tt.err)
			}
			// The same input passes when coercion is allowed.
			if _, errs := v.Normalize([]byte(tt.in)); len(errs) > 0 {
				t.Errorf("%s: lenient mode refused it too: %v", tt.in, errs)
			}
			continue
		}
		if len(errs) > 0 || string(out) != tt.want {
			t.Errorf("%s: got %s %v, want %s", tt.in, out, errs, tt.want)
		}
	}
}
