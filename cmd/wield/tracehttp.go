package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// httpSpans gives every request a server span with the attributes, name
// and status otelhttp's handler (v0.72) gives it, without linking otelhttp:
// to keep every interface of the ResponseWriter it wraps, otelhttp links
// httpsnoop, whose generated wrappers for each combination of them were
// 0.29 MB of wield's text (0.5 MB of the binary with their tables), for a
// server that needs Flush and Unwrap. otelhttp's HTTP metrics went to
// OpenTelemetry's global meter provider, which wield never sets: they were
// never recorded. TestHTTPSpansAsOtelhttp holds the spans to otelhttp's.
type httpSpans struct {
	next   http.Handler
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	// name names a request's span; it is asked again once the handler has
	// run, when the mux has set the request's pattern.
	name func(*http.Request) string
}

func (h *httpSpans) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := h.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := h.tracer.Start(ctx, h.name(r), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(requestAttrs(r)...))
	defer span.End()

	body := &countedBody{ReadCloser: r.Body}
	if r.Body != nil && r.Body != http.NoBody {
		prev := r.Body
		r.Body = body
		// net/http checks the type of the body it gave once the handler
		// returns.
		defer func() { r.Body = prev }()
	}
	cw := &countedWriter{ResponseWriter: w, status: http.StatusOK}
	rc := r.WithContext(ctx)
	defer func() {
		// net/http removes the temporary files of a multipart form it
		// finds on its own request.
		if rc.MultipartForm != nil {
			r.MultipartForm = rc.MultipartForm
		}
	}()
	h.next.ServeHTTP(cw, rc)

	if rc.Pattern != "" {
		span.SetName(h.name(rc))
	}
	status, written := cw.result()
	span.SetStatus(spanStatus(status))
	var attrs []attribute.KeyValue
	if n := body.count(); n > 0 {
		attrs = append(attrs, semconv.HTTPRequestBodySize(int(n)))
	}
	if written > 0 {
		attrs = append(attrs, semconv.HTTPResponseBodySize(int(written)))
	}
	if status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
	}
	span.SetAttributes(attrs...)
}

// spanStatus is a server span's status for an HTTP status: an error from
// 500 on (and for a status that is none), unset below (a 4xx is the
// client's error, not the server's).
func spanStatus(code int) (codes.Code, string) {
	if code < 100 || code >= 600 {
		return codes.Error, fmt.Sprintf("Invalid HTTP status code %d", code)
	}
	if code >= 500 {
		return codes.Error, ""
	}
	return codes.Unset, ""
}

// requestAttrs are a server request's attributes under OpenTelemetry's
// HTTP conventions (semconv 1.43), in otelhttp's order.
func requestAttrs(r *http.Request) []attribute.KeyValue {
	host, port := splitHostPort(r.Host)
	tls := r.TLS != nil
	scheme := "http"
	if tls {
		scheme = "https"
	}
	method, original := methodAttrs(r.Method)
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, semconv.ServerAddress(host), method, semconv.URLScheme(scheme))
	if port > 0 && (tls && port != 443 || !tls && port != 80) {
		attrs = append(attrs, semconv.ServerPort(port))
	}
	if original.Valid() {
		attrs = append(attrs, original)
	}
	peer, peerPort := splitHostPort(r.RemoteAddr)
	if peer != "" {
		attrs = append(attrs, semconv.NetworkPeerAddress(peer))
		if peerPort > 0 {
			attrs = append(attrs, semconv.NetworkPeerPort(peerPort))
		}
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	client, _, _ := strings.Cut(r.Header.Get("X-Forwarded-For"), ",")
	if client == "" {
		client = peer
	}
	if client != "" {
		attrs = append(attrs, semconv.ClientAddress(client))
	}
	if r.URL != nil && r.URL.Path != "" {
		attrs = append(attrs, semconv.URLPath(r.URL.Path))
	}
	name, version, _ := strings.Cut(r.Proto, "/")
	if name = strings.ToLower(name); name != "" && name != "http" {
		attrs = append(attrs, semconv.NetworkProtocolName(name))
	}
	if version != "" {
		attrs = append(attrs, semconv.NetworkProtocolVersion(version))
	}
	if i := strings.IndexByte(r.Pattern, '/'); i >= 0 {
		attrs = append(attrs, semconv.HTTPRoute(r.Pattern[i:]))
	}
	return attrs
}

// methodAttrs is http.request.method (a known method, else _OTHER) and,
// when the method as sent is not that, http.request.method_original.
func methodAttrs(m string) (method, original attribute.KeyValue) {
	known := func(m string) bool {
		switch m {
		case http.MethodConnect, http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodOptions,
			http.MethodPatch, http.MethodPost, http.MethodPut, http.MethodTrace:
			return true
		}
		return false
	}
	switch {
	case m == "":
		return semconv.HTTPRequestMethodOther, attribute.KeyValue{}
	case known(m):
		return semconv.HTTPRequestMethodKey.String(m), attribute.KeyValue{}
	case known(strings.ToUpper(m)):
		return semconv.HTTPRequestMethodKey.String(strings.ToUpper(m)), semconv.HTTPRequestMethodOriginal(m)
	}
	return semconv.HTTPRequestMethodOther, semconv.HTTPRequestMethodOriginal(m)
}

// splitHostPort splits an address into its host and port, -1 when it has
// none (or not a number of 16 bits).
func splitHostPort(hostport string) (host string, port int) {
	port = -1
	if strings.HasPrefix(hostport, "[") {
		end := strings.LastIndexByte(hostport, ']')
		if end < 0 {
			return "", port
		}
		if strings.LastIndexByte(hostport[end:], ':') < 0 {
			return hostport[1:end], port
		}
	} else if !strings.Contains(hostport, ":") {
		return hostport, port
	}
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return host, port
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return host, port
	}
	return host, int(n)
}

// countedBody counts the bytes of a request's body the handler reads.
type countedBody struct {
	io.ReadCloser
	mu sync.Mutex
	n  int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	b.n += int64(n)
	b.mu.Unlock()
	return n, err
}

func (b *countedBody) count() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// countedWriter notes a response's status and counts its bytes. It flushes
// (event streams do), and Unwrap gives http.ResponseController the
// writer underneath for the rest.
type countedWriter struct {
	http.ResponseWriter
	mu          sync.Mutex
	status      int
	wroteHeader bool
	written     int64
}

func (w *countedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.wroteHeader {
		w.writeHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

func (w *countedWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeader(code)
}

// writeHeader notes the first final status (informational ones, but 101,
// may come before it).
func (w *countedWriter) writeHeader(code int) {
	if !w.wroteHeader && (code < 100 || code > 199 || code == http.StatusSwitchingProtocols) {
		w.wroteHeader = true
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countedWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.wroteHeader {
		w.writeHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection over, as the writer underneath does.
func (w *countedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *countedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *countedWriter) result() (status int, written int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status, w.written
}

// newHTTPSpans wraps h so that each request gets a span from the global
// tracer provider, in the trace its headers name (the global propagator).
func newHTTPSpans(h http.Handler, name func(*http.Request) string) http.Handler {
	return &httpSpans{next: h, tracer: otel.GetTracerProvider().Tracer("github.com/wieldhq/wield/cmd/wield"),
		prop: otel.GetTextMapPropagator(), name: name}
}
