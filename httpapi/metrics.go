package httpapi

import (
	"compress/gzip"
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/promtext"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/limit"
)

// Metrics are the Prometheus metrics of a server and of the calls its
// engine records: calls by tool and outcome, call latency and queue wait,
// the limiter's gauges, approvals pending, HTTP requests by route, and the
// panics of callbacks.
//
// Every label value a client can sway comes from a bounded set, so that no
// client can grow the server's memory by the names it sends: a tool label
// is a registered tool's name, [UnknownTool] for any other, and
// [OtherLabel] past [MaxToolLabels] names; an outcome is "ok" or one of the
// error types; a route is one of the API's patterns (or "/" for any other
// path); a status code is one from 100 to 599; an event type is one of
// wield's.
//
// The page is written in the Prometheus text format (version 0.0.4,
// gzipped when the scraper accepts it) by wield's own writer, not by
// github.com/prometheus/client_golang, whose dependencies cost the binary
// and the idle server more than the page is worth (see
// internal/promtext); the families, the Go runtime's and the process's
// among them, are those client_golang wrote.
type Metrics struct {
	reg       promtext.Registry
	calls     *promtext.CounterVec
	duration  *promtext.HistogramVec
	queueWait *promtext.HistogramVec
	events    *promtext.CounterVec
	requests  *promtext.CounterVec
	latency   *promtext.HistogramVec

	// known reports the registry's tools once a server watches (see
	// watch); before, only tool_not_found results are known unknown.
	known atomic.Pointer[func(string) bool]
	mu    sync.Mutex
	tools map[string]bool // the tool labels given so far
	// series holds each tool label's series of the call metrics, found
	// once: finding them by their labels locks the vector on every call.
	series sync.Map // tool label → *toolSeries
}

// toolSeries are the call metrics of one tool label. ok is found at the
// tool's first call that succeeds, not before: a series appears in /metrics
// once counted, as Prometheus clients do it, and a tool whose calls all
// failed has no wield_calls_total{outcome="ok"} at 0.
type toolSeries struct {
	ok        atomic.Pointer[promtext.Counter]
	duration  *promtext.Histogram
	queueWait *promtext.Histogram
}

// seriesOf returns the series of tool's call metrics.
func (m *Metrics) seriesOf(tool string) *toolSeries {
	if ts, ok := m.series.Load(tool); ok {
		return ts.(*toolSeries)
	}
	ts := &toolSeries{duration: m.duration.With(tool), queueWait: m.queueWait.With(tool)}
	got, _ := m.series.LoadOrStore(tool, ts)
	return got.(*toolSeries)
}

// Label values that stand for many.
const (
	// UnknownTool is the tool label of every call of a tool the registry
	// does not have: clients choose those names.
	UnknownTool = "_unknown"
	// OtherLabel stands for values past a label's bound, and for values a
	// label does not expect.
	OtherLabel = "_other"
)

// MaxToolLabels bounds the tool names the call metrics carry; the calls of
// tools past it count under [OtherLabel]. Each name costs about 30 series.
const MaxToolLabels = 2000

// errorTypes are the outcomes of a call, besides ok.
var errorTypes = map[wield.ErrorType]bool{
	wield.ErrToolNotFound: true, wield.ErrValidation: true, wield.ErrPermissionDenied: true,
	wield.ErrApprovalDenied: true, wield.ErrRejected: true, wield.ErrTimeout: true,
	wield.ErrCanceled: true, wield.ErrExecution: true, wield.ErrExecutorNotFound: true,
}

// NewMetrics returns metrics in a registry of their own, with the Go
// runtime's and the process's.
func NewMetrics() *Metrics {
	m := &Metrics{
		calls: promtext.NewCounterVec("wield_calls_total", "Finished tool calls by tool and outcome (ok, or the error type).", "tool", "outcome"),
		duration: promtext.NewHistogramVec("wield_call_duration_seconds", "Time from a call's arrival to its result, queueing included.",
			[]float64{.0001, .0005, .001, .005, .01, .05, .1, .5, 1, 5, 10, 30, 60}, "tool"),
		queueWait: promtext.NewHistogramVec("wield_call_queue_wait_seconds", "Time calls waited for capacity in the limiter.",
			[]float64{.0001, .001, .01, .1, .5, 1, 5, 30}, "tool"),
		events:   promtext.NewCounterVec("wield_events_total", "Events seen on the bus, by type (approvals requested and decided among them).", "type"),
		requests: promtext.NewCounterVec("wield_http_requests_total", "HTTP requests by route and status code.", "route", "code"),
		latency: promtext.NewHistogramVec("wield_http_request_duration_seconds", "Time to answer HTTP requests, by route (event streams excluded).",
			promtext.DefBuckets, "route"),
	}
	for _, c := range []*promtext.CounterVec{m.calls, m.events, m.requests} {
		m.reg.MustRegister(c.Collect, c.Name())
	}
	for _, h := range []*promtext.HistogramVec{m.duration, m.queueWait, m.latency} {
		m.reg.MustRegister(h.Collect, h.Name())
	}
	m.reg.MustRegister(collectPanics, panicsName)
	m.reg.MustRegister(promtext.GoRuntime(), goRuntimeNames...)
	m.reg.MustRegister(promtext.Process(), processNames...)
	return m
}

// The families of the Go runtime and of the process, which no metric of
// one's own may take.
var (
	goRuntimeNames = []string{"go_goroutines", "go_threads", "go_gc_duration_seconds", "go_info", "go_memstats_last_gc_time_seconds",
		"go_gc_gogc_percent", "go_gc_gomemlimit_bytes", "go_sched_gomaxprocs_threads", "go_memstats_alloc_bytes",
		"go_memstats_alloc_bytes_total", "go_memstats_sys_bytes", "go_memstats_mallocs_total", "go_memstats_frees_total",
		"go_memstats_heap_alloc_bytes", "go_memstats_heap_sys_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_inuse_bytes",
		"go_memstats_heap_released_bytes", "go_memstats_heap_objects", "go_memstats_stack_inuse_bytes", "go_memstats_stack_sys_bytes",
		"go_memstats_mspan_inuse_bytes", "go_memstats_mspan_sys_bytes", "go_memstats_mcache_inuse_bytes", "go_memstats_mcache_sys_bytes",
		"go_memstats_buck_hash_sys_bytes", "go_memstats_gc_sys_bytes", "go_memstats_other_sys_bytes", "go_memstats_next_gc_bytes"}
	processNames = []string{"process_cpu_seconds_total", "process_open_fds", "process_max_fds", "process_virtual_memory_bytes",
		"process_virtual_memory_max_bytes", "process_resident_memory_bytes", "process_start_time_seconds",
		"process_network_receive_bytes_total", "process_network_transmit_bytes_total"}
)

// toolLabel is the tool label of a result (see [Metrics]).
func (m *Metrics) toolLabel(res *wield.Result) string {
	name := res.Tool
	if known := m.known.Load(); known != nil {
		if !(*known)(name) {
			return UnknownTool
		}
	} else if res.ErrorType == wield.ErrToolNotFound {
		return UnknownTool
	}
	if _, ok := m.series.Load(name); ok {
		return name // given before: a label already (the lock is for new ones)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tools[name] {
		return name
	}
	if len(m.tools) >= MaxToolLabels {
		return OtherLabel
	}
	if m.tools == nil {
		m.tools = map[string]bool{}
	}
	m.tools[name] = true
	return name
}

// codeLabel is the label of an HTTP status.
func codeLabel(status int) string {
	if status < 100 || status > 599 {
		return OtherLabel
	}
	return strconv.Itoa(status)
}

const panicsName = "wield_callback_panics_total"

// collectPanics reports wield.CallbackPanics at scrape time; its kinds are
// the names wield's packages give, not a client's.
func collectPanics(add func(promtext.Family)) {
	f := promtext.Family{Name: panicsName, Type: promtext.CounterType,
		Help: "Panics of callbacks a program gave wield (bus listeners and filters, approvers, agent hooks...), contained and logged, by kind."}
	for kind, n := range wield.CallbackPanics() {
		f.Series = append(f.Series, promtext.Series{Labels: []promtext.Label{{Name: "kind", Value: kind}}, Value: float64(n)})
	}
	add(f)
}

// CounterFunc adds a counter of one's own to the page: f gives its value
// at each scrape. It fails on a name that is not a metric name of the
// text format ([a-zA-Z_:][a-zA-Z0-9_:]*) or that the page has already.
// (It replaces Registry, which returned client_golang's registry.)
func (m *Metrics) CounterFunc(name, help string, f func() float64) error {
	return m.reg.Register(promtext.Func(name, help, promtext.CounterType, f), name)
}

// GaugeFunc adds a gauge of one's own to the page, as [Metrics.CounterFunc]
// adds a counter.
func (m *Metrics) GaugeFunc(name, help string, f func() float64) error {
	return m.reg.Register(promtext.Func(name, help, promtext.GaugeType, f), name)
}

// routeSeries are a route's series of the requests that most requests
// are: those answered 200, and their latency. Looked up by their labels
// (a hash of the route's name and of the code's, the code written out)
// for every request, they were 2% of the server's CPU on a REST call,
// 2026-11-27; they are looked up once, at the route's first such
// request, so that a series appears in /metrics as it did, once counted.
type routeSeries struct {
	ok      atomic.Pointer[promtext.Counter]
	latency atomic.Pointer[promtext.Histogram]
}

// requestOf counts one HTTP request of route, through rs (the route's
// series, nil: none kept) for the requests answered 200.
func (m *Metrics) requestOf(rs *routeSeries, route string, status int, d time.Duration) {
	if status == 0 {
		status = http.StatusOK
	}
	if rs == nil || status != http.StatusOK {
		m.requests.With(route, codeLabel(status)).Inc()
	} else {
		c := rs.ok.Load()
		if c == nil {
			c = m.requests.With(route, codeLabel(status))
			rs.ok.Store(c)
		}
		c.Inc()
	}
	if route == "GET /v1/events" {
		return
	}
	if rs == nil {
		m.latency.With(route).Observe(d.Seconds())
		return
	}
	o := rs.latency.Load()
	if o == nil {
		o = m.latency.With(route)
		rs.latency.Store(o)
	}
	o.Observe(d.Seconds())
}

// observe counts one finished call.
func (m *Metrics) observe(res *wield.Result) {
	outcome := "ok"
	if !res.OK {
		outcome = string(res.ErrorType)
		if !errorTypes[res.ErrorType] {
			outcome = OtherLabel
		}
	}
	tool := m.toolLabel(res)
	ts := m.seriesOf(tool)
	if res.OK {
		ok := ts.ok.Load()
		if ok == nil {
			ok = m.calls.With(tool, "ok")
			ts.ok.Store(ok)
		}
		ok.Inc()
	} else {
		m.calls.With(tool, outcome).Inc()
	}
	ts.duration.Observe(res.Duration.Seconds())
	ts.queueWait.Observe(res.QueueWait.Seconds())
}

// serveMetrics writes the page in the text format whatever the Accept
// header asks (client_golang answered the protobuf format to a scraper
// asking for it first, which Prometheus does only to read native
// histograms, which wield has none of; a scraper takes the text format
// from the Content-Type), gzipped when Accept-Encoding takes gzip, with
// only the families named by name[] parameters when there are any.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	var keep func(string) bool
	if names := r.URL.Query()["name[]"]; len(names) > 0 {
		keep = func(n string) bool { return slices.Contains(names, n) }
	}
	fams := s.metrics.reg.Gather(keep)
	h := w.Header()
	h.Add("Vary", "Accept")
	h.Add("Vary", "Accept-Encoding")
	h.Set("Content-Type", promtext.ContentType)
	if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
		return promtext.Write(w, fams)
	}
	h.Set("Content-Encoding", "gzip")
	gz := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(gz)
	gz.Reset(w)
	if err := promtext.Write(gz, fams); err != nil {
		return err
	}
	return gz.Close()
}

// gzipWriters are kept between scrapes: a writer's state is ~800 KB.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// acceptsGzip reports whether an Accept-Encoding header takes gzip (or *)
// with a weight above 0 and above that of identity, as client_golang's
// handler decided.
func acceptsGzip(header string) bool {
	gz, identity := -1.0, -1.0
	for spec := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(spec, ";")
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip":
			gz = max(gz, q)
		case "identity":
			identity = max(identity, q)
		case "*":
			gz, identity = max(gz, q), max(identity, q)
		}
	}
	return gz > 0 && gz > identity
}

// watch registers the gauges of s's limiter, store and bus, and counts the
// bus's events by type. It returns the function that stops the counting.
func (m *Metrics) watch(s *Server) (stop func()) {
	lim := s.eng.Limiter()
	// A second server watching the same metrics keeps the first's (the
	// names are taken).
	gauge := func(name, help string, f func() float64) { _ = m.GaugeFunc(name, help, f) }
	counter := func(name, help string, f func() float64) { _ = m.CounterFunc(name, help, f) }
	gauge("wield_limiter_in_flight", "Units of capacity in use.", func() float64 { return float64(lim.Metrics().Current) })
	gauge("wield_limiter_queue_length", "Calls waiting for capacity.", func() float64 { return float64(lim.Metrics().QueueLength) })
	gauge("wield_limiter_limit", "The global capacity.", func() float64 { return float64(lim.Metrics().Limit) })
	counter("wield_limiter_acquired_total", "Permits granted.", func() float64 { return float64(lim.Metrics().Acquired) })
	counter("wield_limiter_rejected_total", "Calls refused for lack of capacity.", func() float64 { return float64(lim.Metrics().Rejected) })
	counter("wield_limiter_timeout_total", "Calls that waited too long for capacity.", func() float64 { return float64(lim.Metrics().TimedOut) })
	_ = m.reg.Register(bucketCollector(lim.Metrics), bucketNames...)

	_ = m.reg.Register(pendingCollector(s), pendingName)
	reg := s.reg
	known := func(name string) bool { _, ok := reg.Tool(name); return ok }
	m.known.Store(&known)
	bus := s.eng.Bus()
	if bus == nil {
		return func() {}
	}
	counter("wield_events_lost_total", "Events subscribers lost by falling behind.", func() float64 { return float64(bus.Lost()) })
	return bus.Listen(nil, func(e wield.Event) {
		// Events relayed from other servers carry types as they wrote them.
		typ := string(e.Type)
		if !eventTypes[e.Type] {
			typ = OtherLabel
		}
		m.events.With(typ).Inc()
	})
}

const pendingName = "wield_approvals_pending"

// pendingCollector counts the pending approvals in the store at scrape
// time: a count kept from the bus's events would miss approvals made or
// decided by other processes sharing the store, and the request event comes
// before the approval is stored.
func pendingCollector(s *Server) promtext.Collector {
	return func(add func(promtext.Family)) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		list, err := s.decider.Pending(ctx)
		if err != nil {
			s.log.Warn("metrics: count pending approvals", "err", err)
			return
		}
		add(promtext.Family{Name: pendingName, Help: "Approvals waiting for a decision.", Type: promtext.GaugeType,
			Series: []promtext.Series{{Value: float64(len(list))}}})
	}
}

var bucketNames = []string{"wield_limiter_bucket_in_flight", "wield_limiter_bucket_queue_length", "wield_limiter_bucket_limit"}

// bucketCollector reports the limiter's buckets, whose names are known
// only at scrape time.
func bucketCollector(lim func() limitMetrics) promtext.Collector {
	return func(add func(promtext.Family)) {
		inFlight := promtext.Family{Name: bucketNames[0], Help: "Units a bucket holds.", Type: promtext.GaugeType}
		queue := promtext.Family{Name: bucketNames[1], Help: "Calls of a bucket waiting.", Type: promtext.GaugeType}
		limit := promtext.Family{Name: bucketNames[2], Help: "A bucket's limit (0: the global one only).", Type: promtext.GaugeType}
		for name, b := range lim().Buckets {
			l := []promtext.Label{{Name: "bucket", Value: name}}
			inFlight.Series = append(inFlight.Series, promtext.Series{Labels: l, Value: float64(b.Current)})
			queue.Series = append(queue.Series, promtext.Series{Labels: l, Value: float64(b.Queue)})
			limit.Series = append(limit.Series, promtext.Series{Labels: l, Value: float64(b.Limit)})
		}
		add(inFlight)
		add(queue)
		add(limit)
	}
}

// Observe returns store with every saved record also counted in the
// metrics and logged at INFO on log (nil: not logged) with its tool, its
// arguments as recorded (secrets redacted by the engine, cut to 512
// bytes), outcome and duration. Give the engine the returned store: every
// call it finishes passes through, whatever its entry (API, MCP, CLI).
func (m *Metrics) Observe(store wield.Storage, log *slog.Logger) wield.Storage {
	return &observed{Storage: store, m: m, log: log}
}

type observed struct {
	wield.Storage
	m   *Metrics
	log *slog.Logger
}

// maxLoggedArgs bounds the arguments a log line carries.
const maxLoggedArgs = 512

// Save saves the record, then counts and logs it.
func (o *observed) Save(ctx context.Context, r *wield.Record) error {
	err := o.Storage.Save(ctx, r)
	if r.Result == nil {
		return err
	}
	o.m.observe(r.Result)
	if o.log != nil && o.log.Enabled(ctx, slog.LevelInfo) {
		args := ""
		if r.Call != nil {
			args = string(r.Call.Arguments)
		}
		args = safetext.Clip(args, maxLoggedArgs)
		outcome := "ok"
		if !r.Result.OK {
			outcome = string(r.Result.ErrorType)
		}
		// The record goes to the handler as Logger.LogAttrs would send it,
		// but without the caller's program counter, which LogAttrs finds
		// (runtime.Callers, an eighth of the line's cost) for a source
		// that would name this line for every call.
		line := slog.NewRecord(time.Now(), slog.LevelInfo, "call", 0)
		line.AddAttrs(slog.String("tool", r.Result.Tool), slog.String("call_id", r.Result.CallID),
			slog.String("args", args), slog.String("outcome", outcome),
			slog.Float64("duration_ms", float64(r.Result.Duration.Microseconds())/1000))
		if r.Call != nil && r.Call.Caller.ConversationID != "" {
			line.AddAttrs(slog.String("conversation_id", r.Call.Caller.ConversationID))
		}
		if err != nil {
			line.AddAttrs(slog.String("record_err", err.Error()))
		}
		_ = o.log.Handler().Handle(ctx, line)
	}
	return err
}

type limitMetrics = limit.Metrics
