package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/otlphttp"
	"github.com/wieldhq/wield/mcpbridge"
)

// tracing sets up OpenTelemetry traces when an OTLP endpoint is configured
// the standard way (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTLP over HTTP; the other OTEL_*
// variables apply too, read by internal/otlphttp as otlptracehttp reads
// them, whose exporter writes the spans as otlptrace does, without the gRPC
// and the protobuf runtime they link). It returns a nil tracer when none
// is, and otherwise the tracer and the propagator; stop, never nil, flushes
// and stops it within 10 s, logging a failure on log. It also makes every
// outbound request of the process (HTTP tools, web_fetch, remote entries,
// imported MCP tools) carry the trace context of the call that makes it
// (see [wield.SetTracePropagator]).
func tracing(ctx context.Context, log *slog.Logger) (tracer trace.Tracer, prop propagation.TextMapPropagator, stop func(), err error) {
	stop = func() {}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil, stop, nil
	}
	exp, err := otlphttp.New(ctx)
	if err != nil {
		return nil, nil, stop, fmt.Errorf("opentelemetry: %w", err)
	}
	name := os.Getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = "wield"
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(name)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithIDGenerator(callIDs{}))
	otel.SetTracerProvider(tp)
	prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	otel.SetTextMapPropagator(prop)
	wield.SetTracePropagator(callPropagator{prop})
	stop = func() {
		wield.SetTracePropagator(nil)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			log.Warn("opentelemetry: flush traces", "err", err)
		}
	}
	return tp.Tracer("github.com/wieldhq/wield"), prop, stop, nil
}

// traces is the tracing of serve or mcp, the one setup both use: off (a
// nil tracer) without an OTLP endpoint.
type traces struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	stop   func() // never nil
	store  *tracedStore
}

// startTraces starts tracing (see tracing); stop ends it.
func startTraces(ctx context.Context, log *slog.Logger) (*traces, error) {
	tracer, prop, stop, err := tracing(ctx, log)
	if err != nil {
		return nil, err
	}
	return &traces{tracer: tracer, prop: prop, stop: stop}, nil
}

// on reports whether spans are sent.
func (t *traces) on() bool { return t.tracer != nil }

// calls is what the engine saves records to: store, which also records
// each call's span when tracing is on.
func (t *traces) calls(store wield.Storage) wield.Storage {
	if !t.on() {
		return store
	}
	t.store = &tracedStore{Storage: store, tracer: t.tracer}
	return t.store
}

// serve gives the call spans the registry, once made, and the MCP server
// a span per request over transport ("tcp", or "pipe" for stdio).
func (t *traces) serve(reg *wield.Registry, mopts *mcpbridge.ServerOptions, transport string) {
	if !t.on() {
		return
	}
	if t.store != nil {
		t.store.reg.Store(reg)
	}
	mopts.Trace = mcpTrace(t.tracer, t.prop, transport)
}

// A call's span (execute_tool) is recorded when the call has ended, from
// its record, yet requests the tool makes while it runs must name it as
// their parent. So its IDs are derived from the call's ID, which is unique
// (a wield.NewID): the span ID always, and the trace ID when the call has
// no parent span. callSpan makes that span context; callIDs gives the
// tracer the same IDs when it records the span (tracedStore puts the call
// ID in the context under toolSpanKey).
type toolSpanKey struct{}

// callSpan is the span context of call id's execute_tool span, a child of
// parent (or the root of a trace of its own when parent is not valid).
func callSpan(parent trace.SpanContext, id string) trace.SpanContext {
	tid, sid := callIDsOf(id)
	cfg := trace.SpanContextConfig{TraceID: parent.TraceID(), SpanID: sid, TraceFlags: parent.TraceFlags(), TraceState: parent.TraceState()}
	if !parent.IsValid() {
		cfg.TraceID = tid
		cfg.TraceFlags = trace.FlagsSampled // the provider samples every root
	}
	return trace.NewSpanContext(cfg)
}

// callIDsOf derives the trace ID (used when the call has no parent) and the
// span ID of a call's span from its ID.
func callIDsOf(id string) (trace.TraceID, trace.SpanID) {
	h := sha256.Sum256([]byte("wield call span " + id))
	var tid trace.TraceID
	var sid trace.SpanID
	copy(sid[:], h[:8])
	copy(tid[:], h[8:24])
	if !sid.IsValid() {
		sid[7] = 1
	}
	if !tid.IsValid() {
		tid[15] = 1
	}
	return tid, sid
}

// callIDs is the tracer's ID generator: random IDs (as the SDK's own), but
// a call's span gets those callIDsOf derives.
type callIDs struct{}

func (callIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if id, ok := ctx.Value(toolSpanKey{}).(string); ok {
		return callIDsOf(id)
	}
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.BigEndian.PutUint64(tid[:8], mrand.Uint64())
		binary.BigEndian.PutUint64(tid[8:], mrand.Uint64())
	}
	return tid, randomSpanID()
}

func (callIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if id, ok := ctx.Value(toolSpanKey{}).(string); ok {
		_, sid := callIDsOf(id)
		return sid
	}
	return randomSpanID()
}

func randomSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.BigEndian.PutUint64(sid[:], mrand.Uint64())
	}
	return sid
}

// callPropagator is the wield.TracePropagator of a tracing process: W3C
// Trace Context (and Baggage) of the span current in ctx, which for a
// tool's handler is its call's execute_tool span.
type callPropagator struct{ prop propagation.TextMapPropagator }

func (p callPropagator) Inject(ctx context.Context, set func(key, value string)) {
	p.prop.Inject(inCallSpan(ctx, ""), setter(set))
}

// inCallSpan makes the span of the call running under ctx (a handler's
// context carries its call, see wield.CallKey) the current span, unless it
// is the call self: what a handler sends out, and the calls it makes in
// turn (a sub-agent's), are that span's children.
func inCallSpan(ctx context.Context, self string) context.Context {
	if c, ok := ctx.Value(wield.CallKey).(*wield.Call); ok && c != nil && c.ID != "" && c.ID != self {
		return trace.ContextWithSpanContext(ctx, callSpan(trace.SpanContextFromContext(ctx), c.ID))
	}
	return ctx
}

// setter is a propagation.TextMapCarrier that only writes.
type setter func(key, value string)

func (setter) Get(string) string { return "" }
func (s setter) Set(k, v string) { s(k, v) }
func (setter) Keys() []string    { return nil }

// metaCarrier reads the trace context of an MCP request's params._meta;
// values that are not strings are not trace context.
type metaCarrier map[string]any

func (m metaCarrier) Get(k string) string { v, _ := m[k].(string); return v }
func (metaCarrier) Set(string, string)    {}
func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// mcpTrace starts the span of a tools/call the MCP server answers, as
// OpenTelemetry's MCP conventions have it: "tools/call {tool}", kind
// server, its parent the caller's span named in params._meta (traceparent,
// tracestate) when there is one, linked then to the HTTP request's span.
// transport is the network.transport: "tcp" for HTTP, "pipe" for stdio.
func mcpTrace(tracer trace.Tracer, prop propagation.TextMapPropagator, transport string) func(context.Context, mcpbridge.TraceRequest) (context.Context, func(string)) {
	return func(ctx context.Context, r mcpbridge.TraceRequest) (context.Context, func(string)) {
		attrs := []attribute.KeyValue{
			attribute.String("mcp.method.name", r.Method),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", r.Tool),
			attribute.String("network.transport", transport),
		}
		if transport == "tcp" {
			attrs = append(attrs, attribute.String("network.protocol.name", "http"))
		}
		for k, v := range map[string]string{"mcp.session.id": r.SessionID, "jsonrpc.request.id": r.RequestID, "mcp.protocol.version": r.ProtocolVersion} {
			if v != "" {
				attrs = append(attrs, attribute.String(k, v))
			}
		}
		opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...)}
		parent := ctx
		if len(r.Meta) > 0 {
			if remote := prop.Extract(ctx, metaCarrier(r.Meta)); trace.SpanContextFromContext(remote).IsRemote() {
				if ambient := trace.SpanContextFromContext(ctx); ambient.IsValid() {
					opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ambient}))
				}
				parent = remote
			}
		}
		ctx, span := tracer.Start(parent, r.Method+" "+r.Tool, opts...)
		return ctx, func(errType string) {
			if errType != "" {
				span.SetAttributes(attribute.String("error.type", errType))
				span.SetStatus(codes.Error, errType)
			}
			span.End()
		}
	}
}

// tracedHandler gives every request a span (and takes the caller's trace
// context from its headers).
func tracedHandler(h http.Handler) http.Handler {
	return newHTTPSpans(h, httpSpanName)
}

// httpSpanName names a request's span by the route it took, or, before the
// mux has chosen one (or when none matched), by its method and path.
func httpSpanName(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	return r.Method + " " + r.URL.Path
}

// tracedStore adds a span for every finished call, from its arrival to its
// end, as a child of the request that made it (the record is saved with the
// call's context), following OpenTelemetry's GenAI conventions for tool
// execution: "execute_tool {tool}" with gen_ai.operation.name,
// gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type and, on failure,
// error.type (wield's error type) and an error status.
type tracedStore struct {
	wield.Storage
	tracer trace.Tracer
	// reg, once set (the registry is made after the store), gives the
	// tool's description and what kind of tool it is.
	reg atomic.Pointer[wield.Registry]
}

// Save records the call's span, then the call.
func (s *tracedStore) Save(ctx context.Context, r *wield.Record) error {
	res := r.Result
	// Tools that reach another system (HTTP, MCP, the web, another
	// server) are extensions in the conventions' words; the others are
	// functions.
	kind := "function"
	var desc string
	if r.Category.IsNetwork() {
		kind = "extension"
	}
	if reg := s.reg.Load(); reg != nil {
		if t, ok := reg.Tool(res.Tool); ok {
			if t.Annotations.OpenWorld || strings.HasPrefix(t.Source, "mcp:") {
				kind = "extension"
			}
			desc = t.Description
		}
	}
	// A call made by a running tool (a sub-agent's) is its span's child.
	sctx := context.WithValue(inCallSpan(ctx, res.CallID), toolSpanKey{}, res.CallID)
	_, span := s.tracer.Start(sctx, "execute_tool "+res.Tool, trace.WithTimestamp(r.QueuedAt), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", res.Tool),
			attribute.String("gen_ai.tool.call.id", res.CallID),
			attribute.String("gen_ai.tool.type", kind),
			attribute.Bool("wield.ok", res.OK),
			attribute.Int("wield.attempts", res.Attempts),
			attribute.Int64("wield.queue_wait_us", res.QueueWait.Microseconds()),
			attribute.String("wield.category", string(r.Category)),
		))
	if r.Call != nil && r.Call.Caller.ConversationID != "" {
		span.SetAttributes(attribute.String("gen_ai.conversation.id", r.Call.Caller.ConversationID))
	}
	if desc != "" {
		span.SetAttributes(attribute.String("gen_ai.tool.description", desc))
	}
	if !res.OK {
		span.SetAttributes(attribute.String("error.type", string(res.ErrorType)))
		span.SetStatus(codes.Error, string(res.ErrorType))
	}
	span.End(trace.WithTimestamp(res.FinishedAt))
	return s.Storage.Save(ctx, r)
}
