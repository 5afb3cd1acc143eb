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

// TestAllowedCallers: the default follows the permission; a list given is
// kept; a value that is not a caller is refused at registration.
func TestAllowedCallers(t *testing.T) {
	auto, confirm := examplesTool(), examplesTool()
	confirm.Permission = wield.PermissionConfirm
	destructive := examplesTool()
	destructive.Annotations.Destructive = true
	for _, tt := range []struct {
		tool *wield.Tool
		want string
	}{{auto, "direct program"}, {confirm, "direct"}, {destructive, "direct"}} {
		var got []string
		for _, c := range tt.tool.AllowedCallers() {
			got = append(got, string(c))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("permission %q: callers %v, want %s", tt.tool.EffectivePermission(), got, tt.want)
		}
	}
	only := examplesTool()
	only.Callers = []wield.AllowedCaller{wield.AllowedProgram}
	if c := only.AllowedCallers(); len(c) != 1 || c[0] != wield.AllowedProgram {
		t.Errorf("explicit callers: %v", c)
	}
	for _, callers := range [][]wield.AllowedCaller{{"robot"}, {}} {
		bad := examplesTool()
		bad.Callers = callers
		if err := wield.NewRegistry(nil).Register(bad); err == nil {
			t.Errorf("callers %q registered", callers)
		}
	}
}
