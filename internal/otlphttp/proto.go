package otlphttp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The request and the response are written and read here by field number,
// as otlptrace's transform and the generated types of go.opentelemetry.io/
// proto/otlp would write them (fields in the order of their numbers, those
// with their zero value left out, an empty status kept), without the
// protobuf runtime: its package initialisation builds the descriptors of
// every generated file linked in, at each start of the program.
//
//	message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
//	message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
//	message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
//
// The other messages are those of opentelemetry/proto/trace/v1/trace.proto,
// common/v1/common.proto and resource/v1/resource.proto.

// The wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireStart   = 3 // of a group
	wireEnd     = 4 // of a group
	wireFixed32 = 5
)

// pb appends protobuf fields.
type pb []byte

func (b *pb) tag(num, typ int) { *b = binary.AppendUvarint(*b, uint64(num)<<3|uint64(typ)) }

func (b *pb) varint(num int, v uint64) {
	if v != 0 {
		b.tag(num, wireVarint)
		*b = binary.AppendUvarint(*b, v)
	}
}

func (b *pb) fixed64(num int, v uint64) {
	if v != 0 {
		b.tag(num, wireFixed64)
		*b = binary.LittleEndian.AppendUint64(*b, v)
	}
}

func (b *pb) fixed32(num int, v uint32) {
	if v != 0 {
		b.tag(num, wireFixed32)
		*b = binary.LittleEndian.AppendUint32(*b, v)
	}
}

func (b *pb) bytes(num int, v []byte) {
	if len(v) != 0 {
		b.tag(num, wireBytes)
		*b = binary.AppendUvarint(*b, uint64(len(v)))
		*b = append(*b, v...)
	}
}

func (b *pb) string(num int, s string) {
	if s != "" {
		b.stringAlways(num, s)
	}
}

// stringAlways writes s even when empty, as a member of a oneof is.
func (b *pb) stringAlways(num int, s string) {
	s = validUTF8(s)
	b.tag(num, wireBytes)
	*b = binary.AppendUvarint(*b, uint64(len(s)))
	*b = append(*b, s...)
}

// begin starts an embedded message; end, given what begin returned,
// writes its length before it.
func (b *pb) begin(num int) int {
	b.tag(num, wireBytes)
	*b = append(*b, 0)
	return len(*b)
}

func (b *pb) end(start int) {
	n := len(*b) - start
	if n < 0x80 {
		(*b)[start-1] = byte(n)
		return
	}
	// The length takes more than the byte kept for it: move the message.
	extra := len(binary.AppendUvarint(nil, uint64(n))) - 1
	*b = append(*b, make([]byte, extra)...)
	copy((*b)[start+extra:], (*b)[start:start+n])
	binary.PutUvarint((*b)[start-1:], uint64(n))
}

// marshalRequest is the ExportTraceServiceRequest of spans.
func marshalRequest(groups []*resourceSpans) []byte {
	var b pb
	for _, rs := range groups {
		m := b.begin(1)
		if rs.res != nil {
			r := b.begin(1)
			b.attributes(1, rs.res.Attributes())
			b.end(r)
		}
		for _, ss := range rs.scopes {
			s := b.begin(2)
			if ss.scope != (instrumentation.Scope{}) {
				sc := b.begin(1)
				b.string(1, ss.scope.Name)
				b.string(2, ss.scope.Version)
				b.attributes(3, ss.scope.Attributes.ToSlice())
				b.end(sc)
			}
			for _, sp := range ss.spans {
				b.span(2, sp)
			}
			b.string(3, ss.scope.SchemaURL)
			b.end(s)
		}
		if rs.res != nil {
			b.string(3, rs.res.SchemaURL())
		}
		b.end(m)
	}
	return b
}

func (b *pb) span(num int, sp sdktrace.ReadOnlySpan) {
	m := b.begin(num)
	sc := sp.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b.bytes(1, tid[:])
	b.bytes(2, sid[:])
	b.string(3, sc.TraceState().String())
	if psid := sp.Parent().SpanID(); psid.IsValid() {
		b.bytes(4, psid[:])
	}
	b.string(5, sp.Name())
	b.varint(6, uint64(spanKind(sp.SpanKind())))
	b.fixed64(7, unixNano(sp.StartTime()))
	b.fixed64(8, unixNano(sp.EndTime()))
	b.attributes(9, sp.Attributes())
	b.varint(10, uint64(count(sp.DroppedAttributes())))
	for _, e := range sp.Events() {
		em := b.begin(11)
		b.fixed64(1, unixNano(e.Time))
		b.string(2, e.Name)
		b.attributes(3, e.Attributes)
		b.varint(4, uint64(count(e.DroppedAttributeCount)))
		b.end(em)
	}
	b.varint(12, uint64(count(sp.DroppedEvents())))
	for _, l := range sp.Links() {
		lm := b.begin(13)
		tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b.bytes(1, tid[:])
		b.bytes(2, sid[:])
		// otlptrace leaves a link's trace state out.
		b.attributes(4, l.Attributes)
		b.varint(5, uint64(count(l.DroppedAttributeCount)))
		b.fixed32(6, flags(l.SpanContext.TraceFlags(), l.SpanContext))
		b.end(lm)
	}
	b.varint(14, uint64(count(sp.DroppedLinks())))
	st := sp.Status()
	s := b.begin(15)
	b.string(2, st.Description)
	b.varint(3, uint64(statusCode(st.Code)))
	b.end(s)
	b.fixed32(16, flags(sc.TraceFlags(), sp.Parent()))
	b.end(m)
}

// attributes writes each of kvs as a KeyValue in field num.
func (b *pb) attributes(num int, kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		m := b.begin(num)
		b.string(1, string(kv.Key))
		v := b.begin(2)
		b.value(kv.Value)
		b.end(v)
		b.end(m)
	}
}

// value writes the fields of an AnyValue.
func (b *pb) value(v attribute.Value) {
	switch v.Type() {
	case attribute.EMPTY:
	case attribute.BOOL:
		b.bool(v.AsBool())
	case attribute.INT64:
		b.int(v.AsInt64())
	case attribute.FLOAT64:
		b.double(v.AsFloat64())
	case attribute.STRING:
		b.stringAlways(1, v.AsString())
	case attribute.BYTESLICE:
		s := v.AsByteSlice()
		b.tag(7, wireBytes)
		*b = binary.AppendUvarint(*b, uint64(len(s)))
		*b = append(*b, s...)
	case attribute.BOOLSLICE:
		array(b, v.AsBoolSlice(), (*pb).bool)
	case attribute.INT64SLICE:
		array(b, v.AsInt64Slice(), (*pb).int)
	case attribute.FLOAT64SLICE:
		array(b, v.AsFloat64Slice(), (*pb).double)
	case attribute.STRINGSLICE:
		array(b, v.AsStringSlice(), func(b *pb, s string) { b.stringAlways(1, s) })
	case attribute.SLICE:
		array(b, v.AsSlice(), (*pb).value)
	case attribute.MAP:
		m := b.begin(6)
		b.attributes(1, v.AsMap())
		b.end(m)
	default:
		b.stringAlways(1, "INVALID")
	}
}

func (b *pb) bool(v bool) {
	b.tag(2, wireVarint)
	if v {
		*b = append(*b, 1)
	} else {
		*b = append(*b, 0)
	}
}

func (b *pb) int(v int64) {
	b.tag(3, wireVarint)
	*b = binary.AppendUvarint(*b, uint64(v))
}

func (b *pb) double(v float64) {
	b.tag(4, wireFixed64)
	*b = binary.LittleEndian.AppendUint64(*b, math.Float64bits(v))
}

// array writes an ArrayValue of vs, each written by one.
func array[T any](b *pb, vs []T, one func(*pb, T)) {
	m := b.begin(5)
	for _, v := range vs {
		e := b.begin(1)
		one(b, v)
		b.end(e)
	}
	b.end(m)
}

// errWire is a response that is not protobuf.
var errWire = errors.New("malformed protobuf")

// unmarshalResponse reads the partial success of an
// ExportTraceServiceResponse.
func unmarshalResponse(b []byte) (rejected int64, msg string, err error) {
	var ps []byte
	err = fields(b, func(num, typ int, _ uint64, v []byte) {
		if num == 1 && typ == wireBytes {
			ps = v
		}
	})
	if err != nil || ps == nil {
		return 0, "", err
	}
	err = fields(ps, func(num, typ int, n uint64, v []byte) {
		switch {
		case num == 1 && typ == wireVarint:
			rejected = int64(n)
		case num == 2 && typ == wireBytes:
			msg = string(v)
		}
	})
	if err != nil {
		return 0, "", err
	}
	return rejected, msg, nil
}

// fields calls f with each field of the message b, in order: its number,
// its wire type, and its value, a number (varint and fixed) or bytes
// (length-delimited). Groups, which no OTLP message has, are skipped.
func fields(b []byte, f func(num, typ int, n uint64, v []byte)) error {
	depth := 0 // of groups
	for len(b) > 0 {
		key, k := binary.Uvarint(b)
		if k <= 0 || key>>3 == 0 || key>>3 > math.MaxInt32 {
			return fmt.Errorf("response: %w", errWire)
		}
		b = b[k:]
		num, typ := int(key>>3), int(key&7)
		var n uint64
		var v []byte
		switch typ {
		case wireVarint:
			n, k = binary.Uvarint(b)
			if k <= 0 {
				return fmt.Errorf("response: %w", errWire)
			}
			b = b[k:]
		case wireFixed64:
			if len(b) < 8 {
				return fmt.Errorf("response: %w", errWire)
			}
			n, b = binary.LittleEndian.Uint64(b), b[8:]
		case wireFixed32:
			if len(b) < 4 {
				return fmt.Errorf("response: %w", errWire)
			}
			n, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case wireBytes:
			l, k := binary.Uvarint(b)
			if k <= 0 || l > uint64(len(b)-k) {
				return fmt.Errorf("response: %w", errWire)
			}
			v, b = b[k:k+int(l)], b[k+int(l):]
		case wireStart:
			depth++
			continue
		case wireEnd:
			if depth == 0 {
				return fmt.Errorf("response: %w", errWire)
			}
			depth--
			continue
		default:
			return fmt.Errorf("response: %w", errWire)
		}
		if depth == 0 {
			f(num, typ, n, v)
		}
	}
	if depth != 0 {
		return fmt.Errorf("response: %w", errWire)
	}
	return nil
}
