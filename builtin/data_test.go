package builtin_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
)

func TestDataTools(t *testing.T) {
	e := newEngine(t, builtin.DataTools()...)
	big := strings.Repeat("a", builtin.MaxDataText+1)
	bigArgs, _ := json.Marshal(map[string]string{"text": big})
	tests := []struct {
		tool, args string
		want       string // output JSON when ok
		errType    wield.ErrorType
		errText    string
	}{
		{"json_parse", `{"text":"{\"a\": [1, 2.5, \"x\", null, true]}"}`, `{"data":{"a":[1,2.5,"x",null,true]}}`, "", ""},
		{"json_parse", `{"text":" 42 "}`, `{"data":42}`, "", ""},
		{"json_parse", `{"text":"\"héllo\""}`, `{"data":"héllo"}`, "", ""},
		{"json_parse", `{"text":"{\"a\":1,}"}`, "", wield.ErrValidation, "line 1, column 8: invalid character '}'"},
		{"json_parse", `{"text":"{\n  \"a\": tru\n}"}`, "", wield.ErrValidation, "line 2, column 11"},
		{"json_parse", `{"text":"{\"a\":"}`, "", wield.ErrValidation, "ends before the value is complete"},
		{"json_parse", `{"text":""}`, "", wield.ErrValidation, "text is empty"},
		{"json_parse", `{"text":"{} {}"}`, "", wield.ErrValidation, "more than one JSON value"},
		{"json_parse", `{"text":"NaN"}`, "", wield.ErrValidation, "not valid JSON"},
		{"json_parse", string(bigArgs), "", wield.ErrValidation, "exceed the limit"},
		{"json_stringify", `{"data":{"b":[1,{"c":"d"}]}}`, `{"text":"{\"b\":[1,{\"c\":\"d\"}]}"}`, "", ""},
		{"json_stringify", `{"data":{"b":[1]},"pretty":true}`, `{"text":"{\n  \"b\": [\n    1\n  ]\n}"}`, "", ""},
		{"json_stringify", `{"data":"x"}`, `{"text":"\"x\""}`, "", ""},
		{"json_stringify", `{"data":null}`, `{"text":"null"}`, "", ""},
		{"json_stringify", `{}`, "", wield.ErrValidation, "data"},
		{"base64_encode", `{"text":"héllo, wörld"}`, `{"encoded":"aMOpbGxvLCB3w7ZybGQ="}`, "", ""},
		{"base64_encode", `{"text":""}`, `{"encoded":""}`, "", ""},
		{"base64_decode", `{"encoded":"aMOpbGxvLCB3w7ZybGQ="}`, `{"decoded":"héllo, wörld"}`, "", ""},
		{"base64_decode", `{"encoded":"aMOpbGxvLCB3w7ZybGQ"}`, `{"decoded":"héllo, wörld"}`, "", ""},
		{"base64_decode", `{"encoded":"-_8"}`, "", wield.ErrExecution, "binary, not UTF-8"},
		{"base64_decode", `{"encoded":"aGVs\nbG8="}`, `{"decoded":"hello"}`, "", ""},
		{"base64_decode", `{"encoded":"aGVsbG8*"}`, "", wield.ErrValidation, `offset 7: character '*' is not base64`},
		{"base64_decode", `{"encoded":"a"}`, "", wield.ErrValidation, "not valid base64"},
		{"base64_decode", `{"encoded":"aGVsbG8=x"}`, "", wield.ErrValidation, "not valid base64"},
		{"base64_decode", `{"encoded":"/w=="}`, "", wield.ErrExecution, "binary"},
	}
	for _, tt := range tests {
		res := call(t, e, tt.tool, tt.args)
		if tt.errType != "" {
			if res.OK || res.ErrorType != tt.errType || !strings.Contains(res.Error, tt.errText) {
				t.Errorf("%s %.60s: got ok=%v %s %q, want %s containing %q", tt.tool, tt.args, res.OK, res.ErrorType, res.Error, tt.errType, tt.errText)
			}
			continue
		}
		if !res.OK {
			t.Errorf("%s %s: %s %s", tt.tool, tt.args, res.ErrorType, res.Error)
			continue
		}
		if diff := cmp.Diff(tt.want, string(res.Output)); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tt.tool, tt.args, diff)
		}
	}
}

func TestDataRoundTrip(t *testing.T) {
	e := newEngine(t, builtin.DataTools()...)
	for _, text := range []string{"", "plain", "ünïcödé 🎉", "line\nbreaks\tand \"quotes\"", strings.Repeat("xyz", 1000)} {
		args, _ := json.Marshal(map[string]string{"text": text})
		enc := call(t, e, "base64_encode", string(args))
		var eo builtin.Base64EncodeOutput
		if err := json.Unmarshal(enc.Output, &eo); err != nil {
			t.Fatal(err)
		}
		args, _ = json.Marshal(map[string]string{"encoded": eo.Encoded})
		dec := call(t, e, "base64_decode", string(args))
		var do builtin.Base64DecodeOutput
		if err := json.Unmarshal(dec.Output, &do); err != nil || do.Decoded != text {
			t.Errorf("%q came back as %q (%v)", text, do.Decoded, err)
		}
	}
}
