package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

func mustCompile(t testing.TB, src string) *Validator {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		t.Fatalf("schema %s: %v", src, err)
	}
	v, err := Compile(&s)
	if err != nil {
		t.Fatalf("compile %s: %v", src, err)
	}
	return v
}

const weather = `{
	"type": "object",
	"properties": {
		"city":  {"type": "string", "minLength": 1, "maxLength": 20, "pattern": "^[A-Z]"},
		"units": {"type": "string", "enum": ["c", "f"], "default": "c"},
		"days":  {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
		"ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
		"step":  {"type": "number", "multipleOf": 0.5},
		"hourly": {"type": "boolean"},
		"tags":  {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3, "uniqueItems": true},
		"where": {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}, "required": ["lat", "lon"]},
		"note":  {"type": ["string", "null"]}
	},
	"required": ["city"]
}`

// TestNormalize is the table of coercions and defaults that succeed.
func TestNormalize(t *testing.T) {
	v := mustCompile(t, weather)
	tests := []struct {
		name, in, want string
	}{
		{"defaults filled", `{"city":"Paris"}`, `{"city":"Paris","days":3,"units":"c"}`},
		{"order kept, defaults after", `{"days":5,"city":"Oslo"}`, `{"days":5,"city":"Oslo","units":"c"}`},
		{"string to integer", `{"city":"Rome","days":"5"}`, `{"city":"Rome","days":5,"units":"c"}`},
		{"string with spaces to integer", `{"city":"Rome","days":" 7 "}`, `{"city":"Rome","days":7,"units":"c"}`},
		{"integral float to integer", `{"city":"Rome","days":5.0}`, `{"city":"Rome","days":5,"units":"c"}`},
		{"exponent to integer", `{"city":"Rome","days":1e1}`, `{"city":"Rome","days":10,"units":"c"}`},
		{"string to number", `{"city":"Rome","ratio":"0.25"}`, `{"city":"Rome","ratio":0.25,"days":3,"units":"c"}`},
		{"string to boolean", `{"city":"Rome","hourly":"true"}`, `{"city":"Rome","hourly":true,"days":3,"units":"c"}`},
		{"capitalised boolean", `{"city":"Rome","hourly":"False"}`, `{"city":"Rome","hourly":false,"days":3,"units":"c"}`},
		{"stringified array", `{"city":"Rome","tags":"[\"a\",\"b\"]"}`, `{"city":"Rome","tags":["a","b"],"days":3,"units":"c"}`},
		{"stringified object", `{"city":"Rome","where":"{\"lat\":1,\"lon\":\"2\"}"}`, `{"city":"Rome","where":{"lat":1,"lon":2},"days":3,"units":"c"}`},
		{"number to string", `{"city":"Rome","tags":[7]}`, `{"city":"Rome","tags":["7"],"days":3,"units":"c"}`},
		{"null for optional means absent", `{"city":"Rome","days":null,"units":null}`, `{"city":"Rome","days":3,"units":"c"}`},
		{"null kept where allowed", `{"city":"Rome","note":null}`, `{"city":"Rome","note":null,"days":3,"units":"c"}`},
		{"multipleOf", `{"city":"Rome","step":2.5}`, `{"city":"Rome","step":2.5,"days":3,"units":"c"}`},
		{"escapes kept", `{"city":"R\u00f6m\"e"}`, `{"city":"R\u00f6m\"e","days":3,"units":"c"}`},
		{"whole arguments as a string", `"{\"city\":\"Rome\"}"`, `{"city":"Rome","days":3,"units":"c"}`},
		{"empty means {}", ``, ``},
		{"null means {}", `null`, ``},
		{"unicode", `{"city":"Urumqi 乌鲁木齐"}`, `{"city":"Urumqi 乌鲁木齐","days":3,"units":"c"}`},
		{"maxLength counts characters, not bytes", `{"city":"AÄäöüÄäöüÄäöüÄäöüÄäö"}`, `{"city":"AÄäöüÄäöüÄäöüÄäöüÄäö","days":3,"units":"c"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := v.Normalize([]byte(tt.in))
			if tt.want == "" {
				// No city: the required error is expected and nothing else.
				if len(errs) != 1 || errs[0].Path != "city" {
					t.Fatalf("errs = %v, want one for city", errs)
				}
				return
			}
			if errs != nil {
				t.Fatalf("errs = %v", errs)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// TestNormalizeErrors is the table of what is refused, with the messages a
// model reads.
func TestNormalizeErrors(t *testing.T) {
	v := mustCompile(t, weather)
	tests := []struct {
		name, in string
		want     []FieldError
	}{
		{"missing required", `{}`, []FieldError{{"city", "missing required property (expected string)"}}},
		{"wrong type", `{"city":"Rome","days":"many"}`, []FieldError{{"days", `expected integer, got string "many"`}}},
		{"fraction for integer", `{"city":"Rome","days":2.5}`, []FieldError{{"days", `expected integer, got number 2.5`}}},
		{"object for string", `{"city":{"name":"Rome"}}`, []FieldError{{"city", `expected string, got object {"name":"Rome"}`}}},
		{"below minimum", `{"city":"Rome","days":0}`, []FieldError{{"days", "must be >= 1, got 0"}}},
		{"above maximum", `{"city":"Rome","days":30}`, []FieldError{{"days", "must be <= 14, got 30"}}},
		{"exclusive bounds", `{"city":"Rome","ratio":1}`, []FieldError{{"ratio", "must be < 1, got 1"}}},
		{"multipleOf", `{"city":"Rome","step":0.3}`, []FieldError{{"step", "must be a multiple of 0.5, got 0.3"}}},
		{"enum", `{"city":"Rome","units":"k"}`, []FieldError{{"units", `must be one of "c", "f"; got string "k"`}}},
		{"pattern", `{"city":"rome"}`, []FieldError{{"city", `must match the pattern ^[A-Z], got string "rome"`}}},
		{"minLength", `{"city":""}`, []FieldError{{"city", "must be at least 1 character long, got 0"}, {"city", `must match the pattern ^[A-Z], got string ""`}}},
		{"maxLength counts characters", `{"city":"AÄäöüÄäöüÄäöüÄäöüÄäöü"}`, []FieldError{{"city", "must be at most 20 characters long, got 21"}}},
		{"long values are shortened in messages", `{"city":"Rome","units":"ÄäöüÄäöüÄäöüÄäöüÄäöüÄäöü"}`, []FieldError{{"units", `must be one of "c", "f"; got string "ÄäöüÄäöüÄäöüÄäöüÄäö…`}}},
		{"unknown key", `{"city":"Rome","zip":"00100"}`, []FieldError{{"zip", "unknown property; expected one of: city, days, hourly, note, ratio, step, tags, units, where"}}},
		{"case-sensitive key", `{"City":"Rome"}`, []FieldError{{"City", `unknown property; did you mean "city"? (names are case-sensitive)`}, {"city", "missing required property (expected string)"}}},
		{"nested required", `{"city":"Rome","where":{"lat":1}}`, []FieldError{{"where.lon", "missing required property (expected number)"}}},
		{"array items", `{"city":"Rome","tags":["a",{}]}`, []FieldError{{"tags[1]", "expected string, got object {}"}}},
		{"minItems", `{"city":"Rome","tags":[]}`, []FieldError{{"tags", "must have at least 1 item, got 0"}}},
		{"maxItems", `{"city":"Rome","tags":["a","b","c","d"]}`, []FieldError{{"tags", "must have at most 3 items, got 4"}}},
		{"uniqueItems", `{"city":"Rome","tags":["a","b","a"]}`, []FieldError{{"tags", "items must be unique; items 0 and 2 are equal"}}},
		{"null for required", `{"city":null}`, []FieldError{{"city", "expected string, got null"}}},
		{"not an object", `[1,2]`, []FieldError{{"", "expected object, got array [1,2]"}}},
		{"not JSON", `{"city":`, []FieldError{{"", "arguments are not valid JSON: invalid JSON at offset 8: unexpected end of input"}}},
		{"trailing garbage", `{"city":"Rome"} x`, []FieldError{{"", `arguments are not valid JSON: invalid JSON at offset 16: unexpected 'x' after the value`}}},
		{"duplicate key", `{"city":"Rome","city":"Oslo"}`, []FieldError{{"", `arguments are not valid JSON: invalid JSON at offset 15: duplicate key "city"`}}},
		{"invalid UTF-8", "{\"city\":\"R\xffme\"}", []FieldError{{"", "arguments are not valid JSON: invalid JSON at offset 8: string is not valid UTF-8"}}},
		{"control character", "{\"city\":\"R\nme\"}", []FieldError{{"", "arguments are not valid JSON: invalid JSON at offset 10: control character in string (escape it)"}}},
		{"stringified garbage", `{"city":"Rome","tags":"[oops"}`, []FieldError{{"tags", `expected array, got string "[oops"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := v.Normalize([]byte(tt.in))
			if got != nil {
				t.Errorf("output = %s, want nil", got)
			}
			if diff := cmp.Diff(tt.want, errs); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDeepAndHuge(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"x":{}}}`)
	deep := `{"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`
	_, errs := v.Normalize([]byte(deep))
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "nested deeper than 100 levels") {
		t.Errorf("deep: errs = %v", errs)
	}
	ok := `{"x":` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + `}`
	if _, errs := v.Normalize([]byte(ok)); errs != nil {
		t.Errorf("depth %d: errs = %v", MaxDepth, errs)
	}
	many := `{"x":[` + strings.Repeat(`"aaaaaaaa",`, 200000) + `1]}`
	out, errs := v.Normalize([]byte(many))
	if errs != nil || len(out) != len(many) {
		t.Errorf("huge: %d bytes out, errs %v", len(out), errs)
	}
	bad := `{"x":[` + strings.Repeat(`1,`, 30) + `]}`
	if _, errs := v.Normalize([]byte(bad)); len(errs) != 1 {
		t.Errorf("trailing comma: errs = %v", errs)
	}
}

func TestTooManyErrors(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}}}`)
	_, errs := v.Normalize([]byte(`{"a":[` + strings.Repeat(`"x",`, 50) + `"x"]}`))
	if len(errs) != MaxErrors+1 || !strings.Contains(errs[MaxErrors].Message, "more problems") {
		t.Errorf("got %d errors, last %v", len(errs), errs[len(errs)-1])
	}
}

func TestComposition(t *testing.T) {
	tests := []struct {
		name, schema, in, want string
		wantErr                string
	}{
		{"anyOf first", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `"a"`, `"a"`, ""},
		{"anyOf second", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `3`, `3`, ""},
		{"anyOf none", `{"anyOf":[{"type":"string","minLength":3},{"type":"integer"}]}`, `"a"`, "", "must match at least one of 2 allowed schemas; the closest (#0) says:"},
		{"oneOf two", `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `3`, "", "matches 2 of the allowed schemas ([0 1]), but must match exactly one"},
		{"oneOf one", `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `3.5`, `3.5`, ""},
		{"allOf", `{"allOf":[{"minimum":1},{"maximum":3}]}`, `5`, "", "must be <= 3, got 5"},
		{"not", `{"not":{"type":"string"}}`, `"a"`, "", `must not match the excluded schema; got string "a"`},
		{"const", `{"const":{"a":[1,2]}}`, `{"a":[1,2.0]}`, `{"a":[1,2.0]}`, ""},
		{"const mismatch", `{"const":"x"}`, `"y"`, "", `must be "x"; got string "y"`},
		{"nullable union coerces", `{"type":"object","properties":{"n":{"anyOf":[{"type":"integer"},{"type":"null"}]}}}`, `{"n":"4"}`, `{"n":4}`, ""},
		{"nullable union takes null", `{"type":"object","properties":{"n":{"anyOf":[{"type":"integer"},{"type":"null"}]}}}`, `{"n":null}`, `{"n":null}`, ""},
		{"allOf branches declare keys", `{"type":"object","allOf":[{"properties":{"a":{}}},{"properties":{"b":{}}}]}`, `{"a":1,"b":2}`, `{"a":1,"b":2}`, ""},
		{"additionalProperties true", `{"type":"object","properties":{"a":{}},"additionalProperties":true}`, `{"a":1,"z":2}`, `{"a":1,"z":2}`, ""},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"z":"2"}`, `{"z":2}`, ""},
		{"additionalProperties false", `{"type":"object","additionalProperties":false}`, `{"z":2}`, "", "unknown property; this object takes no properties"},
		{"no properties means any keys", `{"type":"object"}`, `{"z":2}`, `{"z":2}`, ""},
		{"patternProperties", `{"type":"object","properties":{"a":{}},"patternProperties":{"^x-":{"type":"string"}}}`, `{"x-y":5}`, `{"x-y":"5"}`, ""},
		{"ref", `{"$defs":{"n":{"type":"integer","minimum":2}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`, `{"a":"3"}`, `{"a":3}`, ""},
		{"ref invalid", `{"$defs":{"n":{"type":"integer","minimum":2}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`, `{"a":1}`, "", "must be >= 2, got 1"},
		{"recursive ref", `{"$defs":{"t":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/t"}}}}},"$ref":"#/$defs/t"}`, `{"kids":[{"kids":[{"kids":[]}]}]}`, `{"kids":[{"kids":[{"kids":[]}]}]}`, ""},
		{"prefixItems", `{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false}`, `["1",2]`, `[1,"2"]`, ""},
		{"prefixItems too many", `{"type":"array","prefixItems":[{"type":"integer"}],"items":false}`, `[1,2]`, "", "no item allowed past the first 1"},
		{"fallback keyword", `{"type":"object","properties":{"a":{},"b":{}},"dependentRequired":{"a":["b"]}}`, `{"a":1}`, "", "dependentRequired"},
		{"min/max properties", `{"type":"object","minProperties":2}`, `{"a":1}`, "", "must have at least 2 properties, got 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustCompile(t, tt.schema)
			got, errs := v.Normalize([]byte(tt.in))
			if tt.wantErr == "" {
				if errs != nil {
					t.Fatalf("errs = %v", errs)
				}
				if diff := cmp.Diff(tt.want, string(got)); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
				return
			}
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.String())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tt.wantErr) {
				t.Errorf("errs = %q, want one containing %q", msgs, tt.wantErr)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"pattern":"("}}}`, "compile schema at a: pattern"},
		{`{"type":"wat"}`, `unknown type "wat"`},
		{`{"properties":{"a":{"$ref":"#/$defs/missing"}}}`, "no such definition"},
		{`{"properties":{"a":{"$ref":"https://example.com/s.json"}}}`, "only local references"},
		{`{"multipleOf":0}`, "multipleOf 0 must be greater than 0"},
	}
	for _, tt := range tests {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
			t.Fatal(err)
		}
		_, err := Compile(&s)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compile(%s) = %v, want error containing %q", tt.schema, err, tt.want)
		}
	}
}

// TestKeysCaseSensitive proves a key matches its property only with the
// same case, where encoding/json would have folded it.
func TestKeysCaseSensitive(t *testing.T) {
	v := mustCompile(t, `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	for _, k := range []string{"Name", "NAME", "nAme", "name\u0000", "ｎａｍｅ", "name "} {
		in, _ := json.Marshal(map[string]string{k: "x"})
		if out, errs := v.Normalize(in); errs == nil {
			t.Errorf("key %q accepted as %s", k, out)
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	v := mustCompile(b, weather)
	in := []byte(`{"city":"Paris","days":"5","tags":["a","b"],"where":{"lat":48.85,"lon":2.35}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, errs := v.Normalize(in); errs != nil {
			b.Fatal(errs)
		}
	}
}
