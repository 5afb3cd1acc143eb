package toolfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wieldhq/wield"
	"go.yaml.in/yaml/v3"
)

// decoder walks a parsed YAML tree and records every problem it meets with
// the position of the node at fault, instead of stopping at the first one:
// lint wants them all, loading wants to know whether there were any.
type decoder struct {
	file     string
	builtins map[string]wield.Handler // nil: not checked
	kinds    map[string]Kind
	mcpURLs  map[string]string // MCP server URL → name, for mcp_server_url
	problems []Problem
}

func (d *decoder) warnf(n *yaml.Node, format string, args ...any) {
	d.errorf(n, format, args...)
	d.problems[len(d.problems)-1].Warning = true
}

// failed reports whether a problem other than a warning was recorded since
// the mark, to leave a broken document out.
func (d *decoder) failed(mark int) bool { return Problems(d.problems[mark:]).errors() }

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	line, col := pos(n)
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Col: col, Message: fmt.Sprintf(format, args...)})
}

func pos(n *yaml.Node) (int, int) {
	if n == nil || n.Line == 0 {
		return 1, 1
	}
	return n.Line, n.Column
}

// parse reads all documents of a file, leaving out empty ones. A syntax
// error, or an alias that would make walking the tree endless, becomes the
// file's only problem.
func (d *decoder) parse(src []byte) []*yaml.Node {
	if len(src) > MaxFileSize {
		d.problems = append(d.problems, Problem{File: d.file, Line: 1, Col: 1, Message: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)})
		return nil
	}
	if line, col, deep := tooDeep(src); deep {
		d.problems = append(d.problems, Problem{File: d.file, Line: line, Col: col, Message: fmt.Sprintf("nesting deeper than %d levels", maxDepth)})
		return nil
	}
	var docs []*yaml.Node
	var aliases aliasCheck
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			line, col, msg := syntaxError(src, strings.EqualFold(filepath.Ext(d.file), ".json"), err)
			d.problems = append(d.problems, Problem{File: d.file, Line: line, Col: col, Message: "syntax error: " + msg})
			return nil
		}
		if len(doc.Content) == 0 {
			continue
		}
		body := doc.Content[0]
		if body.Kind == yaml.ScalarNode && body.Tag == "!!null" && body.Value == "" {
			continue // nothing but comments, or nothing at all
		}
		if aliases.size(body) < 0 {
			d.errorf(aliases.bad, "%s", aliases.why)
			return nil
		}
		docs = append(docs, body)
	}
}

// syntaxError places a syntax error yaml.v3 reported for src. Its message
// says "yaml: line N: ..." at best, and N is not where the error is: for
// the parser's errors it counts lines from 0, it is the line where the
// enclosing construct began when there is one (a block mapping's first key
// for a line indented wrongly further down), and it is missing for errors
// that have no line at all (a control character or bad UTF-8 anywhere, an
// unknown anchor), which then read as 1:1. So the line is found again: a
// character yaml refuses to read is placed exactly; otherwise the line is
// the one whose addition to the file makes the same error appear (parsing
// is left to right, so no line before it has the error), and the column is
// that line's first character other than a space (yaml.v3 keeps no column).
// A .json file's error is placed, and told, by encoding/json.
func syntaxError(src []byte, isJSON bool, err error) (line, col int, msg string) {
	full := err.Error()
	msg = strings.TrimPrefix(full, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if _, perr := strconv.Atoi(num); perr == nil {
				msg = text
			}
		}
	}
	if off := unreadable(src); off >= 0 && readerError(msg) {
		line, col = lineCol(src, off)
		return line, col, msg
	}
	if isJSON {
		// JSON is all flow style, where the end of the file makes the same
		// error as a missing comma or bracket: encoding/json knows where.
		var v any
		var se *json.SyntaxError
		if jerr := json.Unmarshal(src, &v); errors.As(jerr, &se) && se.Offset > 0 {
			line, col = lineCol(src, int(se.Offset)-1)
			return line, col, se.Error()
		}
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	lo, hi := 0, len(lines)  // the first lo lines parse without this error; all hi lines with it
	end := func(n int) int { // the length of the first n lines
		k := 0
		for _, l := range lines[:n] {
			k += len(l)
		}
		return k
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if perr := parseAll(src[:end(mid)]); perr != nil && perr.Error() == full {
			hi = mid
		} else {
			lo = mid
		}
	}
	if hi < 1 {
		return 1, 1, msg
	}
	col = 1
	for _, r := range string(bytes.TrimRight(lines[hi-1], "\r\n")) {
		if r != ' ' {
			break
		}
		col++
	}
	return hi, col, msg
}

// parseAll parses every document of src, for syntaxError.
func parseAll(src []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// unreadable returns the offset of the first character yaml.v3 refuses to
// read (invalid UTF-8, or a control character other than tab, line feed and
// carriage return), or -1.
func unreadable(src []byte) int {
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			return i
		case r == '\t' || r == '\n' || r == '\r' || r == 0x85:
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffe || r == 0xffff:
			return i
		}
		i += n
	}
	return -1
}

// readerError reports whether msg is one of yaml.v3's errors about the
// characters of the file, which carry no position.
func readerError(msg string) bool {
	return msg == "control characters are not allowed" || strings.Contains(msg, "UTF-8") || msg == "invalid Unicode character"
}

// lineCol turns a byte offset of src into a 1-based line and column, the
// column counted in characters as yaml.v3 counts it.
func lineCol(src []byte, off int) (line, col int) {
	before := src[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

// maxAliasNodes bounds how many nodes aliases add to a file when followed,
// against "billion laughs" files that are small but expand exponentially.
const maxAliasNodes = 100_000

// aliasCheck finds the first alias that walking a tree through it would not
// survive: one inside the node it refers to (yaml.v3 builds that cycle), or
// one that makes the file's aliases add more than maxAliasNodes nodes.
type aliasCheck struct {
	sizes map[*yaml.Node]int // anchored nodes: expanded size, -1 while inside
	added int
	bad   *yaml.Node
	why   string
}

// size counts the nodes under n with aliases expanded; -1 when bad is set.
func (a *aliasCheck) size(n *yaml.Node) int {
	if n.Kind == yaml.AliasNode {
		s, ok := a.sizes[n.Alias]
		a.added += s
		switch {
		case !ok || s < 0:
			a.bad, a.why = n, fmt.Sprintf("alias *%s is inside the node it refers to", n.Value)
		case a.added > maxAliasNodes:
			a.bad, a.why = n, fmt.Sprintf("aliases expand the file by more than %d nodes", maxAliasNodes)
		default:
			return s
		}
		return -1
	}
	if n.Anchor != "" {
		if a.sizes == nil {
			a.sizes = map[*yaml.Node]int{}
		}
		a.sizes[n] = -1
	}
	total := 1
	for _, c := range n.Content {
		s := a.size(c)
		if s < 0 {
			return -1
		}
		total += s
	}
	if n.Anchor != "" {
		a.sizes[n] = total
	}
	return total
}

// MaxFileSize bounds a tool file: a tool definition is a few kilobytes, and
// the YAML parser's time grows faster than the input.
const MaxFileSize = 1 << 20

// maxDepth bounds nesting, which no tool file needs and every walk of the
// tree pays for in recursion.
const maxDepth = 64

// tooDeep finds where brackets or one-line "- - -" sequences nest beyond
// maxDepth, before the parser spends time on it. It ignores quotes, so it
// overcounts brackets inside strings; that takes more than 64 unbalanced
// ones, which no real tool file has.
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

// unwrap looks through documents and aliases to the value node.
func unwrap(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch {
		case n.Kind == yaml.DocumentNode && len(n.Content) == 1:
			n = n.Content[0]
		case n.Kind == yaml.AliasNode && n.Alias != nil:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}

// tag is the type of a scalar after yaml.v3's resolution ("!!str",
// "!!int", ...), "" for anything else. A tag of the file's own (!env x)
// means nothing here: the value reads as if it were not there.
func tag(n *yaml.Node) string {
	if n = unwrap(n); n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	t := n.ShortTag()
	if !strings.HasPrefix(t, "!!") {
		bare := *n
		bare.Tag = ""
		t = bare.ShortTag()
	}
	return t
}

// isString reports whether n is text: a quoted, block or plain string, and
// also a plain date such as 2024-01-01, which people write in descriptions
// and versions meaning the text.
func isString(n *yaml.Node) bool {
	t := tag(n)
	return t == "!!str" || t == "!!timestamp"
}

// kindName says what a node is, for "expected X, got Y" messages.
func kindName(n *yaml.Node) string {
	n = unwrap(n)
	if n == nil {
		return "null"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	switch tag(n) {
	case "!!null":
		return "null"
	case "!!str", "!!timestamp":
		return "string"
	case "!!int":
		return "integer"
	case "!!float":
		return "number"
	case "!!bool":
		return "boolean"
	}
	return "value"
}

// seq returns the entries of a list node.
func seq(n *yaml.Node) ([]*yaml.Node, bool) {
	if n = unwrap(n); n == nil || n.Kind != yaml.SequenceNode {
		return nil, false
	}
	return n.Content, true
}

// field is one key of a mapping, with the key's node for positions.
type field struct {
	name string
	key  *yaml.Node
	val  *yaml.Node
}

// mapping returns the fields of a mapping node in file order. Duplicate keys
// are reported; the first one is kept. A merge key (`<<: *base`, or a list
// of aliases) adds the fields of the mappings it names that the mapping does
// not set itself, after its own; among merged mappings, the first wins.
func (d *decoder) mapping(n *yaml.Node, what string) ([]field, bool) {
	m := unwrap(n)
	if m == nil || m.Kind != yaml.MappingNode {
		d.errorf(n, "%s: expected a mapping, got %s", what, kindName(n))
		return nil, false
	}
	seen := map[string]bool{}
	out := make([]field, 0, len(m.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i], m.Content[i+1]
		k := unwrap(key)
		switch {
		case k.Kind != yaml.ScalarNode:
			d.errorf(key, "%s: keys must be plain names", what)
		case k.Value == "<<" && k.ShortTag() == "!!merge":
			merges = append(merges, val)
		case seen[k.Value]:
			d.errorf(key, "%s: duplicate key %q", what, k.Value)
		default:
			seen[k.Value] = true
			out = append(out, field{name: k.Value, key: key, val: val})
		}
	}
	for _, v := range merges {
		from := []*yaml.Node{v}
		if list, ok := seq(v); ok {
			from = list
		}
		for _, src := range from {
			if kindName(src) != "mapping" {
				d.errorf(src, "%s: << merges a mapping or a list of mappings, got %s", what, kindName(src))
				continue
			}
			fs, _ := d.mapping(src, what)
			for _, f := range fs {
				if !seen[f.name] {
					seen[f.name] = true
					out = append(out, f)
				}
			}
		}
	}
	return out, true
}

func (d *decoder) unknown(f field, what string) {
	d.errorf(f.key, "%s: unknown field %q", what, f.name)
}

func (d *decoder) str(f field) string {
	if isString(f.val) {
		return unwrap(f.val).Value
	}
	d.errorf(f.val, "%s: expected a string, got %s", f.name, kindName(f.val))
	return ""
}

// text accepts any scalar as its text, for fields such as version where
// `1.0` unquoted is common and harmless.
func (d *decoder) text(f field) string {
	switch tag(f.val) {
	case "!!str", "!!timestamp", "!!int", "!!float":
		return unwrap(f.val).Value
	}
	d.errorf(f.val, "%s: expected a string, got %s", f.name, kindName(f.val))
	return ""
}

func (d *decoder) boolean(f field) bool {
	if b, ok := boolValue(f.val); ok {
		return b
	}
	d.errorf(f.val, "%s: expected true or false, got %s", f.name, kindName(f.val))
	return false
}

func (d *decoder) number(f field) *float64 {
	if v, _, ok := numberValue(f.val); ok {
		return &v
	}
	d.errorf(f.val, "%s: expected a number, got %s", f.name, kindName(f.val))
	return nil
}

func (d *decoder) count(f field) *int {
	if v, isInt, ok := numberValue(f.val); ok && isInt && v >= 0 && v <= math.MaxInt32 {
		n := int(v)
		return &n
	}
	d.errorf(f.val, "%s: expected a non-negative integer, got %s", f.name, kindName(f.val))
	return nil
}

func (d *decoder) strings(f field) []string {
	list, ok := seq(f.val)
	if !ok {
		d.errorf(f.val, "%s: expected a list of strings, got %s", f.name, kindName(f.val))
		return nil
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s := d.str(field{name: f.name, val: v})
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// boolValue reads a !!bool scalar: true or false in any of yaml.v3's
// spellings (True, FALSE...). YAML 1.1's yes, no, on and off are strings.
func boolValue(n *yaml.Node) (bool, bool) {
	if tag(n) != "!!bool" {
		return false, false
	}
	b, err := strconv.ParseBool(unwrap(n).Value)
	return b, err == nil
}

// numberValue reads an !!int or !!float scalar the way yaml.v3 resolves
// it: underscores between digits, 0x, 0o, 0b and leading-zero octal
// integers, .inf and .nan. isInt is true for an !!int.
func numberValue(n *yaml.Node) (v float64, isInt, ok bool) {
	t := tag(n)
	if t != "!!int" && t != "!!float" {
		return 0, false, false
	}
	s := strings.ReplaceAll(unwrap(n).Value, "_", "")
	if t == "!!int" {
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return float64(i), true, true
		}
		u, err := strconv.ParseUint(s, 0, 64)
		return float64(u), true, err == nil
	}
	switch strings.ToLower(s) {
	case ".inf", "+.inf":
		return math.Inf(1), false, true
	case "-.inf":
		return math.Inf(-1), false, true
	case ".nan":
		return math.NaN(), false, true
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, false, err == nil
}

// value converts a node to the JSON value it stands for (map, list, string,
// float64 or int64, bool, nil), for defaults and enums.
func (d *decoder) value(n *yaml.Node) (any, bool) {
	x := unwrap(n)
	if x == nil {
		return nil, true
	}
	switch x.Kind {
	case yaml.SequenceNode:
		out := make([]any, 0, len(x.Content))
		for _, e := range x.Content {
			v, ok := d.value(e)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	case yaml.MappingNode:
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
	switch tag(x) {
	case "!!null":
		return nil, true
	case "!!str", "!!timestamp":
		return x.Value, true
	case "!!bool":
		if b, ok := boolValue(x); ok {
			return b, true
		}
	case "!!int", "!!float":
		v, isInt, ok := numberValue(x)
		switch {
		case !ok || math.IsInf(v, 0) || math.IsNaN(v): // not JSON
		case isInt && math.Abs(v) < 1<<53:
			return int64(v), true
		default:
			return v, true
		}
	}
	d.errorf(n, "unsupported value (%s)", kindName(n))
	return nil, false
}
