package engine

import (
	"fmt"

	"github.com/wieldhq/wield"
)

// lookup finds the tool, within the caller's toolkit if it has one.
func (e *Engine) lookup(k *call) bool {
	if kit := k.Toolkit; kit != nil && !kit.Has(k.Tool) {
		return k.fail(wield.ErrToolNotFound, kit.NotAvailable(k.Tool))
	}
	k.entry = e.reg.Entry(k.Tool)
	if k.entry == nil && k.resumed != nil {
		return k.fail(wield.ErrToolNotFound, fmt.Sprintf("Tool '%s' no longer exists: approval %s was given for this call, and it could not run", k.Tool, k.resumed.ID))
	}
	if k.entry == nil {
		// Seed 001's words, which agents built on it match.
		return k.fail(wield.ErrToolNotFound, fmt.Sprintf("Can not find tool named '%s'", k.Tool))
	}
	t := k.entry.Tool
	if !t.Callable() {
		return k.fail(wield.ErrToolNotFound, fmt.Sprintf("Tool '%s' is %s and cannot be called", k.Tool, t.Status))
	}
	if t.Handler == nil {
		return k.fail(wield.ErrExecutorNotFound, fmt.Sprintf("Tool '%s' has no executor loaded", k.Tool))
	}
	return e.callers(k)
}
