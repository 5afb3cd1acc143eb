// Package jsondec decodes JSON into Go values, faster than encoding/json,
// for the shapes tool arguments and request bodies have: structs of
// strings, numbers, booleans, slices, maps and nested structs.
//
// It decodes two ways:
//
//   - [Decode] as encoding/json does (keys matched in any letter case,
//     unknown keys ignored, the last of duplicate keys kept). It is for
//     values wield has already checked, such as arguments a schema passed.
//   - [DecodeStrict] as encoding/json/v2 does with unknown members
//     rejected (github.com/go-json-experiment/json): keys matched exactly,
//     unknown keys, duplicate keys, invalid UTF-8 and lone surrogates
//     refused, numbers that do not fit refused. It is for untrusted input
//     such as REST request bodies, where a lenient decoder lets
//     {"ARGUMENTS":a,"arguments":b} mean one thing to wield and another to
//     whatever looked at the body before it.
//
// Types it does not handle itself (anything with its own UnmarshalJSON or
// UnmarshalText, interfaces, []byte, arrays, embedded structs, the ",string"
// option, non-string map keys) are handed to the reference decoder for their
// part of the input, so the result is the same. When the input is
// malformed, or a value does not fit its Go type, the whole input is decoded
// again by the reference decoder, which has the last word and the error.
package jsondec

import (
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/wieldhq/wield/internal/jsonscan"
)

// Decode decodes data into *v as json.Unmarshal would decode it into a
// zero T: *v is replaced, not merged into. On any failure encoding/json
// decodes the input into *v, so errors (and what is left in *v) are exactly
// encoding/json's.
func Decode[T any](data []byte, v *T) error {
	if decode(data, v, false) {
		return nil
	}
	return json.Unmarshal(data, v)
}

// DecodeStrict decodes data into *v as encoding/json/v2 does with unknown
// members rejected, replacing *v: keys match struct fields exactly (letter
// case included); an unknown key, a duplicate key (at any depth, inside
// json.RawMessage and map values too), invalid UTF-8, a lone surrogate
// escape, a number that does not fit its field, a value of the wrong kind
// and anything after the value are refused. On failure *v is left as it was
// and the error is an [*Error] that names the key or value at fault.
func DecodeStrict[T any](data []byte, v *T) error {
	if decode(data, v, true) {
		return nil
	}
	var tmp T
	if err := jsonv2.Unmarshal(data, &tmp, strictOptions); err != nil {
		return describe(data, err)
	}
	*v = tmp
	return nil
}

// strictOptions are encoding/json/v2's defaults (exact names, no duplicate
// names, valid UTF-8 only) with unknown members refused.
var strictOptions = jsonv2.RejectUnknownMembers(true)

// maxDepth is how deeply the fast path nests before it leaves the input to
// the reference decoder, which refuses what nests deeper than its own limit.
const maxDepth = 10000

// decode is Decode's and DecodeStrict's fast path; false leaves the
// input to the reference decoder. It decodes into *v itself, zeroed
// first, and puts back what *v held when it reports false: a T decoded
// aside and copied in was an allocation of every decoding, as it escapes
// through reflect; *v escapes for the same reason, which costs nothing
// where it escaped already (a typed tool's input).
func decode[T any](data []byte, v *T, strict bool) bool {
	old := *v
	var zero T
	*v = zero
	rv := reflect.ValueOf(v).Elem()
	d := decoders.Get().(*decoder)
	d.data, d.i, d.strict, d.depth = data, 0, strict, 0
	d.ws()
	err := planFor(rv.Type()).decode(d, rv)
	if err == nil {
		d.ws()
		if d.i != len(d.data) {
			err = errSlow
		}
	}
	d.data = nil
	decoders.Put(d)
	if err != nil {
		*v = old
		return false
	}
	return true
}

// decoders saves an allocation per Decode: a decoder escapes through the
// plans' interface.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

var errSlow = errors.New("jsondec: not for the fast path")

type decoder struct {
	data   []byte
	i      int
	strict bool // encoding/json/v2's rules: see DecodeStrict
	depth  int  // containers open around the value being decoded
}

// enter counts one more container open, and refuses what nests too deeply.
func (d *decoder) enter() error {
	d.depth++
	if d.depth > maxDepth {
		return errSlow
	}
	return nil
}

func (d *decoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) peek() byte {
	if d.i < len(d.data) {
		return d.data[d.i]
	}
	return 0
}

// skip passes over one value, checking it as it goes, and returns its text.
func (d *decoder) skip() ([]byte, error) {
	start := d.i
	if err := d.skipValue(d.depth); err != nil {
		return nil, err
	}
	return d.data[start:d.i], nil
}

func (d *decoder) skipValue(depth int) error {
	if depth > maxDepth {
		return errSlow
	}
	switch c := d.peek(); {
	case c == '"':
		_, err := d.key()
		return err
	case c == '{':
		d.i++
		d.ws()
		if d.peek() == '}' {
			d.i++
			return nil
		}
		var seen keySet
		for {
			d.ws()
			k, err := d.key()
			if err != nil {
				return err
			}
			if d.strict && !seen.add(k) {
				return errSlow // a duplicate key
			}
			d.ws()
			if d.peek() != ':' {
				return errSlow
			}
			d.i++
			d.ws()
			if err := d.skipValue(depth + 1); err != nil {
				return err
			}
			d.ws()
			switch d.peek() {
			case ',':
				d.i++
			case '}':
				d.i++
				return nil
			default:
				return errSlow
			}
		}
	case c == '[':
		d.i++
		d.ws()
		if d.peek() == ']' {
			d.i++
			return nil
		}
		for {
			d.ws()
			if err := d.skipValue(depth + 1); err != nil {
				return err
			}
			d.ws()
			switch d.peek() {
			case ',':
				d.i++
			case ']':
				d.i++
				return nil
			default:
				return errSlow
			}
		}
	case c == 't':
		return d.lit("true")
	case c == 'f':
		return d.lit("false")
	case c == 'n':
		return d.lit("null")
	default:
		_, err := d.number()
		return err
	}
}

func (d *decoder) lit(w string) error {
	if len(d.data)-d.i < len(w) || string(d.data[d.i:d.i+len(w)]) != w {
		return errSlow
	}
	d.i += len(w)
	return nil
}

func (d *decoder) number() ([]byte, error) {
	end, ok := jsonscan.Number(d.data, d.i)
	if !ok {
		return nil, errSlow
	}
	start := d.i
	d.i = end
	return d.data[start:end], nil
}

// key reads a string as a strict decoding must check it (valid UTF-8, no
// lone surrogates) and returns its decoded text; outside strict mode it only
// reads it, and returns its body.
func (d *decoder) key() ([]byte, error) {
	body, esc, err := d.str()
	if err != nil || !esc || !d.strict {
		return body, err
	}
	s, ok := unquoteStrict(body)
	if !ok {
		return nil, errSlow
	}
	return s, nil
}

// keySet holds the keys of one object, to find a duplicate: a few in
// place, more in a map.
type keySet struct {
	small [8][]byte
	n     int
	big   map[string]struct{}
}

// add records k and reports whether it was new.
func (s *keySet) add(k []byte) bool {
	if s.big != nil {
		if _, ok := s.big[string(k)]; ok {
			return false
		}
		s.big[string(k)] = struct{}{}
		return true
	}
	for _, o := range s.small[:s.n] {
		if string(o) == string(k) {
			return false
		}
	}
	if s.n < len(s.small) {
		s.small[s.n] = k
		s.n++
		return true
	}
	s.big = make(map[string]struct{}, 2*len(s.small))
	for _, o := range s.small {
		s.big[string(o)] = struct{}{}
	}
	s.big[string(k)] = struct{}{}
	return true
}

// str reads a string and returns its body and whether it has escapes.
func (d *decoder) str() ([]byte, bool, error) {
	b := d.data
	if d.i >= len(b) || b[d.i] != '"' {
		return nil, false, errSlow
	}
	start := d.i + 1
	esc := false
	i := start
	for i < len(b) && plainStr[b[i]] {
		i++ // the common case: nothing to look at
	}
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			d.i = i + 1
			return b[start:i], esc, nil
		case c == '\\':
			esc = true
			i++
			if i >= len(b) {
				return nil, false, errSlow
			}
			if b[i] == 'u' {
				if i+4 >= len(b) {
					return nil, false, errSlow
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return nil, false, errSlow
					}
				}
				i += 4
			} else if !strings.ContainsRune(`"\/bfnrt`, rune(b[i])) {
				return nil, false, errSlow
			}
		case c < 0x20:
			return nil, false, errSlow
		case c >= 0x80:
			esc = true // invalid UTF-8 must become U+FFFD, as encoding/json does
		}
	}
	return nil, false, errSlow
}

// plainStr marks the bytes a string body holds as they are: printable
// ASCII but the quote and the backslash.
var plainStr = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (d *decoder) stringValue() (string, error) {
	body, esc, err := d.str()
	if err != nil {
		return "", err
	}
	if !esc {
		return string(body), nil
	}
	if d.strict {
		s, ok := unquoteStrict(body)
		if !ok {
			return "", errSlow
		}
		return string(s), nil
	}
	return unquote(body), nil
}

// unquoteStrict decodes the escapes of a string body, and reports false
// for invalid UTF-8 and lone surrogates, which a strict decoding refuses.
func unquoteStrict(s []byte) ([]byte, bool) { return unescape(s, true) }

// unquote decodes the escapes of a string body and replaces invalid UTF-8
// and lone surrogates with U+FFFD, as encoding/json does.
func unquote(s []byte) string {
	out, _ := unescape(s, false)
	return string(out)
}

// unescape decodes the escapes of a string body (whose escapes the scanner
// has checked). Invalid UTF-8 and lone surrogates make it report false when
// strict, and become U+FFFD otherwise.
func unescape(s []byte, strict bool) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				if strict {
					return nil, false
				}
				out = utf8.AppendRune(out, r)
			} else {
				out = append(out, s[i:i+size]...)
			}
			i += size
			continue
		}
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		i++
		switch s[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := jsonscan.Hex4(s[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					r2 = jsonscan.Hex4(s[i+3 : i+7])
				}
				dec := utf16.DecodeRune(r, r2)
				switch {
				case dec != utf8.RuneError:
					r = dec
					i += 6
				case strict:
					return nil, false
				default:
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, s[i])
		}
		i++
	}
	return out, true
}

// plan decodes one Go type.
type plan interface {
	decode(d *decoder, v reflect.Value) error
}

var (
	plans   sync.Map   // reflect.Type → plan, complete ones only
	buildMu sync.Mutex // one build at a time
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func planFor(t reflect.Type) plan {
	if p, ok := plans.Load(t); ok {
		return p.(plan)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	b := &builder{lazies: map[reflect.Type]*lazy{}, done: map[reflect.Type]plan{}}
	p := b.plan(t)
	// Publish only now, when every placeholder of a recursive type is filled.
	for t, p := range b.done {
		plans.Store(t, p)
	}
	return p
}

// builder makes the plans of one type and the types it contains.
type builder struct {
	lazies map[reflect.Type]*lazy // types being built: placeholders for recursion
	done   map[reflect.Type]plan
}

func (b *builder) plan(t reflect.Type) plan {
	if p, ok := plans.Load(t); ok {
		return p.(plan)
	}
	if p, ok := b.done[t]; ok {
		return p
	}
	if l, ok := b.lazies[t]; ok {
		return l
	}
	l := &lazy{}
	b.lazies[t] = l
	p := b.build(t)
	l.p = p
	b.done[t] = p
	return p
}

// lazy stands for a plan still being built, inside a recursive type.
type lazy struct{ p plan }

func (l *lazy) decode(d *decoder, v reflect.Value) error { return l.p.decode(d, v) }

func (b *builder) build(t reflect.Type) plan {
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return slowPlan{}
	}
	switch t.Kind() {
	case reflect.String:
		return stringPlan{}
	case reflect.Bool:
		return boolPlan{}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intPlan{}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintPlan{}
	case reflect.Float32, reflect.Float64:
		return floatPlan{}
	case reflect.Pointer:
		return ptrPlan{elem: b.plan(t.Elem())}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return slowPlan{} // base64
		}
		return slicePlan{elem: b.plan(t.Elem())}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(textUnmarshaler) || reflect.PointerTo(t.Key()).Implements(textUnmarshaler) {
			return slowPlan{}
		}
		return mapPlan{elem: b.plan(t.Elem())}
	case reflect.Struct:
		return b.buildStruct(t)
	}
	return slowPlan{}
}

// slowPlan hands a value's text to the reference decoder: encoding/json,
// or encoding/json/v2 in strict mode. The text is checked first as the
// whole input would be (in strict mode: no duplicate keys, valid UTF-8).
type slowPlan struct{}

func (slowPlan) decode(d *decoder, v reflect.Value) error {
	depth := d.depth
	text, err := d.skip()
	d.depth = depth
	if err != nil {
		return err
	}
	if !d.strict {
		return json.Unmarshal(text, v.Addr().Interface())
	}
	if v.Type() == rawMessage {
		v.SetBytes(append([]byte(nil), text...)) // as checked: no need to read it again
		return nil
	}
	return jsonv2.Unmarshal(text, v.Addr().Interface(), strictOptions)
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// null consumes a null; for it, pointers, slices, maps and interfaces become
// nil and every other kind is left as it was.
func (d *decoder) null(v reflect.Value) (bool, error) {
	if d.peek() != 'n' {
		return false, nil
	}
	if err := d.lit("null"); err != nil {
		return true, err
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		v.SetZero()
	}
	return true, nil
}

type stringPlan struct{}

func (stringPlan) decode(d *decoder, v reflect.Value) error {
	if ok, err := d.null(v); ok {
		return err
	}
	s, err := d.stringValue()
	if err != nil {
		return err
	}
	v.SetString(s)
	return nil
}

type boolPlan struct{}

func (boolPlan) decode(d *decoder, v reflect.Value) error {
	if ok, err := d.null(v); ok {
		return err
	}
	switch d.peek() {
	case 't':
		v.SetBool(true)
		return d.lit("true")
	case 'f':
		v.SetBool(false)
		return d.lit("false")
	}
	return errSlow
}

type intPlan struct{}

func (intPlan) decode(d *decoder, v reflect.Value) error {
	if ok, err := d.null(v); ok {
		return err
	}
	num, err := d.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || v.OverflowInt(n) {
		return errSlow
	}
	v.SetInt(n)
	return nil
}

type uintPlan struct{}

func (uintPlan) decode(d *decoder, v reflect.Value) error {
	if ok, err := d.null(v); ok {
		return err
	}
	num, err := d.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseUint(string(num), 10, 64)
	if err != nil || v.OverflowUint(n) {
		return errSlow
	}
	v.SetUint(n)
	return nil
}

type floatPlan struct{}

func (floatPlan) decode(d *decoder, v reflect.Value) error {
	if ok, err := d.null(v); ok {
		return err
	}
	num, err := d.number()
	if err != nil {
		return err
	}
	f, err := strconv.ParseFloat(string(num), v.Type().Bits())
	if err != nil || math.IsInf(f, 0) || v.OverflowFloat(f) {
		return errSlow
	}
	v.SetFloat(f)
	return nil
}

type ptrPlan struct{ elem plan }

func (p ptrPlan) decode(d *decoder, v reflect.Value) error {
	if ok, err := d.null(v); ok {
		return err
	}
	if v.IsNil() {
		v.Set(reflect.New(v.Type().Elem()))
	}
	if err := d.enter(); err != nil {
		return err
	}
	err := p.elem.decode(d, v.Elem())
	d.depth--
	return err
}

type slicePlan struct{ elem plan }

func (p slicePlan) decode(d *decoder, v reflect.Value) error {
	if ok, err := d.null(v); ok {
		return err
	}
	if d.peek() != '[' {
		return errSlow
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	d.i++
	d.ws()
	n := 0
	if d.peek() == ']' {
		d.i++
	} else {
		for {
			d.ws()
			if n >= v.Cap() {
				v.Grow(1)
			}
			v.SetLen(n + 1)
			if err := p.elem.decode(d, v.Index(n)); err != nil {
				return err
			}
			n++
			d.ws()
			if d.peek() == ',' {
				d.i++
				continue
			}
			if d.peek() == ']' {
				d.i++
				break
			}
			return errSlow
		}
	}
	if n == 0 && v.IsNil() {
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	}
	v.SetLen(n)
	return nil
}

type mapPlan struct{ elem plan }

func (p mapPlan) decode(d *decoder, v reflect.Value) error {
	if ok, err := d.null(v); ok {
		return err
	}
	if d.peek() != '{' {
		return errSlow
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	d.i++
	d.ws()
	if d.peek() == '}' {
		d.i++
		return nil
	}
	et := v.Type().Elem()
	for {
		d.ws()
		key, err := d.stringValue()
		if err != nil {
			return err
		}
		d.ws()
		if d.peek() != ':' {
			return errSlow
		}
		d.i++
		d.ws()
		kv := reflect.ValueOf(key).Convert(v.Type().Key())
		if d.strict && v.MapIndex(kv).IsValid() {
			return errSlow // a duplicate key: the map was empty to begin with
		}
		ev := reflect.New(et).Elem()
		if err := p.elem.decode(d, ev); err != nil {
			return err
		}
		v.SetMapIndex(kv, ev)
		d.ws()
		if d.peek() == ',' {
			d.i++
			continue
		}
		if d.peek() == '}' {
			d.i++
			return nil
		}
		return errSlow
	}
}

type field struct {
	name  string
	index int
	plan  plan
}

type structPlan struct {
	fields []field
}

func (b *builder) buildStruct(t reflect.Type) plan {
	sp := &structPlan{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		if f.Anonymous || strings.Contains(tag, ",string") {
			return slowPlan{} // promoted fields and quoted numbers: leave to encoding/json
		}
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if !hasTag || name == "" {
			name = f.Name
		}
		for _, g := range sp.fields {
			if strings.EqualFold(g.name, name) {
				return slowPlan{} // encoding/json's rules for clashing names
			}
		}
		sp.fields = append(sp.fields, field{name: name, index: i, plan: b.plan(f.Type)})
	}
	return sp
}

// lookup finds the field a key names: the exact name, or else (outside
// strict mode, as encoding/json does) a name in another letter case.
func (p *structPlan) lookup(key []byte, strict bool) *field {
	for i := range p.fields {
		if p.fields[i].name == string(key) {
			return &p.fields[i]
		}
	}
	if strict {
		return nil
	}
	for i := range p.fields {
		if strings.EqualFold(p.fields[i].name, string(key)) {
			return &p.fields[i]
		}
	}
	return nil
}

func (p *structPlan) decode(d *decoder, v reflect.Value) error {
	if ok, err := d.null(v); ok {
		return err
	}
	if d.peek() != '{' {
		return errSlow
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	d.i++
	d.ws()
	if d.peek() == '}' {
		d.i++
		return nil
	}
	var seen fieldSet
	for {
		d.ws()
		body, esc, err := d.str()
		if err != nil {
			return err
		}
		if esc {
			if d.strict {
				var ok bool
				if body, ok = unquoteStrict(body); !ok {
					return errSlow
				}
			} else {
				body = []byte(unquote(body))
			}
		}
		d.ws()
		if d.peek() != ':' {
			return errSlow
		}
		d.i++
		d.ws()
		if f := p.lookup(body, d.strict); f != nil {
			if d.strict && !seen.add(f.index) {
				return errSlow // a duplicate key
			}
			if err := f.plan.decode(d, v.Field(f.index)); err != nil {
				return err
			}
		} else if d.strict {
			return errSlow
		} else if _, err := d.skip(); err != nil {
			return err
		}
		d.ws()
		if d.peek() == ',' {
			d.i++
			continue
		}
		if d.peek() == '}' {
			d.i++
			return nil
		}
		return errSlow
	}
}

// fieldSet holds the fields of a struct already decoded, by index.
type fieldSet struct {
	low  uint64
	high map[int]bool
}

// add records field i and reports whether it was new.
func (s *fieldSet) add(i int) bool {
	if i < 64 {
		if s.low&(1<<i) != 0 {
			return false
		}
		s.low |= 1 << i
		return true
	}
	if s.high[i] {
		return false
	}
	if s.high == nil {
		s.high = map[int]bool{}
	}
	s.high[i] = true
	return true
}
