package jsondec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/wieldhq/wield/internal/racedetect"
)

// strictJSON is what DecodeStrict stands in for: encoding/json/v2 with
// unknown members rejected (exact key names, no duplicate keys, valid
// UTF-8 only, nothing after the value).
func strictJSON[T any](in []byte, v *T) error {
	return jsonv2.Unmarshal(in, v, jsonv2.RejectUnknownMembers(true))
}

// compareStrict wants DecodeStrict, and its fast path alone, to agree with
// the reference: the same refusals, the same values.
func compareStrict[T any](t *testing.T, in string) {
	t.Helper()
	var want, got, fast T
	werr := strictJSON([]byte(in), &want)
	gerr := DecodeStrict([]byte(in), &got)
	if (werr == nil) != (gerr == nil) {
		t.Errorf("%T %q: DecodeStrict says %v, encoding/json/v2 says %v", got, in, gerr, werr)
		return
	}
	var e *Error
	if gerr != nil && !errors.As(gerr, &e) {
		t.Errorf("%T %q: error %T, want *Error", got, in, gerr)
	}
	opt := cmp.AllowUnexported(sample{}, embedded{}, inner{})
	if werr == nil {
		if diff := cmp.Diff(want, got, opt); diff != "" {
			t.Errorf("%T %q (-encoding/json/v2 +DecodeStrict):\n%s", got, in, diff)
		}
	}
	if !decode([]byte(in), &fast, true) {
		return // the reference decided
	}
	if werr != nil {
		t.Errorf("%T %q: the fast path took what encoding/json/v2 refuses: %v", fast, in, werr)
		return
	}
	if diff := cmp.Diff(want, fast, opt); diff != "" {
		t.Errorf("%T %q (-encoding/json/v2 +fast path):\n%s", fast, in, diff)
	}
}

var strictInputs = []string{
	`{"message":"hi"}`,
	`{"message":"hi","extra":1}`,
	`{"MESSAGE":"case"}`,
	`{"message":"a","message":"b"}`,
	`{"message":"a","Message":"b"}`,
	`{"m\u0065ssage":"escaped key"}`,
	`{"message":"a","m\u0065ssage":"escaped duplicate"}`,
	"{\"message\":\"bad \xff utf8\"}",
	"{\"mess\xffage\":\"bad key\"}",
	`{"message":"\ud800 lone"}`,
	`{"message":"\ud83d\ude00 pair"}`,
	`{"message":"\udc00\ud800 reversed"}`,
	`{"name":"x","nested":{"a":1,"zzz":2}}`,
	`{"name":"x","nested":{"a":1,"a":2}}`,
	`{"name":"x","pnested":{"a":1,"m":{"k":{"a":1,"q":0}}}}`,
	`{"map":{"k":1,"k":2}}`,
	`{"map":{"k":1,"\u006b":2}}`,
	`{"any":{"free":"form","free":"again"}}`,
	`{"any":["\ud800"]}`,
	`{"raw":{"a":1,"a":2}}`,
	`{"raw":{"a":{"b":1,"b":2}}}`,
	"{\"raw\":[\"\xff\"]}",
	`{"raw":{"A":1,"a":2}}`,
	`{"skip":"tagged -"}`,
	`{"hidden":"unexported"}`,
	`{"Untag":"exact"}`,
	`{"untag":"other case"}`,
	`{"when":"2026-01-02T03:04:05Z"}`,
	`{"any":{"free":"form"},"raw":{"also":"free"},"map":{"k":1}}`,
	`{"v":1,"next":{"v":2,"next":{"v":3,"w":4}}}`,
	`{"v":1,"V":2}`,
	`{"count":-0}`,
	`{"big":1e2}`,
	`{"arr":[1,2]}`,
	`{"tags":["a","a"],"deep":[[{"a":1,"a":1}]]}`,
}

func TestDecodeStrict(t *testing.T) {
	for _, in := range append(strictInputs, inputs...) {
		compareStrict[sample](t, in)
		compareStrict[recursive](t, in)
		compareStrict[echoIn](t, in)
		compareStrict[map[string]any](t, in)
	}
	var e echoIn
	if err := DecodeStrict([]byte(`{"message":"hi"}`), &e); err != nil || e.Message != "hi" {
		t.Errorf("plain input: %+v, %v", e, err)
	}
	if !decode([]byte(`{"message":"hi"}`), &e, true) {
		t.Error("plain input left to the reference decoder")
	}
}

// TestDecodeStrictErrors wants each refusal to name the key or value at
// fault, in words a client can act on.
func TestDecodeStrictErrors(t *testing.T) {
	type caller struct {
		ID        string         `json:"id"`
		Variables map[string]any `json:"variables"`
	}
	type call struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		Caller    caller          `json:"caller"`
		TimeoutMS int64           `json:"timeout_ms"`
		Priority  int8            `json:"priority"`
		Ratio     float32         `json:"ratio"`
	}
	type batch struct {
		Calls []call `json:"calls"`
	}
	tests := []struct {
		in, path, msg string
	}{
		{`{"ARGUMENTS":{"a":1},"arguments":{"b":2}}`, "/ARGUMENTS", `unknown key "ARGUMENTS" (keys are case-sensitive: did you mean "arguments"?)`},
		{`{"arguments":{"a":1},"arguments":{"b":2}}`, "/arguments", `duplicate key "arguments": each key may appear once`},
		{`{"arguments":{"a":1,"a":2}}`, "/arguments/a", `duplicate key "a" in arguments: each key may appear once`},
		{`{"caller":{"variables":{"x":1,"x":2}}}`, "/caller/variables/x", `duplicate key "x" in caller/variables: each key may appear once`},
		{`{"timeout_ms":1e30}`, "/timeout_ms", `timeout_ms: 1e30 is not an integer from -9223372036854775808 to 9223372036854775807 (digits only: no fraction, no exponent)`},
		{`{"timeout_ms":99999999999999999999}`, "/timeout_ms", `timeout_ms: 99999999999999999999 is not an integer from -9223372036854775808 to 9223372036854775807 (digits only: no fraction, no exponent)`},
		{`{"timeout_ms":1.5}`, "/timeout_ms", `timeout_ms: 1.5 is not an integer from -9223372036854775808 to 9223372036854775807 (digits only: no fraction, no exponent)`},
		{`{"priority":300}`, "/priority", `priority: 300 is not an integer from -128 to 127 (digits only: no fraction, no exponent)`},
		{`{"ratio":1e39}`, "/ratio", `ratio: 1e39 is not a number in range`},
		{`{"timeout_ms":"5"}`, "/timeout_ms", `timeout_ms: want an integer, not a string`},
		{`{"caller":[]}`, "/caller", `caller: want an object, not an array`},
		{`{"tool":"\ud800"}`, "/tool", `a string at tool has a \u escape of half a surrogate pair`},
		{"{\"tool\":\"\xff\"}", "/tool", `a string at tool is not valid UTF-8`},
		{`{"calls":[{"tool":"a","bad":1}]}`, "/calls/0/bad", `unknown key "bad" in calls/0`},
		{`{"calls":[{"tool":"a","Tool":"b"}]}`, "/calls/0/Tool", `unknown key "Tool" in calls/0 (keys are case-sensitive: did you mean "tool"?)`},
		{`{"tool":"a"} x`, "", `invalid JSON at byte 13: invalid character 'x' after top-level value`},
		{``, "", `no JSON value`},
		{`{"tool":`, "/tool", `the JSON ends too early, at byte 8`},
	}
	for _, tt := range tests {
		var v batch
		var c call
		var err error
		if strings.Contains(tt.in, `"calls"`) {
			err = DecodeStrict([]byte(tt.in), &v)
		} else {
			err = DecodeStrict([]byte(tt.in), &c)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: error %v, want *Error", tt.in, err)
			continue
		}
		if e.Path != tt.path || e.Msg != tt.msg {
			t.Errorf("%q:\n got  %q %q\n want %q %q", tt.in, e.Path, e.Msg, tt.path, tt.msg)
		}
	}
}

// TestDecodeStrictLeavesValue wants *v untouched by a refused input.
func TestDecodeStrictLeavesValue(t *testing.T) {
	v := echoIn{Message: "before"}
	if err := DecodeStrict([]byte(`{"message":"a","message":"b"}`), &v); err == nil || v.Message != "before" {
		t.Errorf("got %+v, %v", v, err)
	}
}

func FuzzDecodeStrict(f *testing.F) {
	for _, in := range append(strictInputs, inputs...) {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		compareStrict[sample](t, string(in))
		compareStrict[recursive](t, string(in))
		compareStrict[map[string]any](t, string(in))
	})
}

// TestDecodeInPlace wants *v replaced, not merged into, by both ways of
// decoding, and no allocation for a value that holds none (a T decoded
// aside and copied in was one for every decoding).
func TestDecodeInPlace(t *testing.T) {
	type counts struct {
		A int  `json:"a"`
		B int  `json:"b"`
		C bool `json:"c"`
	}
	in := []byte(`{"a":1,"c":true}`)
	for _, tt := range []struct {
		name   string
		decode func([]byte, *counts) error
	}{{"Decode", Decode[counts]}, {"DecodeStrict", DecodeStrict[counts]}} {
		v := counts{A: 7, B: 8}
		if err := tt.decode(in, &v); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(counts{A: 1, C: true}, v); diff != "" {
			t.Errorf("%s (-want +got)\n%s", tt.name, diff)
		}
		if racedetect.Enabled {
			continue // the race detector's sync.Pool drops decoders on purpose
		}
		if n := testing.AllocsPerRun(100, func() { _ = tt.decode(in, &v) }); n != 0 {
			t.Errorf("%s: %.0f allocations a decoding, want none", tt.name, n)
		}
	}
}

// TestStrictErrorsBounded: what a message quotes of the input is bounded.
// A body nested 10,001 deep was refused with a path of a "/0" per level
// (20 KB sent back as the error), as "invalid JSON"; a key as long as the
// body was quoted whole.
func TestStrictErrorsBounded(t *testing.T) {
	type call struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	deep := `{"arguments":{"message":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`
	longKey := `{"tool":"a","` + strings.Repeat("k", 50000) + `":1}`
	badUTF8 := "{\"arguments\":{\"message\":" + strings.Repeat("[", 500) + "\"\xff\"" + strings.Repeat("]", 500) + "}}"
	for _, tt := range []struct{ in, want string }{
		{deep, "the JSON nests arrays and objects more than 10000 deep, at byte "},
		{longKey, `unknown key "kkkk`},
		{badUTF8, "a string at arguments/message/0/0/"},
	} {
		var c call
		err := DecodeStrict([]byte(tt.in), &c)
		if err == nil {
			t.Fatalf("%.40q…: no error", tt.in)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, tt.want) {
			t.Errorf("%.40q…: error %.300q, want it to begin %q", tt.in, msg, tt.want)
		}
		if len(msg) > 2*maxShown+100 {
			t.Errorf("%.40q…: error of %d bytes: %.300q…", tt.in, len(msg), msg)
		}
	}
}
