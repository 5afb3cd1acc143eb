package otlphttp

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestFromEnv(t *testing.T) {
	files := map[string]string{"ca.pem": "not a certificate"}
	for _, tt := range []struct {
		name string
		env  map[string]string
		want config
	}{
		{"defaults", nil, config{host: "localhost:4318", path: "/v1/traces", timeout: 10 * time.Second}},
		{"endpoint joins the path", map[string]string{"ENDPOINT": "http://collector:4318/otlp/"},
			config{host: "collector:4318", path: "/otlp/v1/traces", insecure: true, timeout: 10 * time.Second}},
		{"traces endpoint as it is", map[string]string{"ENDPOINT": "http://a:1", "TRACES_ENDPOINT": "https://b:2"},
			config{host: "b:2", path: "/", timeout: 10 * time.Second}},
		{"insecure overrides the scheme", map[string]string{"TRACES_ENDPOINT": "https://b:2/t", "INSECURE": "TRUE"},
			config{host: "b:2", path: "/t", insecure: true, timeout: 10 * time.Second}},
		{"headers, compression, protocol, timeout", map[string]string{"HEADERS": "a=1, api-key = x%20y ,bad, =z", "COMPRESSION": "gzip",
			"TRACES_PROTOCOL": "http/json", "TIMEOUT": "2500"},
			config{host: "localhost:4318", path: "/v1/traces", headers: map[string]string{"a": "1", "api-key": "x y"}, gzip: true, json: true, timeout: 2500 * time.Millisecond}},
		{"traces headers replace", map[string]string{"HEADERS": "a=1", "TRACES_HEADERS": "b=2", "TRACES_TIMEOUT": "soon"},
			config{host: "localhost:4318", path: "/v1/traces", headers: map[string]string{"b": "2"}, timeout: 10 * time.Second}},
		{"a certificate that is not one is left out", map[string]string{"CERTIFICATE": "ca.pem", "CLIENT_CERTIFICATE": "missing.pem", "CLIENT_KEY": "k.pem"},
			config{host: "localhost:4318", path: "/v1/traces", timeout: 10 * time.Second}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			get := func(k string) string { return tt.env[strings.TrimPrefix(k, "OTEL_EXPORTER_OTLP_")] }
			read := func(name string) ([]byte, error) {
				if s, ok := files[name]; ok {
					return []byte(s), nil
				}
				return nil, errors.New("no such file")
			}
			got := fromEnv(get, read)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(config{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// spans is a batch of one span, as the SDK hands it to an exporter.
func spans() []sdktrace.ReadOnlySpan {
	return tracetest.SpanStubs{{
		Name: "tool echo",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID([]byte("0123456789abcdef")),
			SpanID: trace.SpanID([]byte("span0001")), TraceFlags: trace.FlagsSampled}),
		Parent:    trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID([]byte("0123456789abcdef")), SpanID: trace.SpanID([]byte("parent01"))}),
		SpanKind:  trace.SpanKindInternal,
		StartTime: time.Unix(0, 1700000000000000000), EndTime: time.Unix(0, 1700000000000001000),
		Attributes: []attribute.KeyValue{attribute.String("wield.tool", "echo"), attribute.Int("wield.attempts", 2), attribute.Bool("wield.ok", false),
			attribute.Float64("ratio", 0.5), attribute.StringSlice("tags", []string{"a"})},
		Events:               []sdktrace.Event{{Name: "retry", Time: time.Unix(0, 1700000000000000500)}},
		Status:               sdktrace.Status{Code: codes.Error, Description: "timeout"},
		Resource:             resource.NewSchemaless(attribute.String("service.name", "wield")),
		InstrumentationScope: instrumentation.Scope{Name: "github.com/wieldhq/wield"},
	}}.Snapshots()
}

// collector answers from a script and keeps the decoded bodies.
type collector struct {
	mu      sync.Mutex
	headers []http.Header
	bodies  [][]byte
	answers []func(w http.ResponseWriter)
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	c.mu.Lock()
	n := len(c.bodies)
	c.headers, c.bodies = append(c.headers, r.Header.Clone()), append(c.bodies, b)
	c.mu.Unlock()
	c.answers[min(n, len(c.answers)-1)](w)
}

func newExporter(t *testing.T, c *collector, env map[string]string) (*Exporter, *[]time.Duration) {
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	env["TRACES_ENDPOINT"] = srv.URL + "/v1/traces"
	for k, v := range env {
		t.Setenv("OTEL_EXPORTER_OTLP_"+k, v)
	}
	cl, err := New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	now := time.Now()
	cl.now = func() time.Time { return now }
	cl.sleepy = func(_ context.Context, d time.Duration) error { waits = append(waits, d); now = now.Add(d); return nil }
	return cl, &waits
}

func ok(w http.ResponseWriter) { w.Header().Set("Content-Type", "application/x-protobuf") }

// TestUploadProtobuf: the request is an ExportTraceServiceRequest as the
// generated code reads it, gzipped when asked, with the headers.
func TestUploadProtobuf(t *testing.T) {
	c := &collector{answers: []func(http.ResponseWriter){ok}}
	cl, _ := newExporter(t, c, map[string]string{"HEADERS": "api-key=k1", "COMPRESSION": "gzip"})
	if err := cl.ExportSpans(context.Background(), spans()); err != nil {
		t.Fatal(err)
	}
	var got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(c.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	if want := (&coltracepb.ExportTraceServiceRequest{ResourceSpans: viaOtlptrace(t, spans())}); !proto.Equal(&got, want) {
		t.Errorf("got %v, want %v", &got, want)
	}
	h := c.headers[0]
	if h.Get("Content-Type") != "application/x-protobuf" || h.Get("Api-Key") != "k1" || h.Get("Content-Encoding") != "gzip" || h.Get("User-Agent") != "OTel OTLP Exporter Go/"+otlptrace.Version() {
		t.Errorf("headers %v", h)
	}
}

// TestUploadJSON: http/json writes OTLP/JSON: hex IDs, 64-bit integers as
// strings, enums as numbers.
func TestUploadJSON(t *testing.T) {
	c := &collector{answers: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	}}}
	cl, _ := newExporter(t, c, map[string]string{"PROTOCOL": "http/json"})
	if err := cl.ExportSpans(context.Background(), spans()); err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(c.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"resourceSpans": []any{map[string]any{
		"resource": map[string]any{"attributes": []any{map[string]any{"key": "service.name", "value": map[string]any{"stringValue": "wield"}}}},
		"scopeSpans": []any{map[string]any{
			"scope": map[string]any{"name": "github.com/wieldhq/wield"},
			"spans": []any{map[string]any{
				"traceId": "30313233343536373839616263646566", "spanId": "7370616e30303031", "parentSpanId": "706172656e743031",
				"flags": 257.0, "name": "tool echo", "kind": 1.0,
				"startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000000001000",
				"attributes": []any{
					map[string]any{"key": "wield.tool", "value": map[string]any{"stringValue": "echo"}},
					map[string]any{"key": "wield.attempts", "value": map[string]any{"intValue": "2"}},
					map[string]any{"key": "wield.ok", "value": map[string]any{"boolValue": false}},
					map[string]any{"key": "ratio", "value": map[string]any{"doubleValue": 0.5}},
					map[string]any{"key": "tags", "value": map[string]any{"arrayValue": map[string]any{"values": []any{map[string]any{"stringValue": "a"}}}}},
				},
				"events": []any{map[string]any{"name": "retry", "timeUnixNano": "1700000000000000500"}},
				"status": map[string]any{"code": 2.0, "message": "timeout"},
			}},
		}},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if c.headers[0].Get("Content-Type") != "application/json" {
		t.Errorf("content type %q", c.headers[0].Get("Content-Type"))
	}
}

// TestUploadFailures: 429, 502, 503 and 504 are retried after the wait
// the collector asks for (or the backoff); others are final and say the
// collector's answer; a partial success is an error.
func TestUploadFailures(t *testing.T) {
	status := func(code int, retryAfter string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			http.Error(w, "busy", code)
		}
	}
	partial := func(w http.ResponseWriter) {
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "too old"}})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	}
	for _, tt := range []struct {
		name     string
		answers  []func(http.ResponseWriter)
		requests int
		err      string
		waits    func([]time.Duration) bool
	}{
		{"retried", []func(http.ResponseWriter){status(503, "12"), status(429, ""), ok}, 3, "",
			func(w []time.Duration) bool {
				return len(w) == 2 && w[0] == 12*time.Second && w[1] >= 3750*time.Millisecond && w[1] <= 11250*time.Millisecond
			}},
		{"final", []func(http.ResponseWriter){status(400, "")}, 1, "400 Bad Request (body: busy)", nil},
		{"gives up after a minute", []func(http.ResponseWriter){status(504, "40")}, 2, "max retry time elapsed", nil},
		{"partial success", []func(http.ResponseWriter){partial}, 1, "OTLP partial success: too old (3 spans rejected)", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &collector{answers: tt.answers}
			cl, waits := newExporter(t, c, map[string]string{})
			err := cl.ExportSpans(context.Background(), spans())
			if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("got %v, want %q", err, tt.err)
			}
			if len(c.bodies) != tt.requests {
				t.Errorf("%d requests, want %d", len(c.bodies), tt.requests)
			}
			if tt.waits != nil && !tt.waits(*waits) {
				t.Errorf("waits %v", *waits)
			}
		})
	}
}

// TestNewAndShutdown: TLS files for an http:// endpoint are refused, and
// an exporter shut down fails its exports at once.
func TestNewAndShutdown(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces")
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", ca)
	if _, err := New(context.Background()); !errors.Is(err, errInsecureWithTLS) {
		t.Errorf("insecure with TLS: %v", err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("done context: %v", err)
	}

	c := &collector{answers: []func(http.ResponseWriter){func(w http.ResponseWriter) { http.Error(w, "busy", 503) }}}
	cl, _ := newExporter(t, c, map[string]string{})
	cl.sleepy = sleep
	if err := cl.Shutdown(context.Background()); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if err := cl.Shutdown(ctx); err != nil {
		t.Errorf("second shutdown: %v", err)
	}
	if err := cl.ExportSpans(context.Background(), spans()); !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "traces export: ") {
		t.Errorf("export after shutdown: %v", err)
	}
	// An empty batch sends nothing.
	cl2, _ := newExporter(t, c, map[string]string{})
	if err := cl2.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{nil}); err != nil || len(c.bodies) != 0 {
		t.Errorf("empty batch: %v, %d requests", err, len(c.bodies))
	}
}
