package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestServeTraces: with an OTLP endpoint configured the standard way, every
// request has a span and every call a child span, sent when the server
// stops.
func TestServeTraces(t *testing.T) {
	var mu sync.Mutex
	var spans []*tracepb.Span
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "bad export", 400)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ = proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Write(b)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	s := startServe(t, "")
	code, _, errs := runIn(t, "", "call", "--server", s.url, "calculator", "expression=1+1")
	if code != 0 {
		t.Fatalf("call: exit %d %s", code, errs)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	var call, request *tracepb.Span
	for _, sp := range spans {
		switch {
		case sp.Name == "execute_tool calculator":
			call = sp
		case strings.Contains(sp.Name, "/v1/tools/") && strings.Contains(sp.Name, "call"):
			request = sp
		}
	}
	if call == nil || request == nil {
		var names []string
		for _, sp := range spans {
			names = append(names, sp.Name)
		}
		t.Fatalf("spans %q: want the request's and the call's", names)
	}
	if string(call.ParentSpanId) != string(request.SpanId) || string(call.TraceId) != string(request.TraceId) {
		t.Errorf("the call's span is not a child of the request's")
	}
	attrs := map[string]string{}
	for _, kv := range call.Attributes {
		attrs[kv.Key] = kv.Value.String()
	}
	// OpenTelemetry's GenAI conventions for tool execution.
	for k, v := range map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calculator", "gen_ai.tool.type": "function", "wield.ok": "true"} {
		if !strings.Contains(attrs[k], v) {
			t.Errorf("attribute %s = %s, want %s (all: %v)", k, attrs[k], v, attrs)
		}
	}
	if _, ok := attrs["error.type"]; ok || len(attrs["gen_ai.tool.call.id"]) < 27 {
		t.Errorf("a successful call's attributes %v: want a gen_ai.tool.call.id and no error.type", attrs)
	}
}

// TestMCPTraceMeta: the tools/call span takes its parent from params._meta
// when it holds a valid W3C traceparent, and links the ambient (HTTP) span;
// whatever else a client puts there (no string, garbage, an all-zero or
// huge traceparent) leaves the span a child of the ambient span, and
// nothing breaks.
func TestMCPTraceMeta(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(callIDs{}))
	defer tp.Shutdown(context.Background())
	prop := propagation.TraceContext{}
	start := mcpTrace(tp.Tracer("test"), prop, "tcp")
	ambientCtx, ambient := tp.Tracer("test").Start(context.Background(), "POST /mcp")
	defer ambient.End()
	const remoteTrace, remoteSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tests := []struct {
		name   string
		meta   map[string]any
		remote bool
	}{
		{"valid", map[string]any{"traceparent": "00-" + remoteTrace + "-" + remoteSpan + "-01", "tracestate": "rojo=1"}, true},
		{"no meta", nil, false},
		{"not a string", map[string]any{"traceparent": 42}, false},
		{"garbage", map[string]any{"traceparent": "<script>\x1b[31m"}, false},
		{"all zero", map[string]any{"traceparent": "00-00000000000000000000000000000000-0000000000000000-01"}, false},
		{"huge", map[string]any{"traceparent": strings.Repeat("0", 1<<20), "tracestate": strings.Repeat("a=b,", 1<<16)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp.Reset()
			_, end := start(ambientCtx, mcpbridge.TraceRequest{Method: "tools/call", Tool: "echo", SessionID: "s1", RequestID: "7", Meta: tt.meta})
			end("tool_error")
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			sp := spans[0]
			if sp.Name != "tools/call echo" || sp.SpanKind != trace.SpanKindServer {
				t.Errorf("span %q kind %v", sp.Name, sp.SpanKind)
			}
			parent := sp.Parent
			if tt.remote {
				if parent.TraceID().String() != remoteTrace || parent.SpanID().String() != remoteSpan || !parent.IsRemote() {
					t.Errorf("parent %v, want the remote span of _meta", parent)
				}
				if len(sp.Links) != 1 || sp.Links[0].SpanContext.SpanID() != ambient.SpanContext().SpanID() {
					t.Errorf("links %v, want the ambient span", sp.Links)
				}
			} else if parent.SpanID() != ambient.SpanContext().SpanID() {
				t.Errorf("parent %v, want the ambient span", parent)
			}
			attrs := map[string]string{}
			for _, kv := range sp.Attributes {
				attrs[string(kv.Key)] = kv.Value.Emit()
			}
			for k, v := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "mcp.session.id": "s1", "jsonrpc.request.id": "7", "error.type": "tool_error"} {
				if attrs[k] != v {
					t.Errorf("%s = %q, want %q", k, attrs[k], v)
				}
			}
		})
	}
}

// TestCallSpanIDs: the span context an outbound request of a call carries
// is the one the call's span is recorded with, under a parent and without.
func TestCallSpanIDs(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(callIDs{}))
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer("test")
	parentCtx, parent := tracer.Start(context.Background(), "request")
	defer parent.End()
	for _, ctx := range []context.Context{parentCtx, context.Background()} {
		exp.Reset()
		call := &wield.Call{ID: wield.NewID()}
		var header string
		callPropagator{propagation.TraceContext{}}.Inject(context.WithValue(ctx, wield.CallKey, call), func(k, v string) {
			if k == "traceparent" {
				header = v
			}
		})
		_, sp := tracer.Start(context.WithValue(ctx, toolSpanKey{}, call.ID), "execute_tool x")
		sp.End()
		got := exp.GetSpans()[0].SpanContext
		if want := "00-" + got.TraceID().String() + "-" + got.SpanID().String() + "-01"; header != want {
			t.Errorf("outbound traceparent %q, recorded span %q", header, want)
		}
		if ctx == parentCtx && got.TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("the call's span left its parent's trace")
		}
	}
}

// TestNestedCallSpan: a call made while another call's tool runs (a
// sub-agent's, under the outer handler's context) is recorded as a child of
// the outer call's span.
func TestNestedCallSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(callIDs{}))
	defer tp.Shutdown(context.Background())
	store := &tracedStore{Storage: keepNothing{}, tracer: tp.Tracer("test")}
	outer, inner := &wield.Call{ID: wield.NewID(), Tool: "call_subagent"}, &wield.Call{ID: wield.NewID(), Tool: "echo"}
	now := time.Now()
	record := func(ctx context.Context, c *wield.Call) {
		if err := store.Save(ctx, &wield.Record{Call: c, QueuedAt: now, Result: &wield.Result{CallID: c.ID, Tool: c.Tool, OK: true, FinishedAt: now}}); err != nil {
			t.Fatal(err)
		}
	}
	record(context.WithValue(context.Background(), wield.CallKey, outer), inner) // under the outer handler
	record(context.Background(), outer)
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	in, out := spans[0], spans[1]
	if in.Parent.SpanID() != out.SpanContext.SpanID() || in.SpanContext.TraceID() != out.SpanContext.TraceID() {
		t.Errorf("inner span's parent %v, want the outer call's span %v", in.Parent, out.SpanContext)
	}
}

// keepNothing is a store that keeps nothing.
type keepNothing struct{ wield.Storage }

func (keepNothing) Save(context.Context, *wield.Record) error { return nil }

// collectSpans is an OTLP/HTTP receiver on loopback; spans returns what it
// has received.
func collectSpans(t *testing.T) (url string, spans func() []*tracepb.Span) {
	var mu sync.Mutex
	var got []*tracepb.Span
	c := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		var req coltrace.ExportTraceServiceRequest
		if proto.Unmarshal(b, &req) != nil {
			http.Error(w, "bad export", 400)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				got = append(got, ss.Spans...)
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(c.Close)
	return c.URL, func() []*tracepb.Span {
		mu.Lock()
		defer mu.Unlock()
		return append([]*tracepb.Span(nil), got...)
	}
}

// TestMCPStdioTraces: `wield mcp` over stdio with an OTLP endpoint sends a
// tools/call span (network.transport pipe) whose parent is the span named
// in params._meta, and the call's execute_tool span under it.
func TestMCPStdioTraces(t *testing.T) {
	url, spans := collectSpans(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calculator","arguments":{"expression":"1+1"},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}
`
	// stdin stays open until the call is answered: at its end the server
	// stops.
	t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(t.TempDir(), "wield.db"))
	pr, pw := io.Pipe()
	var out, errs lockedOut
	done := make(chan int, 1)
	go func() { done <- Run(context.Background(), []string{"mcp"}, pr, &out, &errs) }()
	go pw.Write([]byte(in))
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), `"id":2`) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	pw.Close()
	if code := <-done; code != 0 || !strings.Contains(out.String(), `"id":2`) {
		t.Fatalf("wield mcp: exit %d\nstdout %s\nstderr %s", code, out.String(), errs.String())
	}
	var server, call *tracepb.Span
	for _, sp := range spans() {
		switch sp.Name {
		case "tools/call calculator":
			server = sp
		case "execute_tool calculator":
			call = sp
		}
	}
	if server == nil || call == nil {
		t.Fatalf("spans %v: want tools/call calculator and execute_tool calculator", spans())
	}
	if fmt.Sprintf("%x", server.ParentSpanId) != "00f067aa0ba902b7" || fmt.Sprintf("%x", server.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("tools/call span's parent %x in trace %x, want the _meta's", server.ParentSpanId, server.TraceId)
	}
	if string(call.ParentSpanId) != string(server.SpanId) {
		t.Errorf("execute_tool is not the tools/call span's child")
	}
	for _, kv := range server.Attributes {
		if kv.Key == "network.transport" && kv.Value.GetStringValue() != "pipe" {
			t.Errorf("network.transport %v, want pipe", kv.Value)
		}
	}
}

// lockedOut is an output written by one goroutine and read by another.
type lockedOut struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedOut) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedOut) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
