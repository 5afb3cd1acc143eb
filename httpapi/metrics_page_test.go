package httpapi

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/wieldhq/wield"
)

var update = flag.Bool("update", false, "rewrite testdata/metrics_page.txt from the page served")

// scrape GETs /metrics with the given request headers (name, value...).
func scrape(t *testing.T, h http.Handler, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", "/metrics", nil)
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", w.Code, w.Body)
	}
	return w
}

// pageShape is a page without its values: the HELP and TYPE lines, and
// each series' name and labels (go_info's version as "GO").
func pageShape(page string) string {
	var out []string
	for line := range strings.SplitSeq(page, "\n") {
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			line = line[:strings.LastIndexByte(line, ' ')]
		}
		out = append(out, goVersion.ReplaceAllString(line, `version="GO"`))
	}
	return strings.Join(out, "\n") + "\n"
}

// onThisSystem is a page's shape without the process's families on
// systems other than Linux, where they differ.
func onThisSystem(shape string) string {
	if runtime.GOOS == "linux" {
		return shape
	}
	var out []string
	for line := range strings.SplitSeq(shape, "\n") {
		if !strings.Contains(line, "process_") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

var goVersion = regexp.MustCompile(`version="[^"]*"`)

// TestMetricsPage: after calls (ok, unknown tool, invalid arguments) and a
// scrape, the page has the families, help, types, series and labels that
// prometheus/client_golang wrote (testdata/metrics_page.txt was written by
// the server of f8fcbce, which used it), and Prometheus's parser reads it.
func TestMetricsPage(t *testing.T) {
	h := newMetricsServer(t)
	call(t, h, "echo", `{"arguments":{"message":"hi"}}`)
	call(t, h, "echo", `{"arguments":{}}`)
	call(t, h, "nope", `{}`)
	var page string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		page = scrape(t, h).Body.String()
		if strings.Contains(page, `wield_events_total{type="execution_failed"} 2`) && strings.Contains(page, `wield_events_total{type="execution_completed"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the calls' events never reached /metrics:\n%s", grep(page, "wield_events_total"))
		}
	}
	page = scrape(t, h).Body.String() // with the scrapes counted
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(page))
	if err != nil {
		t.Fatalf("the page does not parse: %v", err)
	}
	if v := fams["wield_calls_total"]; v == nil || len(v.Metric) != 3 { // ok and validation_error of echo, tool_not_found of _unknown
		t.Errorf("wield_calls_total parsed as %v", v)
	}
	got := pageShape(page)
	const golden = "testdata/metrics_page.txt"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(onThisSystem(string(want)), onThisSystem(got)); diff != "" {
		t.Errorf("the page's shape (-want +got):\n%s", diff)
	}
}

// TestMetricsNegotiation: the page is gzipped when the scraper accepts
// gzip, and is the text format (0.0.4) whatever format the Accept header
// asks first, as client_golang's handler answered but for the protobuf
// format (see serveMetrics); name[] parameters keep the families named.
func TestMetricsNegotiation(t *testing.T) {
	h := newMetricsServer(t)
	plain := scrape(t, h)
	const text = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
	if ct := plain.Header().Get("Content-Type"); ct != text {
		t.Errorf("Content-Type %q", ct)
	}
	if v := plain.Header().Values("Vary"); !cmp.Equal(v, []string{"Accept", "Accept-Encoding"}) {
		t.Errorf("Vary %q", v)
	}
	for _, c := range []struct {
		encoding string
		gzipped  bool
	}{{"gzip", true}, {"deflate, gzip;q=0.5", true}, {"*", false}, {"gzip, identity", false}, {"gzip;q=0", false}, {"identity, gzip;q=0.5", false}, {"br", false}, {"", false}} {
		w := scrape(t, h, "Accept-Encoding", c.encoding,
			"Accept", "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.2")
		if got := w.Header().Get("Content-Encoding") == "gzip"; got != c.gzipped {
			t.Errorf("Accept-Encoding %q: gzipped %v, want %v", c.encoding, got, c.gzipped)
			continue
		}
		body := w.Body.Bytes()
		if c.gzipped {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if ct := w.Header().Get("Content-Type"); ct != text || !bytes.Contains(body, []byte("\n# TYPE wield_limiter_limit gauge\n")) {
			t.Errorf("Accept-Encoding %q: %s, %.200s", c.encoding, ct, body)
		}
	}
	pb := scrape(t, h, "Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.6,text/plain;version=0.0.4;q=0.3")
	if expfmt.ResponseFormat(pb.Header()).FormatType() != expfmt.TypeTextPlain {
		t.Errorf("a scraper asking for protobuf first got %s", pb.Header().Get("Content-Type"))
	}
	r := httptest.NewRequest("GET", "/metrics?name[]=wield_limiter_limit&name[]=go_goroutines", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if got := grep(w.Body.String(), "# TYPE"); got != "# TYPE go_goroutines gauge\n# TYPE wield_limiter_limit gauge" {
		t.Errorf("with name[]:\n%s", w.Body)
	}
}

// TestMetricsLabelEscaping: a tool whose name has a double quote, a
// backslash and a newline is a label value escaped as the text format
// says, read back as it was.
func TestMetricsLabelEscaping(t *testing.T) {
	m := NewMetrics()
	name := "odd\"tool\\with\nnewline"
	m.observe(&wield.Result{Tool: name, OK: true, Duration: time.Millisecond})
	w := httptest.NewRecorder()
	promPage(m, w)
	want := `wield_calls_total{outcome="ok",tool="odd\"tool\\with\nnewline"} 1`
	if !strings.Contains(w.Body.String(), want+"\n") {
		t.Errorf("no %s in\n%s", want, grep(w.Body.String(), "wield_calls_total"))
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range fams["wield_call_duration_seconds"].Metric[0].Label {
		if l.GetName() == "tool" && l.GetValue() != name {
			t.Errorf("tool label read back as %q", l.GetValue())
		}
	}
}

// TestMetricsFuncs: metrics of one's own are added by CounterFunc and
// GaugeFunc, read at each scrape; a name taken or not a metric name is
// refused.
func TestMetricsFuncs(t *testing.T) {
	m := NewMetrics()
	n := 0.0
	if err := m.CounterFunc("myapp_jobs_total", "Jobs done.", func() float64 { n++; return n }); err != nil {
		t.Fatal(err)
	}
	if err := m.GaugeFunc("myapp_queue", "Jobs waiting.", func() float64 { return 7 }); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"myapp_queue", "wield_calls_total", "go_goroutines", "process_open_fds", "my-app"} {
		if err := m.GaugeFunc(name, "again", func() float64 { return 0 }); err == nil {
			t.Errorf("GaugeFunc(%q) accepted", name)
		}
	}
	for i := range 2 {
		w := httptest.NewRecorder()
		promPage(m, w)
		want := fmt.Sprintf("# HELP myapp_jobs_total Jobs done.\n# TYPE myapp_jobs_total counter\nmyapp_jobs_total %d\n# HELP myapp_queue Jobs waiting.\n# TYPE myapp_queue gauge\nmyapp_queue 7\n", i+1)
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("scrape %d: no\n%s\nin\n%s", i, want, grep(w.Body.String(), "myapp"))
		}
	}
}

// BenchmarkObserve counts a finished call, as the observed store does
// for every call.
func BenchmarkObserve(b *testing.B) {
	m := NewMetrics()
	res := &wield.Result{Tool: "echo", OK: true, Duration: 300 * time.Microsecond, QueueWait: time.Microsecond}
	b.ReportAllocs()
	for b.Loop() {
		m.observe(res)
	}
}

// TestMetricsConcurrent counts calls and requests from many goroutines
// while the page is scraped: every count arrives and each page parses
// (run with -race).
func TestMetricsConcurrent(t *testing.T) {
	m := NewMetrics()
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rs := &routeSeries{}
			for i := range each {
				m.observe(&wield.Result{Tool: fmt.Sprint("tool_", i%10), OK: g%2 == 0, ErrorType: wield.ErrExecution, Duration: time.Millisecond})
				m.requestOf(rs, "POST /v1/tools/{name}/call", http.StatusOK, time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			w := httptest.NewRecorder()
			promPage(m, w)
			p := expfmt.NewTextParser(model.LegacyValidation)
			if _, err := p.TextToMetricFamilies(w.Body); err != nil {
				t.Errorf("a page during the counting does not parse: %v", err)
			}
		}
	})
	wg.Wait()
	w := httptest.NewRecorder()
	promPage(m, w)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	var calls float64
	for _, s := range fams["wield_calls_total"].Metric {
		calls += s.Counter.GetValue()
	}
	requests := fams["wield_http_requests_total"].Metric[0].Counter.GetValue()
	if calls != goroutines*each || requests != goroutines*each {
		t.Errorf("%v calls and %v requests counted, want %d each", calls, requests, goroutines*each)
	}
}
