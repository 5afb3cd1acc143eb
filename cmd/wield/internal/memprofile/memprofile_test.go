package memprofile

import "testing"

func TestWanted(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"serve"}, false},
		{[]string{"serve", "--pprof", "127.0.0.1:6060"}, true},
		{[]string{"serve", "--pprof=127.0.0.1:6060"}, true},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--pprof", "127.0.0.1:6060"}, true},
		{[]string{"call", "echo", "--", "--pprof"}, false},
		{[]string{"serve", "--pprofx"}, false},
		{[]string{"serve", "-pprof"}, false},
	} {
		if got := Wanted(c.args); got != c.want {
			t.Errorf("Wanted(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
