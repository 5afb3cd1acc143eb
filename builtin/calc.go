package builtin

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/wieldhq/wield"
)

// EchoInput is the input of the echo tool.
type EchoInput struct {
	Message string `json:"message" description:"The text to send back"`
}

// EchoOutput is the output of the echo tool.
type EchoOutput struct {
	Message string `json:"message"`
}

// Echo returns the echo tool (seed 004's EchoExecutor): it answers with the
// message it was given, for testing a pipeline end to end.
func Echo() *wield.Tool {
	t := wield.Func("echo", "Echo a message back unchanged. Useful to test that tool calls work.",
		func(_ context.Context, in EchoInput) (EchoOutput, error) {
			return EchoOutput(in), nil
		})
	t.Category = wield.CategoryCustom
	t.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}
	t.Inline = true // copies a string: it cannot hang
	t.Tags = []string{"test", "builtin"}
	t.Version = "1.0.0"
	t.Source = "builtin"
	return t
}

// CalculatorInput is the input of the calculator tool.
type CalculatorInput struct {
	Expression string `json:"expression" description:"Arithmetic expression, e.g. (2 + 3) * sqrt(16) / 2. Operators + - * / % ** ^; functions abs, ceil, floor, round, min, max, sqrt, pow, exp, log, log2, log10, sin, cos, tan, asin, acos, atan, atan2, hypot; constants pi and e" minLength:"1" maxLength:"1000"`
}

// CalculatorOutput is the output of the calculator tool.
type CalculatorOutput struct {
	Expression string  `json:"expression"`
	Result     float64 `json:"result"`
}

// Calculator returns the calculator tool (seed 004's CalculatorExecutor),
// which evaluates arithmetic with the small evaluator of calc_eval.go. Only
// numbers, operators and the listed math functions exist in its world; the
// size and nesting of an expression are bounded, and so is its time.
//
// An expression that cannot be evaluated (syntax, an unknown name, a
// comparison, a wrong argument) is a validation_error naming what and where;
// a non-finite result (1/0, sqrt(-1)) or a failure while evaluating (% 0 on a
// computed value) is an execution_error.
func Calculator() *wield.Tool {
	t := wield.Func("calculator", "Evaluate an arithmetic expression and return the number.", calculate)
	t.Category = wield.CategoryData
	t.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}
	t.Tags = []string{"math", "builtin"}
	t.Timeout = 5 * time.Second
	t.Version = "1.0.0"
	t.Source = "builtin"
	return t
}

// calcMaxLen is the input schema's maxLength, enforced again here so that a
// direct call cannot evaluate more.
const calcMaxLen = 1000

func calculate(_ context.Context, in CalculatorInput) (CalculatorOutput, error) {
	if n := utf8.RuneCountInString(in.Expression); n > calcMaxLen {
		return CalculatorOutput{}, &wield.Error{Type: wield.ErrValidation, Message: fmt.Sprintf("cannot evaluate the expression: it is %d characters long, at most %d", n, calcMaxLen)}
	}
	v, err := evalCalc(in.Expression)
	if err != nil {
		if ce, ok := err.(*calcError); ok && ce.runtime {
			return CalculatorOutput{}, fmt.Errorf("cannot evaluate the expression: %s", ce.msg)
		}
		return CalculatorOutput{}, &wield.Error{Type: wield.ErrValidation, Message: "cannot evaluate the expression: " + err.Error()}
	}
	var f float64
	switch v.kind {
	case kInt:
		f = float64(v.i)
	case kFloat:
		f = v.f
	default:
		return CalculatorOutput{}, &wield.Error{Type: wield.ErrValidation, Message: "the expression is a comparison, not arithmetic: it gave " + strconv.FormatBool(v.b)}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return CalculatorOutput{}, fmt.Errorf("the result is not a finite number (%v): division by zero or out of range", f)
	}
	return CalculatorOutput{Expression: in.Expression, Result: f}, nil
}
