package gemini

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// JSONSchema is the opt-in Gemini dialect that sends JSON Schema as it is:
// a FunctionDeclaration's parametersJsonSchema and responseJsonSchema
// (https://ai.google.dev/api/caching#FunctionDeclaration), which the models
// of November 2025 onwards take with $ref, $defs, anyOf, maps
// (additionalProperties) and type lists, where [Dialect]'s OpenAPI subset
// cannot express them (http_get's free-form headers, recursive schemas).
// Older models and Vertex AI's older endpoints refuse most of JSON Schema
// there: choose it for the model at hand (ClientOptions.JSONSchema,
// `wield chat --json-schema`, `wield list --format gemini-json-schema`).
//
// Its values are [FunctionDeclaration]s. The schema is sent unchanged but
// for two rewrites that keep its meaning in the keywords Gemini reads
// (https://ai.google.dev/gemini-api/docs/structured-output#json-schema-support):
// oneOf becomes anyOf, and definitions become $defs. Keywords Gemini does
// not read are left in the schema: those that only narrow a value
// (minLength, pattern, uniqueItems...) the engine still enforces on every
// call; those whose loss would let the model believe other shapes are
// accepted (not, if/then/else, allOf, patternProperties, dependent and
// unevaluated keywords, contains, propertyNames) are problems and keep the
// tool out, as in every dialect.
var JSONSchema llm.Dialect = jsonSchemaDialect{}

type jsonSchemaDialect struct{}

func (jsonSchemaDialect) Name() string { return "gemini-json-schema" }

// jsonSchemaRefused are the keywords whose loss changes a schema's shape.
var jsonSchemaRefused = map[string]bool{
	"not": true, "if": true, "then": true, "else": true, "allOf": true, "patternProperties": true,
	"dependentRequired": true, "dependentSchemas": true, "dependencies": true, "unevaluatedProperties": true,
	"unevaluatedItems": true, "contains": true, "propertyNames": true,
}

func (d jsonSchemaDialect) ExportTool(t *wield.Tool) (any, []llm.Problem) {
	var ps []llm.Problem
	if p := llm.CheckName(d, t, nameRule, 64, "a letter or _ then letters, digits, _ . : or -, at most 64 characters"); p != nil {
		ps = append(ps, *p)
	}
	if !llm.HasType(t.InputSchema, "object") {
		ps = append(ps, llm.Problem{Tool: t.Name, Dialect: d.Name(), Message: "parametersJsonSchema must describe an object"})
	}
	params, sps := geminiJSONSchema(t.InputSchema)
	var resp *jsonschema.Schema
	if t.OutputSchema != nil {
		var rps []llm.Problem
		resp, rps = geminiJSONSchema(t.OutputSchema)
		for i := range rps {
			rps[i].Message = "output schema: " + rps[i].Message
		}
		sps = append(sps, rps...)
	}
	for _, p := range sps {
		p.Tool, p.Dialect = t.Name, d.Name()
		ps = append(ps, p)
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: params, ResponseJSONSchema: resp}, nil
}

// JSONSchemaTools exports tools as one Gemini [Tool] in the [JSONSchema]
// dialect; see [llm.Export].
func JSONSchemaTools(tools []*wield.Tool) (Tool, []llm.Problem) {
	decls, ps := llm.ExportAs[FunctionDeclaration](JSONSchema, tools)
	return Tool{FunctionDeclarations: decls}, ps
}

// maxJSONSchemaNodes bounds the subschemas one conversion visits.
const maxJSONSchemaNodes = 100_000

// geminiJSONSchema returns s with oneOf written anyOf and definitions
// written $defs (a copy when it has either; s itself otherwise, the common
// case, which costs no copy), and reports the keywords of
// [jsonSchemaRefused].
func geminiJSONSchema(s *jsonschema.Schema) (*jsonschema.Schema, []llm.Problem) {
	look := jsWalk{}
	look.walk(s, "")
	if len(look.ps) > 0 || !look.rewrite {
		return s, look.ps
	}
	out := s.CloneSchemas() // subschemas copied: the rewrites leave the tool's own schema alone
	w := jsWalk{write: true}
	if out.Definitions != nil {
		if out.Defs != nil {
			w.problem("", "both $defs and definitions: keep one")
		} else {
			out.Defs, out.Definitions = out.Definitions, nil
			w.renameDefs = true
		}
	}
	w.walk(out, "")
	return out, w.ps
}

// jsWalk walks a schema for [geminiJSONSchema]: reading, it reports the
// problems and whether a rewrite is needed; writing (on a copy), it makes
// the rewrites.
type jsWalk struct {
	ps         []llm.Problem
	nodes      int
	write      bool
	rewrite    bool // found: oneOf or definitions
	renameDefs bool
}

func (w *jsWalk) problem(path, format string, args ...any) {
	if len(w.ps) < 20 {
		w.ps = append(w.ps, llm.Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
}

func (w *jsWalk) walk(s *jsonschema.Schema, path string) {
	if s == nil || llm.IsFalse(s) { // false is written {"not": {}}: JSON false on the wire
		return
	}
	if w.nodes++; w.nodes > maxJSONSchemaNodes {
		if w.nodes == maxJSONSchemaNodes+1 {
			w.problem(path, "the schema has more than %d subschemas", maxJSONSchemaNodes)
		}
		return
	}
	for _, k := range llm.Keywords(s) {
		if jsonSchemaRefused[k] {
			w.problem(path, "Gemini does not read %q, and without it the schema accepts other shapes", k)
		}
	}
	if s.Definitions != nil {
		w.rewrite = true
	}
	if len(s.OneOf) > 0 {
		w.rewrite = true
		switch {
		case len(s.AnyOf) > 0:
			w.problem(path, "both oneOf and anyOf: Gemini reads only anyOf")
		case w.write:
			s.AnyOf, s.OneOf = s.OneOf, nil
		}
	}
	if w.renameDefs {
		if after, ok := strings.CutPrefix(s.Ref, "#/definitions/"); ok {
			s.Ref = "#/$defs/" + after
		}
	}
	w.walk(s.Items, llm.Pointer(path, "items"))
	for i, x := range s.PrefixItems {
		w.walk(x, llm.Pointer(path, "prefixItems", fmt.Sprint(i)))
	}
	for i, x := range s.ItemsArray {
		w.walk(x, llm.Pointer(path, "items", fmt.Sprint(i)))
	}
	w.walk(s.AdditionalProperties, llm.Pointer(path, "additionalProperties"))
	for i, x := range s.AnyOf {
		w.walk(x, llm.Pointer(path, "anyOf", fmt.Sprint(i)))
	}
	for i, x := range s.OneOf { // read only: written, they are anyOf above
		w.walk(x, llm.Pointer(path, "oneOf", fmt.Sprint(i)))
	}
	for _, n := range llm.PropertyNames(s) {
		w.walk(s.Properties[n], llm.Pointer(path, "properties", n))
	}
	for n, x := range s.Defs {
		w.walk(x, llm.Pointer(path, "$defs", n))
	}
	for n, x := range s.Definitions { // read only: written, they are $defs
		w.walk(x, llm.Pointer(path, "definitions", n))
	}
}
