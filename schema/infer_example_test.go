package schema_test

import (
	"encoding/json"
	"fmt"
	"log"
	"reflect"

	"github.com/wieldhq/wield/schema"
)

func ExampleFor() {
	type Input struct {
		City  string `json:"city" description:"City name"`
		Units string `json:"units" enum:"metric,imperial" default:"metric"`
		Days  int    `json:"days,omitempty" description:"Days to forecast" minimum:"1" maximum:"7"`
	}
	s, err := schema.For[Input]()
	if err != nil {
		log.Fatal(err)
	}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// {
	//   "type": "object",
	//   "properties": {
	//     "city": {
	//       "type": "string",
	//       "description": "City name"
	//     },
	//     "units": {
	//       "type": "string",
	//       "description": "Default: metric",
	//       "default": "metric",
	//       "enum": [
	//         "metric",
	//         "imperial"
	//       ]
	//     },
	//     "days": {
	//       "type": "integer",
	//       "description": "Days to forecast",
	//       "minimum": 1,
	//       "maximum": 7
	//     }
	//   },
	//   "required": [
	//     "city"
	//   ],
	//   "additionalProperties": false
	// }
}

func ExampleForType() {
	type Options struct {
		Limit int `json:"limit" minimum:"abc"`
	}
	type Input struct {
		Options Options `json:"options"`
	}
	_, err := schema.ForType(reflect.TypeFor[Input]())
	fmt.Println(err)
	// Output:
	// schema for schema_test.Input: field Options.Limit: minimum "abc" is not a number
}
