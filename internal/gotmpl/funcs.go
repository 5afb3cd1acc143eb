package gotmpl

import (
	"errors"
	"fmt"
	"reflect"
	"text/template"
)

// arity is each built-in's count of fixed arguments and whether it takes
// more.
var arity = map[string]struct {
	n        int
	variadic bool
}{
	"not": {1, false}, "len": {1, false}, "index": {1, true}, "slice": {1, true},
	"eq": {1, true}, "ne": {2, false}, "lt": {2, false}, "le": {2, false}, "gt": {2, false}, "ge": {2, false},
	"print": {0, true}, "printf": {1, true}, "println": {0, true},
	"html": {0, true}, "js": {0, true}, "urlquery": {0, true},
}

// builtin calls the built-in name with the values v of its arguments,
// the pipeline's final value last; nargs counts those written in the
// command, for the error text.
func (s *state) builtin(name string, nargs int, v []any) (any, error) {
	a, ok := arity[name]
	if !ok {
		s.errorf("%q is not a defined function", name)
	}
	if a.variadic && len(v) < a.n {
		s.errorf("wrong number of args for %s: want at least %d got %d", name, a.n, nargs)
	} else if !a.variadic && len(v) != a.n {
		s.errorf("wrong number of args for %s: want %d got %d", name, a.n, len(v))
	}
	switch name {
	case "not":
		t, _ := truth(v[0])
		return !t, nil
	case "len":
		return length(v[0])
	case "index":
		return index(v[0], v[1:])
	case "slice":
		return slice(v[0], v[1:])
	case "eq":
		return eq(v[0], v[1:]...)
	case "ne":
		e, err := eq(v[0], v[1])
		return !e, err
	case "lt":
		return lt(v[0], v[1])
	case "le":
		return le(v[0], v[1])
	case "gt":
		l, err := le(v[0], v[1])
		return !l && err == nil, err
	case "ge":
		l, err := lt(v[0], v[1])
		return !l && err == nil, err
	case "print":
		return fmt.Sprint(v...), nil
	case "printf":
		f, ok := v[0].(string)
		if !ok {
			s.errorf("wrong type for value; expected string; got %s", typeName(v[0]))
		}
		return fmt.Sprintf(f, v[1:]...), nil
	case "println":
		return fmt.Sprintln(v...), nil
	// These plain functions of text/template do not bring its executor
	// (and its look-up of methods by name) into the binary.
	case "html":
		return template.HTMLEscaper(v...), nil
	case "js":
		return template.JSEscaper(v...), nil
	default: // urlquery
		return template.URLQueryEscaper(v...), nil
	}
}

func typeName(v any) string {
	if v == nil {
		return "<nil>"
	}
	return reflect.TypeOf(v).String()
}

// truth is text/template's truth of a value: false, 0, nil and empty are
// false; ok is false for a value that has no truth (a function).
func truth(v any) (t, ok bool) {
	if v == nil {
		return false, true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return rv.Len() > 0, true
	case reflect.Bool:
		return rv.Bool(), true
	case reflect.Complex64, reflect.Complex128:
		return rv.Complex() != 0, true
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		return !rv.IsNil(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0, true
	case reflect.Float32, reflect.Float64:
		return rv.Float() != 0, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0, true
	case reflect.Struct:
		return true, true
	}
	return false, false
}

func length(v any) (int, error) {
	if v == nil {
		return 0, errors.New("len of nil pointer")
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return rv.Len(), nil
	}
	return 0, fmt.Errorf("len of type %s", rv.Type())
}

// indexArg is an index of a slice or string of length n.
func indexArg(v any, n int) (int, error) {
	var x int64
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x = rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x = int64(rv.Uint())
	case reflect.Invalid:
		return 0, errors.New("cannot index slice/array with nil")
	default:
		return 0, fmt.Errorf("cannot index slice/array with type %s", rv.Type())
	}
	if x < 0 || int(x) < 0 || int(x) > n {
		return 0, fmt.Errorf("index out of range: %d", x)
	}
	return int(x), nil
}

func index(item any, indexes []any) (any, error) {
	if item == nil {
		return nil, errors.New("index of untyped nil")
	}
	for _, ix := range indexes {
		if item == nil {
			return nil, errors.New("index of nil pointer")
		}
		rv := reflect.ValueOf(item)
		switch rv.Kind() {
		case reflect.Array, reflect.Slice, reflect.String:
			x, err := indexArg(ix, rv.Len())
			if err != nil {
				return nil, err
			}
			if x == rv.Len() {
				return nil, fmt.Errorf("index out of range: %d", x)
			}
			item = rv.Index(x).Interface()
		case reflect.Map:
			kt := rv.Type().Key()
			k := reflect.ValueOf(ix)
			if !k.IsValid() {
				switch kt.Kind() {
				case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
					k = reflect.Zero(kt)
				default:
					return nil, fmt.Errorf("value is nil; should be of type %s", kt)
				}
			} else if !k.Type().AssignableTo(kt) {
				return nil, fmt.Errorf("value has type %s; should be %s", k.Type(), kt)
			}
			if x := rv.MapIndex(k); x.IsValid() {
				item = x.Interface()
			} else {
				item = reflect.Zero(rv.Type().Elem()).Interface()
			}
		default:
			return nil, fmt.Errorf("can't index item of type %s", rv.Type())
		}
	}
	return item, nil
}

func slice(item any, indexes []any) (any, error) {
	if item == nil {
		return nil, errors.New("slice of untyped nil")
	}
	if len(indexes) > 3 {
		return nil, fmt.Errorf("too many slice indexes: %d", len(indexes))
	}
	rv := reflect.ValueOf(item)
	var n int
	switch rv.Kind() {
	case reflect.String:
		if len(indexes) == 3 {
			return nil, errors.New("cannot 3-index slice a string")
		}
		n = rv.Len()
	case reflect.Slice:
		n = rv.Cap()
	default:
		return nil, fmt.Errorf("can't slice item of type %s", rv.Type())
	}
	idx := [3]int{0, rv.Len()}
	for i, ix := range indexes {
		x, err := indexArg(ix, n)
		if err != nil {
			return nil, err
		}
		idx[i] = x
	}
	if idx[0] > idx[1] {
		return nil, fmt.Errorf("invalid slice index: %d > %d", idx[0], idx[1])
	}
	if len(indexes) < 3 {
		return rv.Slice(idx[0], idx[1]).Interface(), nil
	}
	if idx[1] > idx[2] {
		return nil, fmt.Errorf("invalid slice index: %d > %d", idx[1], idx[2])
	}
	return rv.Slice3(idx[0], idx[1], idx[2]).Interface(), nil
}

type kind int

const (
	invalidKind kind = iota
	boolKind
	complexKind
	intKind
	floatKind
	stringKind
	uintKind
)

var errBadComparisonType = errors.New("invalid type for comparison")

func basicKind(v reflect.Value) (kind, error) {
	switch v.Kind() {
	case reflect.Bool:
		return boolKind, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intKind, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintKind, nil
	case reflect.Float32, reflect.Float64:
		return floatKind, nil
	case reflect.Complex64, reflect.Complex128:
		return complexKind, nil
	case reflect.String:
		return stringKind, nil
	}
	return invalidKind, errBadComparisonType
}

func isNil(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return v.IsNil()
	}
	return false
}

// eq reports whether a equals any of bs, by text/template's rules:
// values of basic kinds compare by kind (integers of either sign with
// each other), nil equals nil, other kinds do not compare.
func eq(a any, bs ...any) (bool, error) {
	if len(bs) == 0 {
		return false, errors.New("missing argument for comparison")
	}
	v1 := reflect.ValueOf(a)
	k1, _ := basicKind(v1)
	for _, b := range bs {
		v2 := reflect.ValueOf(b)
		k2, _ := basicKind(v2)
		t := false
		if k1 != k2 {
			switch {
			case k1 == intKind && k2 == uintKind:
				t = v1.Int() >= 0 && uint64(v1.Int()) == v2.Uint()
			case k1 == uintKind && k2 == intKind:
				t = v2.Int() >= 0 && v1.Uint() == uint64(v2.Int())
			default:
				if v1.IsValid() && v2.IsValid() {
					return false, fmt.Errorf("incompatible types for comparison: %v and %v", v1.Type(), v2.Type())
				}
			}
		} else {
			switch k1 {
			case boolKind:
				t = v1.Bool() == v2.Bool()
			case complexKind:
				t = v1.Complex() == v2.Complex()
			case floatKind:
				t = v1.Float() == v2.Float()
			case intKind:
				t = v1.Int() == v2.Int()
			case stringKind:
				t = v1.String() == v2.String()
			case uintKind:
				t = v1.Uint() == v2.Uint()
			default:
				if v1.IsValid() && v2.IsValid() && v1.Kind() != v2.Kind() {
					return false, fmt.Errorf("non-comparable types %v: %v, %v: %v", a, v1.Type(), v2.Type(), b)
				}
				if isNil(v1) || isNil(v2) {
					t = isNil(v1) == isNil(v2)
				} else {
					if !v2.Type().Comparable() {
						return false, fmt.Errorf("non-comparable type %v: %v", b, v2.Type())
					}
					t = a == b
				}
			}
		}
		if t {
			return true, nil
		}
	}
	return false, nil
}

func lt(a, b any) (bool, error) {
	v1, v2 := reflect.ValueOf(a), reflect.ValueOf(b)
	k1, err := basicKind(v1)
	if err != nil {
		return false, err
	}
	k2, err := basicKind(v2)
	if err != nil {
		return false, err
	}
	if k1 != k2 {
		switch {
		case k1 == intKind && k2 == uintKind:
			return v1.Int() < 0 || uint64(v1.Int()) < v2.Uint(), nil
		case k1 == uintKind && k2 == intKind:
			return v2.Int() >= 0 && v1.Uint() < uint64(v2.Int()), nil
		}
		return false, fmt.Errorf("incompatible types for comparison: %v and %v", v1.Type(), v2.Type())
	}
	switch k1 {
	case floatKind:
		return v1.Float() < v2.Float(), nil
	case intKind:
		return v1.Int() < v2.Int(), nil
	case stringKind:
		return v1.String() < v2.String(), nil
	case uintKind:
		return v1.Uint() < v2.Uint(), nil
	}
	return false, errBadComparisonType
}

func le(a, b any) (bool, error) {
	l, err := lt(a, b)
	if l || err != nil {
		return l, err
	}
	return eq(a, b)
}
