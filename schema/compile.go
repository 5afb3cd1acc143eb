package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// type bits of a compiled schema; 0 means any type.
const (
	tNull uint8 = 1 << iota
	tBool
	tInt
	tNum
	tStr
	tArr
	tObj
)

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBool, "integer": tInt, "number": tNum,
	"string": tStr, "array": tArr, "object": tObj,
}

func typeNames(t uint8) string {
	var names []string
	for _, n := range []string{"object", "array", "string", "integer", "number", "boolean", "null"} {
		if n == "integer" && t&tNum != 0 {
			continue // every integer is a number
		}
		if t&typeBits[n] != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, " or ")
}

// compiled is a schema ready for the walk in validate.go.
type compiled struct {
	isFalse bool
	types   uint8
	ref     *compiled

	enum     []any
	enumText string
	cnst     *any

	hasMin, hasMax, hasExMin, hasExMax bool
	min, max, exMin, exMax, multipleOf float64

	minLen, maxLen int // -1: unset
	pattern        *regexp.Regexp
	format         string            // a format that is checked (see formats)
	formatOK       func(string) bool // its check; nil when not checked

	props     []prop
	propIdx   map[string]int
	propNames string // for messages
	hasProps  bool   // properties or patternProperties declared
	// additional: nil with addFalse false means "not said"; explicit true is
	// an empty (accept-all) compiled schema.
	additional   *compiled
	addFalse     bool
	addSaid      bool
	patternProps []patternProp
	minProps     int
	maxProps     int

	items     *compiled
	itemsSaid bool
	noItems   bool // items: false after prefixItems
	prefix    []*compiled
	minItems  int
	maxItems  int
	unique    bool

	allOf, anyOf, oneOf []*compiled
	not                 *compiled
}

type prop struct {
	name     string
	quoted   []byte // "name" as JSON
	s        *compiled
	required bool
	def      []byte
	// fill: the property has no default of its own, but its schema is an
	// object whose members have defaults, so an omitted value is
	// materialised as {} with those defaults filled (see [fills]).
	fill bool
}

type patternProp struct {
	re *regexp.Regexp
	s  *compiled
}

// Validator checks and normalises the arguments of one tool. It is safe for
// concurrent use.
type Validator struct {
	root     *compiled
	fallback *jsonschema.Resolved // for keywords the walk does not know
}

// Compile prepares a schema for [Validator.Normalize]. It fails on schemas
// that cannot be used: a bad regular expression, a $ref that does not
// resolve, a default that is not JSON, and a reference cycle that never
// reaches a member or an item (A refers to B, B to A), which no validator
// could finish checking.
//
// Compile handles type, enum, const, the numeric, string, array and object
// keywords, allOf, anyOf, oneOf, not and local $ref itself; for the rest (if/
// then/else, dependencies, contains, propertyNames, unevaluated*) it checks
// the normalised arguments with github.com/google/jsonschema-go as well.
func Compile(s *jsonschema.Schema) (*Validator, error) {
	if s == nil {
		s = &jsonschema.Schema{Type: "object"}
	}
	c := &compiler{root: s, done: map[*jsonschema.Schema]*compiled{}}
	if loop := refCycle(s, c.resolveRef); loop != nil {
		return nil, cycleError(loop)
	}
	root, err := c.compile(s, "")
	if err != nil {
		return nil, err
	}
	memo := map[*compiled]uint8{}
	for _, x := range c.done {
		for i := range x.props {
			p := &x.props[i]
			p.fill = p.def == nil && !p.required && fills(p.s, memo)
		}
	}
	breakFillLoops(root, c.done)
	v := &Validator{root: root}
	if c.fallback {
		rs, err := s.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("compile schema: %w", err)
		}
		v.fallback = rs
	}
	return v, nil
}

type compiler struct {
	root     *jsonschema.Schema
	done     map[*jsonschema.Schema]*compiled
	fallback bool
}

func isEmpty(s *jsonschema.Schema) bool {
	return reflect.ValueOf(*s).IsZero()
}

func isFalseSchema(s *jsonschema.Schema) bool {
	if s == nil || s.Not == nil || !isEmpty(s.Not) {
		return false
	}
	cp := *s
	cp.Not = nil
	return isEmpty(&cp)
}

func (c *compiler) compile(s *jsonschema.Schema, at string) (*compiled, error) {
	if s == nil {
		return nil, nil
	}
	if x, ok := c.done[s]; ok {
		return x, nil
	}
	out := &compiled{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1, minProps: -1, maxProps: -1}
	c.done[s] = out
	if isFalseSchema(s) {
		out.isFalse = true
		return out, nil
	}
	fail := func(format string, args ...any) (*compiled, error) {
		where := at
		if where == "" {
			where = "the root"
		}
		return nil, fmt.Errorf("compile schema at %s: %s", where, fmt.Sprintf(format, args...))
	}

	// A nullable union written as anyOf/oneOf [X, {"type":"null"}] becomes X
	// accepting null, so coercion and defaults work inside it.
	if t, ok := nullableUnion(s); ok {
		x, err := c.compile(t, at)
		if err != nil {
			return nil, err
		}
		cp := *x
		if cp.types != 0 {
			cp.types |= tNull
		}
		*out = cp
		return out, nil
	}

	if s.Ref != "" {
		target, err := c.resolveRef(s.Ref)
		if err != nil {
			return fail("%v", err)
		}
		if out.ref, err = c.compile(target, s.Ref); err != nil {
			return nil, err
		}
	}
	if s.If != nil || s.Then != nil || s.Else != nil || s.DependentSchemas != nil || s.DependentRequired != nil ||
		s.DependencySchemas != nil || s.DependencyStrings != nil || s.Contains != nil || s.PropertyNames != nil ||
		s.UnevaluatedItems != nil || s.UnevaluatedProperties != nil || s.DynamicRef != "" || s.AdditionalItems != nil {
		c.fallback = true
	}

	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	for _, t := range types {
		bit, ok := typeBits[t]
		if !ok {
			return fail("unknown type %q", t)
		}
		out.types |= bit
	}
	if out.types&tNum != 0 {
		out.types |= tInt // every integer is a number
	}

	if len(s.Enum) > 0 {
		out.enum = s.Enum
		out.enumText = listValues(s.Enum, maxListText)
	}
	if s.Const != nil {
		out.cnst = s.Const
	}
	if s.Minimum != nil {
		out.hasMin, out.min = true, *s.Minimum
	}
	if s.Maximum != nil {
		out.hasMax, out.max = true, *s.Maximum
	}
	if s.ExclusiveMinimum != nil {
		out.hasExMin, out.exMin = true, *s.ExclusiveMinimum
	}
	if s.ExclusiveMaximum != nil {
		out.hasExMax, out.exMax = true, *s.ExclusiveMaximum
	}
	if s.MultipleOf != nil {
		if *s.MultipleOf <= 0 {
			return fail("multipleOf %v must be greater than 0", *s.MultipleOf)
		}
		out.multipleOf = *s.MultipleOf
	}
	if s.MinLength != nil {
		out.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		out.maxLen = *s.MaxLength
	}
	if s.Pattern != "" {
		re, err := CompilePattern(s.Pattern)
		if err != nil {
			return fail("pattern %q: %v", s.Pattern, err)
		}
		out.pattern = re
	}

	if f, ok := formats[s.Format]; ok {
		out.format, out.formatOK = s.Format, f
	}

	// Objects.
	names := s.PropertyOrder
	if len(names) == 0 || len(names) != len(s.Properties) {
		names = make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		slices.Sort(names)
	}
	for _, r := range s.Required {
		if !slices.Contains(names, r) {
			names = append(names, r)
		}
	}
	for _, name := range names {
		ps, err := c.compile(s.Properties[name], joinAt(at, name))
		if err != nil {
			return nil, err
		}
		p := prop{name: name, s: ps, required: slices.Contains(s.Required, name)}
		p.quoted, _ = json.Marshal(name)
		if sub := s.Properties[name]; sub != nil && len(sub.Default) > 0 {
			if !json.Valid(sub.Default) {
				return fail("default of %q is not valid JSON", name)
			}
			p.def = sub.Default
		}
		out.props = append(out.props, p)
	}
	out.hasProps = len(s.Properties) > 0 || len(s.PatternProperties) > 0
	if len(out.props) > 8 {
		out.propIdx = make(map[string]int, len(out.props))
		for i, p := range out.props {
			out.propIdx[p.name] = i
		}
	}
	out.propNames = strings.Join(names, ", ")
	for pat, sub := range s.PatternProperties {
		re, err := CompilePattern(pat)
		if err != nil {
			return fail("patternProperties %q: %v", pat, err)
		}
		ps, err := c.compile(sub, joinAt(at, pat))
		if err != nil {
			return nil, err
		}
		out.patternProps = append(out.patternProps, patternProp{re, ps})
	}
	if s.AdditionalProperties != nil {
		out.addSaid = true
		if isFalseSchema(s.AdditionalProperties) {
			out.addFalse = true
		} else {
			var err error
			if out.additional, err = c.compile(s.AdditionalProperties, joinAt(at, "*")); err != nil {
				return nil, err
			}
		}
	}
	if s.MinProperties != nil {
		out.minProps = *s.MinProperties
	}
	if s.MaxProperties != nil {
		out.maxProps = *s.MaxProperties
	}

	// Arrays.
	prefix := s.PrefixItems
	if len(s.ItemsArray) > 0 {
		prefix = s.ItemsArray
	}
	for i, ps := range prefix {
		x, err := c.compile(ps, fmt.Sprintf("%s[%d]", at, i))
		if err != nil {
			return nil, err
		}
		out.prefix = append(out.prefix, x)
	}
	if s.Items != nil {
		out.itemsSaid = true
		if isFalseSchema(s.Items) {
			out.noItems = true
		} else {
			var err error
			if out.items, err = c.compile(s.Items, at+"[]"); err != nil {
				return nil, err
			}
		}
	}
	if s.MinItems != nil {
		out.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		out.maxItems = *s.MaxItems
	}
	out.unique = s.UniqueItems

	var err error
	if out.allOf, err = c.compileAll(s.AllOf, at, "allOf"); err != nil {
		return nil, err
	}
	if out.anyOf, err = c.compileAll(s.AnyOf, at, "anyOf"); err != nil {
		return nil, err
	}
	if out.oneOf, err = c.compileAll(s.OneOf, at, "oneOf"); err != nil {
		return nil, err
	}
	if out.not, err = c.compile(s.Not, at+"/not"); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *compiler) compileAll(list []*jsonschema.Schema, at, kw string) ([]*compiled, error) {
	var out []*compiled
	for i, s := range list {
		x, err := c.compile(s, fmt.Sprintf("%s/%s/%d", at, kw, i))
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

func joinAt(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// nullableUnion recognises {anyOf: [X, {type: null}]} (or oneOf) with no
// other validation keywords, and returns X.
func nullableUnion(s *jsonschema.Schema) (*jsonschema.Schema, bool) {
	list := s.AnyOf
	if len(list) == 0 {
		list = s.OneOf
	}
	if len(list) != 2 || (len(s.AnyOf) > 0 && len(s.OneOf) > 0) {
		return nil, false
	}
	cp := *s
	cp.AnyOf, cp.OneOf, cp.Description, cp.Title, cp.Default, cp.Examples = nil, nil, "", "", nil, nil
	if !isEmpty(&cp) {
		return nil, false
	}
	isNull := func(x *jsonschema.Schema) bool {
		if x == nil || (x.Type != "null" && !slices.Equal(x.Types, []string{"null"})) {
			return false
		}
		cp := *x
		cp.Type, cp.Types, cp.Description, cp.Title = "", nil, "", ""
		return isEmpty(&cp)
	}
	switch {
	case isNull(list[1]) && list[0] != nil:
		return list[0], true
	case isNull(list[0]) && list[1] != nil:
		return list[1], true
	}
	return nil, false
}

func (c *compiler) resolveRef(ref string) (*jsonschema.Schema, error) {
	if ref == "#" {
		return c.root, nil
	}
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		if name, ok := strings.CutPrefix(ref, prefix); ok {
			name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
			defs := c.root.Defs
			if prefix == "#/definitions/" {
				defs = c.root.Definitions
			}
			if s, ok := defs[name]; ok && s != nil {
				return s, nil
			}
			return nil, fmt.Errorf("$ref %q: no such definition", ref)
		}
	}
	return nil, fmt.Errorf("$ref %q: only local references (#, #/$defs/..., #/definitions/...) are supported", ref)
}

func listValues(vals []any, max int) string {
	var b strings.Builder
	for i, v := range vals {
		j, err := json.Marshal(v)
		if err != nil {
			j = []byte(fmt.Sprint(v))
		}
		if i > 0 && b.Len()+len(j) > max {
			// A schema may list a million values: the message names the
			// first ones and how many there are, not all of them.
			fmt.Fprintf(&b, ", … (%d values in all)", len(vals))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if len(j) > max {
			j = append(clipBytes(j, max), "…"...)
		}
		b.Write(j)
	}
	return b.String()
}

// maxListText is about how much of an enum's values a message shows.
const maxListText = 512

// clipBytes cuts b to at most n bytes, on a UTF-8 character boundary.
func clipBytes(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}

// fills reports whether an omitted value of schema s is materialised as an
// object with its defaults filled in, as JSON Schema tools commonly do: s is
// an object (or says no type) with at least one member that has a default, at
// any depth through such objects, and every required member has a default.
// An object with no defaulted member is left out, as the caller omitted it.
// A schema that refers back to itself is not filled through the loop, so
// the fill always ends.
func fills(s *compiled, memo map[*compiled]uint8) bool {
	const (
		busy uint8 = iota + 1
		yes
		no
	)
	s = fillTarget(s)
	if s == nil || s.isFalse || (s.types != 0 && s.types&tObj == 0) || len(s.props) == 0 {
		return false
	}
	switch memo[s] {
	case busy, no:
		return false
	case yes:
		return true
	}
	memo[s] = busy
	any := false
	for i := range s.props {
		p := &s.props[i]
		switch {
		case p.def != nil:
			any = true
		case p.required:
			memo[s] = no
			return false
		case fills(p.s, memo):
			any = true
		}
	}
	if any {
		memo[s] = yes
	} else {
		memo[s] = no
	}
	return any
}

// fillTarget is the object schema a filled property materialises.
func fillTarget(s *compiled) *compiled {
	for hops := 0; s != nil && s.ref != nil && s.types == 0 && len(s.props) == 0 && hops <= maxCheckDepth; hops++ {
		s = s.ref
	}
	return s
}

// breakFillLoops stops the fill of a property whose object leads back, by
// fills, to an object being filled (a tree's child of its own type): the
// first level is filled, the loop is not. The walk starts at the root so
// that the loop is cut at the same place on every compile.
func breakFillLoops(root *compiled, all map[*jsonschema.Schema]*compiled) {
	const (
		grey uint8 = iota + 1
		black
	)
	color := map[*compiled]uint8{}
	var walk func(s *compiled)
	walk = func(s *compiled) {
		color[s] = grey
		for i := range s.props {
			p := &s.props[i]
			if !p.fill {
				continue
			}
			switch t := fillTarget(p.s); color[t] {
			case grey:
				p.fill = false
			case 0:
				walk(t)
			}
		}
		color[s] = black
	}
	if root != nil {
		walk(root)
	}
	for _, s := range all {
		if s != nil && color[s] == 0 {
			walk(s)
		}
	}
}
