package builtin

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/expr-lang/expr"
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
// which evaluates arithmetic with github.com/expr-lang/expr. Only numbers,
// operators and the listed math functions exist in its world; the size of an
// expression and the memory it may use are bounded, and so is its time.
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

var calcEnv = map[string]any{"pi": math.Pi, "e": math.E}

func mathFunc(name string, f func(float64) float64) expr.Option {
	return expr.Function(name, func(params ...any) (any, error) {
		x, err := number(name, params[0])
		if err != nil {
			return nil, err
		}
		return f(x), nil
	}, new(func(float64) float64))
}

func mathFunc2(name string, f func(float64, float64) float64) expr.Option {
	return expr.Function(name, func(params ...any) (any, error) {
		x, err := number(name, params[0])
		if err != nil {
			return nil, err
		}
		y, err := number(name, params[1])
		if err != nil {
			return nil, err
		}
		return f(x, y), nil
	}, new(func(float64, float64) float64))
}

func number(fn string, v any) (float64, error) {
	switch v := v.(type) {
	case int:
		return float64(v), nil
	case float64:
		return v, nil
	}
	return 0, fmt.Errorf("%s takes numbers, got %T", fn, v)
}

var calcOptions = []expr.Option{
	expr.Env(calcEnv),
	expr.DisableAllBuiltins(),
	expr.EnableBuiltin("abs"), expr.EnableBuiltin("ceil"), expr.EnableBuiltin("floor"),
	expr.EnableBuiltin("round"), expr.EnableBuiltin("min"), expr.EnableBuiltin("max"),
	mathFunc("sqrt", math.Sqrt), mathFunc("exp", math.Exp), mathFunc("log", math.Log),
	mathFunc("ln", math.Log), mathFunc("log2", math.Log2), mathFunc("log10", math.Log10),
	mathFunc("sin", math.Sin), mathFunc("cos", math.Cos), mathFunc("tan", math.Tan),
	mathFunc("asin", math.Asin), mathFunc("acos", math.Acos), mathFunc("atan", math.Atan),
	mathFunc2("pow", math.Pow), mathFunc2("atan2", math.Atan2), mathFunc2("hypot", math.Hypot),
	expr.MaxNodes(500),
}

func calculate(_ context.Context, in CalculatorInput) (CalculatorOutput, error) {
	src := strings.ReplaceAll(in.Expression, "^", "**")
	prog, err := expr.Compile(src, calcOptions...)
	if err != nil {
		return CalculatorOutput{}, &wield.Error{Type: wield.ErrValidation, Message: "cannot evaluate the expression: " + firstLine(err.Error()), Err: err}
	}
	v, err := expr.Run(prog, calcEnv)
	if err != nil {
		return CalculatorOutput{}, fmt.Errorf("cannot evaluate the expression: %s", firstLine(err.Error()))
	}
	var f float64
	switch v := v.(type) {
	case int:
		f = float64(v)
	case float64:
		f = v
	case bool:
		return CalculatorOutput{}, &wield.Error{Type: wield.ErrValidation, Message: "the expression is a comparison, not arithmetic: it gave " + fmt.Sprint(v)}
	default:
		return CalculatorOutput{}, &wield.Error{Type: wield.ErrValidation, Message: fmt.Sprintf("the expression gave a %T, not a number", v)}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return CalculatorOutput{}, fmt.Errorf("the result is not a finite number (%v): division by zero or out of range", f)
	}
	return CalculatorOutput{Expression: in.Expression, Result: f}, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
