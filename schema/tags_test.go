package schema

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// field returns the schema inferred for a struct whose only field, F named
// "f", has type T and the given tags. Its errors omit the struct type.
func field[T any](tags string) func() (*jsonschema.Schema, error) {
	return func() (*jsonschema.Schema, error) {
		t := reflect.StructOf([]reflect.StructField{
			{Name: "F", Type: reflect.TypeFor[T](), Tag: reflect.StructTag(tags + ` json:"f"`)},
		})
		s, err := ForType(t)
		if err != nil {
			return nil, errors.Unwrap(err)
		}
		return s, nil
	}
}

type color string

func TestForTags(t *testing.T) {
	type city struct {
		Name string `json:"name" description:"City name" default:"c"`
	}
	obj := func(prop string, required bool) string {
		req := `,"required":["f"]`
		if !required {
			req = ""
		}
		return `{"type":"object","properties":{"f":` + prop + `}` + req + `,"additionalProperties":false}`
	}
	runInfer(t, []inferCase{
		// Descriptions and titles.
		{"description", field[string](`description:"A city"`), obj(`{"type":"string","description":"A city"}`, true)},
		{"jsonschema", field[string](`jsonschema:"the city, or a town"`), obj(`{"type":"string","description":"the city, or a town"}`, true)},
		{"description equal to jsonschema", field[int](`description:"n" jsonschema:"n"`), obj(`{"type":"integer","description":"n"}`, true)},
		{"title", field[bool](`title:"Flag"`), obj(`{"type":"boolean","title":"Flag"}`, true)},

		// Defaults.
		{"default with description", field[string](`description:"City name" default:"c"`),
			obj(`{"type":"string","description":"City name;Default: c","default":"c"}`, false)},
		{"default alone", field[string](`default:"Paris, France"`),
			obj(`{"type":"string","description":"Default: Paris, France","default":"Paris, France"}`, false)},
		{"default int", field[int](`default:"3"`), obj(`{"type":"integer","description":"Default: 3","default":3}`, false)},
		{"default float", field[float64](`default:"0.5"`), obj(`{"type":"number","description":"Default: 0.5","default":0.5}`, false)},
		{"default bool", field[bool](`default:"true"`), obj(`{"type":"boolean","description":"Default: true","default":true}`, false)},
		{"default pointer", field[*int](`default:"-1"`), obj(`{"type":"integer","description":"Default: -1","default":-1}`, false)},
		{"default slice", field[[]string](`default:"[\"a\", \"b\"]"`),
			obj(`{"type":"array","items":{"type":"string"},"description":"Default: [\"a\",\"b\"]","default":["a","b"]}`, false)},
		{"default map", field[map[string]int](`default:"{\"a\":1}"`),
			obj(`{"type":"object","additionalProperties":{"type":"integer"},"description":"Default: {\"a\":1}","default":{"a":1}}`, false)},
		{"default struct", field[city](`default:"{\"name\":\"Oslo\"}"`),
			obj(`{"type":"object","properties":{"name":{"type":"string","description":"City name;Default: c","default":"c"}},
				"additionalProperties":false,"description":"Default: {\"name\":\"Oslo\"}","default":{"name":"Oslo"}}`, false)},
		{"default time", field[time.Time](`default:"2025-01-02T03:04:05Z"`),
			obj(`{"type":"string","format":"date-time","description":"Default: 2025-01-02T03:04:05Z","default":"2025-01-02T03:04:05Z"}`, false)},
		{"default bytes", field[[]byte](`default:"aGk="`),
			obj(`{"type":"string","contentEncoding":"base64","description":"Default: aGk=","default":"aGk="}`, false)},
		{"default any", field[any](`default:"{\"k\": [1, true]}"`),
			obj(`{"description":"Default: {\"k\":[1,true]}","default":{"k":[1,true]}}`, false)},

		// Required.
		{"required true", field[string](`json:"f,omitempty" required:"true"`), obj(`{"type":"string"}`, true)},
		{"required false", field[string](`required:"false"`), obj(`{"type":"string"}`, false)},
		{"omitzero", field[string](`json:"f,omitzero"`), obj(`{"type":"string"}`, false)},

		// Enums and examples.
		{"enum", field[string](`enum:"a, b ,c"`), obj(`{"type":"string","enum":["a","b","c"]}`, true)},
		{"enum JSON", field[string](`enum:"[\"a,b\", \" c\"]"`), obj(`{"type":"string","enum":["a,b"," c"]}`, true)},
		{"enum named type", field[color](`enum:"red,green"`), obj(`{"type":"string","enum":["red","green"]}`, true)},
		{"enum int", field[int](`enum:"1,2,30"`), obj(`{"type":"integer","enum":[1,2,30]}`, true)},
		{"enum uint64", field[uint64](`enum:"18446744073709551615"`), obj(`{"type":"integer","minimum":0,"enum":[18446744073709551615]}`, true)},
		{"enum float", field[float64](`enum:"0.5,1"`), obj(`{"type":"number","enum":[0.5,1]}`, true)},
		{"enum bool", field[bool](`enum:"true"`), obj(`{"type":"boolean","enum":[true]}`, true)},
		{"enum items", field[[]string](`enum:"x,y"`), obj(`{"type":"array","items":{"type":"string","enum":["x","y"]}}`, true)},
		{"enum and default", field[string](`enum:"metric,imperial" default:"metric"`),
			obj(`{"type":"string","enum":["metric","imperial"],"description":"Default: metric","default":"metric"}`, false)},
		{"examples", field[string](`examples:"Paris,Oslo"`), obj(`{"type":"string","examples":["Paris","Oslo"]}`, true)},
		{"examples int", field[int](`examples:"[1, 2]"`), obj(`{"type":"integer","examples":[1,2]}`, true)},
		{"examples slice", field[[]string](`examples:"[[\"a\"], []]"`), obj(`{"type":"array","items":{"type":"string"},"examples":[["a"],[]]}`, true)},

		// Numbers.
		{"minimum maximum", field[int](`minimum:"1" maximum:"10"`), obj(`{"type":"integer","minimum":1,"maximum":10}`, true)},
		{"exclusive", field[float64](`exclusiveMinimum:"0" exclusiveMaximum:"1.5"`), obj(`{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1.5}`, true)},
		{"multipleOf", field[float64](`multipleOf:"0.25"`), obj(`{"type":"number","multipleOf":0.25}`, true)},
		{"narrowed int8", field[int8](`minimum:"0"`), obj(`{"type":"integer","minimum":0,"maximum":127}`, true)},
		{"narrowed uint8", field[uint8](`maximum:"9"`), obj(`{"type":"integer","minimum":0,"maximum":9}`, true)},
		{"exclusive uint", field[uint](`exclusiveMinimum:"0"`), obj(`{"type":"integer","exclusiveMinimum":0}`, true)},
		{"number items", field[[]int](`minimum:"1" multipleOf:"2"`), obj(`{"type":"array","items":{"type":"integer","minimum":1,"multipleOf":2}}`, true)},
		{"number array items", field[[2]uint16](`maximum:"80"`),
			obj(`{"type":"array","items":{"type":"integer","minimum":0,"maximum":80},"minItems":2,"maxItems":2}`, true)},

		// Strings.
		{"lengths", field[string](`minLength:"1" maxLength:"8"`), obj(`{"type":"string","minLength":1,"maxLength":8}`, true)},
		{"pattern", field[string](`pattern:"^[a-z]+$"`), obj(`{"type":"string","pattern":"^[a-z]+$"}`, true)},
		{"format", field[string](`format:"email"`), obj(`{"type":"string","format":"email"}`, true)},
		{"format int", field[int64](`format:"int64"`), obj(`{"type":"integer","format":"int64"}`, true)},
		{"string items", field[[]*string](`minLength:"2" pattern:"^x" format:"uri"`),
			obj(`{"type":"array","items":{"type":"string","minLength":2,"pattern":"^x","format":"uri"}}`, true)},

		// Arrays.
		{"items bounds", field[[]int](`minItems:"1" maxItems:"3" uniqueItems:"true"`),
			obj(`{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3,"uniqueItems":true}`, true)},
		{"uniqueItems false", field[[]int](`uniqueItems:"false"`), obj(`{"type":"array","items":{"type":"integer"}}`, true)},
		{"fixed array length", field[[2]int](`minItems:"2"`), obj(`{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2}`, true)},
		{"array default", field[[]int](`minItems:"1" uniqueItems:"true" maximum:"5" default:"[1,5]"`),
			obj(`{"type":"array","items":{"type":"integer","maximum":5},"minItems":1,"uniqueItems":true,"description":"Default: [1,5]","default":[1,5]}`, false)},
	})
}

func TestForTagErrors(t *testing.T) {
	type options struct {
		Limit int `json:"limit" minimum:"abc"`
	}
	type in struct {
		Options options `json:"options"`
	}
	type pair struct {
		A int `json:"a" maximum:"5"`
		B int `json:"b,omitempty"`
	}
	runErrors(t, []struct {
		name string
		got  func() (*jsonschema.Schema, error)
		want string
	}{
		{"nested field path", For[in], `schema for schema.in: field Options.Limit: minimum "abc" is not a number`},
		{"NaN", field[float64](`maximum:"NaN"`), `field F: maximum "NaN" is not a number`},
		{"minimum on string", field[string](`minimum:"1"`), `field F: minimum does not apply to type string`},
		{"multipleOf on items", field[[]string](`multipleOf:"2"`), `field F: multipleOf does not apply to items of type string`},
		{"minimum on recursive", field[Node](`minimum:"1"`), `field F: minimum does not apply to type #/$defs/Node`},
		{"maxLength on int", field[int](`maxLength:"3"`), `field F: maxLength does not apply to type integer`},
		{"negative minLength", field[string](`minLength:"-1"`), `field F: minLength "-1" is not a non-negative integer`},
		{"bad pattern", field[string](`pattern:"(a"`), "field F: pattern \"(a\" does not compile: error parsing regexp: missing closing ): `(a`"},
		{"pattern on bool", field[bool](`pattern:"a"`), `field F: pattern does not apply to type boolean`},
		{"format on map", field[map[string]int](`format:"x"`), `field F: format does not apply to type object`},
		{"minItems on string", field[string](`minItems:"1"`), `field F: minItems does not apply to type string`},
		{"maxItems on bytes", field[[]byte](`maxItems:"1"`), `field F: maxItems does not apply to type string`},
		{"maxItems not int", field[[]int](`maxItems:"1.5"`), `field F: maxItems "1.5" is not a non-negative integer`},
		{"uniqueItems not bool", field[[]int](`uniqueItems:"yes"`), `field F: uniqueItems "yes" is not true or false`},
		{"uniqueItems on int", field[int](`uniqueItems:"true"`), `field F: uniqueItems does not apply to type integer`},
		{"fixed array length", field[[3]int](`maxItems:"2"`), `field F: maxItems 2 differs from the array length 3`},
		{"minimum above maximum", field[int](`minimum:"5" maximum:"1"`), `field F: minimum 5 is greater than maximum 1`},
		{"exclusiveMinimum at maximum", field[int](`exclusiveMinimum:"5" maximum:"5"`), `field F: exclusiveMinimum 5 is not less than maximum 5`},
		{"minimum at exclusiveMaximum", field[float32](`minimum:"2" exclusiveMaximum:"2"`), `field F: minimum 2 is not less than exclusiveMaximum 2`},
		{"exclusive bounds", field[float64](`exclusiveMinimum:"3" exclusiveMaximum:"1"`), `field F: exclusiveMinimum 3 is not less than exclusiveMaximum 1`},
		{"maximum below uint minimum", field[uint](`maximum:"-1"`), `field F: minimum 0 is greater than maximum -1`},
		{"below int8", field[int8](`minimum:"-1000"`), `field F: minimum -1000 is below the type's minimum -128`},
		{"above uint8", field[uint8](`exclusiveMaximum:"256"`), `field F: exclusiveMaximum 256 is above the type's maximum 255`},
		{"multipleOf zero", field[int](`multipleOf:"0"`), `field F: multipleOf 0 is not greater than 0`},
		{"minLength above maxLength", field[string](`minLength:"3" maxLength:"2"`), `field F: minLength 3 is greater than maxLength 2`},
		{"minItems above maxItems", field[[]int](`minItems:"3" maxItems:"2"`), `field F: minItems 3 is greater than maxItems 2`},
		{"empty enum", field[string](`enum:""`), `field F: enum tag is empty`},
		{"enum not int", field[int](`enum:"1,two"`), `field F: enum value "two" is not a valid int: invalid character 'w' in literal true (expecting 'r')`},
		{"enum out of range", field[uint8](`enum:"1,300"`), `field F: enum value 300 is not a valid uint8: json: cannot unmarshal number 300 into Go value of type uint8`},
		{"enum float for int", field[int](`enum:"1.5"`), `field F: enum value 1.5 is not a valid int: json: cannot unmarshal number 1.5 into Go value of type int`},
		{"enum not bool", field[bool](`enum:"yes"`), `field F: enum value "yes" is not a valid bool: invalid character 'y' looking for beginning of value`},
		{"enum JSON number for string", field[string](`enum:"[1]"`), `field F: enum value 1 is not a valid string: json: cannot unmarshal number into Go value of type string`},
		{"enum bad JSON", field[string](`enum:"[\"a\""`), `field F: enum "[\"a\"" is not a JSON array: unexpected end of JSON input`},
		{"enum on struct", field[pair](`enum:"{}"`), `field F: enum does not apply to type object`},
		{"enum on any", field[any](`enum:"1"`), `field F: enum does not apply to type any`},
		{"enum outside pattern", field[string](`pattern:"^[a-z]+$" enum:"ok,NO"`), `field F: enum value "NO" does not match pattern "^[a-z]+$"`},
		{"enum outside minimum", field[int](`minimum:"5" enum:"5,1"`), `field F: enum value 1 is less than minimum 5`},
		{"default outside enum", field[string](`enum:"a,b" default:"c"`), `field F: default "c" is not one of the enum values`},
		{"default below minimum", field[int](`minimum:"1" default:"0"`), `field F: default 0 is less than minimum 1`},
		{"default not exclusive", field[float64](`exclusiveMinimum:"0" default:"0"`), `field F: default 0 is not greater than exclusiveMinimum 0`},
		{"default above maximum", field[int](`maximum:"1" default:"2"`), `field F: default 2 is greater than maximum 1`},
		{"default at exclusiveMaximum", field[int](`exclusiveMaximum:"2" default:"2"`), `field F: default 2 is not less than exclusiveMaximum 2`},
		{"default not multiple", field[float64](`multipleOf:"0.1" default:"0.35"`), `field F: default 0.35 is not a multiple of 0.1`},
		{"default too short", field[string](`minLength:"2" default:"é"`), `field F: default "é" is shorter than minLength 2`},
		{"default too long", field[string](`maxLength:"1" default:"ab"`), `field F: default "ab" is longer than maxLength 1`},
		{"default not int", field[int](`default:"x"`), `field F: default "x" is not a valid int: invalid character 'x' looking for beginning of value`},
		{"default trailing data", field[int](`default:"1 2"`), `field F: default "1 2" is not a valid int: unexpected data after the value`},
		{"default null", field[int](`default:"null"`), `field F: default null is not of type integer`},
		{"default bad time", field[time.Time](`default:"tomorrow"`), `field F: default "tomorrow" is not a valid time.Time: parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"`},
		{"default slice not JSON", field[[]string](`default:"a,b"`), `field F: default "a,b" is not a valid []string: invalid character 'a' looking for beginning of value`},
		{"default few items", field[[]int](`minItems:"2" default:"[1]"`), `field F: default [1] has fewer items than minItems 2`},
		{"default many items", field[[]int](`maxItems:"1" default:"[1,2]"`), `field F: default [1,2] has more items than maxItems 1`},
		{"default duplicate items", field[[]int](`uniqueItems:"true" default:"[1,2,1]"`), `field F: default [1,2,1] has a duplicate item 2`},
		{"default item enum", field[[]string](`enum:"a" default:"[\"a\",\"b\"]"`), `field F: default ["a","b"]: [1] is not one of the enum values`},
		{"default missing property", field[pair](`default:"{\"b\":1}"`), `field F: default {"b":1} lacks required property "a"`},
		{"default unknown property", field[pair](`default:"{\"a\":1,\"c\":1}"`), `field F: default {"a":1,"c":1} is not a valid schema.pair: json: unknown field "c"`},
		{"default property case", field[pair](`default:"{\"a\":1,\"B\":1}"`), `field F: default {"a":1,"B":1} has unknown property "B"`},
		{"default nested", field[pair](`default:"{\"a\":9}"`), `field F: default {"a":9}: a is greater than maximum 5`},
		{"default with required", field[int](`default:"1" required:"true"`), `field F: a required field cannot have a default`},
		{"example too long", field[string](`maxLength:"3" examples:"abc,abcd"`), `field F: example "abcd" is longer than maxLength 3`},
		{"example not int", field[int](`examples:"1,x"`), `field F: examples value "x" is not a valid int: invalid character 'x' looking for beginning of value`},
		{"empty examples", field[int](`examples:" "`), `field F: examples tag is empty`},
		{"required not bool", field[int](`required:"maybe"`), `field F: required "maybe" is not true or false`},
		{"jsonschema options", field[int](`jsonschema:"minimum=1"`), `field F: jsonschema tag "minimum=1" is a description, not key=value options: use separate tags such as minimum:"1"`},
		{"description and jsonschema", field[int](`description:"a" jsonschema:"b"`), `field F: description and jsonschema tags differ`},
	})
}
