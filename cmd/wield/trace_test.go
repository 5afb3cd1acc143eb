package main

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
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
