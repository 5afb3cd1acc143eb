package jsonenc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

type inner struct {
	A int               `json:"a"`
	B []string          `json:"b,omitempty"`
	M map[string]*inner `json:"m"`
}

type sample struct {
	Name    string             `json:"name"`
	Count   int8               `json:"count"`
	Big     uint64             `json:"big"`
	Ratio   float32            `json:"ratio"`
	On      bool               `json:"on"`
	Ptr     *string            `json:"ptr"`
	Tags    []string           `json:"tags"`
	Nested  inner              `json:"nested"`
	PNested *inner             `json:"pnested"`
	Map     map[string]int     `json:"map"`
	Any     any                `json:"any"`
	Raw     json.RawMessage    `json:"raw"`
	Bytes   []byte             `json:"bytes"`
	When    time.Time          `json:"when"`
	Untag   string             // named by the field
	Skip    string             `json:"-"`
	Dash    string             `json:"-,"`
	Bad     string             `json:"a\"b"` // invalid tag name: the field's name is used
	HTML    string             `json:"<&>"`
	hidden  string             //nolint:unused // unexported: never encoded
	Arr     [2]int             `json:"arr"`
	Deep    [][]map[string]int `json:"deep"`
	Uptr    uintptr            `json:"uptr"`
	I16     int16              `json:"i16,omitempty"`
}

type omits struct {
	S    string         `json:"s,omitempty"`
	I    int            `json:"i,omitempty"`
	F    float64        `json:"f,omitempty"`
	B    bool           `json:"b,omitempty"`
	P    *int           `json:"p,omitempty"`
	Sl   []int          `json:"sl,omitempty"`
	M    map[string]int `json:"m,omitempty"`
	A    any            `json:"a,omitempty"`
	Arr  [0]int         `json:"arr,omitempty"`
	St   inner          `json:"st,omitempty"` // structs are never empty
	ZS   string         `json:"zs,omitzero"`
	ZF   float64        `json:"zf,omitzero"` // -0 is not zero
	ZSl  []int          `json:"zsl,omitzero"`
	ZM   map[string]int `json:"zm,omitzero"`
	ZSt  inner          `json:"zst,omitzero"`
	ZArr [2]int         `json:"zarr,omitzero"`
	ZT   time.Time      `json:"zt,omitzero"`
	ZPT  *time.Time     `json:"zpt,omitzero"`
	ZV   zeroV          `json:"zv,omitzero"`
	ZP   zeroP          `json:"zp,omitzero"`
	ZI   zeroer         `json:"zi,omitzero"`
	Both []int          `json:"both,omitempty,omitzero"`
}

type zeroer interface{ IsZero() bool }

// zeroV is zero, by its method, when N is 7.
type zeroV struct{ N int }

func (z zeroV) IsZero() bool { return z.N == 7 }

// zeroP is zero when N is 7; its method has a pointer receiver.
type zeroP struct{ N int }

func (z *zeroP) IsZero() bool { return z.N == 7 }

type valMarshaler struct{ S string }

func (m valMarshaler) MarshalJSON() ([]byte, error) {
	if m.S == "fail" {
		return nil, errors.New("value marshaler failed")
	}
	return []byte(` { "s" : "` + m.S + `<&>\u2028\u003c\\u003e\u0026" } `), nil
}

// ptrMarshaler is encoded by its method only where encoding/json can take
// its address.
type ptrMarshaler struct{ S string }

func (m *ptrMarshaler) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte(`"nil ptrMarshaler"`), nil
	}
	return []byte(`"ptr:` + m.S + `"`), nil
}

type textKey string

func (k textKey) MarshalText() ([]byte, error) { return []byte("text:" + string(k)), nil }

type ptrText struct{ N int }

func (t *ptrText) MarshalText() ([]byte, error) {
	return []byte("<" + strings.Repeat("x", min(max(t.N, 0), 8)) + ">"), nil
}

type holder struct {
	V  valMarshaler  `json:"v"`
	P  ptrMarshaler  `json:"p"`
	PP *ptrMarshaler `json:"pp"`
	T  ptrText       `json:"t"`
	VM json.Marshaler
	TM fmtText `json:"tm,omitempty"`
}

type fmtText interface{ MarshalText() ([]byte, error) }

type embedded struct {
	inner
	X int `json:"x"`
}

type embeddedPtr struct {
	*inner
	Y string
}

type quoted struct {
	N int     `json:"n,string"`
	F float64 `json:",string"`
	S string  `json:"s,string"`
}

// clash has two fields tagged "x", which vet would refuse in a literal.
func clash() any {
	str := reflect.TypeFor[string]()
	t := reflect.StructOf([]reflect.StructField{
		{Name: "A", Type: str, Tag: `json:"x"`},
		{Name: "B", Type: str, Tag: `json:"x"`},
		{Name: "C", Type: str},
	})
	v := reflect.New(t).Elem()
	for i := range 3 {
		v.Field(i).SetString(string(rune('a' + i)))
	}
	return v.Interface()
}

type clashTagged struct {
	X string
	Y string `json:"X"`
}

type recursive struct {
	V    int        `json:"v"`
	Next *recursive `json:"next,omitempty"`
}

type tree struct {
	Name string          `json:"name"`
	Kids []tree          `json:"kids,omitempty"`
	ByID map[string]tree `json:"by_id,omitempty"`
}

type named string

type echo struct {
	Message string `json:"message"`
}

type mixed struct {
	ID      int64             `json:"id"`
	Name    string            `json:"name"`
	Score   float64           `json:"score"`
	Active  bool              `json:"active"`
	Tags    []string          `json:"tags"`
	Meta    map[string]string `json:"meta,omitempty"`
	Parent  *echo             `json:"parent,omitempty"`
	Retries uint8             `json:"retries"`
}

type unsupported struct {
	C chan int `json:"c"`
}

func ptr[T any](v T) *T { return &v }

// diffCase marshals one value with both encoders.
type diffCase struct {
	name string
	run  func(t *testing.T)
}

func same[T any](name string, v T) diffCase {
	return diffCase{name, func(t *testing.T) {
		t.Helper()
		compare(t, v)
		compare[any](t, v)
	}}
}

// reference is what Marshal promises: encoding/json with SetEscapeHTML(false),
// and the escapes \u003c, \u003e and \u0026 that methods wrote turned back.
func reference(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	// A pair of backslashes is matched first, so what follows it is text.
	return htmlEscapes.ReplaceAllFunc(b, func(m []byte) []byte {
		switch strings.ToLower(string(m)) {
		case `\u003c`:
			return []byte("<")
		case `\u003e`:
			return []byte(">")
		case `\u0026`:
			return []byte("&")
		}
		return m
	}), nil
}

var htmlEscapes = regexp.MustCompile(`\\\\|\\u00(?:3[cCeE]|26)`)

func compare[T any](t *testing.T, v T) {
	t.Helper()
	want, werr := reference(v)
	got, gerr := Marshal(v)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Errorf("%T: error %v, encoding/json says %v", v, gerr, werr)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%T (-encoding/json +jsonenc)\n%s", v, diff)
	}
}

func cases() []diffCase {
	full := sample{
		Name: "a\u00e9\n\"\\/<script>&amp;\u2028\u2029\x00\x1f\x7f\b\f\r\t", Count: -128, Big: math.MaxUint64,
		Ratio: 0.1, On: true, Ptr: ptr("p"), Tags: []string{"x", ""},
		Nested:  inner{A: 1, B: []string{"z"}, M: map[string]*inner{"k": {A: 2}, "nil": nil, "": {}}},
		PNested: &inner{A: 3}, Map: map[string]int{"b": 2, "a": 1, "<": 0, "é": 3, "\xff": 4, "\u2028": 5},
		Any: map[string]any{"x": []any{1, "2", nil, 1.5, true, map[string]any{}}}, Raw: json.RawMessage(" [1, 2] "),
		Bytes: []byte("hi"), When: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Untag: "u", Skip: "no", Dash: "dash",
		Bad: "bad", HTML: "html", hidden: "no", Arr: [2]int{1, 2}, Deep: [][]map[string]int{{{"a": 1}}, {}, nil},
		Uptr: 42, I16: -3,
	}
	long := &recursive{}
	for i := range 1500 {
		long = &recursive{V: i, Next: long}
	}
	cyclic := &recursive{V: 1}
	cyclic.Next = cyclic
	cyclicMap := map[string]any{}
	cyclicMap["m"] = cyclicMap
	cyclicSlice := []any{nil}
	cyclicSlice[0] = cyclicSlice
	var nilMarshaler *ptrMarshaler

	return []diffCase{
		same("full", full),
		same("full ptr", &full),
		same("zero sample", sample{}),
		same("empty collections", sample{Tags: []string{}, Map: map[string]int{}, Nested: inner{M: map[string]*inner{}}}),
		same("nil ptr", (*sample)(nil)),
		same("nil any", any(nil)),
		same("string", "plain"),
		same("escapes", "\"\\<>&\u2028\u2029\x00\x01\x1f\x7f\b\f\n\r\t é 日本 🙂"),
		same("invalid utf8", "a\xffb\xe2\x80c\xed\xa0\x80d\xf4\x90\x80\x80"),
		same("named string", named("n")),
		same("named map", map[named]named{"b": "1", "a": "2"}),
		same("bool", true),
		same("ints", []any{int8(-128), int16(math.MinInt16), int32(math.MinInt32), int64(math.MinInt64), math.MaxInt64}),
		same("uints", []any{uint8(255), uint16(65535), uint32(math.MaxUint32), uint64(math.MaxUint64), uintptr(7)}),
		same("floats", []float64{0, math.Copysign(0, -1), 0.1, 1e-6, 1e-7, 9.999e-7, 1e20, 1e21, 1e21 - 65536, 123456789.125,
			math.MaxFloat64, math.SmallestNonzeroFloat64, -1e-7, -1e21, 1.5e300, 3}),
		same("float32s", []float32{0, float32(math.Copysign(0, -1)), 0.1, 1e-6, 1e-7, 1e20, 1e21, math.MaxFloat32,
			math.SmallestNonzeroFloat32, 16777216, 3.4e-7}),
		same("NaN", math.NaN()),
		same("Inf in struct", mixed{Score: math.Inf(-1)}),
		same("Inf float32 in map", map[string]float32{"a": float32(math.Inf(1))}),
		same("NaN in any", map[string]any{"a": []any{math.NaN()}}),
		same("array", [3]int{1, 2, 3}),
		same("byte array", [3]byte{1, 2, 3}),
		same("bytes", []byte("<hi>")),
		same("nil bytes", []byte(nil)),
		same("empty array", [0]string{}),
		same("nil slice", []int(nil)),
		same("empty slice", []int{}),
		same("nil map", map[string]int(nil)),
		same("empty map", map[string]int{}),
		same("map of structs", map[string]inner{"z": {A: 1}, "a": {A: 2, B: []string{"b"}}}),
		same("map of ptrs", map[string]*mixed{"x": nil, "y": {Name: "y"}}),
		same("int keys", map[int]string{3: "c", -1: "a", 20: "b"}),
		same("text keys", map[textKey]int{"b": 1, "a": 2}),
		same("omit zero values", omits{}),
		same("omit set values", omits{S: "s", I: 1, F: 0.5, B: true, P: ptr(0), Sl: []int{0}, M: map[string]int{"": 0},
			A: 0, ZS: "z", ZF: math.Copysign(0, -1), ZSl: []int{}, ZM: map[string]int{}, ZSt: inner{A: 1}, ZArr: [2]int{0, 1},
			ZT: time.Unix(1, 0).UTC(), ZPT: &time.Time{}, ZV: zeroV{N: 0}, ZP: zeroP{N: 0}, ZI: zeroV{N: 1}, Both: []int{}}),
		same("omit by methods", omits{ZV: zeroV{N: 7}, ZP: zeroP{N: 7}, ZI: zeroV{N: 7}}),
		same("omit by methods ptr", &omits{ZV: zeroV{N: 7}, ZP: zeroP{N: 7}, ZI: (*zeroP)(nil)}),
		same("omitzero in slice", []omits{{ZP: zeroP{N: 7}}, {ZP: zeroP{N: 1}}}),
		same("omitzero in map", map[string]omits{"a": {ZP: zeroP{N: 7}}}),
		same("time", time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))),
		same("time in slice", []time.Time{{}, time.Unix(0, 0).UTC()}),
		same("bad time", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)),
		same("raw", json.RawMessage(` {"a" : [1, "<&>"] } `)),
		same("raw nil", struct{ R json.RawMessage }{}),
		same("raw invalid", struct{ R json.RawMessage }{R: json.RawMessage(`{`)}),
		same("number", json.Number("1.5e3")),
		same("numbers", struct{ A, B json.Number }{A: "12"}),
		same("bad number", []json.Number{"x"}),
		same("marshalers by value", holder{V: valMarshaler{"v"}, P: ptrMarshaler{"p"}, PP: &ptrMarshaler{"pp"}, T: ptrText{2}}),
		same("marshalers by pointer", &holder{V: valMarshaler{"v"}, P: ptrMarshaler{"p"}, T: ptrText{3}, VM: valMarshaler{"i"}}),
		same("marshalers in slice", []holder{{P: ptrMarshaler{"s"}}}),
		same("marshalers in array", [1]holder{{P: ptrMarshaler{"a"}}}),
		same("marshalers in array ptr", &[1]holder{{P: ptrMarshaler{"a"}}}),
		same("marshalers in map", map[string]holder{"k": {P: ptrMarshaler{"m"}}}),
		same("marshalers in any", []any{holder{P: ptrMarshaler{"i"}}, &holder{P: ptrMarshaler{"j"}}, ptrMarshaler{"k"}}),
		same("marshaler error", []valMarshaler{{"ok"}, {"fail"}}),
		same("marshaler nil in interface", holder{VM: nilMarshaler}),
		same("text marshaler in interface", holder{TM: &ptrText{1}}),
		same("ptr marshaler top", ptrMarshaler{"top"}),
		same("ptr marshaler top ptr", &ptrMarshaler{"top"}),
		same("nil marshaler ptr", nilMarshaler),
		same("embedded", embedded{inner: inner{A: 1}, X: 2}),
		same("embedded nil ptr", embeddedPtr{Y: "y"}),
		same("embedded ptr", []embeddedPtr{{inner: &inner{A: 5}, Y: "y"}}),
		same("quoted", quoted{N: 1, F: 0.5, S: "<s>"}),
		same("quoted in struct", struct{ Q []quoted }{Q: []quoted{{N: 2}}}),
		same("clash", clash()),
		same("clash tagged", clashTagged{X: "x", Y: "y"}),
		same("recursive", &recursive{V: 1, Next: &recursive{V: 2, Next: &recursive{V: 3}}}),
		same("deep but finite", long),
		same("cycle", cyclic),
		same("cyclic map", cyclicMap),
		same("cyclic slice", cyclicSlice),
		same("tree", tree{Name: "r", Kids: []tree{{Name: "a", ByID: map[string]tree{"x": {Name: "x"}}}}}),
		same("chan", make(chan int)),
		same("chan field", unsupported{}),
		same("chan in any", map[string]any{"f": func() {}}),
		same("complex", complex(1, 2)),
		same("anonymous struct", struct {
			A int
			b int
		}{A: 1}),
		same("no fields", struct{}{}),
		same("echo", echo{Message: "hello, world"}),
		same("mixed", mixedValue()),
		same("any of everything", []any{full, &full, omits{}, holder{}, embedded{}, mixedValue(), nil}),
	}
}

func mixedValue() mixed {
	return mixed{ID: 42, Name: "widget", Score: 0.875, Active: true, Tags: []string{"a", "b"},
		Meta: map[string]string{"k": "v", "a": "b"}, Parent: &echo{Message: "hi"}, Retries: 3}
}

func ExampleMarshal() {
	type result struct {
		Text  string   `json:"text"`
		Score float64  `json:"score"`
		Tags  []string `json:"tags,omitempty"`
	}
	b, err := Marshal(result{Text: "<ok>", Score: 1e21})
	fmt.Println(string(b), err)
	// Output: {"text":"<ok>","score":1e+21} <nil>
}

// TestSameAsEncodingJSON wants the same bytes and the same errors as
// encoding/json without HTML escapes (reference), through Marshal of the
// static type and of any.
func TestSameAsEncodingJSON(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, c.run)
	}
}

// TestFastPlans guards against plain data quietly taking the slow path,
// which the differential tests would not notice.
func TestFastPlans(t *testing.T) {
	fast := []reflect.Type{
		reflect.TypeFor[echo](), reflect.TypeFor[mixed](), reflect.TypeFor[sample](), reflect.TypeFor[omits](),
		reflect.TypeFor[holder](), reflect.TypeFor[*recursive](), reflect.TypeFor[tree](), reflect.TypeFor[fuzzDoc](),
		reflect.TypeFor[map[string]any](), reflect.TypeFor[[]any](), reflect.TypeFor[[2]float32](),
		reflect.TypeFor[map[named][]*int](),
	}
	for _, typ := range fast {
		if _, ok := planFor(typ).(slowPlan); ok {
			t.Errorf("%v: slow plan, want a fast one", typ)
		}
	}
	slow := []reflect.Type{
		reflect.TypeFor[time.Time](), reflect.TypeFor[json.RawMessage](), reflect.TypeFor[json.Number](),
		reflect.TypeFor[[]byte](), reflect.TypeFor[ptrMarshaler](), reflect.TypeFor[*ptrMarshaler](),
		reflect.TypeFor[ptrText](), reflect.TypeFor[embedded](), reflect.TypeFor[quoted](),
		reflect.TypeFor[clashTagged](), reflect.TypeFor[map[int]string](), reflect.TypeFor[chan int](),
	}
	for _, typ := range slow {
		if _, ok := planFor(typ).(slowPlan); !ok {
			t.Errorf("%v: %T, want the slow plan", typ, planFor(typ))
		}
	}
}

func TestConcurrentPlans(t *testing.T) {
	type fresh struct {
		T    tree
		Next *fresh
	}
	done := make(chan bool)
	for range 8 {
		go func() {
			defer func() { done <- true }()
			compare(t, &fresh{T: tree{Name: "t"}, Next: &fresh{}})
		}()
	}
	for range 8 {
		<-done
	}
}

// fuzzDoc has fields of most kinds; the fuzzer's bytes are decoded into it
// by encoding/json and then set into some fields directly.
type fuzzDoc struct {
	S      string               `json:"s"`
	Ss     []string             `json:"ss,omitempty"`
	I      int64                `json:"i,omitzero"`
	U8     uint8                `json:"u8"`
	F      float64              `json:"f"`
	F32    float32              `json:"f32,omitempty"`
	B      bool                 `json:"b"`
	P      *fuzzDoc             `json:"p,omitempty"`
	M      map[string]fuzzInner `json:"m"`
	MP     map[string]*fuzzDoc  `json:"mp,omitzero"`
	A      any                  `json:"a"`
	As     []any                `json:"as"`
	Arr    [2]float32           `json:"arr"`
	T      time.Time            `json:"t,omitzero"`
	Raw    json.RawMessage      `json:"raw"`
	Num    json.Number          `json:"num"`
	Bs     []byte               `json:"bs"`
	Tags   map[string]string    `json:"tags"`
	In     fuzzInner            `json:"in,omitzero"`
	PIn    *fuzzInner           `json:"pin"`
	IntKey map[int]float64      `json:"intkey"`
	Weird  string               `json:"<&>"`

	// Set from the fuzzer's bytes directly, not decoded.
	Text  string
	Bits  float64
	Bits2 float32
}

type fuzzInner struct {
	X float64   `json:"x"`
	Y []float32 `json:"y"`
	Z string    `json:"z,omitempty"`
	N *int      `json:"n"`
}

// fuzzExtras has the types with methods, decoded from the same bytes.
type fuzzExtras struct {
	H  holder
	HS []holder
	HM map[string]holder
	PH *holder
	O  omits
	OS []omits
	Z  map[string]zeroP
	E  []embedded
}

var seeds = []string{
	`{"s":"a\u00e9\n\"<>&\u2028","ss":["x",""],"i":-9007199254740993,"u8":255,"f":1e-7,"f32":0.1,"b":true,
	  "p":{"s":"inner","f":1e21,"p":{"f":-0}},"m":{"b":{"x":0.1,"y":[1e-7,3.4e38]},"a":{"z":"\u0000"}},
	  "mp":{"k":null,"j":{"s":"j"}},"a":{"x":[1,"2",null,{"y":1e300}]},"as":[true,false,null,1.5,"s",[]],
	  "arr":[1e-6,1e21],"t":"2026-01-02T03:04:05.999999999+01:00","raw":[1, 2],"num":12.5e-3,"bs":"aGk=",
	  "tags":{"\ud800":"lone","\u2029":"ps"},"in":{"x":-0.0},"pin":{"n":3},"intkey":{"2":1,"-1":2},"<&>":"w"}`,
	`{"s":null,"ss":[],"m":{},"mp":{},"a":[],"as":null,"tags":{},"raw":null}`,
	`{"f":123456789012345678901234567890,"f32":1e-45,"a":1e-320}`,
	"{\"s\":\"bad \xff utf8 \xe2\x80\"}",
	`[]`, `null`, `"str"`, ``, `{`,
}

func FuzzSameAsEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var doc fuzzDoc
		_ = json.Unmarshal(in, &doc) // a partly decoded value is as good a value
		doc.Text = string(in)
		var b [8]byte
		copy(b[:], in)
		doc.Bits = math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
		doc.Bits2 = math.Float32frombits(binary.LittleEndian.Uint32(b[:]))
		compare(t, doc)
		compare(t, &doc)
		compare[any](t, []fuzzDoc{doc})
		// Apart, or an invalid RawMessage would send every doc to encoding/json.
		compare(t, struct {
			R json.RawMessage
			S []string
		}{in, []string{string(in)}})

		var x fuzzExtras
		_ = json.Unmarshal(in, &x)
		compare(t, x)
		compare(t, &x)

		var v any
		if json.Unmarshal(in, &v) == nil {
			compare(t, v)
		}
		var m map[string]fuzzInner
		if json.Unmarshal(in, &m) == nil {
			compare(t, m)
		}
	})
}

// BenchmarkMarshal compares Marshal, on a one-field struct and on a struct
// of mixed fields (what a typed tool's handler returns), with the libraries
// that could replace it: encoding/json/v2 (as github.com/go-json-experiment/json)
// and encoding/json told not to escape HTML. See the package doc for the
// figures and how to run it.
func BenchmarkMarshal(b *testing.B) {
	values := []struct {
		name string
		v    any
	}{
		{"echo", echo{Message: "hello, world"}},
		{"mixed", mixedValue()},
	}
	for _, bv := range values {
		b.Run(bv.name, func(b *testing.B) {
			switch v := bv.v.(type) {
			case echo:
				bench(b, v)
			case mixed:
				bench(b, v)
			}
		})
	}
}

func bench[T any](b *testing.B, v T) {
	b.Run("jsonenc", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonv2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonv2.Marshal(v, jsonv2.Deterministic(true), jsontext.EscapeForJS(true)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
