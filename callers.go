package wield

import "fmt"

// The values of [Tool].AllowedCallers.
const (
	// AllowDirect admits every caller that is not a program: a model's own
	// tool call, a client, a workflow node.
	AllowDirect = "direct"
	// AllowProgram admits the inner calls of a program (callers of type
	// [CallerProgram]).
	AllowProgram = "program"
)

// ProgramParentVariable is the caller variable in which an inner call of a
// program names the program's own call ID, so that every store keeps the
// link from child to parent (list a program's inner calls with the caller
// ID, which is the program's call ID too).
const ProgramParentVariable = "parent_call_id"

// ProgramCallerVariable is the caller variable in which an inner call of a
// program keeps the ID of the program's own caller (its caller ID is the
// program's call ID), so that a policy decides an inner call as a call of
// whoever ran the program: package policy's principal Agent::"ID" is that
// caller's, not the program's call.
const ProgramCallerVariable = "program_caller_id"

// AllowsCaller reports whether a caller of type ct may call the tool. A
// program's inner calls need "program" in AllowedCallers; every other caller
// needs "direct". Without AllowedCallers, a tool whose effective permission
// is auto admits both, and any other tool (confirm, deny) only direct
// callers: a program cannot reach a tool that needs a person's approval
// unless the tool says so.
func (t *Tool) AllowsCaller(ct CallerType) bool {
	want := AllowDirect
	if ct == CallerProgram {
		want = AllowProgram
	}
	if len(t.AllowedCallers) == 0 {
		return want == AllowDirect || t.EffectivePermission() == PermissionAuto
	}
	for _, c := range t.AllowedCallers {
		if c == want {
			return true
		}
	}
	return false
}

// checkAllowedCallers reports an AllowedCallers value that is neither
// direct nor program.
func checkAllowedCallers(cs []string) error {
	for _, c := range cs {
		if c != AllowDirect && c != AllowProgram {
			return fmt.Errorf("allowed_callers value %q is not %s or %s", c, AllowDirect, AllowProgram)
		}
	}
	return nil
}
