package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// newMetricsServer serves echo with its calls counted in the metrics, as
// wield serve wires them.
func newMetricsServer(t *testing.T) http.Handler {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"), &sqlite.Options{Async: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	m := NewMetrics()
	observed := m.Observe(store, nil)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(builtin.Echo())
	eng := engine.New(reg, &engine.Options{Store: observed})
	t.Cleanup(func() { eng.Close(context.Background()) })
	s, err := New(Options{Engine: eng, Store: observed, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Handler()
}

// series returns the metric lines of a /metrics page (one per series).
func series(t *testing.T, h http.Handler) []string {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", w.Code)
	}
	var out []string
	for line := range strings.SplitSeq(w.Body.String(), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") && strings.HasPrefix(line, "wield_") {
			out = append(out, line)
		}
	}
	return out
}

func call(t *testing.T, h http.Handler, tool, body string) int {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/tools/"+tool+"/call", strings.NewReader(body)))
	return w.Code
}

// TestMetricsBoundedLabels: 10,000 calls of 10,000 tool names the server
// does not have add the series of one tool label, _unknown, not 28 each.
func TestMetricsBoundedLabels(t *testing.T) {
	h := newMetricsServer(t)
	call(t, h, "echo", `{"arguments":{"message":"hi"}}`)
	call(t, h, "nope", `{}`) // the unknown label's series exist from here
	series(t, h)             // the series of GET /metrics itself exist from here
	// The events of those two calls reach the counter asynchronously
	// (the bus's subscriber): wait for their series before counting.
	before := series(t, h)
	for deadline := time.Now().Add(10 * time.Second); !hasAll(before, `wield_events_total{type="execution_started"}`, `wield_events_total{type="execution_completed"}`, `wield_events_total{type="execution_failed"}`); {
		if time.Now().After(deadline) {
			t.Fatalf("the first calls' events never reached /metrics:\n%s", grep(strings.Join(before, "\n"), "wield_events_total"))
		}
		time.Sleep(10 * time.Millisecond)
		before = series(t, h)
	}
	for i := range 10_000 {
		if code := call(t, h, fmt.Sprintf("no_such_tool_%d", i), `{}`); code != http.StatusOK {
			t.Fatalf("call %d: %d", i, code)
		}
	}
	after := series(t, h)
	if len(after) != len(before) {
		t.Errorf("10,000 unknown tool names grew /metrics from %d to %d series:\n%s", len(before), len(after), newSeries(before, after))
	}
	page := strings.Join(after, "\n")
	if !strings.Contains(page, `wield_calls_total{outcome="tool_not_found",tool="_unknown"} 10001`) {
		t.Errorf("unknown tools not counted under _unknown:\n%s", grep(page, "wield_calls_total"))
	}
	if !strings.Contains(page, `wield_calls_total{outcome="ok",tool="echo"} 1`) {
		t.Errorf("a registered tool lost its label:\n%s", grep(page, "wield_calls_total"))
	}
	if strings.Contains(page, "no_such_tool") {
		t.Error("an unknown tool's name is a label value")
	}
}

// TestMetricsLabelValues: values from outside the known sets go under
// _other: error types and event types from elsewhere (a remote server, a
// relay), impossible status codes, tools past MaxToolLabels.
func TestMetricsLabelValues(t *testing.T) {
	m := NewMetrics()
	m.observe(&wield.Result{Tool: "t", ErrorType: "made_up"})
	if got := codeLabel(1000); got != OtherLabel {
		t.Errorf("codeLabel(1000) = %q", got)
	}
	if got := codeLabel(404); got != "404" {
		t.Errorf("codeLabel(404) = %q", got)
	}
	for i := range MaxToolLabels + 10 {
		m.toolLabel(&wield.Result{Tool: fmt.Sprint("t", i), OK: true})
	}
	if got := m.toolLabel(&wield.Result{Tool: "one_more", OK: true}); got != OtherLabel {
		t.Errorf("tool past the bound labelled %q", got)
	}
	if got := m.toolLabel(&wield.Result{Tool: "ghost", ErrorType: wield.ErrToolNotFound}); got != UnknownTool {
		t.Errorf("tool_not_found without a registry labelled %q", got)
	}
	w := httptest.NewRecorder()
	promPage(m, w)
	if !strings.Contains(w.Body.String(), `wield_calls_total{outcome="_other",tool="t"} 1`) {
		t.Errorf("made-up error type:\n%s", grep(w.Body.String(), "wield_calls_total{outcome=\"_"))
	}
}

// TestMetricsNoZeroSeries: a labelled counter's series appears when it is
// first counted, as Prometheus clients do it: a tool whose calls all failed
// has no wield_calls_total{outcome="ok"} at 0 (which a rate or an alert on
// "ok" would read as a tool that ran and never succeeded).
func TestMetricsNoZeroSeries(t *testing.T) {
	h := newMetricsServer(t)
	call(t, h, "echo", `{"arguments":{}}`) // no message: a validation error
	page := strings.Join(series(t, h), "\n")
	if !strings.Contains(page, `wield_calls_total{outcome="validation_error",tool="echo"} 1`) {
		t.Fatalf("the failed call is not counted:\n%s", grep(page, "wield_calls_total"))
	}
	for _, line := range series(t, h) {
		name, _, _ := strings.Cut(line, "{")
		if strings.HasSuffix(line, " 0") && strings.HasSuffix(name, "_total") && strings.Contains(line, "{") {
			t.Errorf("a labelled counter at 0, never counted: %s", line)
		}
	}
	call(t, h, "echo", `{"arguments":{"message":"hi"}}`)
	if page := strings.Join(series(t, h), "\n"); !strings.Contains(page, `wield_calls_total{outcome="ok",tool="echo"} 1`) {
		t.Errorf("the call that succeeded is not counted:\n%s", grep(page, "wield_calls_total"))
	}
}

// TestCallbackPanicsExported: /metrics shows the panics of callbacks.
func TestCallbackPanicsExported(t *testing.T) {
	wield.Protect(nil, "metrics_test", func() { panic("counted") })
	w := httptest.NewRecorder()
	promPage(NewMetrics(), w)
	if !strings.Contains(w.Body.String(), `wield_callback_panics_total{kind="metrics_test"} 1`) {
		t.Errorf("panics not exported:\n%s", grep(w.Body.String(), "wield_callback_panics"))
	}
}

func promPage(m *Metrics, w *httptest.ResponseRecorder) {
	s := &Server{metrics: m}
	_ = s.serveMetrics(w, httptest.NewRequest("GET", "/metrics", nil))
}

func grep(page, prefix string) string {
	var out []string
	for line := range strings.SplitSeq(page, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// newSeries lists the series of after that before lacks.
func newSeries(before, after []string) string {
	had := map[string]bool{}
	for _, l := range before {
		name, _, _ := strings.Cut(l, "} ")
		had[name] = true
	}
	var out []string
	for _, l := range after {
		if name, _, _ := strings.Cut(l, "} "); !had[name] {
			out = append(out, name)
		}
	}
	return strings.Join(out, "\n")
}

// hasAll reports whether page holds a series of each name (labels
// included, value excluded).
func hasAll(page []string, names ...string) bool {
	for _, name := range names {
		found := false
		for _, line := range page {
			if strings.HasPrefix(line, name+" ") || line == name {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestRouteSeries counts requests through a route's kept series and by
// their labels alike: the same series, the same counts, and none before
// the first request.
func TestRouteSeries(t *testing.T) {
	page := func(m *Metrics) string {
		w := httptest.NewRecorder()
		promPage(m, w)
		return grep(w.Body.String(), "wield_http_request")
	}
	count := func(kept bool) string {
		m := NewMetrics()
		var rs, events *routeSeries // each route its own, as wrap keeps them
		if kept {
			rs, events = &routeSeries{}, &routeSeries{}
		}
		if got := grep(page(m), `wield_http_requests_total{code="200",route="POST /v1/tools/{name}/call"}`); got != "" {
			t.Fatalf("a series before any request: %s", got)
		}
		for _, status := range []int{0, http.StatusOK, http.StatusNotFound, http.StatusOK} {
			m.requestOf(rs, "POST /v1/tools/{name}/call", status, 3*time.Millisecond)
		}
		m.requestOf(events, "GET /v1/events", 0, time.Second)
		return page(m)
	}
	want := count(false)
	for _, line := range []string{`wield_http_requests_total{code="200",route="POST /v1/tools/{name}/call"} 3`,
		`wield_http_requests_total{code="404",route="POST /v1/tools/{name}/call"} 1`,
		`wield_http_request_duration_seconds_count{route="POST /v1/tools/{name}/call"} 4`} {
		if !strings.Contains(want, line) {
			t.Fatalf("no %s in\n%s", line, want)
		}
	}
	if strings.Contains(want, `wield_http_request_duration_seconds_count{route="GET /v1/events"}`) {
		t.Errorf("the event stream's latency counted:\n%s", want)
	}
	if got := count(true); got != want {
		t.Errorf("through the route's series:\n%s\nby labels:\n%s", got, want)
	}
}

// BenchmarkRequestMetrics counts a request answered 200 by its labels and
// through its route's kept series.
func BenchmarkRequestMetrics(b *testing.B) {
	m := NewMetrics()
	for _, bc := range []struct {
		name string
		rs   *routeSeries
	}{{"labels", nil}, {"kept", &routeSeries{}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.requestOf(bc.rs, "POST /v1/tools/{name}/call", http.StatusOK, time.Millisecond)
			}
		})
	}
}

// TestObserveLogClipsOnCharacter logs a call whose arguments are over the
// 512 bytes a log line carries, with a "€" across the 512th byte: the line
// has them up to the last whole character, with "…". The cut used to fall
// inside the "€", and the line carried invalid UTF-8 (U+FFFD in JSON, \xe2
// in text).
func TestObserveLogClipsOnCharacter(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	var logged bytes.Buffer
	store := NewMetrics().Observe(db, slog.New(slog.NewJSONHandler(&logged, nil)))
	// `{"m":"x`, 7 bytes, then "€"s of 3 bytes: the 169th is bytes 511 to 513.
	args := `{"m":"x` + strings.Repeat("€", 200) + `"}`
	rec := &wield.Record{Call: &wield.Call{ID: "c1", Tool: "echo", Arguments: json.RawMessage(args)},
		Result: &wield.Result{CallID: "c1", Tool: "echo", OK: true}}
	if err := store.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}
	var line struct{ Args string }
	if err := json.Unmarshal(logged.Bytes(), &line); err != nil {
		t.Fatalf("log line %q: %v", logged.String(), err)
	}
	if want := `{"m":"x` + strings.Repeat("€", 168) + "…"; line.Args != want {
		t.Errorf("logged args %q, want %q", line.Args, want)
	}
}
