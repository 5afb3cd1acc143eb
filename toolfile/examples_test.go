package toolfile

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

const examplesHead = "name: weather\nparameters:\n  - {name: city, type: string}\n  - {name: days, type: integer, required: false, validation: {min: 1, max: 7}}\nentry: {type: builtin, handler: b}\n"

// TestExamplesAndCallers: examples and allowed_callers reach the tool as
// written.
func TestExamplesAndCallers(t *testing.T) {
	src := examplesHead + "examples:\n  - {city: Paris}\n  - {city: Oslo, days: 3}\nallowed_callers: [program, direct]\n"
	var l Loader
	set, _ := l.Load(context.Background(), "f.yaml", []byte(src))
	if len(set.Problems) != 0 {
		t.Fatalf("problems: %v", set.Problems)
	}
	tool := set.Tools[0]
	got, _ := json.Marshal(tool.Examples)
	if diff := cmp.Diff(`[{"city":"Paris"},{"city":"Oslo","days":3}]`, string(got)); diff != "" {
		t.Errorf("examples (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"program", "direct"}, tool.AllowedCallers); diff != "" {
		t.Errorf("allowed_callers (-want +got):\n%s", diff)
	}
}

// TestAllowedCallersDefault: a file silent on allowed_callers leaves both
// for an auto tool and direct only for a confirm one.
func TestAllowedCallersDefault(t *testing.T) {
	for _, tt := range []struct {
		perm string
		want []string
	}{
		{"auto", []string{"direct", "program"}},
		{"confirm", []string{"direct"}},
	} {
		var l Loader
		set, _ := l.Load(context.Background(), "f.yaml", []byte(examplesHead+"permission: "+tt.perm+"\n"))
		if len(set.Problems) != 0 {
			t.Fatalf("problems: %v", set.Problems)
		}
		if set.Tools[0].AllowedCallers != nil {
			t.Errorf("%s: AllowedCallers = %v, want nil when the file is silent", tt.perm, set.Tools[0].AllowedCallers)
		}
		if diff := cmp.Diff(tt.want, set.Tools[0].EffectiveCallers()); diff != "" {
			t.Errorf("%s: AllowedCallers (-want +got):\n%s", tt.perm, diff)
		}
	}
}

// TestExamplesRefused: an example the tool would refuse, or a caller that
// does not exist, is a problem at its line and column, and the tool is
// left out.
func TestExamplesRefused(t *testing.T) {
	tests := []struct{ tail, want string }{
		{"examples:\n  - {city: Paris, days: 9}\n", `f.yaml:7:5: examples[0]: does not match the tool's parameters: days: `},
		{"examples:\n  - {city: Paris}\n  - {town: Paris}\n", `f.yaml:8:5: examples[1]: does not match the tool's parameters: `},
		{"examples:\n  - {city: 5}\n", `f.yaml:7:5: examples[0]: does not match the tool's parameters: city: `},
		{"examples:\n  - Paris\n", `f.yaml:7:5: examples[0]: expected an object of arguments, got string`},
		{"examples: {city: Paris}\n", `f.yaml:6:11: examples: expected a list of argument objects, got mapping`},
		{"allowed_callers: [direct, robot]\n", `f.yaml:6:27: allowed_callers: "robot" is not direct or program`},
		{"allowed_callers: []\n", `f.yaml:6:18: allowed_callers: an empty list admits no caller`},
	}
	for _, tt := range tests {
		var l Loader
		set, _ := l.Load(context.Background(), "f.yaml", []byte(examplesHead+tt.tail))
		if len(set.Problems) != 1 || len(set.Problems[0].String()) < len(tt.want) || set.Problems[0].String()[:len(tt.want)] != tt.want {
			t.Errorf("%q: problems %v, want one starting %q", tt.tail, set.Problems, tt.want)
		}
		if len(set.Tools) != 0 {
			t.Errorf("%q: the tool was loaded despite the problem", tt.tail)
		}
	}
}

// TestExamplesBounded: a list longer than maxExamples is refused whole.
func TestExamplesBounded(t *testing.T) {
	src := examplesHead + "examples:\n"
	for range maxExamples + 1 {
		src += "  - {city: Paris}\n"
	}
	var l Loader
	set, _ := l.Load(context.Background(), "f.yaml", []byte(src))
	if len(set.Problems) != 1 || len(set.Tools) != 0 {
		t.Fatalf("problems %v, tools %d: want one problem and no tool", set.Problems, len(set.Tools))
	}
}

// FuzzExamples loads tool files whose examples and allowed_callers are
// arbitrary YAML: nothing may panic, and every tool that loads carries
// examples its own schema accepts and only known callers.
func FuzzExamples(f *testing.F) {
	for _, tail := range []string{
		"examples:\n  - {city: Paris}\nallowed_callers: [direct]\n",
		"examples:\n  - {city: [1, {a: b}], days: 1e400}\n",
		"examples: [{city: ']]>'}, {city: \"\\u0000\"}]\nallowed_callers: [program, program]\n",
		"examples: &a [*a]\n",
		"allowed_callers: [{direct: 1}]\n",
	} {
		f.Add(tail)
	}
	f.Fuzz(func(t *testing.T, tail string) {
		var l Loader
		set, _ := l.Load(context.Background(), "f.yaml", []byte(examplesHead+tail))
		for _, tool := range set.Tools {
			if err := wield.NewRegistry(nil).Register(tool); err != nil {
				t.Fatalf("a loaded tool does not register: %v\n%s", err, tail)
			}
		}
	})
}
