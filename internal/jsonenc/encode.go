// Package jsonenc writes JSON that a model or a person reads: every JSON
// that wield hands to a model, prints, serves or records goes through it,
// so that text keeps <, > and & as they are. encoding/json escapes them as
// \u003c, \u003e and \u0026 for embedding in HTML; a model then reads
// "if a \u003c b" for "if a < b". HTML is escaped where HTML is made (the
// console builds its DOM from text nodes, never innerHTML), never in JSON.
//
// It writes what encoding/json writes with SetEscapeHTML(false), the
// same JSON value byte for byte, except that the three escapes are turned
// back wherever they come from, including the output of a type's own
// MarshalJSON (jsonschema.Schema, for one, marshals itself with
// json.Marshal). U+2028 and U+2029 stay as encoding/json writes them:
// escaped in strings it encodes, so wield's JSON is also valid JavaScript
// source, and as they are inside raw JSON passed through; JSON allows both
// and a model reads the same text.
//
// It is the twin of internal/jsondec, and faster than the libraries for
// the shapes tool results have: structs of strings, numbers, booleans,
// pointers, slices, arrays, maps with string keys and nested structs.
//
// # Why not a library
//
// It stays because the libraries that could replace it are about twice as
// slow on the serve path, with several times the allocations. Measured in
// one run, interleaved (five rounds of -benchtime=200ms; medians; the
// ratio is the median of each round's ratio to jsonenc), on a shared,
// busy 2-core AMD EPYC, Go 1.26, against github.com/go-json-experiment/json
// (encoding/json/v2; HTML unescaped by default, Deterministic, EscapeForJS)
// and encoding/json with SetEscapeHTML(false):
//
//	                              jsonenc           json/v2                 encoding/json
//	Result.MarshalJSON echo       1.9 µs  1 alloc   3.7 µs  4 allocs  2.1×  6.5 µs  5 allocs  3.8×
//	Result.MarshalJSON 10 KB text 82 µs   1 alloc   168 µs  4 allocs  2.1×  172 µs  5 allocs  2.1×
//	Result.MarshalJSON nested     6.1 µs  3 allocs  14.6 µs 13 allocs 1.9×  11.0 µs 12 allocs 1.9×
//	Marshal echo output           348 ns  1 alloc   870 ns  3 allocs  2.5×  721 ns  3 allocs  2.2×
//	Marshal mixed struct          2.2 µs  1 alloc   4.2 µs  7 allocs  2.4×  3.4 µs  8 allocs  2.2×
//
// (BenchmarkResultJSON in package wield, BenchmarkMarshal here.) The
// absolute figures are inflated by the load; the ratios are what carries.
// Where a library does it as well, jsonenc uses it: jsontext checks raw
// JSON, encoding/json encodes what the plans leave to it.
//
// A value of a type it does not handle itself (anything with its own
// MarshalJSON or MarshalText, []byte, json.Number, maps with other keys,
// structs with embedded fields, the ",string" option or clashing names,
// channels, functions, complex numbers) is encoded by encoding/json and
// its output appended. Interface values are encoded by the plan of their
// dynamic type.
//
// When anything fails (NaN or an infinity, a method's error, a cycle, a type
// encoding/json cannot encode) Marshal encodes the whole value again with
// encoding/json, so errors read exactly as encoding/json writes them.
package jsonenc

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Marshal returns v's JSON as a model reads it: what json.Marshal(v)
// returns without escaping <, > and & (see the package doc), with less
// work and a single allocation for plain data, so that results can be
// encoded without paying for encoding/json's generality. Its errors are
// json.Marshal's own: *json.UnsupportedTypeError, *json.UnsupportedValueError
// (NaN, infinities, cycles), *json.MarshalerError, and the others it returns.
func Marshal[T any](v T) ([]byte, error) {
	e := encoders.Get().(*encoder)
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Interface {
		// json.Marshal sees the dynamic value, not the interface type; the
		// value is boxed already.
		x := any(v)
		if x == nil {
			e.release()
			return []byte("null"), nil
		}
		r := e.root(reflect.TypeOf(x))
		if r.slow || r.p.encode(e, reflect.ValueOf(x), false) != nil {
			e.release()
			return marshalStd(x)
		}
		return e.result(), nil
	}
	r := e.root(t)
	if r.slow {
		e.release()
		return marshalStd(v)
	}
	// Plans take reflect.Values through interfaces, which would move v to
	// the heap; a copy kept with the encoder costs less. The copy is
	// addressable where json.Marshal's is not, so encode is told addr=false.
	slot, ok := e.slot.(*T)
	if !ok {
		slot = new(T)
		if t.Size() <= maxSlot {
			e.slot = slot
		}
	}
	*slot = v
	err := r.p.encode(e, reflect.ValueOf(slot).Elem(), false)
	var zero T
	*slot = zero
	if err != nil {
		e.release()
		return marshalStd(v)
	}
	return e.result(), nil
}

// marshalStd is json.Marshal without HTML escapes: encoding/json told not
// to escape, and the escapes that values' own MarshalJSON methods wrote
// turned back.
func marshalStd(v any) ([]byte, error) {
	return appendStd(nil, v, "")
}

// appendStd appends v's JSON, indented by indent unless it is empty, as
// marshalStd writes it.
func appendStd(dst []byte, v any, indent string) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	b = b[:len(b)-1] // Encode's newline
	return append(b[:len(dst)], Unescape(b[len(dst):])...), nil
}

// maxSlot is the size of the largest value an encoder keeps a copy of.
const maxSlot = 1 << 10

// root is the plan of a type Marshal is called with.
type root struct {
	p    plan
	slow bool // json.Marshal does it all
}

var roots sync.Map // reflect.Type → *root

// root returns t's root, from a one-entry cache for the common case of an
// encoder used for one type over and over.
func (e *encoder) root(t reflect.Type) *root {
	if e.lastType == t {
		return e.lastRoot
	}
	var r *root
	if v, ok := roots.Load(t); ok {
		r = v.(*root)
	} else {
		p := planFor(t)
		_, slow := p.(slowPlan)
		r = &root{p: p, slow: slow}
		if l, ok := p.(*lazy); ok && l.p.Load() == nil {
			return r // another goroutine is building the plan: keep nothing
		}
		v, _ := roots.LoadOrStore(t, r)
		r = v.(*root)
	}
	e.lastType, e.lastRoot = t, r
	return r
}

// result returns a copy of the encoded bytes and releases e.
func (e *encoder) result() []byte {
	out := make([]byte, len(e.buf))
	copy(out, e.buf)
	e.release()
	return out
}

// errSlow aborts the fast path; Marshal then runs json.Marshal on the whole
// value, so the caller sees encoding/json's own result.
var errSlow = errors.New("jsonenc: not for the fast path")

// maxDepth bounds nesting through pointers, slices, maps and interfaces.
// Past it the value may be cyclic, and encoding/json, which detects cycles
// (after 1000 levels, as it happens), takes over.
const maxDepth = 1000

type encoder struct {
	buf   []byte
	depth int
	keys  []mapEntry // scratch for sorting map keys, used as a stack

	slot     any // *T, zero between uses, for Marshal[T]'s copy of v
	lastType reflect.Type
	lastRoot *root
}

var encoders = sync.Pool{New: func() any { return new(encoder) }}

func (e *encoder) release() {
	if cap(e.buf) > 64<<10 || cap(e.keys) > 1024 {
		return // let a rare big value's buffers go
	}
	e.buf = e.buf[:0]
	e.depth = 0
	clear(e.keys) // only a failed encode leaves entries behind
	e.keys = e.keys[:0]
	encoders.Put(e)
}

// plan encodes one Go type.
type plan interface {
	// encode appends v's JSON to e.buf. addr says whether encoding/json
	// would find v addressable, which decides whether it calls methods
	// with pointer receivers; reflect's CanAddr does not, since the top
	// value is reached through a pointer here.
	encode(e *encoder, v reflect.Value, addr bool) error
}

var plans sync.Map // reflect.Type → plan

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
)

func planFor(t reflect.Type) plan {
	if p, ok := plans.Load(t); ok {
		return p.(plan)
	}
	// A placeholder breaks cycles in recursive types while the plan is built.
	ph := &lazy{}
	if p, loaded := plans.LoadOrStore(t, ph); loaded {
		return p.(plan)
	}
	p := build(t)
	ph.p.Store(&planBox{p})
	plans.Store(t, p)
	return p
}

type planBox struct{ plan }

// lazy stands for a plan still being built: recursive types keep it inside
// their plans, and other goroutines may use it meanwhile.
type lazy struct{ p atomic.Pointer[planBox] }

func (l *lazy) encode(e *encoder, v reflect.Value, addr bool) error {
	if b := l.p.Load(); b != nil {
		return b.encode(e, v, addr)
	}
	return errSlow // another goroutine is still building it: json.Marshal does it all
}

func marshals(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType)
}

func build(t reflect.Type) plan {
	if t.Kind() == reflect.Interface {
		if marshals(t) {
			// encoding/json calls the interface's method even on a nil
			// pointer inside it; json.Marshal of the dynamic value would not.
			return wholePlan{}
		}
		return ifacePlan{}
	}
	if marshals(t) || marshals(reflect.PointerTo(t)) {
		return slowPlan{}
	}
	switch t.Kind() {
	case reflect.String:
		if t == numberType {
			return slowPlan{}
		}
		return stringPlan{}
	case reflect.Bool:
		return boolPlan{}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intPlan{}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintPlan{}
	case reflect.Float32:
		return floatPlan(32)
	case reflect.Float64:
		return floatPlan(64)
	case reflect.Pointer:
		return ptrPlan{elem: planFor(t.Elem())}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return slowPlan{} // base64, unless the element type has methods
		}
		return slicePlan{elem: planFor(t.Elem())}
	case reflect.Array:
		return arrayPlan{elem: planFor(t.Elem())}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return slowPlan{}
		}
		return &mapPlan{elem: planFor(t.Elem()), vals: reflect.SliceOf(t.Elem())}
	case reflect.Struct:
		return buildStruct(t)
	}
	return slowPlan{} // channels, functions, complex numbers: encoding/json's error
}

// slowPlan appends marshalStd's encoding of the value. Through the
// value's address when encoding/json would find it addressable, so the
// same methods run.
type slowPlan struct{}

func (slowPlan) encode(e *encoder, v reflect.Value, addr bool) error {
	var x any
	if addr {
		x = v.Addr().Interface()
	} else {
		x = v.Interface()
	}
	b, err := appendStd(e.buf, x, "")
	if err != nil {
		return err
	}
	e.buf = b
	return nil
}

// wholePlan hands the whole top-level value to json.Marshal.
type wholePlan struct{}

func (wholePlan) encode(*encoder, reflect.Value, bool) error { return errSlow }

type ifacePlan struct{}

func (ifacePlan) encode(e *encoder, v reflect.Value, _ bool) error {
	if v.IsNil() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if e.depth++; e.depth > maxDepth {
		return errSlow
	}
	el := v.Elem()
	if err := planFor(el.Type()).encode(e, el, false); err != nil {
		return err
	}
	e.depth--
	return nil
}

type stringPlan struct{}

func (stringPlan) encode(e *encoder, v reflect.Value, _ bool) error {
	e.buf = appendString(e.buf, v.String())
	return nil
}

type boolPlan struct{}

func (boolPlan) encode(e *encoder, v reflect.Value, _ bool) error {
	e.buf = strconv.AppendBool(e.buf, v.Bool())
	return nil
}

type intPlan struct{}

func (intPlan) encode(e *encoder, v reflect.Value, _ bool) error {
	e.buf = strconv.AppendInt(e.buf, v.Int(), 10)
	return nil
}

type uintPlan struct{}

func (uintPlan) encode(e *encoder, v reflect.Value, _ bool) error {
	e.buf = strconv.AppendUint(e.buf, v.Uint(), 10)
	return nil
}

// floatPlan is encoding/json's floatEncoder: the number of bits.
type floatPlan int

func (bits floatPlan) encode(e *encoder, v reflect.Value, _ bool) error {
	f := v.Float()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return errSlow // encoding/json's UnsupportedValueError
	}
	e.buf = appendFloat(e.buf, f, int(bits))
	return nil
}

// appendFloat formats a finite f like ES6's number to string conversion, as
// encoding/json does: %f between 1e-6 and 1e21, compared in float32 for
// float32 values to get the cutoffs right.
func appendFloat(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			fmt = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, fmt, -1, bits)
	if fmt == 'e' {
		// e-09 → e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

type ptrPlan struct{ elem plan }

func (p ptrPlan) encode(e *encoder, v reflect.Value, _ bool) error {
	if v.IsNil() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if e.depth++; e.depth > maxDepth {
		return errSlow
	}
	if err := p.elem.encode(e, v.Elem(), true); err != nil {
		return err
	}
	e.depth--
	return nil
}

type slicePlan struct{ elem plan }

func (p slicePlan) encode(e *encoder, v reflect.Value, _ bool) error {
	if v.IsNil() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if e.depth++; e.depth > maxDepth {
		return errSlow
	}
	e.buf = append(e.buf, '[')
	for i := range v.Len() {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		// A slice's elements are addressable whatever the slice is.
		if err := p.elem.encode(e, v.Index(i), true); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	e.depth--
	return nil
}

type arrayPlan struct{ elem plan }

func (p arrayPlan) encode(e *encoder, v reflect.Value, addr bool) error {
	e.buf = append(e.buf, '[')
	for i := range v.Len() {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := p.elem.encode(e, v.Index(i), addr); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

type mapPlan struct {
	elem    plan
	vals    reflect.Type // []elem, to hold the values while the keys are sorted
	scratch sync.Pool    // *mapScratch
}

// mapScratch is what encoding a map needs besides e.keys: a holder to read
// keys through and a slice to copy values into, reused across calls.
type mapScratch struct {
	key  reflect.Value
	vals reflect.Value // len == cap
}

// maxScratch is the most values a pooled mapScratch holds on to.
const maxScratch = 1 << 10

type mapEntry struct {
	key string
	i   int
}

func (p *mapPlan) encode(e *encoder, v reflect.Value, _ bool) error {
	if v.IsNil() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if e.depth++; e.depth > maxDepth {
		return errSlow
	}
	n := v.Len()
	if n == 0 {
		e.buf = append(e.buf, "{}"...)
		e.depth--
		return nil
	}
	s, _ := p.scratch.Get().(*mapScratch)
	if s == nil {
		s = &mapScratch{key: reflect.New(v.Type().Key()).Elem()}
	}
	if !s.vals.IsValid() || s.vals.Len() < n {
		s.vals = reflect.MakeSlice(p.vals, n, n)
	}
	start := len(e.keys)
	var it reflect.MapIter
	it.Reset(v)
	for i := 0; it.Next(); i++ {
		s.key.SetIterKey(&it)
		s.vals.Index(i).SetIterValue(&it)
		e.keys = append(e.keys, mapEntry{s.key.String(), i})
	}
	end := len(e.keys)
	slices.SortFunc(e.keys[start:end], func(a, b mapEntry) int { return strings.Compare(a.key, b.key) })
	e.buf = append(e.buf, '{')
	for j := start; j < end; j++ {
		if j > start {
			e.buf = append(e.buf, ',')
		}
		ent := e.keys[j] // re-read: nested maps may grow e.keys
		e.buf = appendString(e.buf, ent.key)
		e.buf = append(e.buf, ':')
		// Map values are never addressable to encoding/json.
		if err := p.elem.encode(e, s.vals.Index(ent.i), false); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	clear(e.keys[start:end])
	e.keys = e.keys[:start]
	e.depth--
	// Let go of what the map refers to before pooling the scratch.
	for i := range n {
		s.vals.Index(i).SetZero()
	}
	s.key.SetZero()
	if n <= maxScratch {
		p.scratch.Put(s)
	}
	return nil
}

type field struct {
	index     int
	key       string // `"name":` as encoding/json writes it
	omitEmpty bool
	omitZero  bool
	isZero    func(v reflect.Value, addr bool) bool // nil: reflect's IsZero
	plan      plan
}

type structPlan struct{ fields []field }

// buildStruct follows encoding/json's typeFields for structs without
// embedded fields; anything subtler is left to encoding/json.
func buildStruct(t reflect.Type) plan {
	sp := &structPlan{}
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return slowPlan{} // promoted fields
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if hasOption(opts, "string") {
			return slowPlan{} // quoted values
		}
		if !isValidTag(name) {
			name = ""
		}
		if name == "" {
			name = sf.Name
		}
		if seen[name] {
			return slowPlan{} // encoding/json's rules for clashing names
		}
		seen[name] = true
		f := field{
			index:     i,
			key:       `"` + name + `":`, // isValidTag leaves nothing to escape
			omitEmpty: hasOption(opts, "omitempty"),
			omitZero:  hasOption(opts, "omitzero"),
			plan:      planFor(sf.Type),
		}
		if f.omitZero {
			f.isZero = isZeroFunc(sf.Type)
		}
		sp.fields = append(sp.fields, f)
	}
	return sp
}

func (p *structPlan) encode(e *encoder, v reflect.Value, addr bool) error {
	next := byte('{')
	for i := range p.fields {
		f := &p.fields[i]
		fv := v.Field(f.index)
		if f.omitEmpty && isEmptyValue(fv) ||
			f.omitZero && (f.isZero == nil && fv.IsZero() || f.isZero != nil && f.isZero(fv, addr)) {
			continue
		}
		e.buf = append(e.buf, next)
		next = ','
		e.buf = append(e.buf, f.key...)
		if err := f.plan.encode(e, fv, addr); err != nil {
			return err
		}
	}
	if next == '{' {
		e.buf = append(e.buf, "{}"...)
	} else {
		e.buf = append(e.buf, '}')
	}
	return nil
}

// isZeroFunc returns how encoding/json decides a field of type t is zero
// for omitzero: with the type's IsZero method if it has one.
func isZeroFunc(t reflect.Type) func(reflect.Value, bool) bool {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value, _ bool) bool {
			return v.IsNil() ||
				(v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) ||
				v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value, _ bool) bool {
			return v.IsNil() || v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Implements(isZeroerType):
		return func(v reflect.Value, _ bool) bool {
			return v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value, addr bool) bool {
			if !addr {
				// encoding/json boxes a value it cannot address.
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			return v.Addr().Interface().(interface{ IsZero() bool }).IsZero()
		}
	}
	return nil
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// hasOption reports whether the comma-separated tag options contain name.
func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// isValidTag is encoding/json's test of a tag's name: an invalid one is
// ignored in favour of the field's name.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

const hex = "0123456789abcdef"

// safe holds the ASCII bytes a string carries as they are: printable, not
// a quote or backslash. <, > and & are text like any other.
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = false, false
	return t
}()

// appendString is encoding/json's appendString with escapeHTML unset.
func appendString(dst []byte, src string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if b := src[i]; b < utf8.RuneSelf {
			if safe[b] {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				// Other control bytes.
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(src[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but not valid JavaScript.
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, src[start:]...)
	return append(dst, '"')
}
