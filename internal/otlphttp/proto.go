package otlphttp

import (
	"fmt"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The collector's request and response are written and read here by field
// number: their generated package (go.opentelemetry.io/proto/otlp/
// collector/trace/v1) holds the gRPC service too, and would link gRPC
// back in.
//
//	message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
//	message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
//	message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }

func marshalRequest(spans []*tracepb.ResourceSpans) ([]byte, error) {
	var b []byte
	for _, rs := range spans {
		m, err := proto.Marshal(rs)
		if err != nil {
			return nil, err
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, m)
	}
	return b, nil
}

func unmarshalResponse(b []byte) (rejected int64, msg string, err error) {
	ps, err := field(b, 1, protowire.BytesType)
	if err != nil || ps == nil {
		return 0, "", err
	}
	for len(ps) > 0 {
		num, typ, n := protowire.ConsumeTag(ps)
		if n < 0 {
			return 0, "", protowire.ParseError(n)
		}
		ps = ps[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(ps)
			if n < 0 {
				return 0, "", protowire.ParseError(n)
			}
			rejected, ps = int64(v), ps[n:]
		case num == 2 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(ps)
			if n < 0 {
				return 0, "", protowire.ParseError(n)
			}
			msg, ps = string(v), ps[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, ps)
			if n < 0 {
				return 0, "", protowire.ParseError(n)
			}
			ps = ps[n:]
		}
	}
	return rejected, msg, nil
}

// field is the last value of a length-delimited field of b, nil when b has
// none.
func field(b []byte, want protowire.Number, wantType protowire.Type) ([]byte, error) {
	var out []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("response: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if num == want && typ == wantType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, fmt.Errorf("response: %w", protowire.ParseError(n))
			}
			out, b = v, b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, fmt.Errorf("response: %w", protowire.ParseError(n))
		}
		b = b[n:]
	}
	return out, nil
}
