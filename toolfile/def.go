package toolfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/schemadec"
	"github.com/wieldhq/wield/schema"
	"go.yaml.in/yaml/v3"
)

// Def is one tool as written in a tool file (seed 004 §2), before its entry
// is turned into a handler.
type Def struct {
	Name        string
	Version     string
	Description string
	Category    string
	Tags        []string
	Parameters  []*Param
	// Schema is a hand-written JSON Schema of the input (`input_schema:`),
	// used as it is instead of one made from Parameters.
	Schema *jsonschema.Schema
	Entry  Entry
	Output *Output
	// wield's additions.
	Permission wield.Permission
	Timeout    time.Duration
	// MaxOutput is the tool's output budget in bytes (`max_output:`,
	// wield.Tool.MaxOutput); zero means the configuration's, else the
	// engine's default.
	MaxOutput   int
	Annotations wield.Annotations
	Secrets     []string
	// Examples are argument objects (`examples:`), each valid against the
	// input schema.
	Examples []json.RawMessage
	// Task is the `task:` key: whether an MCP client gets a task for a
	// call (see wield.Tool.Task).
	Task wield.TaskSupport
	// AllowedCallers is `allowed_callers:` (see toolfile/callers.go).
	AllowedCallers []string

	// File, Line and Col locate the definition, for Tool.Source and messages.
	File      string
	Line, Col int

	exampleNodes []*yaml.Node // beside Examples, for positions
	broken       bool         // a problem (not a warning) in its lines: left out
}

// Source is "file:line", as Tool.Source and duplicate warnings show it.
func (d *Def) Source() string { return fmt.Sprintf("%s:%d", d.File, d.Line) }

// Param is one parameter. Required is true when the file says so, and when
// the file is silent and there is no default (seed 000's ToolParameter
// defaults required to true; a default only makes sense for an optional
// parameter).
type Param struct {
	Name        string
	Type        string
	Required    bool
	Default     any
	HasDefault  bool
	Description string
	Validation  Validation

	defNode   *yaml.Node
	enumNodes []*yaml.Node // beside Validation.Enum
}

// Validation holds the rules of seed 004 §2.2.
type Validation struct {
	Pattern              string
	Format               string
	Enum                 []any
	Min, Max             *float64
	MinLength, MaxLength *int
	Items                *Param
	MinItems, MaxItems   *int
	Properties           []*Param // in file order
	Required             []string
}

// Entry says how the tool runs. Type picks a kind: builtin (Handler names a
// Go handler), command (Command), or a kind of [Loader.Kinds], which finds
// its other keys in Values.
type Entry struct {
	Type    string
	Handler string
	Command *Command
	Values  map[string]any

	// Line and Col locate the entry, for a kind's messages.
	Line, Col int
}

// decodeValues decodes the entry's other keys into v, a kind's entry
// struct, refusing keys v has no field for.
func (e *Entry) decodeValues(v any) error {
	raw, err := json.Marshal(e.Values)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Output is the optional output description: a type and, for objects,
// properties written `name: type`.
type Output struct {
	Type       string
	Properties []OutputProp
}

// OutputProp is one `name: type` line of an output.
type OutputProp struct{ Name, Type string }

var paramTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "array": true, "object": true}

func (d *decoder) tool(n *yaml.Node, fs []field) *Def {
	line, col := pos(n)
	if len(fs) > 0 {
		line, col = pos(fs[0].key)
	}
	def := &Def{File: d.file, Line: line, Col: col}
	var entry *field
	var short shortEntry
	for _, f := range fs {
		if short.take(f) {
			continue
		}
		switch f.name {
		case "kind":
		case "name":
			def.Name = d.str(f)
		case "version":
			def.Version = d.text(f)
		case "description":
			def.Description = d.str(f)
		case "category":
			def.Category = d.str(f)
		case "tags":
			def.Tags = d.strings(f)
		case "input_schema":
			def.Schema = d.inputSchema(f)
		case "parameters":
			list, ok := seq(f.val)
			if !ok {
				if kindName(f.val) != "null" {
					d.errorf(f.val, "parameters: expected a list, got %s", kindName(f.val))
				}
				continue
			}
			seen := map[string]bool{}
			for _, v := range list {
				p := d.param(v, "", true)
				if p == nil {
					continue
				}
				if seen[p.Name] {
					d.errorf(v, "parameter %q: defined twice", p.Name)
					continue
				}
				seen[p.Name] = true
				def.Parameters = append(def.Parameters, p)
			}
		case "entry":
			entry = &fs[indexOf(fs, f.name)]
		case "output":
			def.Output = d.output(f)
		case "permission":
			p := wield.Permission(d.str(f))
			switch p {
			case wield.PermissionAuto, wield.PermissionConfirm, wield.PermissionDeny:
				def.Permission = p
			default:
				d.errorf(f.val, "permission: %q is not auto, confirm or deny", p)
			}
		case "timeout":
			def.Timeout = d.duration(f)
		case "max_output":
			if v, isInt, ok := numberValue(f.val); ok && isInt && v < 1 {
				d.errorf(f.val, "max_output: must be at least 1 (bytes; leave it out for the configuration's max_output, else 65536)")
			} else if n := d.count(f); n != nil {
				def.MaxOutput = *n
			}
		case "task":
			def.Task = d.task(f)
		case "annotations":
			def.Annotations = d.annotations(f)
		case "secrets":
			def.Secrets = d.strings(f)
		case "examples":
			def.Examples, def.exampleNodes = d.examples(f)
		case "allowed_callers":
			def.AllowedCallers = d.allowedCallers(f)
		default:
			d.unknown(f, "tool")
		}
	}
	if def.Name == "" {
		d.errorf(start(n, fs), "tool: missing name")
	}
	d.checkDefaults(def.Parameters, "")
	// The entry is decoded last: a command template refers to parameters.
	if def.Schema != nil && len(def.Parameters) > 0 {
		for _, f := range fs {
			if f.name == "input_schema" {
				d.errorf(f.key, "input_schema and parameters both describe the input: keep one")
			}
		}
	}
	switch {
	case entry != nil && short.said():
		d.errorf(short.first(), "%s and entry both say how the tool runs: keep one", short.first().Value)
		def.Entry = d.entry(*entry, def)
	case entry != nil:
		def.Entry = d.entry(*entry, def)
	case short.said():
		def.Entry = d.shortEntry(short, def)
	default:
		d.errorf(start(n, fs), "tool %q: missing entry", def.Name)
	}
	for _, s := range def.Secrets {
		if !hasParam(def.Parameters, s) {
			d.errorf(start(n, fs), "secrets: %q is not a parameter", s)
		}
	}
	d.checkExamples(def)
	return def
}

// start is the node where a mapping's text begins (its first key), for
// problems of the mapping as a whole.
func start(n *yaml.Node, fs []field) *yaml.Node {
	if len(fs) > 0 {
		return fs[0].key
	}
	return n
}

func hasParam(ps []*Param, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

// duration accepts "30s" or a number of seconds.
func (d *decoder) duration(f field) time.Duration {
	switch {
	case isString(f.val):
		s := unwrap(f.val).Value
		v, err := time.ParseDuration(s)
		if err != nil || v < 0 {
			d.errorf(f.val, "%s: %q is not a duration like \"30s\"", f.name, s)
			return 0
		}
		return v
	case tag(f.val) == "!!int" || tag(f.val) == "!!float":
		if v := d.number(f); v != nil && *v >= 0 {
			return time.Duration(*v * float64(time.Second))
		}
	}
	d.errorf(f.val, "%s: expected a duration like \"30s\" or a number of seconds, got %s", f.name, kindName(f.val))
	return 0
}

func (d *decoder) annotations(f field) wield.Annotations {
	var a wield.Annotations
	fs, _ := d.mapping(f.val, "annotations")
	for _, f := range fs {
		switch f.name {
		case "read_only":
			a.ReadOnly = d.boolean(f)
		case "destructive":
			a.Destructive = d.boolean(f)
		case "idempotent":
			a.Idempotent = d.boolean(f)
		case "open_world":
			a.OpenWorld = d.boolean(f)
		default:
			d.unknown(f, "annotations")
		}
	}
	return a
}

// param decodes a parameter spec. A top-level parameter (a list entry) has
// a name key and follows the "no required and no default means required"
// rule; a nested one (a property, whose name is given, or an items spec) is
// required only when it says so or its object lists it.
func (d *decoder) param(n *yaml.Node, name string, topLevel bool) *Param {
	what := "parameter"
	if name != "" {
		what = fmt.Sprintf("property %q", name)
	}
	fs, ok := d.mapping(n, what)
	if !ok {
		return nil
	}
	p := &Param{Name: name}
	var requiredSet bool
	var validation *field
	for _, f := range fs {
		switch f.name {
		case "name":
			if name != "" || !topLevel {
				d.unknown(f, what)
				continue
			}
			p.Name = d.str(f)
			what = fmt.Sprintf("parameter %q", p.Name)
		case "type":
			p.Type = d.str(f)
			if p.Type != "" && !paramTypes[p.Type] {
				d.errorf(f.val, "%s: type %q is not string, number, integer, boolean, array or object", what, p.Type)
				p.Type = ""
			}
		case "required":
			p.Required = d.boolean(f)
			requiredSet = true
		case "default":
			if v, ok := d.value(f.val); ok {
				p.Default, p.HasDefault, p.defNode = v, true, f.val
			}
		case "description":
			p.Description = d.str(f)
		case "validation":
			validation = &fs[indexOf(fs, f.name)]
		default:
			d.unknown(f, what)
		}
	}
	if topLevel && p.Name == "" {
		d.errorf(start(n, fs), "parameter: missing name")
		return nil
	}
	if validation != nil {
		d.validation(*validation, p, what)
	}
	if topLevel && !requiredSet {
		p.Required = !p.HasDefault
	}
	if p.Required && p.HasDefault {
		d.warnf(p.defNode, "%s: required parameter has a default, which is never used", what)
	}
	return p
}

func indexOf(fs []field, name string) int {
	for i, f := range fs {
		if f.name == name {
			return i
		}
	}
	return -1
}

func (d *decoder) validation(vf field, p *Param, what string) {
	fs, ok := d.mapping(vf.val, what+" validation")
	if !ok {
		return
	}
	v := &p.Validation
	only := func(f field, types ...string) {
		if p.Type == "" {
			return
		}
		for _, t := range types {
			if t == p.Type {
				return
			}
		}
		d.errorf(f.key, "%s: %s applies to %s parameters, not %s", what, f.name, strings.Join(types, " and "), p.Type)
	}
	for _, f := range fs {
		// Name the parameter in messages of the value helpers.
		named := field{name: what + ": " + f.name, key: f.key, val: f.val}
		switch f.name {
		case "pattern":
			only(f, "string")
			v.Pattern = d.str(named)
			if v.Pattern != "" {
				// Go's dialect (RE2), as the validator matches it: lookarounds
				// and backreferences are refused here, not at call time.
				if _, err := schema.CompilePattern(v.Pattern); err != nil {
					d.errorf(f.val, "%s: pattern: %v", what, err)
					v.Pattern = ""
				}
			}
		case "format":
			only(f, "string")
			v.Format = d.str(named)
			if v.Format != "" && !slices.Contains(schema.CheckedFormats(), v.Format) {
				d.warnf(f.val, "%s: format %q is not checked, only shown to the model (checked: %s)", what, v.Format, strings.Join(schema.CheckedFormats(), ", "))
			}
		case "enum":
			list, ok := seq(f.val)
			if !ok {
				d.errorf(f.val, "%s: enum: expected a list, got %s", what, kindName(f.val))
				continue
			}
			for _, e := range list {
				if x, ok := d.value(e); ok {
					v.Enum = append(v.Enum, x)
					p.enumNodes = append(p.enumNodes, e)
				}
			}
		case "min":
			only(f, "number", "integer")
			v.Min = d.number(named)
		case "max":
			only(f, "number", "integer")
			v.Max = d.number(named)
		case "min_length":
			only(f, "string")
			v.MinLength = d.count(named)
		case "max_length":
			only(f, "string")
			v.MaxLength = d.count(named)
		case "min_items":
			only(f, "array")
			v.MinItems = d.count(named)
		case "max_items":
			only(f, "array")
			v.MaxItems = d.count(named)
		case "items":
			only(f, "array")
			if isString(f.val) {
				s := unwrap(f.val).Value
				if !paramTypes[s] {
					d.errorf(f.val, "%s: items: type %q is not string, number, integer, boolean, array or object", what, s)
					continue
				}
				v.Items = &Param{Type: s}
				continue
			}
			v.Items = d.param(f.val, "", false)
		case "properties":
			only(f, "object")
			props, _ := d.mapping(f.val, what+" properties")
			for _, pf := range props {
				if q := d.param(pf.val, pf.name, false); q != nil {
					q.Name = pf.name
					v.Properties = append(v.Properties, q)
				}
			}
		case "required":
			only(f, "object")
			v.Required = d.strings(named)
		default:
			d.unknown(f, what+" validation")
		}
	}
	for _, r := range v.Required {
		if len(v.Properties) > 0 && !hasParam(v.Properties, r) {
			d.errorf(start(vf.val, fs), "%s: required property %q is not among the properties", what, r)
		}
	}
	if v.Min != nil && v.Max != nil && *v.Min > *v.Max {
		d.errorf(start(vf.val, fs), "%s: min %v is greater than max %v", what, *v.Min, *v.Max)
	}
}

// givenKinds are the entry types that run with a [Kind] the program gives
// the [Loader] (wield's commands give all three); without it their tools
// load without a handler.
var givenKinds = map[string]bool{"http": true, "mcp": true, "remote": true}

// unrunKinds are the entry types the tool-file design (seed 004) names
// without saying what they run: wield runs neither, and their tools load
// without a handler (a fixture may want one: the conformance tasks' failed
// task).
var unrunKinds = map[string]bool{"external": true, "custom": true}

// noHandler is what the warning about an entry type without a handler adds.
const noHandler = "the tool loads, and its calls answer executor_not_found"

func (d *decoder) entry(f field, def *Def) Entry {
	line, col := pos(f.val)
	e := Entry{Line: line, Col: col}
	fs, ok := d.mapping(f.val, "entry")
	if !ok {
		return e
	}
	e.Line, e.Col = pos(start(f.val, fs))
	var typ *field
	for i := range fs {
		if fs[i].name == "type" {
			typ = &fs[i]
			e.Type = d.str(fs[i])
		}
	}
	if typ == nil {
		d.errorf(start(f.val, fs), "entry: missing type")
		return e
	}
	rest := slices.DeleteFunc(slices.Clone(fs), func(f field) bool { return f.name == "type" })
	switch {
	case e.Type == "builtin":
		for _, f := range rest {
			if f.name != "handler" {
				d.unknown(f, "builtin entry")
				continue
			}
			e.Handler = d.str(f)
			if e.Handler != "" && d.builtins != nil && d.builtins[e.Handler] == nil {
				d.warnf(f.val, "entry: builtin handler %q is not provided", e.Handler)
			}
		}
		if e.Handler == "" {
			d.errorf(start(f.val, fs), "entry: builtin entry without handler")
		}
	case e.Type == "command":
		e.Command = d.command(rest, def, start(f.val, fs))
	case d.kinds[e.Type] != nil:
		e.Values = map[string]any{}
		for _, f := range rest {
			if f.name == "handler" {
				e.Handler = d.str(f)
				continue
			}
			if v, ok := d.value(f.val); ok {
				e.Values[f.name] = v
			}
		}
	case givenKinds[e.Type]:
		d.warnf(typ.val, "entry type %s is not given to this loader (Loader.Kinds): %s", e.Type, noHandler)
	case unrunKinds[e.Type]:
		d.warnf(typ.val, "entry type %s has no executor in wield: %s", e.Type, noHandler)
	case e.Type != "":
		d.errorf(typ.val, "unknown entry type %q", e.Type)
	}
	return e
}

var outputTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "array": true, "object": true, "any": true, "null": true}

func (d *decoder) output(f field) *Output {
	o := &Output{}
	fs, _ := d.mapping(f.val, "output")
	for _, f := range fs {
		switch f.name {
		case "type":
			o.Type = d.str(f)
			if o.Type != "" && !outputTypes[o.Type] {
				d.errorf(f.val, "output: type %q is not a JSON type or any", o.Type)
				o.Type = ""
			}
		case "properties":
			props, _ := d.mapping(f.val, "output properties")
			for _, pf := range props {
				t := d.str(pf)
				if t != "" && !outputTypes[t] {
					d.errorf(pf.val, "output: property %q: type %q is not a JSON type or any", pf.name, t)
					continue
				}
				o.Properties = append(o.Properties, OutputProp{pf.name, t})
			}
		default:
			d.unknown(f, "output")
		}
	}
	return o
}

// inputSchema decodes `input_schema:`, a JSON Schema written in YAML or
// JSON (any draft-2020-12 keyword, $defs and $ref included), checked as
// the engine will use it.
func (d *decoder) inputSchema(f field) *jsonschema.Schema {
	v, ok := d.value(f.val)
	if !ok {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		d.errorf(f.val, "input_schema: %v", err)
		return nil
	}
	// Read as an imported MCP server's schemas are, in time linear in its
	// size (jsonschema-go's own decoding costs the size times the depth).
	ps, err := schemadec.Decode(raw)
	if err != nil {
		d.errorf(f.val, "input_schema: not a JSON Schema: %v", err)
		return nil
	}
	var s jsonschema.Schema
	if ps != nil { // null is an empty schema, as json.Unmarshal left it
		s = *ps
	}
	if s.Type != "" && s.Type != "object" {
		d.errorf(f.val, "input_schema: the input of a tool is an object, not %s", s.Type)
		return nil
	}
	if _, err := schema.Compile(&s); err != nil {
		d.errorf(f.val, "input_schema: %v", err)
		return nil
	}
	return &s
}
