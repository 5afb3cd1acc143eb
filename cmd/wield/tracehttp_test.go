package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// spanView is what a backend sees of a server span, but its IDs and times.
type spanView struct {
	Name, Kind, Status, StatusMsg string
	Parent, Trace                 string
	Attrs                         []string
}

func spanViewOf(s sdktrace.ReadOnlySpan) spanView {
	v := spanView{Name: s.Name(), Kind: s.SpanKind().String(), Status: s.Status().Code.String(), StatusMsg: s.Status().Description}
	if s.Parent().IsValid() {
		v.Parent, v.Trace = s.Parent().SpanID().String(), s.SpanContext().TraceID().String()
	}
	for _, kv := range s.Attributes() {
		v.Attrs = append(v.Attrs, string(kv.Key)+"="+kv.Value.Emit()+" ("+kv.Value.Type().String()+")")
	}
	sort.Strings(v.Attrs)
	return v
}

// TestHTTPSpansAsOtelhttp: the server spans of wield's own handler are
// otelhttp's (the handler it replaces, still here as a test dependency):
// same name, kind, status, parent and attributes, request by request.
func TestHTTPSpansAsOtelhttp(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/tools", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"tools":[]}`) })
	mux.HandleFunc("POST /v1/tools/{name}/call", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write(b)
	})
	mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) })
	mux.HandleFunc("GET /silent", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusContinue)
		w.(http.Flusher).Flush()
		io.WriteString(w, "data: 1\n\n")
		http.NewResponseController(w).Flush()
	})
	mux.HandleFunc("GET /teapot", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(999) })

	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	type req struct {
		method, target, body string
		header               map[string]string
		host, remote, proto  string
	}
	reqs := []req{
		{method: "GET", target: "/v1/tools", header: map[string]string{"User-Agent": "curl/8"}},
		{method: "POST", target: "/v1/tools/echo/call", body: `{"arguments":{"message":"hi"}}`},
		{method: "GET", target: "/nowhere?x=1"},
		{method: "GET", target: "/boom", header: map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
		{method: "GET", target: "/silent", header: map[string]string{"X-Forwarded-For": "203.0.113.9, 10.0.0.1"}},
		{method: "GET", target: "/stream", proto: "HTTP/2.0"},
		{method: "GET", target: "/teapot", host: "[::1]:443"},
		{method: "get", target: "/v1/tools", host: "example.com"},
		{method: "PURGE", target: "/v1/tools", host: "example.com:80", remote: "[2001:db8::1]:5000"},
		{method: "POST", target: "/v1/tools/echo/call", remote: "pipe"},
	}
	run := func(h func(*sdktrace.TracerProvider) http.Handler) []spanView {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		handler := h(tp)
		for _, q := range reqs {
			var body io.Reader
			if q.body != "" {
				body = strings.NewReader(q.body)
			}
			r := httptest.NewRequest(q.method, "http://127.0.0.1:7420"+q.target, body)
			for k, v := range q.header {
				r.Header.Set(k, v)
			}
			if q.host != "" {
				r.Host = q.host
			}
			r.RemoteAddr = "127.0.0.1:40000"
			if q.remote != "" {
				r.RemoteAddr = q.remote
			}
			if q.proto != "" {
				r.Proto = q.proto
			}
			handler.ServeHTTP(httptest.NewRecorder(), r)
		}
		var got []spanView
		for _, s := range rec.Ended() {
			got = append(got, spanViewOf(s))
		}
		return got
	}
	want := run(func(tp *sdktrace.TracerProvider) http.Handler {
		return otelhttp.NewHandler(mux, "wield", otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(prop),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return httpSpanName(r) }))
	})
	got := run(func(tp *sdktrace.TracerProvider) http.Handler {
		return &httpSpans{next: mux, tracer: tp.Tracer("t"), prop: prop, name: httpSpanName}
	})
	if len(want) != len(reqs) {
		t.Fatalf("otelhttp made %d spans for %d requests", len(want), len(reqs))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans differ from otelhttp's (-want +got):\n%s", diff)
	}
	// The cases mean something: a parent, a route's name, an error.
	if want[3].Parent != "00f067aa0ba902b7" || want[0].Name != "GET /v1/tools" || want[3].Status != "Error" {
		t.Errorf("cases do not test what they should: %+v", want)
	}
}
