package toolfile

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
	"github.com/wieldhq/wield"
)

// decoder walks a parsed YAML tree and records every problem it meets with
// the position of the node at fault, instead of stopping at the first one:
// lint wants them all, loading wants to know whether there were any.
type decoder struct {
	file     string
	builtins map[string]wield.Handler // nil: not checked
	kinds    map[string]Kind
	problems []Problem
}

func (d *decoder) warnf(n ast.Node, format string, args ...any) {
	d.errorf(n, format, args...)
	d.problems[len(d.problems)-1].Warning = true
}

// failed reports whether a problem other than a warning was recorded since
// the mark, to leave a broken document out.
func (d *decoder) failed(mark int) bool { return Problems(d.problems[mark:]).errors() }

func (d *decoder) errorf(n ast.Node, format string, args ...any) {
	line, col := pos(n)
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Col: col, Message: fmt.Sprintf(format, args...)})
}

func pos(n ast.Node) (int, int) {
	if n == nil {
		return 1, 1
	}
	t := n.GetToken()
	if t == nil || t.Position == nil {
		return 1, 1
	}
	return t.Position.Line, t.Position.Column
}

// parse reads all documents of a file. A syntax error becomes a problem at
// the token the parser stopped on.
func (d *decoder) parse(src []byte) []ast.Node {
	if len(src) > MaxFileSize {
		d.problems = append(d.problems, Problem{File: d.file, Line: 1, Col: 1, Message: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)})
		return nil
	}
	if line, col, deep := tooDeep(src); deep {
		d.problems = append(d.problems, Problem{File: d.file, Line: line, Col: col, Message: fmt.Sprintf("nesting deeper than %d levels", maxDepth)})
		return nil
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		var se interface {
			GetToken() *token.Token
			GetMessage() string
		}
		line, col, msg := 1, 1, err.Error()
		if errors.As(err, &se) {
			msg = se.GetMessage()
			if t := se.GetToken(); t != nil && t.Position != nil {
				line, col = t.Position.Line, t.Position.Column
			}
		}
		d.problems = append(d.problems, Problem{File: d.file, Line: line, Col: col, Message: "syntax error: " + msg})
		return nil
	}
	var docs []ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		docs = append(docs, doc.Body)
	}
	return docs
}

// MaxFileSize bounds a tool file: a tool definition is a few kilobytes, and
// the YAML parser's time grows faster than the input.
const MaxFileSize = 1 << 20

// maxDepth bounds nesting; the parser's time is quadratic in it.
const maxDepth = 64

// tooDeep finds where brackets or one-line "- - -" sequences nest beyond
// maxDepth, before the parser spends quadratic time on it. It ignores quotes,
// so it overcounts brackets inside strings; that takes more than 64
// unbalanced ones, which no real tool file has.
func tooDeep(src []byte) (line, col int, deep bool) {
	depth, dashes := 0, 0
	line, col = 1, 0
	lineStart := true
	for i, c := range src {
		col++
		switch c {
		case '\n':
			line, col, dashes, lineStart = line+1, 0, 0, true
			continue
		case '[', '{':
			depth++
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '-':
			if lineStart && (i+1 == len(src) || src[i+1] == ' ' || src[i+1] == '\t') {
				dashes++
				if dashes > maxDepth {
					return line, col, true
				}
				continue
			}
		case ' ', '\t', '?', ':':
			continue
		}
		lineStart = false
		if depth > maxDepth {
			return line, col, true
		}
	}
	return 0, 0, false
}

// unwrap looks through tags, anchors and comments to the value node.
func unwrap(n ast.Node) ast.Node {
	for {
		switch x := n.(type) {
		case *ast.TagNode:
			n = x.Value
		case *ast.AnchorNode:
			n = x.Value
		case *ast.CommentGroupNode:
			return nil
		default:
			return n
		}
	}
}

// kindName says what a node is, for "expected X, got Y" messages.
func kindName(n ast.Node) string {
	switch unwrap(n).(type) {
	case nil, *ast.NullNode:
		return "null"
	case *ast.StringNode, *ast.LiteralNode:
		return "string"
	case *ast.IntegerNode:
		return "integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "number"
	case *ast.BoolNode:
		return "boolean"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "mapping"
	case *ast.SequenceNode:
		return "list"
	case *ast.AliasNode:
		return "alias"
	default:
		return "value"
	}
}

// field is one key of a mapping, with the key's node for positions.
type field struct {
	name string
	key  ast.Node
	val  ast.Node
}

// mapping returns the fields of a mapping node in file order. Duplicate keys
// are reported; the first one is kept.
func (d *decoder) mapping(n ast.Node, what string) ([]field, bool) {
	var values []*ast.MappingValueNode
	switch x := unwrap(n).(type) {
	case *ast.MappingNode:
		values = x.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{x}
	default:
		d.errorf(n, "%s: expected a mapping, got %s", what, kindName(n))
		return nil, false
	}
	seen := map[string]bool{}
	out := make([]field, 0, len(values))
	for _, mv := range values {
		k, ok := unwrap(mv.Key).(ast.ScalarNode)
		if !ok {
			d.errorf(mv.Key, "%s: keys must be plain names", what)
			continue
		}
		name := fmt.Sprint(k.GetValue())
		if seen[name] {
			d.errorf(mv.Key, "%s: duplicate key %q", what, name)
			continue
		}
		seen[name] = true
		out = append(out, field{name: name, key: mv.Key, val: mv.Value})
	}
	return out, true
}

func (d *decoder) unknown(f field, what string) {
	d.errorf(f.key, "%s: unknown field %q", what, f.name)
}

func (d *decoder) str(f field) string {
	switch x := unwrap(f.val).(type) {
	case *ast.StringNode:
		return x.Value
	case *ast.LiteralNode:
		return x.Value.Value
	}
	d.errorf(f.val, "%s: expected a string, got %s", f.name, kindName(f.val))
	return ""
}

// text accepts any scalar as its text, for fields such as version where
// `1.0` unquoted is common and harmless.
func (d *decoder) text(f field) string {
	switch x := unwrap(f.val).(type) {
	case *ast.StringNode:
		return x.Value
	case *ast.LiteralNode:
		return x.Value.Value
	case *ast.IntegerNode, *ast.FloatNode:
		return x.GetToken().Value
	}
	d.errorf(f.val, "%s: expected a string, got %s", f.name, kindName(f.val))
	return ""
}

func (d *decoder) boolean(f field) bool {
	if b, ok := unwrap(f.val).(*ast.BoolNode); ok {
		return b.Value
	}
	d.errorf(f.val, "%s: expected true or false, got %s", f.name, kindName(f.val))
	return false
}

func (d *decoder) number(f field) *float64 {
	switch x := unwrap(f.val).(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		v, err := strconv.ParseFloat(x.GetToken().Value, 64)
		if err == nil {
			return &v
		}
		if v, ok := toNumber(x.(ast.ScalarNode).GetValue()); ok {
			return &v
		}
	}
	d.errorf(f.val, "%s: expected a number, got %s", f.name, kindName(f.val))
	return nil
}

func (d *decoder) count(f field) *int {
	if x, ok := unwrap(f.val).(*ast.IntegerNode); ok {
		if v, ok := toNumber(x.GetValue()); ok && v >= 0 && v <= math.MaxInt32 {
			n := int(v)
			return &n
		}
	}
	d.errorf(f.val, "%s: expected a non-negative integer, got %s", f.name, kindName(f.val))
	return nil
}

func (d *decoder) strings(f field) []string {
	seq, ok := unwrap(f.val).(*ast.SequenceNode)
	if !ok {
		d.errorf(f.val, "%s: expected a list of strings, got %s", f.name, kindName(f.val))
		return nil
	}
	out := make([]string, 0, len(seq.Values))
	for _, v := range seq.Values {
		s := d.str(field{name: f.name, val: v})
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// value converts a node to the JSON value it stands for (map, list, string,
// float64 or int64, bool, nil), for defaults and enums.
func (d *decoder) value(n ast.Node) (any, bool) {
	switch x := unwrap(n).(type) {
	case nil, *ast.NullNode:
		return nil, true
	case *ast.StringNode:
		return x.Value, true
	case *ast.LiteralNode:
		return x.Value.Value, true
	case *ast.BoolNode:
		return x.Value, true
	case *ast.IntegerNode:
		v, _ := toNumber(x.GetValue())
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v), true
		}
		return v, true
	case *ast.FloatNode:
		return x.Value, true
	case *ast.SequenceNode:
		out := make([]any, 0, len(x.Values))
		for _, e := range x.Values {
			v, ok := d.value(e)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	case *ast.MappingNode, *ast.MappingValueNode:
		fs, ok := d.mapping(x, "value")
		if !ok {
			return nil, false
		}
		out := make(map[string]any, len(fs))
		for _, f := range fs {
			v, ok := d.value(f.val)
			if !ok {
				return nil, false
			}
			out[f.name] = v
		}
		return out, true
	}
	d.errorf(n, "unsupported value (%s)", kindName(n))
	return nil, false
}
