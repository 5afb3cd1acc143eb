package engine

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/schema"
)

// RecordedRefusedArguments is how many bytes of arguments refused for
// their size (over [Options].MaxArguments) a call's record keeps: their
// head, as a JSON string (cut on a character, with "…"), in place of the
// arguments; the result's metadata says how many bytes were sent
// (arguments_bytes).
const RecordedRefusedArguments = 4 << 10

// decode turns the raw arguments into the normalised ones: parsed strictly,
// coerced, defaults filled, validated against the input schema. The check
// runs within the call's time (its timeout from arrival, or the caller's
// deadline if sooner, or until the caller gives up): a value that is costly
// to check ends the call as a timeout when the call would have ended, not
// long after.
func (e *Engine) decode(ctx context.Context, k *call) bool {
	var args []byte
	var errs []wield.ValidationError
	if n := len(k.Arguments); n > e.opts.MaxArguments {
		errs = []wield.ValidationError{{Message: fmt.Sprintf("arguments of %d bytes exceed the limit of %d bytes", n, e.opts.MaxArguments)}}
		// The record keeps their head, as a JSON string, and the metadata
		// their size: what was refused is not kept whole, or a model
		// sending 50 MB every turn would write 50 MB to the store each time.
		head := safetext.Clip(string(k.Arguments[:min(n, RecordedRefusedArguments+utf8.UTFMax)]), RecordedRefusedArguments)
		k.Arguments = jsonenc.AppendString(nil, head)
		if k.res.Metadata == nil {
			k.res.Metadata = map[string]any{}
		}
		k.res.Metadata["arguments_bytes"] = n
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
