package otlphttp

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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
	BytesValue  *[]byte        `json:"bytesValue,omitempty"`
}

type jsonValues struct {
	Values []jsonValue `json:"values"`
}

type jsonKeyValues struct {
	Values []jsonKeyValue `json:"values"`
}

func marshalJSON(groups []*resourceSpans) ([]byte, error) {
	var out jsonRequest
	for _, rs := range groups {
		var jr jsonResourceSpans
		if rs.res != nil {
			jr.Resource = &jsonResource{Attributes: keyValues(rs.res.Attributes())}
			jr.SchemaURL = rs.res.SchemaURL()
		}
		for _, ss := range rs.scopes {
			js := jsonScopeSpans{SchemaURL: validUTF8(ss.scope.SchemaURL)}
			if s := ss.scope; s != (instrumentation.Scope{}) {
				js.Scope = &jsonScope{Name: validUTF8(s.Name), Version: validUTF8(s.Version), Attributes: keyValues(s.Attributes.ToSlice())}
			}
			for _, sp := range ss.spans {
				js.Spans = append(js.Spans, span(sp))
			}
			jr.ScopeSpans = append(jr.ScopeSpans, js)
		}
		out.ResourceSpans = append(out.ResourceSpans, jr)
	}
	return json.Marshal(out)
}

func span(sp sdktrace.ReadOnlySpan) jsonSpan {
	sc := sp.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	st := sp.Status()
	j := jsonSpan{
		TraceID: hex.EncodeToString(tid[:]), SpanID: hex.EncodeToString(sid[:]), TraceState: validUTF8(sc.TraceState().String()),
		Flags: flags(sc.TraceFlags(), sp.Parent()), Name: validUTF8(sp.Name()), Kind: spanKind(sp.SpanKind()),
		StartTimeUnixNano: uint64s(unixNano(sp.StartTime())), EndTimeUnixNano: uint64s(unixNano(sp.EndTime())),
		Attributes: keyValues(sp.Attributes()), DroppedAttributesCount: count(sp.DroppedAttributes()),
		DroppedEventsCount: count(sp.DroppedEvents()), DroppedLinksCount: count(sp.DroppedLinks()),
		Status: &jsonStatus{Message: validUTF8(st.Description), Code: statusCode(st.Code)},
	}
	if psid := sp.Parent().SpanID(); psid.IsValid() {
		j.ParentSpanID = hex.EncodeToString(psid[:])
	}
	for _, e := range sp.Events() {
		j.Events = append(j.Events, jsonEvent{TimeUnixNano: uint64s(unixNano(e.Time)), Name: validUTF8(e.Name),
			Attributes: keyValues(e.Attributes), DroppedAttributesCount: count(e.DroppedAttributeCount)})
	}
	for _, l := range sp.Links() {
		tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		// otlptrace leaves a link's trace state out.
		j.Links = append(j.Links, jsonLink{TraceID: hex.EncodeToString(tid[:]), SpanID: hex.EncodeToString(sid[:]),
			Attributes: keyValues(l.Attributes), DroppedAttributesCount: count(l.DroppedAttributeCount),
			Flags: flags(l.SpanContext.TraceFlags(), l.SpanContext)})
	}
	return j
}

func uint64s(v uint64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatUint(v, 10)
}

func keyValues(kvs []attribute.KeyValue) []jsonKeyValue {
	var out []jsonKeyValue
	for _, kv := range kvs {
		out = append(out, jsonKeyValue{Key: validUTF8(string(kv.Key)), Value: value(kv.Value)})
	}
	return out
}

func value(v attribute.Value) jsonValue {
	var j jsonValue
	switch v.Type() {
	case attribute.EMPTY:
	case attribute.BOOL:
		b := v.AsBool()
		j.BoolValue = &b
	case attribute.INT64:
		j.IntValue = strconv.FormatInt(v.AsInt64(), 10)
	case attribute.FLOAT64:
		j.DoubleValue = double(v.AsFloat64())
	case attribute.STRING:
		s := validUTF8(v.AsString())
		j.StringValue = &s
	case attribute.BYTESLICE:
		b := v.AsByteSlice()
		j.BytesValue = &b
	case attribute.BOOLSLICE:
		j.ArrayValue = jsonArray(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		j.ArrayValue = jsonArray(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		j.ArrayValue = jsonArray(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		j.ArrayValue = jsonArray(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		j.ArrayValue = jsonArray(v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		j.KvlistValue = &jsonKeyValues{Values: keyValues(v.AsMap())}
		if j.KvlistValue.Values == nil {
			j.KvlistValue.Values = []jsonKeyValue{}
		}
	default:
		s := "INVALID"
		j.StringValue = &s
	}
	return j
}

// double is a float64 as the protobuf JSON mapping writes it: what JSON
// has no number for as a string.
func double(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

func jsonArray[T any](vs []T, value1 func(T) attribute.Value) *jsonValues {
	a := &jsonValues{Values: make([]jsonValue, 0, len(vs))}
	for _, v := range vs {
		a.Values = append(a.Values, value(value1(v)))
	}
	return a
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
