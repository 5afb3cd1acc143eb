package engine

import (
	"fmt"
	"strings"

	"github.com/wieldhq/wield"
)

// decode turns the raw arguments into the normalised ones: parsed strictly,
// coerced, defaults filled, validated against the input schema.
func (e *Engine) decode(k *call) bool {
	var args []byte
	var errs []wield.ValidationError
	if len(k.Arguments) > e.opts.MaxArguments {
		errs = []wield.ValidationError{{Message: fmt.Sprintf("arguments of %d bytes exceed the limit of %d bytes", len(k.Arguments), e.opts.MaxArguments)}}
	} else if e.opts.StrictValidation {
		args, errs = k.entry.Input.NormalizeStrict(k.Arguments)
	} else {
		args, errs = k.entry.Input.Normalize(k.Arguments)
	}
	if len(errs) > 0 {
		k.res.ValidationErrors = errs
		k.fail(wield.ErrValidation, validationMessage(k.Tool, errs))
		e.publish(k, wield.EventValidationError, k.res.Error)
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
