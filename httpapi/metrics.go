package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/wieldhq/wield"
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
type Metrics struct {
	reg       *prometheus.Registry
	calls     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	queueWait *prometheus.HistogramVec
	events    *prometheus.CounterVec
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec

	// known reports the registry's tools once a server watches (see
	// watch); before, only tool_not_found results are known unknown.
	known atomic.Pointer[func(string) bool]
	mu    sync.Mutex
	tools map[string]bool // the tool labels given so far
	// series holds each tool label's children of the call metrics, found
	// once: WithLabelValues hashes the labels and locks the vector on
	// every call, a tenth of the metrics' cost per call.
	series sync.Map // tool label → *toolSeries
}

// toolSeries are the call metrics of one tool label.
type toolSeries struct {
	ok        prometheus.Counter
	duration  prometheus.Observer
	queueWait prometheus.Observer
}

// seriesOf returns the children of tool's call metrics.
func (m *Metrics) seriesOf(tool string) *toolSeries {
	if ts, ok := m.series.Load(tool); ok {
		return ts.(*toolSeries)
	}
	ts := &toolSeries{ok: m.calls.WithLabelValues(tool, "ok"), duration: m.duration.WithLabelValues(tool),
		queueWait: m.queueWait.WithLabelValues(tool)}
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
// runtime's and the process's collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wield_calls_total",
			Help: "Finished tool calls by tool and outcome (ok, or the error type)."}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "wield_call_duration_seconds",
			Help:    "Time from a call's arrival to its result, queueing included.",
			Buckets: []float64{.0001, .0005, .001, .005, .01, .05, .1, .5, 1, 5, 10, 30, 60}}, []string{"tool"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "wield_call_queue_wait_seconds",
			Help:    "Time calls waited for capacity in the limiter.",
			Buckets: []float64{.0001, .001, .01, .1, .5, 1, 5, 30}}, []string{"tool"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wield_events_total",
			Help: "Events seen on the bus, by type (approvals requested and decided among them)."}, []string{"type"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wield_http_requests_total",
			Help: "HTTP requests by route and status code."}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "wield_http_request_duration_seconds",
			Help: "Time to answer HTTP requests, by route (event streams excluded).", Buckets: prometheus.DefBuckets}, []string{"route"}),
	}
	m.reg.MustRegister(m.calls, m.duration, m.queueWait, m.events, m.requests, m.latency, panicCollector{},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

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

// panicCollector reports wield.CallbackPanics at scrape time; its kinds
// are the names wield's packages give, not a client's.
type panicCollector struct{}

var panicsDesc = prometheus.NewDesc("wield_callback_panics_total",
	"Panics of callbacks a program gave wield (bus listeners and filters, approvers, agent hooks...), contained and logged, by kind.", []string{"kind"}, nil)

// Describe implements prometheus.Collector.
func (panicCollector) Describe(ch chan<- *prometheus.Desc) { ch <- panicsDesc }

// Collect implements prometheus.Collector.
func (panicCollector) Collect(ch chan<- prometheus.Metric) {
	for kind, n := range wield.CallbackPanics() {
		ch <- prometheus.MustNewConstMetric(panicsDesc, prometheus.CounterValue, float64(n), kind)
	}
}

// Registry returns the Prometheus registry, to add metrics of one's own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// routeSeries are a route's series of the requests that most requests
// are: those answered 200, and their latency. Looked up by their labels
// (a hash of the route's name and of the code's, the code written out)
// for every request, they were 2% of the server's CPU on a REST call,
// 2026-11-27; they are looked up once, at the route's first such
// request, so that a series appears in /metrics as it did, once counted.
type routeSeries struct {
	ok      atomic.Pointer[prometheus.Counter]
	latency atomic.Pointer[prometheus.Observer]
}

// requestOf counts one HTTP request of route, through rs (the route's
// series, nil: none kept) for the requests answered 200.
func (m *Metrics) requestOf(rs *routeSeries, route string, status int, d time.Duration) {
	if status == 0 {
		status = http.StatusOK
	}
	if rs == nil || status != http.StatusOK {
		m.requests.WithLabelValues(route, codeLabel(status)).Inc()
	} else {
		c := rs.ok.Load()
		if c == nil {
			ok := m.requests.WithLabelValues(route, codeLabel(status))
			c = &ok
			rs.ok.Store(c)
		}
		(*c).Inc()
	}
	if route == "GET /v1/events" {
		return
	}
	if rs == nil {
		m.latency.WithLabelValues(route).Observe(d.Seconds())
		return
	}
	o := rs.latency.Load()
	if o == nil {
		l := m.latency.WithLabelValues(route)
		o = &l
		rs.latency.Store(o)
	}
	(*o).Observe(d.Seconds())
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
		ts.ok.Inc()
	} else {
		m.calls.WithLabelValues(tool, outcome).Inc()
	}
	ts.duration.Observe(res.Duration.Seconds())
	ts.queueWait.Observe(res.QueueWait.Seconds())
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}

// watch registers the gauges of s's limiter, store and bus, and counts the
// bus's events by type. It returns the function that stops the counting.
func (m *Metrics) watch(s *Server) (stop func()) {
	lim := s.eng.Limiter()
	gauge := func(name, help string, f func() float64) {
		_ = m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	counter := func(name, help string, f func() float64) {
		_ = m.reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
	}
	gauge("wield_limiter_in_flight", "Units of capacity in use.", func() float64 { return float64(lim.Metrics().Current) })
	gauge("wield_limiter_queue_length", "Calls waiting for capacity.", func() float64 { return float64(lim.Metrics().QueueLength) })
	gauge("wield_limiter_limit", "The global capacity.", func() float64 { return float64(lim.Metrics().Limit) })
	counter("wield_limiter_acquired_total", "Permits granted.", func() float64 { return float64(lim.Metrics().Acquired) })
	counter("wield_limiter_rejected_total", "Calls refused for lack of capacity.", func() float64 { return float64(lim.Metrics().Rejected) })
	counter("wield_limiter_timeout_total", "Calls that waited too long for capacity.", func() float64 { return float64(lim.Metrics().TimedOut) })
	_ = m.reg.Register(bucketCollector{lim: lim.Metrics})

	_ = m.reg.Register(pendingCollector{s})
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
		m.events.WithLabelValues(typ).Inc()
	})
}

// pendingCollector counts the pending approvals in the store at scrape
// time: a count kept from the bus's events would miss approvals made or
// decided by other processes sharing the store, and the request event comes
// before the approval is stored.
type pendingCollector struct{ s *Server }

var pendingDesc = prometheus.NewDesc("wield_approvals_pending", "Approvals waiting for a decision.", nil, nil)

// Describe implements prometheus.Collector.
func (c pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pendingDesc }

// Collect implements prometheus.Collector.
func (c pendingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := c.s.decider.Pending(ctx)
	if err != nil {
		c.s.log.Warn("metrics: count pending approvals", "err", err)
		return
	}
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(len(list)))
}

// bucketCollector reports the limiter's buckets, whose names are known
// only at scrape time.
type bucketCollector struct {
	lim func() limitMetrics
}

var (
	bucketInFlight = prometheus.NewDesc("wield_limiter_bucket_in_flight", "Units a bucket holds.", []string{"bucket"}, nil)
	bucketQueue    = prometheus.NewDesc("wield_limiter_bucket_queue_length", "Calls of a bucket waiting.", []string{"bucket"}, nil)
	bucketLimit    = prometheus.NewDesc("wield_limiter_bucket_limit", "A bucket's limit (0: the global one only).", []string{"bucket"}, nil)
)

// Describe implements prometheus.Collector.
func (c bucketCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- bucketInFlight
	ch <- bucketQueue
	ch <- bucketLimit
}

// Collect implements prometheus.Collector.
func (c bucketCollector) Collect(ch chan<- prometheus.Metric) {
	for name, b := range c.lim().Buckets {
		ch <- prometheus.MustNewConstMetric(bucketInFlight, prometheus.GaugeValue, float64(b.Current), name)
		ch <- prometheus.MustNewConstMetric(bucketQueue, prometheus.GaugeValue, float64(b.Queue), name)
		ch <- prometheus.MustNewConstMetric(bucketLimit, prometheus.GaugeValue, float64(b.Limit), name)
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
		if len(args) > maxLoggedArgs {
			args = args[:maxLoggedArgs] + "…"
		}
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
