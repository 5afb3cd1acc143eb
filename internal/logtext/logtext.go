// Package logtext is the server's slog handler for its log lines in text:
// slog's TextHandler, written the same byte for byte, with a shorter way
// for the plain records most lines are (see [New]).
package logtext

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// textHandler is slog's TextHandler with a shorter way for the records
// most lines are, the INFO line of every call among them: a message and
// attributes that are strings, integers, floats and booleans, at the
// top level, written byte for byte as the TextHandler writes them
// (TestTextHandlerSameAsSlog and FuzzTextHandler hold it to that) without
// its generality: for the line of an echo call, 0.6 of the TextHandler's
// time (BenchmarkTextHandler, medians of 6 interleaved on a busy machine,
// 2026-11-27: 4.6 µs against 7.6 µs). Anything else (groups,
// attributes added by WithAttrs, other kinds of value, empty keys, a
// source) goes to the TextHandler itself. Each line is one Write, as
// with the TextHandler; w must take concurrent Writes (the server's
// groupWriter does).
type textHandler struct {
	*slog.TextHandler
	w io.Writer
}

// New returns a handler that writes what slog.NewTextHandler(w, opts)
// would, the plain records by the short way of textHandler.
func New(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if opts != nil && (opts.AddSource || opts.ReplaceAttr != nil) {
		return slog.NewTextHandler(w, opts)
	}
	return textHandler{slog.NewTextHandler(w, opts), w}
}

// Handle writes r, by the short way when it can.
func (h textHandler) Handle(ctx context.Context, r slog.Record) error {
	plain := true
	r.Attrs(func(a slog.Attr) bool {
		switch a.Value.Kind() {
		case slog.KindString, slog.KindInt64, slog.KindFloat64, slog.KindBool:
			plain = a.Key != ""
		default:
			plain = false
		}
		return plain
	})
	if !plain {
		return h.TextHandler.Handle(ctx, r)
	}
	bp := textBufs.Get().(*[]byte)
	b := (*bp)[:0]
	if !r.Time.IsZero() {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, r.Time.Round(0))
		b = append(b, ' ')
	}
	b = append(b, "level="...)
	b = appendText(b, r.Level.String())
	b = append(b, " msg="...)
	b = appendText(b, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b = append(b, ' ')
		b = appendText(b, a.Key)
		b = append(b, '=')
		switch v := a.Value; v.Kind() {
		case slog.KindString:
			b = appendText(b, v.String())
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindFloat64:
			b = strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
		case slog.KindBool:
			b = strconv.AppendBool(b, v.Bool())
		}
		return true
	})
	b = append(b, '\n')
	_, err := h.w.Write(b)
	if cap(b) <= 4<<10 {
		*bp = b
		textBufs.Put(bp)
	}
	return err
}

// textBufs are the buffers of lines being written.
var textBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// appendRFC3339Millis is slog's writing of a time: RFC 3339 with exactly
// three digits of milliseconds.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the 4th digit
}

// appendText appends s as the TextHandler writes a string: as it is,
// or quoted when it needs to be.
func appendText(b []byte, s string) []byte {
	if textNeedsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// textNeedsQuoting is the TextHandler's test: empty, or holding a space,
// '=', a byte JSON would escape (but the backslash), invalid UTF-8, or a
// rune that is a space or not printable.
func textNeedsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}
