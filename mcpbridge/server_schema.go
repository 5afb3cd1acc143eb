package mcpbridge

import (
	"bytes"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// srvObjectSchemas returns a tool's schema with every subschema that
// jsonschema-go writes as the boolean true (an empty schema: any value)
// written as {} instead, which means the same: clients such as the
// TypeScript SDK refuse a listed tool whose properties are not objects. A
// schema without such a subschema is returned as it is.
func srvObjectSchemas(s *jsonschema.Schema) any {
	b, err := json.Marshal(s)
	if err != nil || !bytes.Contains(b, []byte("true")) {
		return s
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return s
	}
	if !srvObjectify(v) {
		return s
	}
	out, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return json.RawMessage(out)
}

// The keywords whose values are a schema, a list of schemas, or a map of
// names to schemas.
var (
	srvSchemaOne  = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "additionalItems", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	srvSchemaList = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	srvSchemaMap  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// srvObjectify replaces true subschemas of the schema v in place, and
// reports whether it replaced any.
func srvObjectify(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	changed := false
	fix := func(x any) any {
		if b, ok := x.(bool); ok && b {
			changed = true
			return map[string]any{}
		}
		if srvObjectify(x) {
			changed = true
		}
		return x
	}
	for _, k := range srvSchemaOne {
		if x, ok := m[k]; ok {
			if _, isList := x.([]any); !isList {
				m[k] = fix(x)
			}
		}
	}
	for _, k := range srvSchemaList {
		if l, ok := m[k].([]any); ok {
			for i := range l {
				l[i] = fix(l[i])
			}
		}
	}
	for _, k := range srvSchemaMap {
		if mm, ok := m[k].(map[string]any); ok {
			for name, x := range mm {
				mm[name] = fix(x)
			}
		}
	}
	return changed
}
