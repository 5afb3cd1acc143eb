package builtin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wieldhq/wield"
)

// MaxDataText bounds the text the data tools take and give, in bytes.
const MaxDataText = 8 << 20

// JSONParseInput is the input of json_parse.
type JSONParseInput struct {
	Text string `json:"text" description:"JSON text to parse"`
}

// JSONParseOutput holds the parsed value.
type JSONParseOutput struct {
	Data json.RawMessage `json:"data"`
}

// JSONStringifyInput is the input of json_stringify.
type JSONStringifyInput struct {
	Data   json.RawMessage `json:"data" description:"Any JSON value to serialise"`
	Pretty bool            `json:"pretty,omitempty" description:"Indent with two spaces" default:"false"`
}

// JSONStringifyOutput holds the JSON text.
type JSONStringifyOutput struct {
	Text string `json:"text"`
}

// Base64EncodeInput is the input of base64_encode.
type Base64EncodeInput struct {
	Text string `json:"text" description:"Text to encode (as UTF-8 bytes)"`
}

// Base64EncodeOutput holds standard, padded base64.
type Base64EncodeOutput struct {
	Encoded string `json:"encoded"`
}

// Base64DecodeInput is the input of base64_decode.
type Base64DecodeInput struct {
	Encoded string `json:"encoded" description:"Base64 text, standard or URL-safe alphabet, padded or not"`
}

// Base64DecodeOutput holds the decoded text.
type Base64DecodeOutput struct {
	Decoded string `json:"decoded"`
}

// DataTools returns json_parse, json_stringify, base64_encode and
// base64_decode (seed 003's data tools). Malformed input is a
// validation_error that says where it went wrong; decoded bytes that are not
// UTF-8 text are an execution_error (the result must be text).
func DataTools() []*wield.Tool {
	parse := wield.Func("json_parse", "Parse JSON text into a value.",
		func(_ context.Context, in JSONParseInput) (JSONParseOutput, error) {
			if err := checkSize("text", len(in.Text)); err != nil {
				return JSONParseOutput{}, err
			}
			if err := jsonSyntax([]byte(in.Text)); err != nil {
				return JSONParseOutput{}, err
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, []byte(in.Text)); err != nil {
				return JSONParseOutput{}, wield.Errorf(wield.ErrValidation, "text is not valid JSON: %v", err)
			}
			return JSONParseOutput{Data: buf.Bytes()}, nil
		})
	stringify := wield.Func("json_stringify", "Serialise a value as JSON text, compact or indented.",
		func(_ context.Context, in JSONStringifyInput) (JSONStringifyOutput, error) {
			if len(in.Data) == 0 {
				return JSONStringifyOutput{}, wield.Errorf(wield.ErrValidation, "data is missing: give any JSON value, null included")
			}
			var buf bytes.Buffer
			var err error
			if in.Pretty {
				err = json.Indent(&buf, in.Data, "", "  ")
			} else {
				err = json.Compact(&buf, in.Data)
			}
			if err != nil {
				return JSONStringifyOutput{}, wield.Errorf(wield.ErrValidation, "data is not a JSON value: %v", err)
			}
			if err := checkSize("result", buf.Len()); err != nil {
				return JSONStringifyOutput{}, err
			}
			return JSONStringifyOutput{Text: buf.String()}, nil
		})
	encode := wield.Func("base64_encode", "Encode text as base64.",
		func(_ context.Context, in Base64EncodeInput) (Base64EncodeOutput, error) {
			if err := checkSize("text", len(in.Text)); err != nil {
				return Base64EncodeOutput{}, err
			}
			return Base64EncodeOutput{Encoded: base64.StdEncoding.EncodeToString([]byte(in.Text))}, nil
		})
	decode := wield.Func("base64_decode", "Decode base64 into text.",
		func(_ context.Context, in Base64DecodeInput) (Base64DecodeOutput, error) {
			if err := checkSize("encoded", len(in.Encoded)); err != nil {
				return Base64DecodeOutput{}, err
			}
			b, err := decodeBase64(in.Encoded)
			if err != nil {
				return Base64DecodeOutput{}, err
			}
			if !utf8.Valid(b) {
				return Base64DecodeOutput{}, wield.Errorf(wield.ErrExecution, "the decoded %d bytes are binary, not UTF-8 text, so they cannot be returned as text", len(b))
			}
			return Base64DecodeOutput{Decoded: string(b)}, nil
		})
	tools := []*wield.Tool{parse, stringify, encode, decode}
	for _, t := range tools {
		t.Category = wield.CategoryData
		t.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}
		t.Tags = []string{"data", "builtin"}
		t.Timeout = 10 * time.Second
		t.Version = "1.0.0"
		t.Source = "builtin"
	}
	return tools
}

func checkSize(what string, n int) error {
	if n > MaxDataText {
		return wield.Errorf(wield.ErrValidation, "%s is %d bytes, more than the %d allowed", what, n, MaxDataText)
	}
	return nil
}

// jsonSyntax reports where text stops being JSON, as line and column.
func jsonSyntax(text []byte) error {
	if len(bytes.TrimSpace(text)) == 0 {
		return wield.Errorf(wield.ErrValidation, "text is empty: it must hold one JSON value")
	}
	if !utf8.Valid(text) {
		return wield.Errorf(wield.ErrValidation, "text is not valid UTF-8")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	err := dec.Decode(&v)
	if err == nil {
		if _, err2 := dec.Token(); err2 == nil {
			off := dec.InputOffset()
			l, c := lineCol(text, int(off))
			return wield.Errorf(wield.ErrValidation, "text holds more than one JSON value: another starts at line %d, column %d", l, c)
		}
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		l, c := lineCol(text, int(se.Offset)-1) // Offset is past the offending byte
		return wield.Errorf(wield.ErrValidation, "text is not valid JSON at line %d, column %d: %s", l, c, strings.TrimPrefix(se.Error(), "json: "))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return wield.Errorf(wield.ErrValidation, "text is not valid JSON: it ends before the value is complete")
	}
	return wield.Errorf(wield.ErrValidation, "text is not valid JSON: %v", err)
}

func lineCol(text []byte, off int) (int, int) {
	off = min(max(off, 0), len(text))
	before := text[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := off - bytes.LastIndexByte(before, '\n')
	return line, col
}

// decodeBase64 accepts the standard and URL-safe alphabets, with or without
// padding, and ignores line breaks (MIME-style wrapping).
func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if !strings.HasSuffix(s, "=") {
		enc = enc.WithPadding(base64.NoPadding)
	}
	b, err := enc.DecodeString(s)
	var ce base64.CorruptInputError
	if errors.As(err, &ce) {
		at := int(ce)
		what := "the text ends too early"
		if at < len(s) {
			r, _ := utf8.DecodeRuneInString(s[at:])
			what = fmt.Sprintf("character %q is not base64", r)
		}
		return nil, wield.Errorf(wield.ErrValidation, "encoded is not valid base64 at offset %d: %s", at, what)
	}
	if err != nil {
		return nil, wield.Errorf(wield.ErrValidation, "encoded is not valid base64: %v", err)
	}
	return b, nil
}
