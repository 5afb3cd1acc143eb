package otlphttp

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// The OTLP/JSON encoding (OTLP specification, "JSON Protobuf Encoding"):
// the protobuf JSON mapping with lowerCamelCase keys, 64-bit integers as
// decimal strings, enums as numbers, and trace and span IDs in hex rather
// than base64.

type jsonRequest struct {
	ResourceSpans []jsonResourceSpans `json:"resourceSpans,omitempty"`
}

type jsonResourceSpans struct {
	Resource   *jsonResource    `json:"resource,omitempty"`
	ScopeSpans []jsonScopeSpans `json:"scopeSpans,omitempty"`
	SchemaURL  string           `json:"schemaUrl,omitempty"`
}

type jsonResource struct {
	Attributes             []jsonKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32         `json:"droppedAttributesCount,omitempty"`
}

type jsonScopeSpans struct {
	Scope     *jsonScope `json:"scope,omitempty"`
	Spans     []jsonSpan `json:"spans,omitempty"`
	SchemaURL string     `json:"schemaUrl,omitempty"`
}

type jsonScope struct {
	Name                   string         `json:"name,omitempty"`
	Version                string         `json:"version,omitempty"`
	Attributes             []jsonKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32         `json:"droppedAttributesCount,omitempty"`
}

type jsonSpan struct {
	TraceID                string         `json:"traceId,omitempty"`
	SpanID                 string         `json:"spanId,omitempty"`
	TraceState             string         `json:"traceState,omitempty"`
	ParentSpanID           string         `json:"parentSpanId,omitempty"`
	Flags                  uint32         `json:"flags,omitempty"`
	Name                   string         `json:"name,omitempty"`
	Kind                   int32          `json:"kind,omitempty"`
	StartTimeUnixNano      string         `json:"startTimeUnixNano,omitempty"`
	EndTimeUnixNano        string         `json:"endTimeUnixNano,omitempty"`
	Attributes             []jsonKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32         `json:"droppedAttributesCount,omitempty"`
	Events                 []jsonEvent    `json:"events,omitempty"`
	DroppedEventsCount     uint32         `json:"droppedEventsCount,omitempty"`
	Links                  []jsonLink     `json:"links,omitempty"`
	DroppedLinksCount      uint32         `json:"droppedLinksCount,omitempty"`
	Status                 *jsonStatus    `json:"status,omitempty"`
}

type jsonEvent struct {
	TimeUnixNano           string         `json:"timeUnixNano,omitempty"`
	Name                   string         `json:"name,omitempty"`
	Attributes             []jsonKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32         `json:"droppedAttributesCount,omitempty"`
}

type jsonLink struct {
	TraceID                string         `json:"traceId,omitempty"`
	SpanID                 string         `json:"spanId,omitempty"`
	TraceState             string         `json:"traceState,omitempty"`
	Attributes             []jsonKeyValue `json:"attributes,omitempty"`
	DroppedAttributesCount uint32         `json:"droppedAttributesCount,omitempty"`
	Flags                  uint32         `json:"flags,omitempty"`
}

type jsonStatus struct {
	Message string `json:"message,omitempty"`
	Code    int32  `json:"code,omitempty"`
}

type jsonKeyValue struct {
	Key   string    `json:"key"`
	Value jsonValue `json:"value"`
}

// jsonValue is an AnyValue: one field set, or none for an empty value.
type jsonValue struct {
	StringValue *string        `json:"stringValue,omitempty"`
	BoolValue   *bool          `json:"boolValue,omitempty"`
	IntValue    string         `json:"intValue,omitempty"`
	DoubleValue any            `json:"doubleValue,omitempty"`
	ArrayValue  *jsonValues    `json:"arrayValue,omitempty"`
	KvlistValue *jsonKeyValues `json:"kvlistValue,omitempty"`
	BytesValue  []byte         `json:"bytesValue,omitempty"`
}

type jsonValues struct {
	Values []jsonValue `json:"values"`
}

type jsonKeyValues struct {
	Values []jsonKeyValue `json:"values"`
}

func marshalJSON(spans []*tracepb.ResourceSpans) ([]byte, error) {
	var out jsonRequest
	for _, rs := range spans {
		jr := jsonResourceSpans{SchemaURL: rs.SchemaUrl}
		if r := rs.Resource; r != nil {
			jr.Resource = &jsonResource{Attributes: keyValues(r.Attributes), DroppedAttributesCount: r.DroppedAttributesCount}
		}
		for _, ss := range rs.ScopeSpans {
			js := jsonScopeSpans{SchemaURL: ss.SchemaUrl}
			if s := ss.Scope; s != nil {
				js.Scope = &jsonScope{Name: s.Name, Version: s.Version, Attributes: keyValues(s.Attributes), DroppedAttributesCount: s.DroppedAttributesCount}
			}
			for _, sp := range ss.Spans {
				js.Spans = append(js.Spans, span(sp))
			}
			jr.ScopeSpans = append(jr.ScopeSpans, js)
		}
		out.ResourceSpans = append(out.ResourceSpans, jr)
	}
	return json.Marshal(out)
}

func span(sp *tracepb.Span) jsonSpan {
	j := jsonSpan{
		TraceID: hex.EncodeToString(sp.TraceId), SpanID: hex.EncodeToString(sp.SpanId), TraceState: sp.TraceState,
		ParentSpanID: hex.EncodeToString(sp.ParentSpanId), Flags: sp.Flags, Name: sp.Name, Kind: int32(sp.Kind),
		StartTimeUnixNano: uint64s(sp.StartTimeUnixNano), EndTimeUnixNano: uint64s(sp.EndTimeUnixNano),
		Attributes: keyValues(sp.Attributes), DroppedAttributesCount: sp.DroppedAttributesCount,
		DroppedEventsCount: sp.DroppedEventsCount, DroppedLinksCount: sp.DroppedLinksCount,
	}
	for _, e := range sp.Events {
		j.Events = append(j.Events, jsonEvent{TimeUnixNano: uint64s(e.TimeUnixNano), Name: e.Name,
			Attributes: keyValues(e.Attributes), DroppedAttributesCount: e.DroppedAttributesCount})
	}
	for _, l := range sp.Links {
		j.Links = append(j.Links, jsonLink{TraceID: hex.EncodeToString(l.TraceId), SpanID: hex.EncodeToString(l.SpanId),
			TraceState: l.TraceState, Attributes: keyValues(l.Attributes), DroppedAttributesCount: l.DroppedAttributesCount, Flags: l.Flags})
	}
	if s := sp.Status; s != nil && (s.Message != "" || s.Code != 0) {
		j.Status = &jsonStatus{Message: s.Message, Code: int32(s.Code)}
	}
	return j
}

func uint64s(v uint64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatUint(v, 10)
}

func keyValues(kvs []*commonpb.KeyValue) []jsonKeyValue {
	var out []jsonKeyValue
	for _, kv := range kvs {
		out = append(out, jsonKeyValue{Key: kv.Key, Value: value(kv.Value)})
	}
	return out
}

func value(v *commonpb.AnyValue) jsonValue {
	var j jsonValue
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		j.StringValue = &x.StringValue
	case *commonpb.AnyValue_BoolValue:
		j.BoolValue = &x.BoolValue
	case *commonpb.AnyValue_IntValue:
		j.IntValue = strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		// The protobuf JSON mapping writes what JSON has no number for as
		// a string.
		switch f := x.DoubleValue; {
		case math.IsNaN(f):
			j.DoubleValue = "NaN"
		case math.IsInf(f, 1):
			j.DoubleValue = "Infinity"
		case math.IsInf(f, -1):
			j.DoubleValue = "-Infinity"
		default:
			j.DoubleValue = json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case *commonpb.AnyValue_ArrayValue:
		j.ArrayValue = &jsonValues{Values: []jsonValue{}}
		for _, e := range x.ArrayValue.GetValues() {
			j.ArrayValue.Values = append(j.ArrayValue.Values, value(e))
		}
	case *commonpb.AnyValue_KvlistValue:
		j.KvlistValue = &jsonKeyValues{Values: keyValues(x.KvlistValue.GetValues())}
		if j.KvlistValue.Values == nil {
			j.KvlistValue.Values = []jsonKeyValue{}
		}
	case *commonpb.AnyValue_BytesValue:
		j.BytesValue = x.BytesValue
	}
	return j
}

// unmarshalJSONResponse reads the partial success of an
// ExportTraceServiceResponse in OTLP/JSON.
func unmarshalJSONResponse(data []byte) (rejected int64, msg string, err error) {
	var r struct {
		PartialSuccess struct {
			RejectedSpans json.Number `json:"rejectedSpans"`
			ErrorMessage  string      `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return 0, "", err
	}
	if s := r.PartialSuccess.RejectedSpans.String(); s != "" {
		if rejected, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, "", err
		}
	}
	return rejected, r.PartialSuccess.ErrorMessage, nil
}
