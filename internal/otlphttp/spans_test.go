package otlphttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// capture is an otlptrace.Client that keeps what otlptrace's transform
// made of the spans.
type capture struct{ got []*tracepb.ResourceSpans }

func (*capture) Start(context.Context) error { return nil }
func (*capture) Stop(context.Context) error  { return nil }
func (c *capture) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	c.got = rs
	return nil
}

// viaOtlptrace is the ResourceSpans otlptrace's exporter sends of spans,
// in the order group gives (the transform puts them in map order).
func viaOtlptrace(t *testing.T, spans []sdktrace.ReadOnlySpan) []*tracepb.ResourceSpans {
	t.Helper()
	c := &capture{}
	exp, err := otlptrace.New(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	var order []attribute.Distinct
	for _, g := range group(spans) {
		order = append(order, g.res.Equivalent())
	}
	out := make([]*tracepb.ResourceSpans, 0, len(c.got))
	for _, d := range order {
		for _, rs := range c.got {
			if resourceOf(rs).Equivalent() == d {
				out = append(out, rs)
			}
		}
	}
	if len(out) != len(c.got) {
		t.Fatalf("%d resources, %d ordered", len(c.got), len(out))
	}
	return out
}

// resourceOf is the resource of rs, whose attributes in every batch here
// are strings.
func resourceOf(rs *tracepb.ResourceSpans) *resource.Resource {
	var kvs []attribute.KeyValue
	for _, kv := range rs.GetResource().GetAttributes() {
		kvs = append(kvs, attribute.String(kv.Key, kv.GetValue().GetStringValue()))
	}
	return resource.NewWithAttributes(rs.SchemaUrl, kvs...)
}

// everything is a batch with every field of a span set, and unset, and
// every type of attribute value, over two resources and three scopes.
func everything() []sdktrace.ReadOnlySpan {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, err := trace.ParseTraceState("vendor=a1,other=b2")
	if err != nil {
		panic(err)
	}
	sc := func(sid byte, remote bool) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{8, 7, 6, 5, 4, 3, 2, sid},
			TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: remote})
	}
	res1 := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0",
		attribute.String("service.name", "wield"), attribute.String("host.name", "box"))
	res2 := resource.NewSchemaless(attribute.String("service.name", "other"))
	scope := instrumentation.Scope{Name: "github.com/wieldhq/wield", Version: "v1.2.3", SchemaURL: "https://opentelemetry.io/schemas/1.37.0",
		Attributes: attribute.NewSet(attribute.String("scope.attr", "x"), attribute.Int("n", 1))}
	other := instrumentation.Scope{Name: "net/http"}
	long := strings.Repeat("é", 10000) // lengths of 2 and 3 bytes
	attrs := []attribute.KeyValue{
		attribute.Bool("bool.true", true), attribute.Bool("bool.false", false),
		attribute.Int64("int.zero", 0), attribute.Int64("int.negative", -42), attribute.Int64("int.max", math.MaxInt64),
		attribute.Float64("double.zero", 0), attribute.Float64("double.negative.zero", math.Copysign(0, -1)),
		attribute.Float64("double.half", 0.5), attribute.Float64("double.big", 1e300), attribute.Float64("double.tiny", 5e-324),
		attribute.Float64("double.nan", math.NaN()), attribute.Float64("double.inf", math.Inf(1)), attribute.Float64("double.-inf", math.Inf(-1)),
		attribute.String("string.empty", ""), attribute.String("string", "héllo \"quoted\" <tag> \u2028 \x00"), attribute.String("string.long", long),
		attribute.BoolSlice("bools", []bool{true, false}), attribute.Int64Slice("ints", []int64{1, -1, 0}),
		attribute.Float64Slice("doubles", []float64{1.5, math.NaN(), 0}), attribute.StringSlice("strings", []string{"a", ""}),
		attribute.StringSlice("strings.empty", nil),
		attribute.ByteSlice("bytes", []byte{0, 1, 0xff}), attribute.ByteSlice("bytes.empty", nil),
		attribute.Slice("slice", attribute.StringValue("s"), attribute.Int64Value(7), attribute.SliceValue(attribute.BoolValue(true)),
			attribute.MapValue(attribute.String("k", "v")), attribute.Value{}),
		attribute.Map("map", attribute.Int("a", 1), attribute.Map("nested", attribute.Float64("f", 2.5)), attribute.KeyValue{Key: "none"}),
		attribute.Map("map.empty"),
		{Key: "empty"},
		attribute.String("", "empty key"),
	}
	t0 := time.Unix(1700000000, 123456789)
	return tracetest.SpanStubs{
		{
			Name: "execute_tool echo", SpanContext: sc(1, false), Parent: sc(9, true), SpanKind: trace.SpanKindServer,
			StartTime: t0, EndTime: t0.Add(1500 * time.Millisecond), Attributes: attrs,
			Events: []sdktrace.Event{
				{Name: "retry", Time: t0.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.Int("attempt", 2)}, DroppedAttributeCount: 3},
				{Name: "", Time: time.Time{}},
			},
			Links: []sdktrace.Link{
				{SpanContext: sc(5, true), Attributes: []attribute.KeyValue{attribute.String("why", "caller")}, DroppedAttributeCount: 1},
				{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}})},
			},
			Status:            sdktrace.Status{Code: codes.Error, Description: "timeout"},
			DroppedAttributes: 2, DroppedEvents: 1 << 40, DroppedLinks: -1,
			Resource: res1, InstrumentationScope: scope,
		},
		{Name: "internal", SpanContext: sc(2, false), Parent: sc(1, false), SpanKind: trace.SpanKindInternal, StartTime: t0, EndTime: t0,
			Status: sdktrace.Status{Code: codes.Ok}, Resource: res1, InstrumentationScope: scope},
		{Name: "client", SpanContext: sc(3, false), SpanKind: trace.SpanKindClient, StartTime: time.Unix(-5, 0), Resource: res1, InstrumentationScope: other},
		{Name: "unspecified", SpanContext: sc(4, false), SpanKind: trace.SpanKindUnspecified, Resource: res2},
		{Name: "producer", SpanContext: sc(5, false), SpanKind: trace.SpanKindProducer, Resource: res1, InstrumentationScope: scope},
		{Name: "consumer", SpanContext: sc(6, false), SpanKind: trace.SpanKindConsumer, Resource: res2, InstrumentationScope: other},
		{Name: "unknown kind", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{7}}),
			SpanKind: trace.SpanKind(9), Status: sdktrace.Status{Code: codes.Code(7), Description: "odd"}, Resource: res2},
	}.Snapshots()
}

// TestProtobufAsOtlptrace: the request decodes, with the generated types,
// to what otlptrace's transform makes of the same spans, and is byte for
// byte what the generated code writes.
func TestProtobufAsOtlptrace(t *testing.T) {
	for name, batch := range map[string][]sdktrace.ReadOnlySpan{"everything": everything(), "one": spans(),
		"with nil spans": append([]sdktrace.ReadOnlySpan{nil}, spans()...)} {
		t.Run(name, func(t *testing.T) {
			want := &coltracepb.ExportTraceServiceRequest{ResourceSpans: viaOtlptrace(t, batch)}
			body := marshalRequest(group(batch))
			var got coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(&got, want) {
				t.Errorf("got %v\nwant %v", &got, want)
			}
			wantBody, err := proto.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, wantBody) {
				t.Errorf("the bytes differ from the generated code's:\n%x\n%x", body, wantBody)
			}
		})
	}
}

// TestJSONAsOtlptrace: the OTLP/JSON request, its IDs turned from hex to
// the base64 of the protobuf JSON mapping, parses with protojson to what
// otlptrace's transform makes of the same spans.
func TestJSONAsOtlptrace(t *testing.T) {
	batch := everything()
	want := &coltracepb.ExportTraceServiceRequest{ResourceSpans: viaOtlptrace(t, batch)}
	body, err := marshalJSON(group(batch))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if err := hexIDsToBase64(doc); err != nil {
		t.Fatal(err)
	}
	body, err = json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var got coltracepb.ExportTraceServiceRequest
	if err := (protojson.UnmarshalOptions{}).Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, want) {
		t.Errorf("got %v\nwant %v", &got, want)
	}
}

// hexIDsToBase64 rewrites the IDs of an OTLP/JSON document as the protobuf
// JSON mapping has bytes.
func hexIDsToBase64(doc any) error {
	switch v := doc.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && slices.Contains([]string{"traceId", "spanId", "parentSpanId"}, k) {
				b, err := hex.DecodeString(s)
				if err != nil {
					return err
				}
				v[k] = base64.StdEncoding.EncodeToString(b)
				continue
			}
			if err := hexIDsToBase64(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := hexIDsToBase64(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestInvalidUTF8: a string that is not UTF-8 is sent with U+FFFD in its
// place in both encodings; the generated code refuses to write it, and
// with it the whole batch, as the exporter did before.
func TestInvalidUTF8(t *testing.T) {
	batch := tracetest.SpanStubs{{
		Name: "bad \xff name", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}}),
		Attributes: []attribute.KeyValue{attribute.String("k\xc3", "v\xe2\x82"), attribute.StringSlice("s", []string{"\x80"})},
		Resource:   resource.NewSchemaless(attribute.String("service.name", "wield")),
	}}.Snapshots()
	if _, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: viaOtlptrace(t, batch)}); err == nil {
		t.Error("the generated code wrote invalid UTF-8")
	}
	var got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(marshalRequest(group(batch)), &got); err != nil {
		t.Fatal(err)
	}
	sp := got.ResourceSpans[0].ScopeSpans[0].Spans[0]
	a := sp.Attributes
	if sp.Name != "bad \uFFFD name" || a[0].Key != "k\uFFFD" || a[0].Value.GetStringValue() != "v\uFFFD" ||
		a[1].Value.GetArrayValue().GetValues()[0].GetStringValue() != "\uFFFD" {
		t.Errorf("protobuf: %v", sp)
	}
	body, err := marshalJSON(group(batch))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), "\"name\":\"bad \uFFFD name\"") || !strings.Contains(string(body), "{\"key\":\"k\uFFFD\",\"value\":{\"stringValue\":\"v\uFFFD\"}}") {
		t.Errorf("json: %s", body)
	}
}

// FuzzResponse: the partial success read from any answer is what the
// generated code reads of it, when it reads one.
func FuzzResponse(f *testing.F) {
	for _, r := range []*coltracepb.ExportTraceServiceResponse{
		{},
		{PartialSuccess: &coltracepb.ExportTracePartialSuccess{}},
		{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "too old"}},
		{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: -1}},
	} {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x0b, 0x0c}) // a group
	f.Add([]byte{0x0a, 0x05, 0x08})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, msg, err := unmarshalResponse(b)
		var r coltracepb.ExportTraceServiceResponse
		if perr := proto.Unmarshal(b, &r); perr != nil {
			return // what it refuses may still be read here (invalid UTF-8)
		}
		if err != nil {
			t.Fatalf("%x: %v, the generated code reads %v", b, err, &r)
		}
		if n != r.GetPartialSuccess().GetRejectedSpans() || msg != r.GetPartialSuccess().GetErrorMessage() {
			t.Errorf("%x: %d %q, the generated code reads %v", b, n, msg, &r)
		}
	})
}

// batch is what the batcher hands over at most at once (512 spans), of
// spans like wield's execute_tool spans.
func batch() []sdktrace.ReadOnlySpan {
	res := resource.NewSchemaless(attribute.String("service.name", "wield"), attribute.String("telemetry.sdk.language", "go"))
	stubs := make(tracetest.SpanStubs, 512)
	t0 := time.Unix(1700000000, 0)
	for i := range stubs {
		stubs[i] = tracetest.SpanStub{
			Name:        "execute_tool echo",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{byte(i), 1}, SpanID: trace.SpanID{byte(i), 2}, TraceFlags: trace.FlagsSampled}),
			Parent:      trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{byte(i), 1}, SpanID: trace.SpanID{byte(i), 3}, Remote: true}),
			SpanKind:    trace.SpanKindInternal, StartTime: t0, EndTime: t0.Add(time.Millisecond),
			Attributes: []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", "echo"),
				attribute.String("gen_ai.tool.call.id", "01JD8X3Q9R7T2V5W8Y1Z4A6B9C"), attribute.String("gen_ai.tool.type", "function"),
				attribute.Bool("wield.ok", true), attribute.Int("wield.attempts", 1), attribute.Int64("wield.queue_wait_us", 12), attribute.String("wield.category", "compute")},
			Resource: res, InstrumentationScope: instrumentation.Scope{Name: "github.com/wieldhq/wield"},
		}
	}
	return stubs.Snapshots()
}

// BenchmarkEncode is the body of a request of a full batch, written here
// and, for comparison, by otlptrace's transform and the generated code.
func BenchmarkEncode(b *testing.B) {
	spans := batch()
	b.Run("protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			marshalRequest(group(spans))
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalJSON(group(spans)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("otlptrace-protobuf", func(b *testing.B) {
		b.ReportAllocs()
		c := &capture{}
		exp, err := otlptrace.New(context.Background(), c)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := exp.ExportSpans(context.Background(), spans); err != nil {
				b.Fatal(err)
			}
			if _, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: c.got}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
