package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/openai"
)

var update = flag.Bool("update", false, "rewrite testdata/golden")

// The representative tools: seed 000's web_search as a typed tool, a typed
// tool with nested objects, arrays of objects, enums, optional fields and
// defaults, a recursive typed tool ($defs), raw-schema tools with $defs and
// $ref, a map, and a name that some providers reject, and a tool without
// parameters.

type searchIn struct {
	Query     string `json:"query" description:"Search query using keywords."`
	Freshness string `json:"freshness,omitempty" description:"Time range filter: 'noLimit', 'oneDay', ..." default:"noLimit"`
	Count     int    `json:"count,omitempty" description:"Number of results to return (1-50)" default:"10" minimum:"1" maximum:"50"`
}

type searchHit struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

type eventIn struct {
	Title      string     `json:"title" description:"Event title" minLength:"1" maxLength:"200"`
	Start      time.Time  `json:"start" description:"Start time"`
	Minutes    int        `json:"duration_minutes,omitempty" description:"Length in minutes" default:"30" minimum:"5" maximum:"480"`
	Visibility string     `json:"visibility,omitempty" description:"Who can see it" enum:"public,private,confidential" default:"private"`
	Location   *location  `json:"location,omitempty" description:"Where it happens"`
	Attendees  []attendee `json:"attendees" description:"People invited" minItems:"1" maxItems:"50"`
	Tags       []string   `json:"tags,omitempty" description:"Labels" uniqueItems:"true"`
	Remind     bool       `json:"remind,omitempty" description:"Send a reminder"`
}

type location struct {
	Name    string   `json:"name" description:"Place name"`
	Address *address `json:"address,omitempty"`
}

type address struct {
	Street  string `json:"street"`
	City    string `json:"city"`
	Country string `json:"country" enum:"FR,DE,JP" description:"ISO country code"`
}

type attendee struct {
	Email    string `json:"email" format:"email"`
	Role     string `json:"role" enum:"required,optional"`
	Priority int    `json:"priority,omitempty" examples:"1,2" minimum:"0" maximum:"9"`
}

type eventOut struct {
	ID   string `json:"id"`
	Link string `json:"link"`
}

type section struct {
	Heading  string    `json:"heading" description:"Section heading"`
	Children []section `json:"children,omitempty" description:"Subsections"`
}

type outlineIn struct {
	Title    string    `json:"title"`
	Sections []section `json:"sections"`
}

func mustSchema(t testing.TB, text string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatalf("schema %s: %v", text, err)
	}
	return &s
}

var noop = wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil })

func webSearch() *wield.Tool {
	t := wield.Func("web_search", "Search the web for information using Bocha AI search engine",
		func(context.Context, searchIn) ([]searchHit, error) { return nil, nil })
	t.Annotations = wield.Annotations{ReadOnly: true, OpenWorld: true}
	return t
}

func representativeTools(t testing.TB) []*wield.Tool {
	event := wield.Func("create_event", "Create a calendar event and invite people.",
		func(context.Context, eventIn) (eventOut, error) { return eventOut{}, nil })
	event.Annotations = wield.Annotations{OpenWorld: true}
	outline := wield.Func("save_outline", "Save a document outline of nested sections.",
		func(context.Context, outlineIn) (string, error) { return "", nil })
	ping := wield.Func("ping", "Check that the service answers.",
		func(context.Context, struct{}) (string, error) { return "pong", nil })
	ping.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}

	records := wield.Raw("query_records", "Query rows of a table with filters.", mustSchema(t, `{
		"type": "object",
		"$defs": {
			"filter": {
				"type": "object",
				"properties": {
					"field": {"type": "string", "description": "Column name"},
					"op": {"type": "string", "enum": ["eq", "ne", "lt", "gt"]},
					"value": {"type": ["string", "number", "null"], "description": "Value to compare with"}
				},
				"required": ["field", "op", "value"],
				"additionalProperties": false
			},
			"order": {"type": "string", "enum": ["asc", "desc"]}
		},
		"properties": {
			"table": {"type": "string", "description": "Table name", "pattern": "^[a-z_]+$", "maxLength": 63},
			"filters": {"type": "array", "items": {"$ref": "#/$defs/filter"}, "maxItems": 10},
			"order": {"$ref": "#/$defs/order", "description": "Sort order", "default": "asc"},
			"limit": {"type": "integer", "enum": [10, 50, 100], "default": 10, "description": "Rows per page"},
			"format": {"const": "json", "description": "Output format"},
			"cursor": {"type": ["string", "null"], "description": "Opaque cursor from a previous page"},
			"source": {"type": "string", "format": "uri", "description": "Database URL"},
			"sample": {"anyOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": 1}, {"type": "null"}], "description": "Fraction of rows to sample"}
		},
		"required": ["table"]
	}`), noop)
	records.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}
	records.AllowedCallers = []string{wield.AllowDirect, wield.AllowProgram}
	records.Examples = []json.RawMessage{json.RawMessage(`{"table":"orders","filters":[{"field":"status","op":"eq","value":"open"}],"limit":50}`)}

	labels := wield.Raw("set_labels", "Replace the labels of a resource.", mustSchema(t, `{
		"type": "object",
		"properties": {
			"resource": {"type": "string"},
			"labels": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Label name to value"},
			"extra": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}}
		},
		"required": ["resource", "labels"]
	}`), noop)
	labels.Annotations = wield.Annotations{Destructive: true, Idempotent: true}
	labels.AllowedCallers = []string{wield.AllowDirect}

	read := wield.Raw("files.read", "Read a text file.", mustSchema(t, `{
		"type": "object",
		"properties": {"path": {"type": "string", "description": "File path", "minLength": 1}},
		"required": ["path"],
		"additionalProperties": false
	}`), noop)
	read.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}

	search := webSearch()
	search.Examples = []json.RawMessage{
		json.RawMessage(`{"query":"golang generics tutorial","count":5}`),
		json.RawMessage(`{"query":"weather <Paris> & Lyon","freshness":"oneDay"}`),
	}
	return []*wield.Tool{search, event, outline, records, labels, read, ping}
}

// dialects are the exports under test, by golden file name.
var dialects = []struct {
	file string
	d    llm.Dialect
}{
	{"openai.json", openai.Chat},
	{"openai-strict.json", openai.ChatStrict},
	{"openai-responses.json", openai.Responses},
	{"openai-responses-strict.json", openai.ResponsesStrict},
	{"anthropic.json", anthropic.Dialect},
	{"anthropic-strict.json", anthropic.Strict},
	{"gemini.json", gemini.Dialect},
	{"gemini-json-schema.json", gemini.JSONSchema},
	{"mcp.json", llm.MCP},
}

type golden struct {
	Tools    []any         `json:"tools"`
	Problems []llm.Problem `json:"problems"`
}

// checkGolden compares got with the golden file, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func marshalGolden(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExportGolden(t *testing.T) {
	tools := representativeTools(t)
	for _, tc := range dialects {
		t.Run(tc.d.Name(), func(t *testing.T) {
			vs, ps := llm.Export(tc.d, tools)
			checkGolden(t, tc.file, marshalGolden(t, golden{Tools: vs, Problems: ps}))
		})
	}
}

// TestExportProblems pins which tools each dialect leaves out and where.
func TestExportProblems(t *testing.T) {
	tools := representativeTools(t)
	type where struct{ Tool, Path string }
	want := map[string][]where{
		"openai": {{"files.read", ""}},
		"openai-strict": {
			{"set_labels", "/properties/extra"},
			{"set_labels", "/properties/extra"},
			{"set_labels", "/properties/labels/additionalProperties"},
			{"files.read", ""},
		},
		"openai-responses": {{"files.read", ""}},
		"openai-responses-strict": {
			{"set_labels", "/properties/extra"},
			{"set_labels", "/properties/extra"},
			{"set_labels", "/properties/labels/additionalProperties"},
			{"files.read", ""},
		},
		"anthropic": {{"files.read", ""}},
		"gemini-json-schema": {
			{"set_labels", "/properties/extra"},
		},
		"anthropic-strict": {
			{"save_outline", "/$defs/section"},
			{"set_labels", "/properties/extra"},
			{"set_labels", "/properties/extra"},
			{"set_labels", "/properties/labels/additionalProperties"},
			{"files.read", ""},
		},
		"gemini": {
			{"save_outline", "/properties/sections/items/properties/children/items"},
			{"set_labels", "/properties/extra"},
			{"set_labels", "/properties/extra"},
			{"set_labels", "/properties/labels/additionalProperties"},
		},
		"mcp": nil,
	}
	for _, tc := range dialects {
		t.Run(tc.d.Name(), func(t *testing.T) {
			vs, ps := llm.Export(tc.d, tools)
			var got []where
			left := map[string]bool{}
			for _, p := range ps {
				got = append(got, where{p.Tool, p.Path})
				left[p.Tool] = true
				if p.Dialect != tc.d.Name() || p.Message == "" {
					t.Errorf("problem %+v: want dialect %q and a message", p, tc.d.Name())
				}
			}
			if diff := cmp.Diff(want[tc.d.Name()], got); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%v", diff, ps)
			}
			if n := len(tools) - len(left); len(vs) != n {
				t.Errorf("exported %d tools, want %d: a tool with a problem is left out, the others are kept", len(vs), n)
			}
		})
	}
}

func TestExportListRules(t *testing.T) {
	a := webSearch()
	b := webSearch()
	b.Description = "a second tool of the same name"
	noSchema := &wield.Tool{Name: "broken"}
	vs, ps := llm.Export(llm.MCP, []*wield.Tool{a, nil, b, noSchema})
	if len(vs) != 1 || vs[0].(llm.MCPTool).Description != a.Description {
		t.Errorf("exported %+v, want only the first web_search", vs)
	}
	want := []llm.Problem{
		{Dialect: "mcp", Message: "tool 1 of the list is nil"},
		{Tool: "web_search", Dialect: "mcp", Message: "a tool of the same name comes earlier in the list; names must be unique"},
		{Tool: "broken", Dialect: "mcp", Message: "the tool has no input schema"},
	}
	if diff := cmp.Diff(want, ps); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    llm.Problem
		want string
	}{
		{llm.Problem{Tool: "a", Dialect: "gemini", Path: "/properties/x", Message: "bad"}, `gemini: tool "a" at /properties/x: bad`},
		{llm.Problem{Tool: "a", Dialect: "openai", Message: "bad name"}, `openai: tool "a": bad name`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.p.String()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

// TestMCPToolNames: MCP accepts names of 1-128 letters, digits, _ . and -.
func TestMCPToolNames(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{{"files.read-v2", true}, {strings.Repeat("a", 128), true}, {strings.Repeat("a", 129), false}, {"a b", false}} {
		tool := wield.Raw(tt.name, "T", &jsonschema.Schema{Type: "object"}, nil)
		tools, ps := llm.MCPTools([]*wield.Tool{tool})
		if got := len(ps) == 0 && len(tools) == 1; got != tt.ok {
			t.Errorf("%q: accepted %v, want %v (%v)", tt.name, got, tt.ok, ps)
		}
	}
}

func TestMCPTools(t *testing.T) {
	tools, ps := llm.MCPTools(representativeTools(t))
	if len(ps) != 0 {
		t.Fatalf("problems: %v", ps)
	}
	got := map[string]llm.MCPAnnotations{}
	outputs := map[string]bool{}
	for _, mt := range tools {
		got[mt.Name] = mt.Annotations
		outputs[mt.Name] = mt.OutputSchema != nil
	}
	if diff := cmp.Diff(llm.MCPAnnotations{ReadOnlyHint: true, OpenWorldHint: true}, got["web_search"]); diff != "" {
		t.Errorf("web_search annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(llm.MCPAnnotations{DestructiveHint: true, IdempotentHint: true}, got["set_labels"]); diff != "" {
		t.Errorf("set_labels annotations (-want +got):\n%s", diff)
	}
	// Only object outputs may be an MCP outputSchema.
	wantOut := map[string]bool{"web_search": false, "create_event": true, "save_outline": false, "query_records": false, "set_labels": false, "files.read": false, "ping": false}
	if diff := cmp.Diff(wantOut, outputs); diff != "" {
		t.Errorf("output schemas (-want +got):\n%s", diff)
	}
}

func TestPointer(t *testing.T) {
	tests := []struct {
		base   string
		tokens []string
		want   string
	}{
		{"", []string{"properties", "a"}, "/properties/a"},
		{"/x", []string{"properties", "a/b~c"}, "/x/properties/a~1b~0c"},
		{"/x", nil, "/x"},
	}
	for _, tt := range tests {
		if got := llm.Pointer(tt.base, tt.tokens...); got != tt.want {
			t.Errorf("Pointer(%q, %q) = %q, want %q", tt.base, tt.tokens, got, tt.want)
		}
	}
}

func TestResolveRef(t *testing.T) {
	root := mustSchema(t, `{"type":"object","$defs":{"a/b":{"type":"string"}},"definitions":{"n":{"type":"integer"}}}`)
	tests := []struct {
		ref      string
		wantType string
		ok       bool
	}{
		{"#", "object", true},
		{"#/$defs/a~1b", "string", true},
		{"#/definitions/n", "integer", true},
		{"#/$defs/missing", "", false},
		{"https://example.com/s.json", "", false},
	}
	for _, tt := range tests {
		s, ok := llm.ResolveRef(root, tt.ref)
		if ok != tt.ok || (ok && s.Type != tt.wantType) {
			t.Errorf("ResolveRef(%q) = %v, %v; want type %q, %v", tt.ref, s, ok, tt.wantType, tt.ok)
		}
	}
}

func TestKeywords(t *testing.T) {
	s := mustSchema(t, `{"type":["string","null"],"items":{"type":"string"},"x-extra":1,"description":"d","minLength":1}`)
	want := []string{"description", "type", "minLength", "items", "x-extra"}
	if diff := cmp.Diff(want, llm.Keywords(s)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !llm.IsFalse(&jsonschema.Schema{Not: &jsonschema.Schema{}}) || llm.IsFalse(&jsonschema.Schema{}) || !llm.IsTrue(&jsonschema.Schema{}) || llm.IsTrue(s) {
		t.Error("IsTrue/IsFalse disagree with JSON true and false schemas")
	}
}

func TestNote(t *testing.T) {
	tests := []struct{ desc, note, want string }{
		{"", "Default: 1", "Default: 1"},
		{"Count", "Default: 1", "Count;Default: 1"},
		{"Count;Default: 1", "Default: 1", "Count;Default: 1"},
		{"Count", "", "Count"},
	}
	for _, tt := range tests {
		if got := llm.Note(tt.desc, tt.note); got != tt.want {
			t.Errorf("Note(%q, %q) = %q, want %q", tt.desc, tt.note, got, tt.want)
		}
	}
}

func ExampleExport() {
	type weatherIn struct {
		City  string `json:"city" description:"City name"`
		Units string `json:"units,omitempty" enum:"c,f" default:"c"`
	}
	weather := wield.Func("weather", "Current weather for a city",
		func(context.Context, weatherIn) (string, error) { return "sunny", nil })
	bad := wield.Func("weather.v2", "Current weather, again",
		func(context.Context, weatherIn) (string, error) { return "sunny", nil })

	tools, problems := llm.Export(openai.ChatStrict, []*wield.Tool{weather, bad})
	out, _ := json.Marshal(tools)
	fmt.Println(string(out))
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// [{"type":"function","function":{"name":"weather","description":"Current weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"units":{"type":["string","null"],"description":"Default: c","enum":["c","f",null]}},"required":["city","units"],"additionalProperties":false},"strict":true}}]
	// openai-strict: tool "weather.v2": name "weather.v2" is not accepted: the provider requires 1-64 letters, digits, _ or -
}

// The checkers below restate each provider's published constraints on its
// own, without the exporters' code, and run over the golden files: what the
// exporters wrote must pass them.

var (
	reOpenAIName    = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	reGeminiName    = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`)
	reGeminiParam   = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`)
	reMCPName       = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`)
	openAIStrictKey = set("type", "description", "title", "properties", "required", "additionalProperties", "items",
		"enum", "const", "anyOf", "$ref", "$defs", "pattern", "format", "multipleOf", "minimum", "maximum",
		"exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems")
	geminiJSONRefused = set("not", "if", "then", "else", "allOf", "patternProperties", "dependentRequired", "dependentSchemas",
		"dependencies", "unevaluatedProperties", "unevaluatedItems", "contains", "propertyNames", "oneOf", "definitions")
	anthropicField     = set("name", "description", "input_schema", "input_examples", "allowed_callers", "strict")
	reCodeExecution    = regexp.MustCompile(`^code_execution_[0-9]{8}$`)
	anthropicStrictKey = set("type", "description", "title", "properties", "required", "additionalProperties", "items",
		"enum", "const", "anyOf", "allOf", "$ref", "$defs", "pattern", "format", "minItems")
	anthropicFormats = set("date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid")
	openAIFormats    = set("date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid")
	jsonTypes        = set("string", "number", "integer", "boolean", "object", "array", "null")
	geminiKey        = set("type", "format", "title", "description", "nullable", "enum", "items", "minItems", "maxItems",
		"properties", "propertyOrdering", "required", "minProperties", "maxProperties", "minLength", "maxLength",
		"pattern", "minimum", "maximum", "default", "example", "anyOf")
	geminiTypes   = set("STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL")
	geminiFormats = map[string]map[string]bool{"NUMBER": set("float", "double"), "INTEGER": set("int32", "int64"), "STRING": set("enum", "date-time")}
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

type checker struct {
	errs  []string
	props int
	enums int
}

func (c *checker) errorf(path, format string, args ...any) {
	c.errs = append(c.errs, path+": "+fmt.Sprintf(format, args...))
}

func obj(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

func typesOf(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			str, _ := x.(string)
			out = append(out, str)
		}
		return out
	}
	return nil
}

// checkOpenAIStrict checks one strict function's parameters against
// OpenAI's Structured Outputs rules: an object root without anyOf; on
// every object additionalProperties false and every property required;
// only the supported keywords and formats; $ref alone and to $defs; at
// most 5000 properties, 10 levels of objects, 1000 enum values.
func checkOpenAIStrict(params any) []string {
	c := &checker{}
	root, ok := obj(params)
	if !ok {
		return []string{"parameters are not an object"}
	}
	if !slices.Equal(typesOf(root), []string{"object"}) || root["anyOf"] != nil {
		c.errorf("", "root must be type object without anyOf")
	}
	defs, _ := obj(root["$defs"])
	c.strict(root, "", 1, defs)
	for name, d := range defs {
		c.strict(d, "/$defs/"+name, 1, defs)
	}
	if c.props > 5000 {
		c.errorf("", "%d properties", c.props)
	}
	if c.enums > 1000 {
		c.errorf("", "%d enum values", c.enums)
	}
	return c.errs
}

func (c *checker) strict(v any, path string, level int, defs map[string]any) {
	s, ok := obj(v)
	if !ok {
		c.errorf(path, "schema is %T, not an object", v)
		return
	}
	for k := range s {
		if !openAIStrictKey[k] || (k == "$defs" && path != "") {
			c.errorf(path, "keyword %q not supported", k)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		if len(s) != 1 {
			c.errorf(path, "$ref with sibling keywords")
		}
		if _, ok := defs[strings.TrimPrefix(ref, "#/$defs/")]; ref != "#" && !ok {
			c.errorf(path, "$ref %q does not resolve", ref)
		}
		return
	}
	types := typesOf(s)
	_, hasConst := s["const"]
	if len(types) == 0 && s["anyOf"] == nil && s["enum"] == nil && !hasConst {
		c.errorf(path, "no type")
	}
	for _, t := range types {
		if !jsonTypes[t] {
			c.errorf(path, "type %q", t)
		}
	}
	if f, ok := s["format"].(string); ok && !openAIFormats[f] {
		c.errorf(path, "format %q not supported", f)
	}
	if e, ok := s["enum"].([]any); ok {
		c.enums += len(e)
	}
	if branches, ok := s["anyOf"].([]any); ok {
		for i, b := range branches {
			c.strict(b, fmt.Sprintf("%s/anyOf/%d", path, i), level, defs)
		}
	}
	if slices.Contains(types, "array") {
		if s["items"] == nil {
			c.errorf(path, "array without items")
		} else {
			c.strict(s["items"], path+"/items", level, defs)
		}
	}
	if slices.Contains(types, "object") {
		if level > 10 {
			c.errorf(path, "nesting level %d", level)
		}
		if s["additionalProperties"] != false {
			c.errorf(path, "additionalProperties is %v, not false", s["additionalProperties"])
		}
		props, _ := obj(s["properties"])
		required, _ := s["required"].([]any)
		var req []string
		for _, r := range required {
			str, _ := r.(string)
			req = append(req, str)
		}
		for name, p := range props {
			c.props++
			if !slices.Contains(req, name) {
				c.errorf(path, "property %q not required", name)
			}
			c.strict(p, path+"/properties/"+name, level+1, defs)
		}
		if len(req) != len(props) {
			c.errorf(path, "required lists %d names for %d properties", len(req), len(props))
		}
	}
}

// anthropicStrict checks a schema of a strict Anthropic tool against the
// structured outputs guide's JSON Schema limitations: the supported
// keywords and formats, additionalProperties false on every object,
// minItems 0 or 1, local references and no recursion.
func (c *checker) anthropicStrict(v any, path string, defs map[string]any, refs []string) {
	s, ok := obj(v)
	if !ok {
		c.errorf(path, "schema is %T, not an object", v)
		return
	}
	for k := range s {
		if !anthropicStrictKey[k] || (k == "$defs" && path != "") {
			c.errorf(path, "keyword %q not supported", k)
		}
	}
	for _, t := range typesOf(s) {
		if !jsonTypes[t] {
			c.errorf(path, "type %q", t)
		}
	}
	if f, ok := s["format"].(string); ok && !anthropicFormats[f] {
		c.errorf(path, "format %q not supported", f)
	}
	if n, ok := s["minItems"].(float64); ok && n > 1 {
		c.errorf(path, "minItems %v", n)
	}
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		switch d, ok := defs[name]; {
		case !ok:
			c.errorf(path, "$ref %q does not resolve", ref)
		case slices.Contains(refs, ref) || len(refs) > 32:
			c.errorf(path, "recursive $ref %q", ref)
		default:
			c.anthropicStrict(d, path, defs, append(refs, ref))
		}
	}
	for _, key := range []string{"anyOf", "allOf"} {
		branches, _ := s[key].([]any)
		for i, b := range branches {
			c.anthropicStrict(b, fmt.Sprintf("%s/%s/%d", path, key, i), defs, refs)
		}
	}
	if s["items"] != nil {
		c.anthropicStrict(s["items"], path+"/items", defs, refs)
	}
	if slices.Contains(typesOf(s), "object") || s["properties"] != nil {
		if s["additionalProperties"] != false {
			c.errorf(path, "additionalProperties is %v, not false", s["additionalProperties"])
		}
		props, _ := obj(s["properties"])
		for name, p := range props {
			c.anthropicStrict(p, path+"/properties/"+name, defs, refs)
		}
	}
}

// geminiJSON checks a schema of a gemini-json-schema declaration: none of
// the keywords Gemini does not read and whose loss changes the shape
// (https://ai.google.dev/gemini-api/docs/structured-output#json-schema-support),
// no oneOf (Gemini reads anyOf), no definitions (it reads $defs).
func (c *checker) geminiJSON(v any, path string) {
	switch s := v.(type) {
	case map[string]any:
		for k, x := range s {
			if geminiJSONRefused[k] {
				c.errorf(path, "keyword %q", k)
			}
			switch k {
			case "properties", "$defs":
				if m, ok := obj(x); ok {
					for n, p := range m {
						c.geminiJSON(p, path+"/"+k+"/"+n)
					}
				}
			case "const", "enum", "default", "examples":
			default:
				c.geminiJSON(x, path+"/"+k)
			}
		}
	case []any:
		for i, x := range s {
			c.geminiJSON(x, fmt.Sprintf("%s/%d", path, i))
		}
	}
}

// checkGemini checks one function declaration against the Gemini API's
// schema subset: only its fields, upper-case types, enum only on STRING,
// no references, required and propertyOrdering naming declared
// properties, objects with properties and arrays with items, known formats.
func checkGemini(decl map[string]any) []string {
	c := &checker{}
	name, _ := decl["name"].(string)
	if !reGeminiName.MatchString(name) {
		c.errorf("", "name %q", name)
	}
	params, ok := decl["parameters"]
	if !ok {
		return c.errs
	}
	root, _ := obj(params)
	if root["type"] != "OBJECT" {
		c.errorf("", "parameters type %v, want OBJECT", root["type"])
	}
	props, _ := obj(root["properties"])
	if len(props) == 0 {
		c.errorf("", "parameters with no properties must be left unset")
	}
	for p := range props {
		if !reGeminiParam.MatchString(p) {
			c.errorf("", "parameter name %q", p)
		}
	}
	c.gemini(root, "")
	return c.errs
}

func (c *checker) gemini(v any, path string) {
	s, ok := obj(v)
	if !ok {
		c.errorf(path, "schema is %T, not an object", v)
		return
	}
	for k := range s {
		if !geminiKey[k] {
			c.errorf(path, "field %q not supported", k)
		}
	}
	typ, _ := s["type"].(string)
	if typ == "" && s["anyOf"] == nil {
		c.errorf(path, "no type")
	}
	if typ != "" && !geminiTypes[typ] {
		c.errorf(path, "type %q", typ)
	}
	if n, ok := s["nullable"]; ok && n != true {
		c.errorf(path, "nullable is %v", n)
	}
	if f, ok := s["format"].(string); ok && !geminiFormats[typ][f] {
		c.errorf(path, "format %q not supported for %s", f, typ)
	}
	if e, ok := s["enum"].([]any); ok {
		if typ != "STRING" {
			c.errorf(path, "enum on type %s", typ)
		}
		for _, x := range e {
			if _, ok := x.(string); !ok {
				c.errorf(path, "enum value %v is not a string", x)
			}
		}
	}
	if branches, ok := s["anyOf"].([]any); ok {
		for i, b := range branches {
			c.gemini(b, fmt.Sprintf("%s/anyOf/%d", path, i))
		}
	}
	if typ == "ARRAY" {
		if s["items"] == nil {
			c.errorf(path, "ARRAY without items")
		} else {
			c.gemini(s["items"], path+"/items")
		}
	}
	if typ == "OBJECT" {
		props, _ := obj(s["properties"])
		if len(props) == 0 && path != "" {
			c.errorf(path, "OBJECT without properties")
		}
		for name, p := range props {
			c.gemini(p, path+"/properties/"+name)
		}
		for _, key := range []string{"required", "propertyOrdering"} {
			list, _ := s[key].([]any)
			for _, r := range list {
				if _, ok := props[r.(string)]; !ok {
					c.errorf(path, "%s names %q, not a property", key, r)
				}
			}
			if key == "propertyOrdering" && len(list) > 0 && len(list) != len(props) {
				c.errorf(path, "propertyOrdering lists %d of %d properties", len(list), len(props))
			}
		}
	}
}

// checkTool checks one exported tool of a dialect by the provider's rules.
func checkTool(dialect string, tool any) []string {
	m, ok := obj(tool)
	if !ok {
		return []string{"tool is not an object"}
	}
	objectSchema := func(v any) bool {
		s, ok := obj(v)
		return ok && s["type"] == "object"
	}
	c := &checker{}
	switch dialect {
	case "openai", "openai-strict":
		fn, _ := obj(m["function"])
		if m["type"] != "function" || !reOpenAIName.MatchString(fmt.Sprint(fn["name"])) || !objectSchema(fn["parameters"]) {
			c.errorf("", "not a function tool with a valid name and object parameters: %v", m)
		}
		if strict := dialect == "openai-strict"; (fn["strict"] == true) != strict {
			c.errorf("", "strict is %v", fn["strict"])
		} else if strict {
			c.errs = append(c.errs, checkOpenAIStrict(fn["parameters"])...)
		}
	case "openai-responses", "openai-responses-strict":
		if m["type"] != "function" || !reOpenAIName.MatchString(fmt.Sprint(m["name"])) || !objectSchema(m["parameters"]) {
			c.errorf("", "not a function tool with a valid name and object parameters: %v", m)
		}
		if callers, ok := m["allowed_callers"]; ok {
			list, _ := callers.([]any)
			for _, v := range list {
				if str, _ := v.(string); str != "direct" && str != "programmatic" {
					c.errorf("", "allowed_callers value %v", v)
				}
			}
			if len(list) == 0 {
				c.errorf("", "allowed_callers is not a list of callers")
			}
		}
		strict := dialect == "openai-responses-strict"
		if m["strict"] != strict {
			c.errorf("", "strict is %v, want %v written out", m["strict"], strict)
		} else if strict {
			c.errs = append(c.errs, checkOpenAIStrict(m["parameters"])...)
		}
	case "anthropic", "anthropic-strict":
		for k := range m {
			if !anthropicField[k] {
				c.errorf("", "field %q", k)
			}
		}
		if !reOpenAIName.MatchString(fmt.Sprint(m["name"])) || !objectSchema(m["input_schema"]) {
			c.errorf("", "invalid name or input_schema: %v", m)
		}
		if ex, ok := m["input_examples"]; ok {
			list, _ := ex.([]any)
			for i, e := range list {
				if _, ok := obj(e); !ok {
					c.errorf("", "input_examples[%d] is not an object", i)
				}
			}
			if len(list) == 0 {
				c.errorf("", "input_examples is not a list of objects")
			}
		}
		if callers, ok := m["allowed_callers"]; ok {
			list, _ := callers.([]any)
			for _, v := range list {
				if str, _ := v.(string); str != "direct" && !reCodeExecution.MatchString(str) {
					c.errorf("", "allowed_callers value %v", v)
				}
			}
			if len(list) == 0 {
				c.errorf("", "allowed_callers is not a list of callers")
			}
		}
		if strict := dialect == "anthropic-strict"; (m["strict"] == true) != strict {
			c.errorf("", "strict is %v", m["strict"])
		} else if strict {
			root, _ := obj(m["input_schema"])
			defs, _ := obj(root["$defs"])
			c.anthropicStrict(root, "", defs, nil)
			for name, d := range defs {
				c.anthropicStrict(d, "/$defs/"+name, defs, []string{"#/$defs/" + name})
			}
		}
	case "gemini":
		c.errs = append(c.errs, checkGemini(m)...)
	case "gemini-json-schema":
		for k := range m {
			if k != "name" && k != "description" && k != "parametersJsonSchema" && k != "responseJsonSchema" {
				c.errorf("", "field %q", k)
			}
		}
		if !reGeminiName.MatchString(fmt.Sprint(m["name"])) || !objectSchema(m["parametersJsonSchema"]) {
			c.errorf("", "invalid name or parametersJsonSchema: %v", m)
		}
		for _, k := range []string{"parametersJsonSchema", "responseJsonSchema"} {
			c.geminiJSON(m[k], "/"+k)
		}
	case "mcp":
		if !reMCPName.MatchString(fmt.Sprint(m["name"])) || !objectSchema(m["inputSchema"]) {
			c.errorf("", "invalid name or inputSchema: %v", m)
		}
		if out, ok := m["outputSchema"]; ok && !objectSchema(out) {
			c.errorf("", "outputSchema is not an object schema")
		}
		ann, _ := obj(m["annotations"])
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := ann[k].(bool); !ok {
				c.errorf("", "annotation %s missing", k)
			}
		}
	default:
		c.errorf("", "no checker for dialect %q", dialect)
	}
	return c.errs
}

// TestGoldensAccepted runs the providers' constraints over every golden.
func TestGoldensAccepted(t *testing.T) {
	for _, tc := range dialects {
		t.Run(tc.d.Name(), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "golden", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var g struct {
				Tools []any `json:"tools"`
			}
			if err := json.Unmarshal(raw, &g); err != nil {
				t.Fatal(err)
			}
			if len(g.Tools) == 0 {
				t.Fatal("golden has no tools")
			}
			for _, tool := range g.Tools {
				for _, e := range checkTool(tc.d.Name(), tool) {
					t.Errorf("%v: %s", tool.(map[string]any)["name"], e)
				}
			}
		})
	}
}

// TestCheckersReject proves that the checkers can fail: each of these
// breaks one published rule.
func TestCheckersReject(t *testing.T) {
	tests := []struct {
		dialect, tool string
	}{
		{"openai-strict", `{"type":"function","function":{"name":"a","strict":true,"parameters":{"type":"object","properties":{"x":{"type":"string"}},"required":[],"additionalProperties":false}}}`},
		{"openai-strict", `{"type":"function","function":{"name":"a","strict":true,"parameters":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}}}`},
		{"openai-strict", `{"type":"function","function":{"name":"a","strict":true,"parameters":{"type":"object","properties":{"x":{"type":"string","minLength":1}},"required":["x"],"additionalProperties":false}}}`},
		{"openai-strict", `{"type":"function","function":{"name":"a","strict":true,"parameters":{"type":"object","properties":{"x":{"$ref":"#/$defs/y","description":"d"}},"required":["x"],"additionalProperties":false,"$defs":{"y":{"type":"string"}}}}}`},
		{"openai-strict", `{"type":"function","function":{"name":"a.b","strict":true,"parameters":{"type":"object","properties":{},"required":[],"additionalProperties":false}}}`},
		{"openai", `{"type":"function","function":{"name":"a","parameters":{"type":"string"}}}`},
		{"openai-responses-strict", `{"type":"function","name":"a","parameters":{"type":"object","properties":{},"additionalProperties":false}}`},
		{"anthropic", `{"name":"a","input_schema":{"type":"object"},"strict":true}`},
		{"anthropic", `{"name":"a","input_schema":{"type":"object"},"input_examples":[1]}`},
		{"anthropic", `{"name":"a","input_schema":{"type":"object"},"allowed_callers":["program"]}`},
		{"anthropic-strict", `{"name":"a","input_schema":{"type":"object","properties":{"x":{"type":"string"}}},"strict":true}`},
		{"anthropic-strict", `{"name":"a","input_schema":{"type":"object","properties":{"x":{"type":"string","minLength":1}},"additionalProperties":false},"strict":true}`},
		{"anthropic-strict", `{"name":"a","input_schema":{"type":"object","properties":{"x":{"$ref":"#/$defs/n"}},"additionalProperties":false,"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}},"additionalProperties":false}}},"strict":true}`},
		{"anthropic-strict", `{"name":"a","input_schema":{"type":"object","properties":{"x":{"type":"array","items":{"type":"string"},"minItems":2}},"additionalProperties":false},"strict":true}`},
		{"anthropic-strict", `{"name":"a","input_schema":{"type":"object","properties":{},"additionalProperties":false}}`},
		{"gemini", `{"name":"a","parameters":{"type":"OBJECT","properties":{"x":{"type":"string"}}}}`},
		{"gemini", `{"name":"a","parameters":{"type":"OBJECT","properties":{"x":{"type":"INTEGER","enum":["1"]}}}}`},
		{"gemini", `{"name":"a","parameters":{"type":"OBJECT","properties":{"x":{"$ref":"#/$defs/y"}}}}`},
		{"gemini", `{"name":"a","parameters":{"type":"OBJECT","properties":{"x":{"type":"OBJECT","additionalProperties":false,"properties":{"y":{"type":"STRING"}}}}}}`},
		{"gemini", `{"name":"a","parameters":{"type":"OBJECT","properties":{"x":{"type":"ARRAY"}}}}`},
		{"gemini", `{"name":"1a","parameters":{"type":"OBJECT","properties":{"x":{"type":"STRING","format":"uri"}}}}`},
		{"mcp", `{"name":"a","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`},
		{"gemini-json-schema", `{"name":"a","parametersJsonSchema":{"type":"object","properties":{"x":{"oneOf":[{"type":"string"}]}}}}`},
		{"gemini-json-schema", `{"name":"a","parametersJsonSchema":{"type":"object","not":{"required":["x"]}}}`},
		{"gemini-json-schema", `{"name":"a","parameters":{"type":"OBJECT"}}`},
	}
	for _, tt := range tests {
		var tool any
		if err := json.Unmarshal([]byte(tt.tool), &tool); err != nil {
			t.Fatal(err)
		}
		if errs := checkTool(tt.dialect, tool); len(errs) == 0 {
			t.Errorf("%s accepted %s", tt.dialect, tt.tool)
		}
	}
}

// FuzzExport exports tools with arbitrary input schemas (as an MCP server
// may send) to every dialect: nothing may panic, every exported value must
// marshal, and what is exported must pass the provider's checker.
func FuzzExport(f *testing.F) {
	for _, tool := range representativeTools(f) {
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#","description":"again"},"b":{"$ref":"#","description":"and again"}}}`,
		`{"anyOf":[{"$ref":"#"}],"type":"object","properties":{"x":{"anyOf":[{"$ref":"#"},{"type":"null"}]}}}`,
		`{"type":"object","properties":{"e":{"enum":[1,"a",null,true]},"c":{"const":null},"t":{"type":["null"]}}}`,
		`{"type":"object","$defs":{"a":{"type":"object","properties":{"x":{"$ref":"#/$defs/b"},"y":{"$ref":"#/$defs/b"}}},"b":{"type":"array","items":{"$ref":"#/$defs/a","title":"t"}}},"properties":{"r":{"$ref":"#/$defs/a"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s jsonschema.Schema
		if json.Unmarshal(data, &s) != nil {
			return
		}
		if _, err := json.Marshal(&s); err != nil {
			return // not a schema jsonschema can write back
		}
		tool := wield.Raw("fuzz_tool", "Fuzz", &s, noop)
		for _, tc := range dialects {
			vs, _ := llm.Export(tc.d, []*wield.Tool{tool})
			for _, v := range vs {
				raw, err := json.Marshal(v)
				if err != nil {
					t.Fatalf("%s: exported value does not marshal: %v", tc.d.Name(), err)
				}
				var m any
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatal(err)
				}
				if errs := checkTool(tc.d.Name(), m); len(errs) > 0 {
					t.Errorf("%s exported what the provider rejects: %v\n%s", tc.d.Name(), errs, raw)
				}
			}
		}
		llm.XMLInstructions([]*wield.Tool{tool})
		llm.JSONInstructions([]*wield.Tool{tool})
	})
}
