//go:build unix

package journeys

// Traces: `wield serve` with an OTLP endpoint sends spans that follow
// OpenTelemetry's GenAI and MCP conventions, continues the trace an MCP
// client names in params._meta, and hands the trace on to the services its
// tools call.

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a stand-in for an OpenTelemetry collector: it decodes the
// OTLP/HTTP protobuf exports it is sent and keeps their spans.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	o := &otlpReceiver{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(io.LimitReader(body, 32<<20))
		var req coltrace.ExportTraceServiceRequest
		if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "not an OTLP export", http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				o.spans = append(o.spans, ss.Spans...)
			}
		}
		o.mu.Unlock()
		b, _ = proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	}))
	t.Cleanup(o.Close)
	return o
}

// named returns the spans called name.
func (o *otlpReceiver) named(name string) []*tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*tracepb.Span
	for _, sp := range o.spans {
		if sp.Name == name {
			out = append(out, sp)
		}
	}
	return out
}

func (o *otlpReceiver) names() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, sp := range o.spans {
		out = append(out, sp.Name)
	}
	return out
}

// spanAttrs are a span's string attributes (and the others as text).
func spanAttrs(sp *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, kv := range sp.Attributes {
		if s := kv.Value.GetStringValue(); s != "" {
			m[kv.Key] = s
			continue
		}
		m[kv.Key] = kv.Value.String()
	}
	return m
}

// TestJourneyTraces: an MCP client that names its span in params._meta
// calls an HTTP tool; the server's tools/call span is that span's child
// and carries the MCP attributes, the tool's execute_tool span is the
// tools/call span's child with the GenAI attributes, and the service the
// tool called got a traceparent naming the execute_tool span. A failing
// call's span says error.type.
func TestJourneyTraces(t *testing.T) {
	otlp := newOTLPReceiver(t)
	var upMu sync.Mutex
	var upstreamTrace []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upMu.Lock()
		upstreamTrace = append(upstreamTrace, r.Header.Get("Traceparent"))
		upMu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"pong":true}`)
	}))
	defer upstream.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(upstream.URL, "http://"))

	u := newUser(t)
	u.write("wield.yaml", fmt.Sprintf("http_allow: [\"127.0.0.1:%s\"]\n", port))
	u.write("tools/ping.yaml", `name: ping
description: Ping the upstream service
parameters: []
entry:
  type: http
  url: "`+upstream.URL+`/ping"
  # A traceparent of the file's own is replaced by the call's.
  headers: {traceparent: "00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01"}
annotations: {read_only: true, open_world: true}
`)
	u.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.URL)
	s := u.serve("--config", "wield.yaml", "--tools", "tools")

	c := &http.Client{Timeout: commandLimit}
	code, session, msg := mcpPost(t, c, s.url+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"traced","version":"1"}}}`)
	if code != 200 || session == "" {
		t.Fatalf("initialize: %d %v", code, msg)
	}
	mcpPost(t, c, s.url+"/mcp", session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	code, _, msg = mcpPost(t, c, s.url+"/mcp", session, `{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"ping","arguments":{},"_meta":{"traceparent":"00-`+clientTrace+`-`+clientSpan+`-01","tracestate":"rojo=00f067aa0ba902b7"}}}`)
	if code != 200 || msg["result"] == nil || strings.Contains(fmt.Sprint(msg), "isError:true") {
		t.Fatalf("tools/call ping: %d %v\n%s", code, msg, s.stderr)
	}
	// A failing call, over REST.
	code, res, err := lcCall(s.url, "calculator", `{"expression":"1/"}`)
	if err != nil || code != 200 || res.OK {
		t.Fatalf("failing calculator call: %d %+v %v", code, res, err)
	}
	start := time.Now()
	if code, took := s.stop(syscall.SIGTERM, 15*time.Second); code != 0 {
		t.Errorf("SIGTERM: exit %d after %v", code, took)
	}
	t.Logf("stopped (spans flushed) in %v", time.Since(start).Round(time.Millisecond))

	server := otlp.named("tools/call ping")
	tool := otlp.named("execute_tool ping")
	if len(server) != 1 || len(tool) != 1 {
		t.Fatalf("spans %q: want one tools/call ping and one execute_tool ping", otlp.names())
	}
	srv, ex := server[0], tool[0]
	if got := hex.EncodeToString(srv.TraceId); got != clientTrace {
		t.Errorf("tools/call span's trace %s, want the client's %s", got, clientTrace)
	}
	if got := hex.EncodeToString(srv.ParentSpanId); got != clientSpan {
		t.Errorf("tools/call span's parent %s, want the client's span %s from params._meta", got, clientSpan)
	}
	if srv.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("tools/call span kind %v, want server", srv.Kind)
	}
	if len(srv.Links) != 1 {
		t.Errorf("tools/call span has %d links, want one to the HTTP request's span", len(srv.Links))
	}
	want := map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "ping", "gen_ai.operation.name": "execute_tool",
		"mcp.session.id": session, "mcp.protocol.version": "2025-06-18", "network.transport": "tcp",
		"jsonrpc.request.id": "call-7",
	}
	got := spanAttrs(srv)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("tools/call span %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if _, ok := got["error.type"]; ok {
		t.Errorf("a successful tools/call span has error.type: %v", got)
	}

	if string(ex.TraceId) != string(srv.TraceId) || string(ex.ParentSpanId) != string(srv.SpanId) {
		t.Errorf("execute_tool span is not the tools/call span's child")
	}
	exAttrs := spanAttrs(ex)
	for k, v := range map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ping", "gen_ai.tool.type": "extension",
	} {
		if exAttrs[k] != v {
			t.Errorf("execute_tool span %s = %q, want %q (all: %v)", k, exAttrs[k], v, exAttrs)
		}
	}
	if len(exAttrs["gen_ai.tool.call.id"]) != 27 {
		t.Errorf("execute_tool span's gen_ai.tool.call.id %q is not a call ID", exAttrs["gen_ai.tool.call.id"])
	}

	upMu.Lock()
	defer upMu.Unlock()
	wantParent := "00-" + clientTrace + "-" + hex.EncodeToString(ex.SpanId) + "-01"
	if len(upstreamTrace) != 1 || upstreamTrace[0] != wantParent {
		t.Errorf("the upstream service got traceparent %q, want %q (the execute_tool span's)", upstreamTrace, wantParent)
	}

	failed := otlp.named("execute_tool calculator")
	if len(failed) != 1 {
		t.Fatalf("spans %q: want one execute_tool calculator", otlp.names())
	}
	fa := spanAttrs(failed[0])
	if fa["error.type"] != res.ErrorType || fa["gen_ai.tool.type"] != "function" || failed[0].Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("failed call's span: attributes %v status %v; want error.type %q, type function, status error", fa, failed[0].Status, res.ErrorType)
	}
}
