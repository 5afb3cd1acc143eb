package builtin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/wieldhq/wield"
)

// The calculator used github.com/expr-lang/expr until it was replaced by
// calc_eval.go for binary size. expr stays as a test-only dependency: these
// tests evaluate every expression both ways and require the same answer, or
// the same kind of refusal.

func exprFunc1(name string, f func(float64) float64) expr.Option {
	return expr.Function(name, func(params ...any) (any, error) {
		x, err := exprNumber(name, params[0])
		if err != nil {
			return nil, err
		}
		return f(x), nil
	}, new(func(float64) float64))
}

func exprFunc2(name string, f func(float64, float64) float64) expr.Option {
	return expr.Function(name, func(params ...any) (any, error) {
		x, err := exprNumber(name, params[0])
		if err != nil {
			return nil, err
		}
		y, err := exprNumber(name, params[1])
		if err != nil {
			return nil, err
		}
		return f(x, y), nil
	}, new(func(float64, float64) float64))
}

func exprNumber(fn string, v any) (float64, error) {
	switch v := v.(type) {
	case int:
		return float64(v), nil
	case float64:
		return v, nil
	}
	return 0, fmt.Errorf("%s takes numbers, got %T", fn, v)
}

var exprEnv = map[string]any{"pi": math.Pi, "e": math.E}

// exprOptions are the options the calculator gave expr before calc_eval.go.
var exprOptions = []expr.Option{
	expr.Env(exprEnv),
	expr.DisableAllBuiltins(),
	expr.EnableBuiltin("abs"), expr.EnableBuiltin("ceil"), expr.EnableBuiltin("floor"),
	expr.EnableBuiltin("round"), expr.EnableBuiltin("min"), expr.EnableBuiltin("max"),
	exprFunc1("sqrt", math.Sqrt), exprFunc1("exp", math.Exp), exprFunc1("log", math.Log),
	exprFunc1("ln", math.Log), exprFunc1("log2", math.Log2), exprFunc1("log10", math.Log10),
	exprFunc1("sin", math.Sin), exprFunc1("cos", math.Cos), exprFunc1("tan", math.Tan),
	exprFunc1("asin", math.Asin), exprFunc1("acos", math.Acos), exprFunc1("atan", math.Atan),
	exprFunc2("pow", math.Pow), exprFunc2("atan2", math.Atan2), exprFunc2("hypot", math.Hypot),
	expr.MaxNodes(500),
}

// outcome is what the tool answers: a result, or the type of its refusal.
type outcome struct {
	result  float64
	errType wield.ErrorType
	msg     string
}

// exprOutcome is the calculator's answer as it was with expr.
func exprOutcome(src string) outcome {
	prog, err := expr.Compile(strings.ReplaceAll(src, "^", "**"), exprOptions...)
	if err != nil {
		return outcome{errType: wield.ErrValidation, msg: err.Error()}
	}
	v, err := expr.Run(prog, exprEnv)
	if err != nil {
		return outcome{errType: wield.ErrExecution, msg: err.Error()}
	}
	var f float64
	switch v := v.(type) {
	case int:
		f = float64(v)
	case float64:
		f = v
	default:
		return outcome{errType: wield.ErrValidation, msg: fmt.Sprintf("gave %T %v", v, v)}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return outcome{errType: wield.ErrExecution, msg: fmt.Sprint(f)}
	}
	return outcome{result: f}
}

// newOutcome is the calculator's answer now.
func newOutcome(src string) outcome {
	out, err := calculate(context.Background(), CalculatorInput{Expression: src})
	if err == nil {
		return outcome{result: out.Result}
	}
	var we *wield.Error
	if errors.As(err, &we) {
		return outcome{errType: we.Type, msg: we.Message}
	}
	return outcome{errType: wield.ErrExecution, msg: err.Error()}
}

// foreign says the new evaluator refused a construct outside the
// calculator's documented language (an expr extra such as ranges, strings,
// arrays, sum or map, ?:, let, && or !), which expr may have accepted.
func foreign(o outcome) bool {
	for _, m := range []string{"unknown name", "unknown function", "unexpected character", `unexpected "."`, "unknown operator"} {
		if strings.Contains(o.msg, m) {
			return true
		}
	}
	return false
}

// compareWithExpr fails t when the two evaluators disagree on src.
func compareWithExpr(t *testing.T, src string) {
	t.Helper()
	if utf8.RuneCountInString(src) > calcMaxLen {
		return // the input schema refuses it before the tool runs
	}
	got := newOutcome(src)
	if got.errType != "" && foreign(got) {
		return // expr's answer does not matter: it is not the calculator's language
	}
	if strings.Count(src, "<")+strings.Count(src, ">") > 12 {
		// expr's compile time doubles with each level of nested chained
		// comparisons (1<(1<(…)<1)<1: the middle operand is shared by two
		// comparisons and visited twice): 18 levels took 0.4 s. A comparison
		// is refused wherever it is, so that is all there is to check.
		if got.errType != wield.ErrValidation {
			t.Errorf("%q: got %q %v (%s), want a validation error", src, got.errType, got.result, got.msg)
		}
		return
	}
	want := exprOutcome(src)
	switch {
	case got.errType == "" && want.errType == "":
		if got.result != want.result {
			t.Errorf("%q = %v, expr gave %v", src, got.result, want.result)
		}
	case got.errType != want.errType:
		t.Errorf("%q: got %q %v (%s), expr gave %q %v (%s)", src, got.errType, got.result, got.msg, want.errType, want.result, want.msg)
	}
}

// calcEdgeCases are expressions where expr's rules are easy to get wrong.
var calcEdgeCases = []string{
	"1+2", "2 * (3 + 4)", "2^10", "2**0.5 * 2**0.5", "-2**2", "-2^2", "2**-1", "2**3**2", "2^3^2", "(-2)**2",
	"--1", "-+-1", "+1", "- - 2", "1 - -1", "2*-3", "2 * - 3 + 1", "-(1+2)*3",
	"7 % 3", "-7 % 3", "7 % -3", "7.5 % 2", "7 % 2.0", "5 % 0", "5 % (3-3)", "max(5, 1) % max(0, 0)", "max(1, 2.5) % 2",
	"abs(-3) % 2", "round(3) % 2", "pi % 2", "-9223372036854775807 - 1 % -1", "(-9223372036854775807 - 1) % -1",
	"10 / 4", "1/0", "-1/0", "0/0", "0.0/0", "1 % 1", "4/2*2",
	"9223372036854775807", "9223372036854775808", "9223372036854775807 + 1", "-9223372036854775807 - 2",
	"3037000500 * 3037000500", "abs(-9223372036854775807 - 1)", "-(-9223372036854775807 - 1)",
	"0x1F", "0X1f", "0o17", "0O17", "0b101", "0B101", "0x", "0b", "0b2", "0o8", "0xG", "0x1e3", "0x1.5", "1_000", "1__0", "_1", "1_",
	"0_5", "007", "08", "0.5", ".5", "5.", "5..", "1..3", ".5.5", "1.e3", "1e3", "1E3", "1e-3", "1e+3", "1e", "1e+", "2e3e4",
	"1e400", "-1e400", "1e-400", "1.7976931348623157e308", "2pi", "2 pi", "2*pi", "2*e", "e**2", "e", "pi", "PI", "E",
	"1 +", "+", "", " ", "()", "(1", "1)", "((1))", "(1)(2)", "1 2", "1,2", "sqrt 4",
	"abs(-3) + floor(2.7) + ceil(2.1) + round(2.5)", "round(-2.5)", "round(0.5)", "ceil(-0.5)", "floor(3)", "abs(-2.5)", "abs(3)",
	"max(1, 7, 3) - min(4, 2)", "max(1)", "min(2.5)", "max()", "min()", "max(1, 2,)", "max(1,,2)", "max(,1)", "max(1, 1.0) % 2",
	"max(1.0, 1) % 2", "min(1, 0.5) + 1", "max(0/0, 1)", "max(1, 0/0)", "min(-0.0, 0)", "max(2, 3) / 2",
	"sqrt(16) + pow(2, 3)", "sqrt(4,)", "sqrt()", "sqrt(1, 2)", "pow(2)", "pow(2, 3, 4)", "hypot(3, 4) + log10(1000) + log2(8) + ln(e)",
	"sin(0) + cos(0) + atan2(0, 1)", "exp(1)", "log(0)", "sqrt(-1)", "asin(2)", "acos(0.5)", "atan(1)", "tan(pi/4)", "exp(1000)",
	"sqrt", "sqrt(1<2)", "abs(1<2)", "max(1, 1<2)", "-(1<2)", "(1<2) + 1", "pi > 3", "1 < 2 < 3", "3 > 2 > 1", "1 <= 1", "2 >= 3",
	"1 == 1", "1 == 1.0", "1 != 2", "0/0 == 0/0", "(1<2) == (2<3)", "(1<2) == 1", "1 < 2 == 3", "1 = 1", "1 === 1", "1 <> 2",
	"!1", "1 && 2", "true", "nil", "1 ? 2 : 3", "1 ?? 2", "[1][0]", "'a'", `"a" + "b"`, "len([1,2,3])", "sum(1..10)",
	"map(1..3, # * 2)", "let x = 1; x", "1; 2", "(1; 2)", "env", "$env", "foo(1)", "pi(1)", "1 | abs()", "-1 | abs()", "1 in [1]",
	"1 + 2 // three", "1 + /* two */ 2", "1 /* open", "/**/1", "/*/1", "1 /^ c ^/ + 2", "1 /^/ + 2", "/*^/ 1", "2*^3", "2^*3",
	"2 ^^ 3", "2 *= 3", "2 <* 3", "1\t+\n2", "1\u00a0+ 2", "١", "x١", "é", "1 + é", "\xff", "1 // \xff",
	"abs(-9223372036854775807-1) % 2", "2**63", "2**1024", "-(2**1024)", "3 % 2 ** 2", "2 * 3 % 4", "-7 % 3 * 2",
	strings.Repeat("1+", 249) + "1", strings.Repeat("1+", 250) + "1", strings.Repeat("1+", 251) + "1",
	strings.Repeat("sqrt(", 166) + "1" + strings.Repeat(")", 166), strings.Repeat("sqrt(", 167) + "1" + strings.Repeat(")", 167),
	strings.Repeat("abs(", 199) + "1" + strings.Repeat(")", 199), "sqrt(2*4611686018427387904)", "sqrt(-(3*3037000500*3037000500))",
	"sqrt(7 % 4 * 4611686018427387904)", "sqrt(abs(-2) * 4611686018427387904)", "sqrt(4611686018427387904 * 4 / 1)", "atan2(1, -0*19)", "atan2(1, -0)",
	"pow(2 * 4611686018427387904, 0.5)", "sqrt((2*4611686018427387904))", "ceil(2*4611686018427387904)", "sqrt(max(2, 1) * 4611686018427387904)",
	strings.Repeat("-", 499) + "1", strings.Repeat("-", 500) + "1", strings.Repeat("(", 499) + "1" + strings.Repeat(")", 499),
	strings.Repeat("1<", 166) + "1", strings.Repeat("1<", 167) + "1", strings.Repeat("2**", 249) + "1", strings.Repeat("2**", 250) + "1",
}

func TestCalculatorMatchesExpr(t *testing.T) {
	for _, src := range calcEdgeCases {
		compareWithExpr(t, src)
	}
}

// TestCalcBounds checks the bounds that hold even past the input schema's
// 1000 characters: nesting depth and node count, without deep recursion.
func TestCalcBounds(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{strings.Repeat("(", 500) + "1" + strings.Repeat(")", 500), ""},
		{strings.Repeat("(", 501) + "1" + strings.Repeat(")", 501), "nested more than 500 levels deep at position 502"},
		{strings.Repeat("(", 1_000_000) + "1", "nested more than 500 levels deep"},
		{strings.Repeat("-", 1_000_000) + "1", "nested more than 500 levels deep"},
		{strings.Repeat("1+", 249) + "1", ""},
		{strings.Repeat("1+", 250) + "1", "more than 500 operators and operands) at position 500"},
		// expr took exponential time on this (0.4 s at 18 levels); it is linear here
		{strings.Repeat("1<(", 150) + "1" + strings.Repeat(")<1", 150), "< needs numbers on both sides, not a comparison"},
		{strings.Repeat("sqrt(", 300) + "1" + strings.Repeat(")", 300), "more than 500 operators and operands"},
	} {
		_, err := evalCalc(tt.src)
		if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%.20q...: got %v, want %q", tt.src, err, tt.want)
		}
	}
}

// randomCalc writes a random expression of the calculator's language.
func randomCalc(r *rand.Rand, depth int) string {
	leaf := func() string {
		switch r.IntN(9) {
		case 0:
			return "pi"
		case 1:
			return "e"
		case 2:
			return fmt.Sprint(r.Float64() * 100)
		case 3:
			return fmt.Sprint(r.Int64() >> r.IntN(64))
		case 4:
			return []string{"0", "-1", "0.0", "1e308", "0x7fffffffffffffff", "1_000", ".5", "3."}[r.IntN(8)]
		default:
			return fmt.Sprint(r.IntN(20))
		}
	}
	if depth <= 0 || r.IntN(4) == 0 {
		return leaf()
	}
	d := depth - 1
	switch r.IntN(7) {
	case 0:
		return "(" + randomCalc(r, d) + ")"
	case 1:
		return []string{"-", "+", "- "}[r.IntN(3)] + randomCalc(r, d)
	case 2:
		names := []string{"abs", "ceil", "floor", "round", "sqrt", "exp", "log", "ln", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan"}
		return names[r.IntN(len(names))] + "(" + randomCalc(r, d) + ")"
	case 3:
		names := []string{"pow", "atan2", "hypot", "min", "max"}
		return names[r.IntN(len(names))] + "(" + randomCalc(r, d) + ", " + randomCalc(r, d) + ")"
	case 4:
		n := 1 + r.IntN(4)
		args := make([]string, n)
		for i := range args {
			args[i] = randomCalc(r, d)
		}
		return []string{"min", "max"}[r.IntN(2)] + "(" + strings.Join(args, ",") + ")"
	default:
		ops := []string{"+", "-", "*", "/", "%", "**", "^", " + ", " * ", "<", "==", ">="}
		return randomCalc(r, d) + ops[r.IntN(len(ops))] + randomCalc(r, d)
	}
}

func TestCalculatorMatchesExprRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 2026))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		src := randomCalc(r, 5)
		compareWithExpr(t, src)
	}
}

// FuzzCalculator compares the evaluator with expr on any input: the same
// answer, the same kind of refusal, or a refusal of something outside the
// calculator's language.
func FuzzCalculator(f *testing.F) {
	for _, src := range calcEdgeCases {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		compareWithExpr(t, src)
	})
}

// BenchmarkCalculator compares the tool's evaluation of a typical expression
// with the expr-based one it replaced (compile and run each call, as the tool
// did), in the same run.
func BenchmarkCalculator(b *testing.B) {
	const src = "(2 + 3) * sqrt(16) / 2 + max(1, 7, 3) - 2^10 + 17 % 7"
	b.Run("handwritten", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if o := newOutcome(src); o.errType != "" {
				b.Fatal(o.msg)
			}
		}
	})
	b.Run("expr", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if o := exprOutcome(src); o.errType != "" {
				b.Fatal(o.msg)
			}
		}
	})
}
