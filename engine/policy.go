package engine

import (
	"fmt"

	"github.com/wieldhq/wield"
)

// policy applies the tool's permission: deny stops here, confirm goes on to
// the approval step, auto runs.
func (e *Engine) policy(k *call) bool {
	if k.entry.Tool.EffectivePermission() == wield.PermissionDeny {
		return k.fail(wield.ErrPermissionDenied, fmt.Sprintf("Permission denied: tool '%s' may not be called", k.Tool))
	}
	return true
}
