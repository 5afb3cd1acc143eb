package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/schema"
)

// decode turns the raw arguments into the normalised ones: parsed strictly,
// coerced, defaults filled, validated against the input schema. The check
// runs within the call's time (its timeout from arrival, or the caller's
// deadline if sooner, or until the caller gives up): a value that is costly
// to check ends the call as a timeout when the call would have ended, not
// long after.
func (e *Engine) decode(ctx context.Context, k *call) bool {
	var args []byte
	var errs []wield.ValidationError
	if len(k.Arguments) > e.opts.MaxArguments {
		errs = []wield.ValidationError{{Message: fmt.Sprintf("arguments of %d bytes exceed the limit of %d bytes", len(k.Arguments), e.opts.MaxArguments)}}
	} else {
		limit := e.timeout(k)
		dl := k.res.StartedAt.Add(limit)
		if cd, ok := ctx.Deadline(); ok && cd.Before(dl) {
			dl, limit = cd, cd.Sub(k.res.StartedAt).Round(time.Millisecond) // the caller's deadline comes first
		}
		args, errs = k.entry.Input.NormalizeWithin(k.Arguments, schema.Limits{Context: ctx, Deadline: dl, Strict: e.opts.StrictValidation})
		if len(errs) == 1 && errs[0].Message == schema.ErrDeadline {
			e.ended(ctx, k, limit)
			return false
		}
	}
	if len(errs) > 0 {
		k.res.ValidationErrors = errs
		k.fail(wield.ErrValidation, validationMessage(k.Tool, errs))
		k.invalid = true // announced by passed, unless the tool is hidden
		return false
	}
	k.args = args
	return true
}

// validationMessage sums the problems up in one line for the model.
func validationMessage(tool string, errs []wield.ValidationError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid arguments for tool '%s': ", tool)
	for i, v := range errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(v.String())
	}
	return b.String()
}
