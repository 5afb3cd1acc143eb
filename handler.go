package wield

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield/internal/jsondec"
	"github.com/wieldhq/wield/internal/jsonenc"
	"github.com/wieldhq/wield/schema"
)

// Handler runs a tool. args is the JSON object of arguments, already decoded,
// coerced, filled with defaults and validated by the engine; it belongs to the
// handler. The returned JSON is the tool's output.
//
// A returned error is a tool failure that the model sees: an *[Error] keeps
// its type, any other error is an execution_error with the error's text. Use
// [Transient] to mark errors worth retrying.
type Handler interface {
	Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// HandlerFunc adapts a function to a [Handler].
type HandlerFunc func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	return f(ctx, args)
}

// Func makes a typed tool from a Go function. The input schema is inferred from
// In (a struct, whose tags carry description, enum, minimum, maximum,
// minLength, maxLength, pattern, minItems, maxItems, default, examples and
// more: see package schema) and the output schema from Out.
//
// The handler decodes the engine's validated arguments into In and encodes Out
// as the output. Called directly, outside the engine, nothing is validated.
//
// Func panics if a schema cannot be inferred: that is a programmer error, found
// at start-up.
func Func[In, Out any](name, description string, fn func(context.Context, In) (Out, error)) *Tool {
	in, err := schema.ForType(reflect.TypeFor[In]())
	if err != nil {
		panic(fmt.Sprintf("wield.Func %q: input: %v", name, err))
	}
	out, err := schema.ForType(reflect.TypeFor[Out]())
	if err != nil {
		panic(fmt.Sprintf("wield.Func %q: output: %v", name, err))
	}
	if in.Type != "object" {
		panic(fmt.Sprintf("wield.Func %q: input type %v is not a struct or map: tool arguments are a JSON object", name, reflect.TypeFor[In]()))
	}
	return &Tool{
		Name:         name,
		Description:  description,
		Category:     CategoryCustom,
		InputSchema:  in,
		OutputSchema: out,
		Source:       "go",
		Handler:      funcHandler[In, Out](fn),
	}
}

type funcHandler[In, Out any] func(context.Context, In) (Out, error)

// ValidJSONOutput tells the engine that the output, made by jsonenc.Marshal,
// needs no second check. Any handler may implement it.
func (f funcHandler[In, Out]) ValidJSONOutput() bool { return true }

// ReadsArgsOnly tells the engine that the handler neither keeps nor changes
// its args (it decodes them into fresh values), so they need no copy. Any
// handler may implement it.
func (f funcHandler[In, Out]) ReadsArgsOnly() bool { return true }

func (f funcHandler[In, Out]) Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var in In
	if len(args) > 0 {
		if err := jsondec.Decode(args, &in); err != nil {
			return nil, &Error{Type: ErrValidation, Message: "arguments do not fit: " + err.Error(), Err: err}
		}
	}
	out, err := f(ctx, in)
	if err != nil {
		return nil, err
	}
	b, err := jsonenc.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode output: %w", err)
	}
	return b, nil
}

// Raw makes a tool from a hand-written input schema and a handler over raw
// JSON. The engine validates arguments against the schema before the handler
// runs; called directly, the handler must check its input itself. A nil
// input means the tool takes no parameters: {"type":"object","properties":{}}.
func Raw(name, description string, input *jsonschema.Schema, h Handler) *Tool {
	if input == nil {
		input = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	}
	return &Tool{
		Name:        name,
		Description: description,
		Category:    CategoryCustom,
		InputSchema: input,
		Source:      "go",
		Handler:     h,
	}
}
