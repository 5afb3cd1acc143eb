package otlphttp

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// What the protobuf and the JSON encodings share: the spans of a batch
// grouped as an ExportTraceServiceRequest groups them, and the values of
// the fields that are not the SDK's own as they are.

// resourceSpans is a ResourceSpans: the spans of one resource, by scope.
type resourceSpans struct {
	res    *resource.Resource
	scopes []*scopeSpans
}

// scopeSpans is a ScopeSpans: the spans of one instrumentation scope.
type scopeSpans struct {
	scope instrumentation.Scope
	spans []sdktrace.ReadOnlySpan
}

// group sorts spans by resource, then by scope, each in the order it was
// first seen (otlptrace's transform puts the resources in map order); nil
// spans are left out.
func group(spans []sdktrace.ReadOnlySpan) []*resourceSpans {
	type scopeKey struct {
		res   attribute.Distinct
		scope instrumentation.Scope
	}
	var out []*resourceSpans
	byRes := map[attribute.Distinct]*resourceSpans{}
	byScope := map[scopeKey]*scopeSpans{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		res := s.Resource()
		rk := res.Equivalent()
		rs, ok := byRes[rk]
		if !ok {
			rs = &resourceSpans{res: res}
			byRes[rk] = rs
			out = append(out, rs)
		}
		sk := scopeKey{rk, s.InstrumentationScope()}
		ss, ok := byScope[sk]
		if !ok {
			ss = &scopeSpans{scope: sk.scope}
			byScope[sk] = ss
			rs.scopes = append(rs.scopes, ss)
		}
		ss.spans = append(ss.spans, s)
	}
	return out
}

// The OTLP span flags: the low 8 bits are the W3C trace flags.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// flags are the flags of a span or link: its trace flags, and whether
// parent (for a link, the linked span) is remote, which the SDK always
// knows.
func flags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// spanKind is a Span.SpanKind: the same numbers as the SDK's, 0 for any
// other.
func spanKind(k trace.SpanKind) int32 {
	if k < trace.SpanKindInternal || k > trace.SpanKindConsumer {
		return 0
	}
	return int32(k)
}

// statusCode is a Status.StatusCode, which numbers OK and ERROR the other
// way round from the SDK.
func statusCode(c codes.Code) int32 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

// unixNano is a time in nanoseconds since 1970, 0 for earlier ones (and
// the zero time).
func unixNano(t time.Time) uint64 {
	return uint64(max(0, t.UnixNano()))
}

// count is a dropped count, clamped to a uint32.
func count(n int) uint32 {
	return uint32(min(max(int64(n), 0), math.MaxUint32))
}

// validUTF8 is s with what is not UTF-8 replaced by U+FFFD: a protobuf
// string must be UTF-8 (a collector refuses the whole request otherwise),
// and the JSON encoding replaces it the same way.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
