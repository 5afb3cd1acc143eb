package promtext

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parse reads a page as Prometheus's own parser of the text format does.
func parse(t *testing.T, page []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("the page does not parse: %v\n%s", err, page)
	}
	return fams
}

func page(t *testing.T, r *Registry) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r.Gather(nil)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestEscaping: label values with a double quote, a backslash and a
// newline, and help text with a backslash and a newline, are escaped as
// the text format says and read back as they were.
func TestEscaping(t *testing.T) {
	var r Registry
	c := NewCounterVec("tool_calls_total", "Calls by tool.\nA second line, a \\ and a \".", "tool")
	r.MustRegister(c.Collect, c.Name())
	nasty := "a \"quoted\" \\ tool\nname"
	c.With(nasty).Inc()
	c.With("plain").Inc()
	c.With("plain").Inc()
	got := page(t, &r)
	want := `# HELP tool_calls_total Calls by tool.\nA second line, a \\ and a ".
# TYPE tool_calls_total counter
tool_calls_total{tool="a \"quoted\" \\ tool\nname"} 1
tool_calls_total{tool="plain"} 2
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("page (-want +got):\n%s", diff)
	}
	f := parse(t, got)["tool_calls_total"]
	if f.GetHelp() != "Calls by tool.\nA second line, a \\ and a \"." {
		t.Errorf("help read back as %q", f.GetHelp())
	}
	if v := f.Metric[0].Label[0].GetValue(); v != nasty {
		t.Errorf("label value read back as %q, want %q", v, nasty)
	}
}

// TestHistogram: an observation counts in the first bucket whose bound is
// at least it (a bound is inclusive), the buckets are cumulative, +Inf
// holds the count, and the page parses with the same figures.
func TestHistogram(t *testing.T) {
	var r Registry
	h := NewHistogramVec("d_seconds", "Durations.", []float64{.1, 1, 10}, "route", "method")
	r.MustRegister(h.Collect, h.Name())
	for _, v := range []float64{0, .1, .5, 1, 1.5, 100} {
		h.With("/a", "GET").Observe(v)
	}
	h.With("/b", "GET").Observe(2)
	got := page(t, &r)
	want := `# HELP d_seconds Durations.
# TYPE d_seconds histogram
d_seconds_bucket{method="GET",route="/a",le="0.1"} 2
d_seconds_bucket{method="GET",route="/a",le="1"} 4
d_seconds_bucket{method="GET",route="/a",le="10"} 5
d_seconds_bucket{method="GET",route="/a",le="+Inf"} 6
d_seconds_sum{method="GET",route="/a"} 103.1
d_seconds_count{method="GET",route="/a"} 6
d_seconds_bucket{method="GET",route="/b",le="0.1"} 0
d_seconds_bucket{method="GET",route="/b",le="1"} 0
d_seconds_bucket{method="GET",route="/b",le="10"} 1
d_seconds_bucket{method="GET",route="/b",le="+Inf"} 1
d_seconds_sum{method="GET",route="/b"} 2
d_seconds_count{method="GET",route="/b"} 1
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("page (-want +got):\n%s", diff)
	}
	m := parse(t, got)["d_seconds"].Metric[0].Histogram
	if m.GetSampleCount() != 6 || m.GetSampleSum() != 103.1 || len(m.Bucket) != 4 || m.Bucket[1].GetCumulativeCount() != 4 {
		t.Errorf("parsed as %v", m)
	}
}

// TestFloats: values are written as client_golang wrote them.
func TestFloats(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1, "-1"}, {10001, "10001"}, {2.231336e+06, "2.231336e+06"},
		{1.0966e-05, "1.0966e-05"}, {math.MaxInt64, "9.223372036854776e+18"}, {math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"}, {math.NaN(), "NaN"}} {
		if got := string(appendFloat(nil, c.v)); got != c.want {
			t.Errorf("appendFloat(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

// TestRegister: a name is taken once, and must be a metric name.
func TestRegister(t *testing.T) {
	var r Registry
	f := Func("up_things", "Things up.", GaugeType, func() float64 { return 3 })
	if err := r.Register(f, "up_things"); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(f, "up_things"); err == nil || !strings.Contains(err.Error(), `"up_things"`) {
		t.Errorf("a second up_things: %v", err)
	}
	for _, bad := range []string{"", "9lives", "a-b", "a b", "é"} {
		if err := r.Register(f, bad); err == nil || !strings.Contains(err.Error(), "not a valid name") {
			t.Errorf("name %q: %v", bad, err)
		}
	}
	if got := string(page(t, &r)); got != "# HELP up_things Things up.\n# TYPE up_things gauge\nup_things 3\n" {
		t.Errorf("page:\n%s", got)
	}
}

// TestRuntimeAndProcess: the Go runtime's and the process's families are
// there, with their types, and parse.
func TestRuntimeAndProcess(t *testing.T) {
	var r Registry
	r.MustRegister(GoRuntime(), "go")
	r.MustRegister(Process(), "process")
	fams := parse(t, page(t, &r))
	want := map[string]dto.MetricType{
		"go_gc_duration_seconds": dto.MetricType_SUMMARY, "go_goroutines": dto.MetricType_GAUGE, "go_threads": dto.MetricType_GAUGE,
		"go_info": dto.MetricType_GAUGE, "go_memstats_alloc_bytes_total": dto.MetricType_COUNTER, "go_memstats_heap_inuse_bytes": dto.MetricType_GAUGE,
		"go_gc_gogc_percent": dto.MetricType_GAUGE, "go_sched_gomaxprocs_threads": dto.MetricType_GAUGE,
	}
	if runtime.GOOS == "linux" {
		for _, n := range []string{"process_open_fds", "process_max_fds", "process_virtual_memory_bytes", "process_virtual_memory_max_bytes",
			"process_resident_memory_bytes", "process_start_time_seconds"} {
			want[n] = dto.MetricType_GAUGE
		}
		for _, n := range []string{"process_cpu_seconds_total", "process_network_receive_bytes_total", "process_network_transmit_bytes_total"} {
			want[n] = dto.MetricType_COUNTER
		}
	}
	for n, typ := range want {
		if f := fams[n]; f == nil || f.GetType() != typ {
			t.Errorf("%s: %v, want a %v", n, f, typ)
		}
	}
	if v := fams["go_info"].Metric[0].Label[0].GetValue(); v != runtime.Version() {
		t.Errorf("go_info's version is %q", v)
	}
	if runtime.GOOS == "linux" {
		if rss := fams["process_resident_memory_bytes"].Metric[0].Gauge.GetValue(); rss < 1<<20 {
			t.Errorf("resident memory %v bytes", rss)
		}
		if g := fams["go_goroutines"].Metric[0].Gauge.GetValue(); g < 1 {
			t.Errorf("go_goroutines %v", g)
		}
	}
}

// TestConcurrent counts from many goroutines while pages are written: no
// count is lost and a page's histogram count agrees with its buckets (run
// with -race).
func TestConcurrent(t *testing.T) {
	var r Registry
	c := NewCounterVec("c_total", "C.", "k")
	h := NewHistogramVec("h_seconds", "H.", []float64{1, 2}, "k")
	r.MustRegister(c.Collect, c.Name())
	r.MustRegister(h.Collect, h.Name())
	const goroutines, each = 8, 2000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				k := fmt.Sprint("k", i%5)
				c.With(k).Inc()
				h.With(k).Observe(float64(g % 3))
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			for _, f := range r.Gather(nil) {
				for _, s := range f.Series {
					if f.Type == HistogramType && s.Buckets[len(s.Buckets)-1].Count > s.Count {
						t.Errorf("%s: buckets %v above the count %d", f.Name, s.Buckets, s.Count)
					}
				}
			}
		}
	})
	wg.Wait()
	fams := parse(t, page(t, &r))
	var total uint64
	for _, m := range fams["h_seconds"].Metric {
		total += m.Histogram.GetSampleCount()
	}
	var counted float64
	for _, m := range fams["c_total"].Metric {
		counted += m.Counter.GetValue()
	}
	if total != goroutines*each || counted != goroutines*each {
		t.Errorf("counted %v and observed %d, want %d", counted, total, goroutines*each)
	}
	if n := len(fams["c_total"].Metric); n != 5 {
		t.Errorf("%d series, want 5", n)
	}
	if !slices.IsSortedFunc(fams["c_total"].Metric, func(a, b *dto.Metric) int {
		return strings.Compare(a.Label[0].GetValue(), b.Label[0].GetValue())
	}) {
		t.Error("series not sorted")
	}
}
