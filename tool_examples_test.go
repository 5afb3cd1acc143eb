package wield_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
)

type examplesIn struct {
	City string `json:"city"`
	Days int    `json:"days,omitempty" minimum:"1" maximum:"7"`
}

func examplesTool(examples ...string) *wield.Tool {
	t := wield.Func("weather", "Weather", func(context.Context, examplesIn) (string, error) { return "", nil })
	for _, e := range examples {
		t.Examples = append(t.Examples, json.RawMessage(e))
	}
	return t
}

// TestRegisterChecksExamples: a Go tool's examples are checked against its
// schema at registration, strictly: an example the tool would refuse or
// coerce is an error naming it, and the tool is not added.
func TestRegisterChecksExamples(t *testing.T) {
	for _, tt := range []struct {
		examples []string
		want     string
	}{
		{[]string{`{"city":"Paris"}`, `{"city":"Oslo","days":3}`}, ""},
		{[]string{`{"city":"Paris","days":9}`}, `tool "weather": examples[0] does not match the input schema: days`},
		{[]string{`{"city":"Paris"}`, `{"town":"Paris"}`}, `tool "weather": examples[1] does not match the input schema`},
		{[]string{`{"city":"Paris","days":"3"}`}, `examples[0] does not match`},
		{[]string{`[1]`}, `examples[0] does not match`},
	} {
		reg := wield.NewRegistry(nil)
		err := reg.Register(examplesTool(tt.examples...))
		_, registered := reg.Tool("weather")
		switch {
		case tt.want == "" && (err != nil || !registered):
			t.Errorf("%v: %v, registered %v", tt.examples, err, registered)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || registered):
			t.Errorf("%v: error %v, registered %v; want one with %q", tt.examples, err, registered, tt.want)
		}
	}
}

// TestEffectiveCallers: the default follows the permission, as
// Tool.AllowsCaller applies it; a list given is kept.
func TestEffectiveCallers(t *testing.T) {
	auto, confirm := examplesTool(), examplesTool()
	confirm.Permission = wield.PermissionConfirm
	destructive := examplesTool()
	destructive.Annotations.Destructive = true
	only := examplesTool()
	only.AllowedCallers = []string{wield.AllowProgram}
	for _, tt := range []struct {
		tool *wield.Tool
		want string
	}{{auto, "direct program"}, {confirm, "direct"}, {destructive, "direct"}, {only, "program"}} {
		got := strings.Join(tt.tool.EffectiveCallers(), " ")
		if got != tt.want {
			t.Errorf("permission %q, callers %v: effective %q, want %q", tt.tool.EffectivePermission(), tt.tool.AllowedCallers, got, tt.want)
		}
		for _, c := range []struct {
			ct   wield.CallerType
			name string
		}{{wield.CallerDirect, "direct"}, {wield.CallerProgram, "program"}} {
			if tt.tool.AllowsCaller(c.ct) != strings.Contains(got, c.name) {
				t.Errorf("effective %q disagrees with AllowsCaller(%s)", got, c.ct)
			}
		}
	}
}
