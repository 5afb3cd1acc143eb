package peers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A case is one call of one tool, the same in every system.
type benchCase struct {
	name string          // the benchmark's last name element
	tool string          // the tool called
	args json.RawMessage // what the model sent
	ok   bool            // whether the call should succeed
	want string          // a piece of the text the caller must get back
}

var cases = []benchCase{
	{"echo", "echo", json.RawMessage(`{"message":"hello, world"}`), true, `"hello, world"`},
	{"calculator", "calculator", json.RawMessage(`{"op":"mul","a":6,"b":7}`), true, `42`},
	// Out of range: refused by validation (by hand in eino).
	{"calculator_invalid", "calculator", json.RawMessage(`{"op":"mul","a":6,"b":7000000}`), false, ``},
	{"fail", "fail", json.RawMessage(`{"reason":"disk full"}`), false, `disk full`},
}

// TestSameAnswers checks that every system answers every case as expected,
// so that the benchmarks compare calls that do the same thing.
func TestSameAnswers(t *testing.T) {
	for _, system := range Systems {
		t.Run(system, func(t *testing.T) {
			c, err := New(system)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, bc := range cases {
				ok, text, err := c.Call(context.Background(), bc.tool, bc.args)
				if err != nil {
					t.Fatalf("%s: %v", bc.name, err)
				}
				t.Logf("%s: ok=%v %s", bc.name, ok, text)
				if ok != bc.ok || !strings.Contains(text, bc.want) {
					t.Errorf("%s: ok=%v %q, want ok=%v and %q in it", bc.name, ok, text, bc.ok, bc.want)
				}
			}
		})
	}
}

// BenchmarkCall is one call of each case in each system, one after the other
// in the same process: BenchmarkCall/<system>/<case>.
func BenchmarkCall(b *testing.B) {
	for _, system := range Systems {
		b.Run(system, func(b *testing.B) {
			c, err := New(system)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			for _, bc := range cases {
				b.Run(bc.name, func(b *testing.B) {
					ctx := context.Background()
					// Once outside the timer: the answer is the expected one.
					if ok, text, err := c.Call(ctx, bc.tool, bc.args); err != nil || ok != bc.ok || !strings.Contains(text, bc.want) {
						b.Fatalf("ok=%v %q %v, want ok=%v and %q in it", ok, text, err, bc.ok, bc.want)
					}
					b.ReportAllocs()
					for b.Loop() {
						ok, _, err := c.Call(ctx, bc.tool, bc.args)
						if err != nil || ok != bc.ok {
							b.Fatalf("ok=%v %v", ok, err)
						}
					}
				})
			}
		})
	}
}
