package policy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wieldhq/wield/policy"
)

// TestSchemaRefusesWhatTheModelLacks: a policy naming an attribute, an
// entity type, an action or a context key that wield's model does not have
// is refused at load with its file and line; the arguments are not
// checked; on reload the last good set stays.
func TestSchemaRefusesWhatTheModelLacks(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"permit(principal, action, resource) when { resource.readonly };", "attribute `readonly` on entity type `Tool` not found"},
		{"permit(principal == Keys::\"x\", action, resource);", "unrecognized entity type `Keys`"},
		{"permit(principal, action == Action::\"read\", resource);", "unrecognized action `Action::\"read\"`"},
		{"permit(principal, action, resource) when { context.caller == \"x\" };", "attribute `caller` in context"},
		{"permit(principal, action, resource) when { resource.name > 3 };", "fit wield's model"},
	} {
		dir := t.TempDir()
		file := write(t, dir, "p.cedar", "@id(\"fine\")\npermit(principal, action, resource);\n\n"+tc.src+"\n")
		_, err := policy.Load(policy.Enforce, dir)
		var fe *policy.FileError
		if !errors.As(err, &fe) || fe.File != file || fe.Line != 4 || !strings.Contains(fe.Message, tc.want) {
			t.Errorf("%s: Load = %v; want %s:4 saying %q", tc.src, err, file, tc.want)
		}
	}
	dir := t.TempDir()
	write(t, dir, "p.cedar", `permit(principal, action, resource) when { resource.read_only && context.caller_type == "program" };
forbid(principal, action, resource) when { context.args.path like "/etc/*" };
forbid(principal, action, resource) when { context has args && context.args has n && context.args["n"] > 3 };
forbid(principal, action, resource in Toolset::"ops") unless { principal in [Key::"a", User::"b", Agent::"c", Anonymous::"local"] };
`)
	s, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		t.Fatalf("policies that fit the model: %v", err)
	}
	write(t, dir, "p.cedar", "permit(principal, action, resource) when { resource.readonly };\n")
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), "p.cedar:1:") {
		t.Errorf("Reload of a policy the schema refuses = %v, want an error at p.cedar:1", err)
	}
	if s.Len() != 4 {
		t.Errorf("after a refused reload %d policies are in force, want the last good 4", s.Len())
	}
	if !strings.Contains(policy.Schema, "entity Tool in [Toolset]") {
		t.Error("Schema does not declare Tool")
	}
}
