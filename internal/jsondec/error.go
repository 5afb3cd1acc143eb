package jsondec

import (
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/wieldhq/wield/internal/jsonscan"
	"github.com/wieldhq/wield/internal/safetext"
)

// Error is a strict decoding's refusal. Its message names the key or value
// at fault in words a client can act on, without Go type names.
type Error struct {
	// Path is the JSON Pointer of the value at fault ("/calls/0/timeout_ms"),
	// or of the key for an unknown or duplicate key; "" for the whole input.
	Path string
	// Offset is the byte offset in the input where the fault was found.
	Offset int64
	// Msg says what is wrong, naming the field.
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// describe turns encoding/json/v2's error into an [*Error].
func describe(data []byte, err error) error {
	var sem *jsonv2.SemanticError
	var syn *jsontext.SyntacticError
	switch {
	case errors.As(err, &syn):
		ptr := syn.JSONPointer
		e := &Error{Path: string(ptr), Offset: syn.ByteOffset}
		text := syn.Err.Error()
		switch {
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			e.Msg = fmt.Sprintf("duplicate key %q%s: each key may appear once", safetext.Clip(ptr.LastToken(), maxShown), in(ptr.Parent()))
		case strings.Contains(text, "invalid UTF-8"):
			e.Msg = fmt.Sprintf("a string%s is not valid UTF-8", at(ptr))
		case strings.Contains(text, "surrogate"):
			e.Msg = fmt.Sprintf("a string%s has a \\u escape of half a surrogate pair", at(ptr))
		case errors.Is(syn.Err, io.ErrUnexpectedEOF) && syn.ByteOffset == 0:
			e.Msg = "no JSON value"
		case errors.Is(syn.Err, io.ErrUnexpectedEOF):
			e.Msg = fmt.Sprintf("the JSON ends too early, at byte %d", syn.ByteOffset)
		case strings.Contains(text, "exceeded max depth"):
			// Its path would be a "/0" or a key for each level.
			e.Msg = fmt.Sprintf("the JSON nests arrays and objects more than %d deep, at byte %d", maxDepth, syn.ByteOffset)
		default:
			e.Msg = fmt.Sprintf("invalid JSON at byte %d%s: %s", syn.ByteOffset, at(ptr), text)
		}
		return e
	case errors.As(err, &sem):
		ptr := sem.JSONPointer
		e := &Error{Path: string(ptr), Offset: sem.ByteOffset}
		switch {
		case errors.Is(sem.Err, jsonv2.ErrUnknownName):
			key := ptr.LastToken()
			e.Msg = fmt.Sprintf("unknown key %q%s", safetext.Clip(key, maxShown), in(ptr.Parent()))
			if near := nearName(sem.GoType, key); near != "" {
				e.Msg += fmt.Sprintf(" (keys are case-sensitive: did you mean %q?)", near)
			}
		case sem.GoType != nil && sem.JSONKind == '0' && isNumberKind(sem.GoType.Kind()):
			num := string(data[sem.ByteOffset:])
			if end, ok := jsonscan.Number(data, int(sem.ByteOffset)); ok {
				num = string(data[sem.ByteOffset:end])
			}
			e.Msg = fmt.Sprintf("%s: %s is not %s", fieldName(ptr), num, numberRange(sem.GoType))
		case sem.GoType != nil && sem.JSONKind != 0:
			e.Msg = fmt.Sprintf("%s: want %s, not %s", fieldName(ptr), goKind(sem.GoType), jsonKind(sem.JSONKind))
		default:
			e.Msg = fmt.Sprintf("%s: the value is not valid", fieldName(ptr))
		}
		return e
	}
	return &Error{Msg: "invalid JSON"}
}

// in says where a key is, for a key below the top level.
func in(parent jsontext.Pointer) string {
	if parent == "" {
		return ""
	}
	return " in " + shownPath(parent)
}

// at says where a value is, below the top level.
func at(ptr jsontext.Pointer) string {
	if ptr == "" {
		return ""
	}
	return " at " + shownPath(ptr)
}

// fieldName names a value by its path: "timeout_ms", "calls/0/timeout_ms".
func fieldName(ptr jsontext.Pointer) string {
	if ptr == "" {
		return "the body"
	}
	return shownPath(ptr)
}

// maxShown bounds a key or a path as an error message shows it: the
// message goes back to the client whole, and a body's key can be as long
// as the body, its path as long as its nesting is deep.
const maxShown = 200

// shownPath is a path as a message shows it, without its leading "/";
// over maxShown bytes, its start and its end with "…" between them.
func shownPath(ptr jsontext.Pointer) string {
	s := strings.TrimPrefix(string(ptr), "/")
	if len(s) <= maxShown {
		return s
	}
	end := len(s) - maxShown/2
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	return strings.TrimSuffix(safetext.Clip(s, maxShown/2), "…") + "…" + s[end:]
}

// nearName returns the name of t's field that key spells in another
// letter case, if any: the likely intent of a key refused as unknown.
func nearName(t reflect.Type, key string) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return ""
	}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name != key && strings.EqualFold(name, key) {
			return name
		}
	}
	return ""
}

func isNumberKind(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uintptr || k == reflect.Float32 || k == reflect.Float64
}

// numberRange says which numbers a Go number type takes.
func numberRange(t reflect.Type) string {
	switch k := t.Kind(); {
	case k >= reflect.Int && k <= reflect.Int64:
		bits := t.Bits()
		return fmt.Sprintf("an integer from %d to %d (digits only: no fraction, no exponent)", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
	case k >= reflect.Uint && k <= reflect.Uintptr:
		return "an integer from 0 to " + strconv.FormatUint(math.MaxUint64>>(64-t.Bits()), 10) + " (digits only: no fraction, no exponent)"
	}
	return "a number in range"
}

// goKind says in JSON's words what a Go type takes.
func goKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch k := t.Kind(); {
	case k == reflect.String:
		return "a string"
	case k == reflect.Bool:
		return "true or false"
	case k >= reflect.Int && k <= reflect.Uintptr:
		return "an integer"
	case k == reflect.Float32 || k == reflect.Float64:
		return "a number"
	case k == reflect.Slice || k == reflect.Array:
		return "an array"
	case k == reflect.Map || k == reflect.Struct:
		return "an object"
	}
	return "another kind of value"
}

// jsonKind names a JSON value's kind.
func jsonKind(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "that value"
}
