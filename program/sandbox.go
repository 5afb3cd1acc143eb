package program

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Starlark has no allocator bound: one step can build a value of any size
// ("x" * 10**9, s + s in a loop, sep.join(xs)). The sandbox rewrites the
// program before compiling it so that each operation that can grow a value
// beyond its inputs (+, *, their augmented forms, join, replace) goes
// through a checked builtin that refuses a result over the size limit
// before allocating it, and range refuses more elements than the limit.
// The checked builtins have names no program can write (they contain a
// character identifiers may not), so a program can neither call nor shadow
// them.
const (
	checkedBinary = "\x00binary" // (op, x, y) -> x op y, size checked first
	checkedGrow   = "\x00grow"   // (op, x, y) -> y, after checking x op y fits
	checkedMethod = "\x00method" // (x, name, args...) -> x.name(args...), size checked first
)

// options are the language options programs get: while loops and
// top-level statements (a program is a script), sets; no recursion.
var options = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// rewrite replaces the growing operations of f by checked calls.
func rewrite(f *syntax.File) {
	for _, s := range f.Stmts {
		rewriteStmt(s)
	}
}

func rewriteStmts(ss []syntax.Stmt) {
	for _, s := range ss {
		rewriteStmt(s)
	}
}

func rewriteStmt(s syntax.Stmt) {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		s.LHS = rewriteExpr(s.LHS)
		s.RHS = rewriteExpr(s.RHS)
		if s.Op == syntax.PLUS_EQ || s.Op == syntax.STAR_EQ {
			op := syntax.PLUS
			if s.Op == syntax.STAR_EQ {
				op = syntax.STAR
			}
			// x += y becomes x += grow("+", x, y): x is read twice, as
			// the augmented assignment itself reads it.
			s.RHS = call(checkedGrow, s.OpPos, opLiteral(op, s.OpPos), s.LHS, s.RHS)
		}
	case *syntax.ExprStmt:
		s.X = rewriteExpr(s.X)
	case *syntax.DefStmt:
		for i, p := range s.Params {
			s.Params[i] = rewriteExpr(p)
		}
		rewriteStmts(s.Body)
	case *syntax.ForStmt:
		s.X = rewriteExpr(s.X)
		rewriteStmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = rewriteExpr(s.Cond)
		rewriteStmts(s.Body)
	case *syntax.IfStmt:
		s.Cond = rewriteExpr(s.Cond)
		rewriteStmts(s.True)
		rewriteStmts(s.False)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			s.Result = rewriteExpr(s.Result)
		}
	}
}

func rewriteExprs(es []syntax.Expr) {
	for i, e := range es {
		es[i] = rewriteExpr(e)
	}
}

func rewriteExpr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.BinaryExpr:
		e.X, e.Y = rewriteExpr(e.X), rewriteExpr(e.Y)
		if e.Op == syntax.PLUS || e.Op == syntax.STAR || e.Op == syntax.PERCENT {
			return call(checkedBinary, e.OpPos, opLiteral(e.Op, e.OpPos), e.X, e.Y)
		}
		if e.Op == syntax.EQ { // keyword argument or default: name=value
			return e
		}
	case *syntax.CallExpr:
		rewriteExprs(e.Args)
		if dot, ok := e.Fn.(*syntax.DotExpr); ok && (dot.Name.Name == "join" || dot.Name.Name == "replace") {
			dot.X = rewriteExpr(dot.X)
			args := append([]syntax.Expr{dot.X, str(dot.Name.Name, dot.Dot)}, e.Args...)
			return call(checkedMethod, e.Lparen, args...)
		}
		e.Fn = rewriteExpr(e.Fn)
	case *syntax.Comprehension:
		e.Body = rewriteExpr(e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.X = rewriteExpr(c.X)
			case *syntax.IfClause:
				c.Cond = rewriteExpr(c.Cond)
			}
		}
	case *syntax.CondExpr:
		e.Cond, e.True, e.False = rewriteExpr(e.Cond), rewriteExpr(e.True), rewriteExpr(e.False)
	case *syntax.DictEntry:
		e.Key, e.Value = rewriteExpr(e.Key), rewriteExpr(e.Value)
	case *syntax.DictExpr:
		rewriteExprs(e.List)
	case *syntax.DotExpr:
		e.X = rewriteExpr(e.X)
	case *syntax.IndexExpr:
		e.X, e.Y = rewriteExpr(e.X), rewriteExpr(e.Y)
	case *syntax.LambdaExpr:
		rewriteExprs(e.Params)
		e.Body = rewriteExpr(e.Body)
	case *syntax.ListExpr:
		rewriteExprs(e.List)
	case *syntax.ParenExpr:
		e.X = rewriteExpr(e.X)
	case *syntax.SliceExpr:
		for _, p := range []*syntax.Expr{&e.X, &e.Lo, &e.Hi, &e.Step} {
			if *p != nil {
				*p = rewriteExpr(*p)
			}
		}
	case *syntax.TupleExpr:
		rewriteExprs(e.List)
	case *syntax.UnaryExpr:
		if e.X != nil {
			e.X = rewriteExpr(e.X)
		}
	}
	return e
}

func call(fn string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: pos, Name: fn}, Lparen: pos, Args: args, Rparen: pos}
}

func str(s string, pos syntax.Position) *syntax.Literal {
	return &syntax.Literal{Token: syntax.STRING, TokenPos: pos, Raw: fmt.Sprintf("%q", s), Value: s}
}

func opLiteral(op syntax.Token, pos syntax.Position) *syntax.Literal {
	return &syntax.Literal{Token: syntax.INT, TokenPos: pos, Raw: fmt.Sprint(int(op)), Value: int64(op)}
}

// maxIntBits bounds the integers a product may build.
const maxIntBits = 1 << 16

// limits checks the sizes of values a program builds.
type limits struct {
	maxBytes int // the largest string, or list/tuple/dict at 16 bytes an element
}

// size estimates what v holds, in bytes: strings and bytes their length,
// containers 16 bytes an element (their elements are counted where they
// were built).
func size(v starlark.Value) int {
	switch v := v.(type) {
	case starlark.String:
		return len(v)
	case starlark.Bytes:
		return len(v)
	case starlark.Int:
		return v.BigInt().BitLen() / 8
	case starlark.Sequence:
		return 16 * v.Len()
	case starlark.Indexable:
		return 16 * v.Len()
	}
	return 0
}

func (l limits) tooBig(what string, n int) error {
	return fmt.Errorf("%s would hold about %d bytes, over the program's limit of %d bytes per value", what, n, l.maxBytes)
}

// estimate is the size of x op y before computing it (an overestimate for
// %, which can at most add its operands for the conversions Starlark has).
func (l limits) estimate(op syntax.Token, x, y starlark.Value) (int, error) {
	switch op {
	case syntax.STAR:
		_, xi := x.(starlark.Int)
		_, yi := y.(starlark.Int)
		if xi && yi {
			// Multiplying huge integers is slow long before it is big.
			if bits := x.(starlark.Int).BigInt().BitLen() + y.(starlark.Int).BigInt().BitLen(); bits > maxIntBits {
				return 0, fmt.Errorf("the product would have about %d bits, over the program's limit of %d bits per integer", bits, maxIntBits)
			}
			return 0, nil
		}
		n, isInt := y.(starlark.Int)
		seq := x
		if !isInt {
			n, isInt = x.(starlark.Int)
			seq = y
		}
		if !isInt {
			return 0, nil
		}
		times, ok := n.Int64()
		if !ok || times > int64(l.maxBytes) {
			if s := size(seq); s > 0 {
				return 0, l.tooBig("the repetition", l.maxBytes+1)
			}
			return 0, nil
		}
		if times <= 0 {
			return 0, nil
		}
		s := size(seq)
		if s > 0 && int64(s)*times > int64(l.maxBytes) {
			return 0, l.tooBig("the repetition", int(min(int64(s)*times, 1<<62)))
		}
		return s * int(times), nil
	case syntax.PERCENT:
		n := size(x)
		if t, ok := y.(starlark.Tuple); ok {
			for _, v := range t {
				n += size(v)
			}
			return n, nil
		}
		return n + size(y), nil
	default:
		return size(x) + size(y), nil
	}
}

func (l limits) binary(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	op, x, y := syntax.Token(args[0].(starlark.Int).BigInt().Int64()), args[1], args[2]
	n, err := l.estimate(op, x, y)
	if err != nil {
		return nil, err
	}
	if n > l.maxBytes {
		return nil, l.tooBig("the result of "+op.String(), n)
	}
	return starlark.Binary(op, x, y)
}

func (l limits) grow(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	op, x, y := syntax.Token(args[0].(starlark.Int).BigInt().Int64()), args[1], args[2]
	n, err := l.estimate(op, x, y)
	if err != nil {
		return nil, err
	}
	if n > l.maxBytes {
		return nil, l.tooBig("the result of "+op.String()+"=", n)
	}
	return y, nil
}

func (l limits) method(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	x, name := args[0], string(args[1].(starlark.String))
	rest := args[2:]
	if s, ok := x.(starlark.String); ok {
		n := 0
		switch {
		case name == "join" && len(rest) == 1:
			if it, ok := rest[0].(starlark.Sequence); ok {
				n = len(s) * it.Len()
				iter := it.Iterate()
				var v starlark.Value
				for iter.Next(&v) {
					n += size(v)
				}
				iter.Done()
			}
		case name == "replace" && len(rest) >= 2:
			old, _ := rest[0].(starlark.String)
			repl, _ := rest[1].(starlark.String)
			count := strings.Count(string(s), string(old))
			n = len(s) + count*len(repl)
		}
		if n > l.maxBytes {
			return nil, l.tooBig(name, n)
		}
	}
	ha, ok := x.(starlark.HasAttrs)
	if !ok {
		return nil, fmt.Errorf("%s has no .%s field or method", x.Type(), name)
	}
	m, err := ha.Attr(name)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%s has no .%s field or method", x.Type(), name)
	}
	return starlark.Call(thread, m, rest, kwargs)
}

// rangeFn is range refusing more elements than a value may hold, since
// list(range(n)) builds them all in one step.
func (l limits) rangeFn(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v, err := starlark.Call(thread, starlark.Universe["range"], args, kwargs)
	if err != nil {
		return nil, err
	}
	if n := v.(starlark.Sequence).Len(); 16*n > l.maxBytes {
		return nil, fmt.Errorf("range of %d elements is over the program's limit of %d elements", n, l.maxBytes/16)
	}
	return v, nil
}
