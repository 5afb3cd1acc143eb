package program

import (
	"fmt"
	"math"
	"runtime/metrics"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Starlark has no allocator bound: one step can build a value of any size
// ("x" * 10**9, s + s in a loop, sep.join(xs)). The sandbox rewrites the
// program before compiling it so that each operation that can grow a value
// beyond its inputs (+, *, %, their augmented forms, every method call)
// goes through a checked builtin that refuses a result over the size limit
// before allocating it; range refuses more elements than the limit; the
// built-ins that copy (list, sorted, str, ...) are wrapped likewise. All
// of them count what they allocate, and the process's heap is read every
// heapCheckEvery bytes (see limits).
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
		if dot, ok := e.Fn.(*syntax.DotExpr); ok {
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

// limits checks the sizes of values a program builds, and the process's
// heap as the program allocates: every operation that can allocate more
// than a few bytes in one step (the checked operators and methods, the
// copying built-ins, str, print, JSON) counts what it is about to
// allocate, and every heapCheckEvery bytes so counted the heap is read.
// A program runs on one goroutine: no locking.
type limits struct {
	maxBytes int    // the largest string, or list/tuple/dict at 16 bytes an element
	maxHeap  uint64 // how much the process's heap may grow while the program runs
	base     uint64 // the heap when the program started
	since    int    // bytes counted since the heap was last read
}

// heapCheckEvery is how many bytes a program may allocate, by the counts
// of its operations, between two readings of the heap.
const heapCheckEvery = 32 << 20

// spend counts n bytes about to be allocated.
func (l *limits) spend(n int) error {
	l.since += n
	if l.since < heapCheckEvery {
		return nil
	}
	l.since = 0
	if h := heapBytes(); h > l.base+l.maxHeap {
		return fmt.Errorf("the program was stopped: the process's memory grew by %d MiB while it ran, over the limit of %d MiB", (h-l.base)>>20, l.maxHeap>>20)
	}
	return nil
}

// heapBytes is the memory of the heap's objects, live and not yet swept.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// MaxNesting bounds how deeply a value a program writes out (str, repr,
// print, JSON, a tool's arguments, the result) or reads (json.decode, a
// tool's output) may nest. Starlark walks such values by recursion: a list
// a million deep took str and json.encode hours (each level scans the
// path above it for cycles), and json.decode of text a few million
// brackets deep overflowed the goroutine's stack, a fatal error that ended
// the process.
const MaxNesting = 1000

// nestedTooDeep is what deepSize returns for a value nested deeper than
// MaxNesting: more than any budget.
const nestedTooDeep = math.MaxInt / 2

// deepSize estimates the length of v written out (str, JSON): strings and
// bytes their length, containers their elements'. It stops counting past
// budget, so its cost is bounded whatever v shares; a value nested deeper
// than MaxNesting is nestedTooDeep.
func deepSize(v starlark.Value, budget int) int {
	type item struct {
		v     starlark.Value
		depth int
	}
	n := 0
	stack := []item{{v, 1}}
	for len(stack) > 0 && n <= budget {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v := top.v.(type) {
		case starlark.String:
			n += len(v) + 2
		case starlark.Bytes:
			n += len(v) + 3
		case starlark.Int:
			n += v.BigInt().BitLen()/3 + 1
		case *starlark.Dict:
			if top.depth > MaxNesting {
				return nestedTooDeep
			}
			n += 2
			for _, kv := range v.Items() {
				stack = append(stack, item{kv[0], top.depth + 1}, item{kv[1], top.depth + 1})
				n += 4
				if len(stack) > budget {
					break
				}
			}
		case starlark.Iterable:
			if top.depth > MaxNesting {
				return nestedTooDeep
			}
			n += 2
			it := v.Iterate()
			var x starlark.Value
			for it.Next(&x) && n+len(stack) <= budget {
				stack = append(stack, item{x, top.depth + 1})
				n += 2
			}
			it.Done()
		default:
			n += 24
		}
	}
	return n
}

// textNesting reports whether the JSON text b nests deeper than MaxNesting
// (brackets outside strings; the text need not be valid).
func textNesting(b string) bool {
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > MaxNesting {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
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

func (l *limits) tooBig(what string, n int) error {
	if n >= nestedTooDeep {
		return tooDeep(what)
	}
	return fmt.Errorf("%s would hold about %d bytes, over the program's limit of %d bytes per value", what, n, l.maxBytes)
}

func tooDeep(what string) error {
	return fmt.Errorf("%s: nested deeper than %d levels, the program's limit", what, MaxNesting)
}

// estimate is the size of x op y before computing it (an overestimate for
// %, which can at most add its operands for the conversions Starlark has).
func (l *limits) estimate(op syntax.Token, x, y starlark.Value) (int, error) {
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
		return size(x) + deepSize(y, l.maxBytes), nil
	default:
		return size(x) + size(y), nil
	}
}

func (l *limits) binary(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	op, x, y := syntax.Token(args[0].(starlark.Int).BigInt().Int64()), args[1], args[2]
	n, err := l.estimate(op, x, y)
	if err != nil {
		return nil, err
	}
	if n > l.maxBytes {
		return nil, l.tooBig("the result of "+op.String(), n)
	}
	if err := l.spend(n); err != nil {
		return nil, err
	}
	return starlark.Binary(op, x, y)
}

func (l *limits) grow(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	op, x, y := syntax.Token(args[0].(starlark.Int).BigInt().Int64()), args[1], args[2]
	n, err := l.estimate(op, x, y)
	if err != nil {
		return nil, err
	}
	if n > l.maxBytes {
		return nil, l.tooBig("the result of "+op.String()+"=", n)
	}
	if err := l.spend(n); err != nil {
		return nil, err
	}
	return y, nil
}

func (l *limits) method(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	x, name := args[0], string(args[1].(starlark.String))
	rest := args[2:]
	n := 0
	switch name {
	case "join":
		n = size(x)
		if len(rest) == 1 {
			if it, ok := rest[0].(starlark.Sequence); ok {
				n *= it.Len()
				iter := it.Iterate()
				var v starlark.Value
				for iter.Next(&v) && n <= l.maxBytes {
					n += size(v)
				}
				iter.Done()
			}
		}
	case "replace":
		n = size(x)
		if s, ok := x.(starlark.String); ok && len(rest) >= 2 {
			old, _ := rest[0].(starlark.String)
			repl, _ := rest[1].(starlark.String)
			n += strings.Count(string(s), string(old)) * len(repl)
		}
	case "format":
		n = size(x)
		for _, a := range rest {
			if n += deepSize(a, l.maxBytes); n >= nestedTooDeep {
				return nil, tooDeep("an argument of format")
			}
		}
		for _, kv := range kwargs {
			if n += deepSize(kv[1], l.maxBytes); n >= nestedTooDeep {
				return nil, tooDeep("an argument of format")
			}
		}
	case "encode", "indent": // json
		if len(rest) > 0 {
			n = deepSize(rest[0], l.maxBytes)
		}
	case "decode":
		if len(rest) > 0 {
			n = 4 * size(rest[0])
			if t, ok := rest[0].(starlark.String); ok && textNesting(string(t)) {
				return nil, tooDeep("the JSON text")
			}
		}
	case "split", "rsplit", "splitlines":
		n = 16 * size(x) // up to one element a byte
	case "extend", "update":
		if len(rest) > 0 {
			n = size(rest[0])
		}
	default:
		n = size(x) // upper, strip, keys, items...: at most a copy
	}
	if n > l.maxBytes {
		return nil, l.tooBig(name, n)
	}
	if err := l.spend(n); err != nil {
		return nil, err
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

// copying wraps a built-in that copies its arguments (list, sorted, str,
// ...) so that what it is about to build is counted and bounded; deep
// counts what the arguments hold (str, repr), not only their length.
func (l *limits) copying(name string, deep bool) *starlark.Builtin {
	orig := starlark.Universe[name]
	return starlark.NewBuiltin(name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		n := 0
		for _, a := range args {
			if deep {
				if n += deepSize(a, l.maxBytes); n >= nestedTooDeep {
					return nil, tooDeep("the argument of " + name)
				}
			} else {
				n += size(a)
			}
		}
		for _, kv := range kwargs {
			n += size(kv[1])
		}
		if n > l.maxBytes {
			return nil, l.tooBig(name, n)
		}
		if err := l.spend(n); err != nil {
			return nil, err
		}
		return starlark.Call(thread, orig, args, kwargs)
	})
}

// rangeFn is range refusing more elements than a value may hold, since
// list(range(n)) builds them all in one step.
func (l *limits) rangeFn(thread *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v, err := starlark.Call(thread, starlark.Universe["range"], args, kwargs)
	if err != nil {
		return nil, err
	}
	if n := v.(starlark.Sequence).Len(); 16*n > l.maxBytes {
		return nil, fmt.Errorf("range of %d elements is over the program's limit of %d elements", n, l.maxBytes/16)
	}
	return v, nil
}
