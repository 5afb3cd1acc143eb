package engine

import (
	"fmt"

	"github.com/wieldhq/wield"
)

// callers refuses a call whose caller the tool does not admit (see
// [wield.Tool.AllowsCaller]): inside a program, a tool not allowed for
// programs answers permission_denied, and the program sees why.
func (e *Engine) callers(k *call) bool {
	t := k.entry.Tool
	if t.AllowsCaller(k.Caller.Type) {
		return true
	}
	if k.Caller.Type == wield.CallerProgram {
		return k.fail(wield.ErrPermissionDenied, fmt.Sprintf("Permission denied: tool '%s' may not be called from a program (its allowed_callers do not include program); call it directly instead", k.Tool))
	}
	return k.fail(wield.ErrPermissionDenied, fmt.Sprintf("Permission denied: tool '%s' may only be called from a program", k.Tool))
}
