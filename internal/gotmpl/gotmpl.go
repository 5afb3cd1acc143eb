// Package gotmpl executes Go text templates (the syntax of text/template,
// parsed by text/template/parse) over JSON values: the texts of prompts,
// resource templates and content tools, filled with a call's arguments.
//
// It exists for the binary's size: text/template looks methods up by
// name (reflect.Value.MethodByName), so the linker keeps every exported
// method of every type in a program that links its executor — about 13
// MB of wield's binary. Values decoded from JSON have no methods, so an
// executor that only reads map keys gives the same results without that
// cost.
//
// Templates run as text/template runs them with Option("missingkey=zero"),
// except that a missing or null value prints as nothing instead of
// "<no value>", methods are never called (a field is a map key or an
// exported struct field) and the built-in "call" is not offered. Every
// other action (if, else, range with break and continue, with, define,
// template, block, variables, pipelines) and built-in function (and, or,
// not, len, index, slice, eq, ne, lt, le, gt, ge, print, printf, println,
// html, js, urlquery) is there, with text/template's rules and errors;
// the tests compare the two on a corpus and by fuzzing. Unlike
// text/template, an execution is bounded: [MaxSteps] nodes walked and
// [MaxOutput] bytes written, no function's string longer than that, and
// {{template}} (or {{block}}) calls nested at most 1,000 deep, so a
// template that calls itself without end stops with "exceeded maximum
// template depth (1000)", never by overflowing the stack.
package gotmpl

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"text/template/parse"
)

// Func is a function a template may call with Args arguments; Call gets
// them evaluated and returns a value or an error that stops the execution.
type Func struct {
	Args int
	Call func(args ...any) (any, error)
}

// Template is a parsed template with the templates it defines.
type Template struct {
	name  string
	trees map[string]*parse.Tree
	funcs map[string]Func
}

// maxDepth bounds nested {{template}} calls (a template may call itself).
const maxDepth = 1000

// Bounds of one execution, whatever the template and its data: a range
// over a big number or over the data within ranges over it, a
// {{template}} that calls itself more than once, a variable that doubles
// in a range would otherwise run for ages or fill the memory (text/template
// has no such bounds). Past them the execution stops with an error.
const (
	// MaxSteps bounds the nodes an execution walks (a range's body
	// counts once per element).
	MaxSteps = 1_000_000
	// MaxOutput bounds the bytes an execution writes, and the length of
	// a string a function returns.
	MaxOutput = 1 << 20
)

var builtinNames = []string{"and", "or", "not", "len", "index", "slice", "eq", "ne", "lt", "le", "gt", "ge",
	"print", "printf", "println", "html", "js", "urlquery"}

// Parse parses text as the template name; funcs are the functions it may
// call besides the built-in ones.
func Parse(name, text string, funcs map[string]Func) (*Template, error) {
	known := make(map[string]any, len(builtinNames)+len(funcs))
	for _, n := range builtinNames {
		known[n] = true
	}
	for n := range funcs {
		known[n] = true
	}
	trees, err := parse.Parse(name, text, "", "", known)
	if err != nil {
		return nil, err
	}
	if trees[name] == nil {
		// A text made only of definitions: executing it writes nothing.
		trees[name] = &parse.Tree{Name: name, Root: &parse.ListNode{NodeType: parse.NodeList}}
	}
	return &Template{name: name, trees: trees, funcs: funcs}, nil
}

// Execute writes the template applied to data to w.
func (t *Template) Execute(w io.Writer, data any) (err error) {
	s := &state{t: t, tree: t.trees[t.name], w: &limitWriter{w: w}, vars: []variable{{"$", data}}, steps: new(int)}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(execError)
			if !ok {
				panic(r)
			}
			err = e.err
		}
	}()
	s.walk(data, s.tree.Root)
	return nil
}

type variable struct {
	name  string
	value any
}

// execError carries an error out of the walk, as a panic.
type execError struct{ err error }

type state struct {
	t     *Template
	tree  *parse.Tree
	w     io.Writer
	node  parse.Node
	vars  []variable
	depth int
	steps *int // walked so far, shared with the {{template}}s it runs
}

// limitWriter refuses to write past MaxOutput bytes in all.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n+len(p) > MaxOutput {
		return 0, fmt.Errorf("template output past %d bytes", MaxOutput)
	}
	l.n += len(p)
	return l.w.Write(p)
}

// missing marks a command with no value piped into it.
type missingType struct{}

var missing any = missingType{}

// noValue is what a pipeline gives for nil: unlike a null read from a
// map, which stops a chain of fields with an error, its fields are
// noValue too (text/template's invalid reflect.Value).
type noValueType struct{}

var noValue any = noValueType{}

// arg is v as a function's argument.
func arg(v any) any {
	if v == noValue {
		return nil
	}
	return v
}

var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

func (s *state) errorf(format string, args ...any) {
	prefix := "template: " + s.tree.Name + ": "
	if s.node != nil {
		location, context := s.tree.ErrorContext(s.node)
		prefix = fmt.Sprintf("template: %s: executing %q at <%s>: ", location, s.tree.Name, context)
	}
	panic(execError{fmt.Errorf(prefix+format, args...)})
}

func (s *state) at(n parse.Node) { s.node = n }

func (s *state) mark() int { return len(s.vars) }

func (s *state) pop(mark int) { s.vars = s.vars[:mark] }

func (s *state) setVar(name string, v any) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			s.vars[i].value = v
			return
		}
	}
	s.errorf("undefined variable: %s", name)
}

func (s *state) varValue(name string) any {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i].value
		}
	}
	s.errorf("undefined variable: %s", name)
	return nil
}

func (s *state) walk(dot any, node parse.Node) {
	s.at(node)
	if *s.steps++; *s.steps > MaxSteps {
		s.errorf("template stopped after %d steps (a range or {{template}} that runs too long)", MaxSteps)
	}
	switch n := node.(type) {
	case *parse.ActionNode:
		v := s.evalPipeline(dot, n.Pipe)
		if len(n.Pipe.Decl) == 0 {
			s.print(v)
		}
	case *parse.BreakNode:
		panic(errBreak)
	case *parse.ContinueNode:
		panic(errContinue)
	case *parse.CommentNode:
	case *parse.IfNode:
		s.walkIfOrWith(false, dot, n.Pipe, n.List, n.ElseList)
	case *parse.WithNode:
		s.walkIfOrWith(true, dot, n.Pipe, n.List, n.ElseList)
	case *parse.ListNode:
		for _, c := range n.Nodes {
			s.walk(dot, c)
		}
	case *parse.RangeNode:
		s.walkRange(dot, n)
	case *parse.TemplateNode:
		s.walkTemplate(dot, n)
	case *parse.TextNode:
		if _, err := s.w.Write(n.Text); err != nil {
			panic(execError{err})
		}
	default:
		s.errorf("unknown node: %s", node)
	}
}

func (s *state) print(v any) {
	if v == nil || v == noValue {
		return
	}
	if _, err := fmt.Fprint(s.w, v); err != nil {
		panic(execError{err})
	}
}

func (s *state) walkIfOrWith(with bool, dot any, pipe *parse.PipeNode, list, elseList *parse.ListNode) {
	defer s.pop(s.mark())
	v := s.evalPipeline(dot, pipe)
	ok, valid := truth(arg(v))
	if !valid {
		s.errorf("if/with can't use %v", v)
	}
	switch {
	case ok && with:
		s.walk(v, list)
	case ok:
		s.walk(dot, list)
	case elseList != nil:
		s.walk(dot, elseList)
	}
}

func (s *state) walkRange(dot any, r *parse.RangeNode) {
	s.at(r)
	defer func() {
		if e := recover(); e != nil && e != errBreak {
			panic(e)
		}
	}()
	defer s.pop(s.mark())
	v := s.evalPipeline(dot, r.Pipe)
	mark := s.mark()
	one := func(index, elem any) {
		if n := len(r.Pipe.Decl); n > 0 {
			if r.Pipe.IsAssign {
				if n > 1 {
					s.setVar(r.Pipe.Decl[0].Ident[0], index)
					s.setVar(r.Pipe.Decl[1].Ident[0], elem)
				} else {
					s.setVar(r.Pipe.Decl[0].Ident[0], elem)
				}
			} else {
				s.vars[len(s.vars)-1].value = elem
				if n > 1 {
					s.vars[len(s.vars)-2].value = index
				}
			}
		}
		defer s.pop(mark)
		defer func() {
			if e := recover(); e != nil && e != errContinue {
				panic(e)
			}
		}()
		s.walk(elem, r.List)
	}
	switch x := v.(type) {
	case nil, noValueType:
	case []any:
		for i, e := range x {
			one(i, e)
		}
		if len(x) > 0 {
			return
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			one(k, x[k])
		}
		if len(x) > 0 {
			return
		}
	case int:
		if len(r.Pipe.Decl) > 1 {
			s.errorf("can't use %v to iterate over more than one variable", x)
		}
		for i := 0; i < x; i++ {
			one(nil, i)
		}
		if x > 0 {
			return
		}
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array:
			for i := 0; i < rv.Len(); i++ {
				one(i, rv.Index(i).Interface())
			}
			if rv.Len() > 0 {
				return
			}
		default:
			s.errorf("range can't iterate over %v", v)
		}
	}
	if r.ElseList != nil {
		s.walk(dot, r.ElseList)
	}
}

func (s *state) walkTemplate(dot any, n *parse.TemplateNode) {
	s.at(n)
	tree := s.t.trees[n.Name]
	if tree == nil {
		s.errorf("template %q not defined", n.Name)
	}
	if s.depth == maxDepth {
		s.errorf("exceeded maximum template depth (%v)", maxDepth)
	}
	if n.Pipe == nil {
		// {{template "x"}} gives x no data, as text/template does (an
		// invalid value: its fields are missing, not a null's).
		dot = noValue
	} else {
		dot = s.evalPipeline(dot, n.Pipe)
	}
	inner := *s
	inner.depth++
	inner.tree = tree
	inner.vars = []variable{{"$", dot}}
	inner.walk(dot, tree.Root)
}

func (s *state) evalPipeline(dot any, pipe *parse.PipeNode) any {
	if pipe == nil {
		return nil
	}
	s.at(pipe)
	v := missing
	for _, cmd := range pipe.Cmds {
		v = s.evalCommand(dot, cmd, v)
		if v == nil {
			v = noValue
		}
	}
	for _, d := range pipe.Decl {
		if pipe.IsAssign {
			s.setVar(d.Ident[0], v)
		} else {
			s.vars = append(s.vars, variable{d.Ident[0], v})
		}
	}
	return v
}

func (s *state) notAFunction(args []parse.Node, final any) {
	if len(args) > 1 || final != missing {
		s.errorf("can't give argument to non-function %s", args[0])
	}
}

func (s *state) evalCommand(dot any, cmd *parse.CommandNode, final any) any {
	first := cmd.Args[0]
	switch n := first.(type) {
	case *parse.FieldNode:
		return s.evalFieldChain(dot, dot, n, n.Ident, cmd.Args, final)
	case *parse.ChainNode:
		return s.evalChain(dot, n, cmd.Args, final)
	case *parse.IdentifierNode:
		return s.evalFunction(dot, n, cmd.Args, final)
	case *parse.PipeNode:
		s.notAFunction(cmd.Args, final)
		return s.evalPipeline(dot, n)
	case *parse.VariableNode:
		return s.evalVariable(dot, n, cmd.Args, final)
	}
	s.at(first)
	s.notAFunction(cmd.Args, final)
	switch n := first.(type) {
	case *parse.BoolNode:
		return n.True
	case *parse.DotNode:
		return dot
	case *parse.NilNode:
		s.errorf("nil is not a command")
	case *parse.NumberNode:
		return s.number(n)
	case *parse.StringNode:
		return n.Text
	}
	s.errorf("can't evaluate command %q", first)
	return nil
}

// number is a number literal's value, typed as text/template types it.
func (s *state) number(n *parse.NumberNode) any {
	s.at(n)
	isHex := len(n.Text) > 2 && n.Text[0] == '0' && (n.Text[1] == 'x' || n.Text[1] == 'X')
	switch {
	case n.IsComplex:
		return n.Complex128
	case n.IsFloat && !(isHex && !strings.ContainsAny(n.Text, "pP")) && n.Text[0] != '\'' && strings.ContainsAny(n.Text, ".eEpP"):
		return n.Float64
	case n.IsInt:
		i := int(n.Int64)
		if int64(i) != n.Int64 {
			s.errorf("%s overflows int", n.Text)
		}
		return i
	case n.IsUint:
		s.errorf("%s overflows int", n.Text)
	}
	return nil
}

func (s *state) evalChain(dot any, chain *parse.ChainNode, args []parse.Node, final any) any {
	s.at(chain)
	if len(chain.Field) == 0 {
		s.errorf("internal error: no fields in evalChainNode")
	}
	if chain.Node.Type() == parse.NodeNil {
		s.errorf("indirection through explicit nil in %s", chain)
	}
	pipe := s.evalArg(dot, chain.Node)
	return s.evalFieldChain(dot, pipe, chain, chain.Field, args, final)
}

func (s *state) evalVariable(dot any, v *parse.VariableNode, args []parse.Node, final any) any {
	s.at(v)
	value := s.varValue(v.Ident[0])
	if len(v.Ident) == 1 {
		s.notAFunction(args, final)
		return value
	}
	return s.evalFieldChain(dot, value, v, v.Ident[1:], args, final)
}

// evalFieldChain reads the fields ident of receiver in turn; args are
// given to the last, which, being a key, takes none.
func (s *state) evalFieldChain(dot, receiver any, node parse.Node, ident []string, args []parse.Node, final any) any {
	for i, name := range ident {
		last := i == len(ident)-1
		if last && (len(args) > 1 || final != missing) {
			s.at(node)
			if receiver != nil {
				if _, ok := receiver.(map[string]any); ok {
					s.errorf("%s is not a method but has arguments", name)
				}
			}
		}
		receiver = s.field(receiver, name, node)
	}
	return receiver
}

func (s *state) field(receiver any, name string, node parse.Node) any {
	s.at(node)
	switch m := receiver.(type) {
	case map[string]any:
		return m[name]
	case nil:
		s.errorf("nil pointer evaluating interface {}.%s", name)
	case noValueType:
		return noValue
	case missingType:
		s.errorf("can't evaluate field %s of a missing value", name)
	}
	rv := reflect.ValueOf(receiver)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			s.errorf("nil pointer evaluating %s.%s", rv.Type(), name)
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Map:
		if reflect.TypeFor[string]().AssignableTo(rv.Type().Key()) {
			if x := rv.MapIndex(reflect.ValueOf(name)); x.IsValid() {
				return x.Interface()
			}
			return reflect.Zero(rv.Type().Elem()).Interface()
		}
	case reflect.Struct:
		if f, ok := rv.Type().FieldByName(name); ok && f.IsExported() {
			return rv.FieldByIndex(f.Index).Interface()
		}
	}
	s.errorf("can't evaluate field %s in type %T", name, receiver)
	return nil
}

func (s *state) evalFunction(dot any, n *parse.IdentifierNode, args []parse.Node, final any) any {
	s.at(n)
	name := n.Ident
	args = args[1:]
	if name == "and" || name == "or" {
		if len(args) == 0 && final == missing {
			s.errorf("wrong number of args for %s: want at least 1 got 0", name)
		}
		var v any
		for _, a := range args {
			v = s.evalArg(dot, a)
			if t, _ := truth(arg(v)); t == (name == "or") {
				return v
			}
		}
		if final != missing {
			v = final
		}
		return v
	}
	vals := make([]any, 0, len(args)+1)
	for _, a := range args {
		vals = append(vals, arg(s.evalArg(dot, a)))
	}
	if final != missing {
		vals = append(vals, arg(final))
	}
	var v any
	var err error
	if f, ok := s.t.funcs[name]; ok {
		if len(vals) != f.Args {
			s.errorf("wrong number of args for %s: want %d got %d", name, f.Args, len(vals))
		}
		v, err = f.Call(vals...)
	} else {
		v, err = s.builtin(name, len(args), vals)
	}
	if err != nil {
		s.at(n)
		s.errorf("error calling %s: %w", name, err)
	}
	if str, ok := v.(string); ok && len(str) > MaxOutput {
		s.at(n)
		s.errorf("error calling %s: its result is %d bytes long, past %d", name, len(str), MaxOutput)
	}
	return v
}

// evalArg is the value of an argument of a function.
func (s *state) evalArg(dot any, n parse.Node) any {
	s.at(n)
	switch a := n.(type) {
	case *parse.DotNode:
		return dot
	case *parse.NilNode:
		return nil
	case *parse.FieldNode:
		return s.evalFieldChain(dot, dot, a, a.Ident, []parse.Node{n}, missing)
	case *parse.VariableNode:
		return s.evalVariable(dot, a, nil, missing)
	case *parse.PipeNode:
		return s.evalPipeline(dot, a)
	case *parse.IdentifierNode:
		return s.evalFunction(dot, a, []parse.Node{a}, missing)
	case *parse.ChainNode:
		return s.evalChain(dot, a, nil, missing)
	case *parse.BoolNode:
		return a.True
	case *parse.NumberNode:
		return s.number(a)
	case *parse.StringNode:
		return a.Text
	}
	s.errorf("can't handle %s for an argument", n)
	return nil
}
