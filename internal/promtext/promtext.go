// Package promtext keeps counters, gauges and fixed-bucket histograms and
// writes them, with the Go runtime's and the process's metrics, in the
// Prometheus text exposition format (version 0.0.4), the page a scraper
// reads at /metrics.
//
// It replaces github.com/prometheus/client_golang in wield: that library
// writes the same page, but with its dependencies (procfs, common/expfmt,
// client_model) it cost wield serve 0.83 MB of its file and 0.9 to 1.6
// MiB of idle memory (medians of 9 and 11 starts, A/B, 2026-11-28), for
// a page of a few dozen families; alone in a program, with the protobuf
// runtime, 4.3 MB and 2.8 MiB. github.com/VictoriaMetrics/metrics, the
// lighter library (0.65 MB and 0.44 MiB alone), writes no family's help
// text (its HELP lines are empty) and names the runtime's and the
// process's metrics its own way, so the families scrapers read would
// change; the text format is small enough to write here, and counting
// here costs a call less time than client_golang did
// (BenchmarkObserve in httpapi).
//
// Families are written sorted by name, a family's series sorted by their
// label values (labels in name order), and families without series are
// left out, as client_golang's registry does.
package promtext

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Types of families, as the TYPE line names them.
const (
	CounterType   = "counter"
	GaugeType     = "gauge"
	HistogramType = "histogram"
	SummaryType   = "summary"
)

// A Family is a metric's series at one scrape.
type Family struct {
	Name, Help, Type string
	Series           []Series
}

// A Series is one series of a family: Value for counters and gauges; the
// cumulative Buckets (without +Inf), Sum and Count for histograms; the
// Quantiles, Sum and Count for summaries.
type Series struct {
	Labels    []Label
	Value     float64
	Buckets   []Bucket
	Quantiles []Quantile
	Sum       float64
	Count     uint64
}

// A Label is a label's name and value.
type Label struct{ Name, Value string }

// A Bucket is the number of observations at most UpperBound.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// A Quantile is a summary's value at a quantile.
type Quantile struct{ Quantile, Value float64 }

// A Collector adds its families at each scrape.
type Collector func(add func(Family))

// A Registry holds the collectors of a page.
type Registry struct {
	mu         sync.Mutex
	names      map[string]bool
	collectors []Collector
}

// ValidName reports whether name is a metric or label name of the text
// format: [a-zA-Z_:][a-zA-Z0-9_:]*.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range []byte(name) {
		if !(c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// ErrDuplicate is returned for a family name registered before.
var ErrDuplicate = errors.New("a metric of that name exists")

// Register adds c, which writes the families named names (and only
// those). It fails on a name that is not valid or that another collector
// writes.
func (r *Registry) Register(c Collector, names ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		if !ValidName(n) {
			return fmt.Errorf("metric name %q: not a valid name ([a-zA-Z_:][a-zA-Z0-9_:]*)", n)
		}
		if r.names[n] {
			return fmt.Errorf("metric name %q: %w", n, ErrDuplicate)
		}
	}
	if r.names == nil {
		r.names = map[string]bool{}
	}
	for _, n := range names {
		r.names[n] = true
	}
	r.collectors = append(r.collectors, c)
	return nil
}

// MustRegister is Register for names known to be new: it panics on error.
func (r *Registry) MustRegister(c Collector, names ...string) {
	if err := r.Register(c, names...); err != nil {
		panic(err)
	}
}

// Gather returns the registry's families, sorted, without the empty ones;
// keep, when not nil, says which names to keep.
func (r *Registry) Gather(keep func(name string) bool) []Family {
	r.mu.Lock()
	cs := slices.Clone(r.collectors)
	r.mu.Unlock()
	var fams []Family
	add := func(f Family) {
		if len(f.Series) > 0 && (keep == nil || keep(f.Name)) {
			fams = append(fams, f)
		}
	}
	for _, c := range cs {
		c(add)
	}
	slices.SortFunc(fams, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	for _, f := range fams {
		for _, s := range f.Series {
			slices.SortFunc(s.Labels, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
		}
		slices.SortFunc(f.Series, func(a, b Series) int {
			for i := range min(len(a.Labels), len(b.Labels)) {
				if c := strings.Compare(a.Labels[i].Value, b.Labels[i].Value); c != 0 {
					return c
				}
			}
			return cmp.Compare(len(a.Labels), len(b.Labels))
		})
	}
	return fams
}

// ContentType is the media type of the page Write writes.
const ContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

// Write writes fams in the text format.
func Write(w io.Writer, fams []Family) error {
	b := bufio.NewWriter(w)
	var num []byte
	for _, f := range fams {
		b.WriteString("# HELP ")
		b.WriteString(f.Name)
		b.WriteByte(' ')
		helpEscaper.WriteString(b, f.Help)
		b.WriteString("\n# TYPE ")
		b.WriteString(f.Name)
		b.WriteByte(' ')
		b.WriteString(f.Type)
		b.WriteByte('\n')
		for _, s := range f.Series {
			switch f.Type {
			case HistogramType:
				var inf Label
				inf.Name = "le"
				for _, bk := range s.Buckets {
					num = appendFloat(num[:0], bk.UpperBound)
					inf.Value = string(num)
					num = writeSample(b, num, f.Name, "_bucket", s.Labels, inf, float64(bk.Count))
				}
				num = writeSample(b, num, f.Name, "_bucket", s.Labels, Label{"le", "+Inf"}, float64(s.Count))
				num = writeSample(b, num, f.Name, "_sum", s.Labels, Label{}, s.Sum)
				num = writeSample(b, num, f.Name, "_count", s.Labels, Label{}, float64(s.Count))
			case SummaryType:
				for _, q := range s.Quantiles {
					num = appendFloat(num[:0], q.Quantile)
					num = writeSample(b, num, f.Name, "", s.Labels, Label{"quantile", string(num)}, q.Value)
				}
				num = writeSample(b, num, f.Name, "_sum", s.Labels, Label{}, s.Sum)
				num = writeSample(b, num, f.Name, "_count", s.Labels, Label{}, float64(s.Count))
			default:
				num = writeSample(b, num, f.Name, "", s.Labels, Label{}, s.Value)
			}
		}
	}
	return b.Flush()
}

// writeSample writes one line: name+suffix, the labels and extra (when
// named), and v. It returns num, a buffer for numbers.
func writeSample(b *bufio.Writer, num []byte, name, suffix string, labels []Label, extra Label, v float64) []byte {
	b.WriteString(name)
	b.WriteString(suffix)
	sep := byte('{')
	label := func(l Label) {
		b.WriteByte(sep)
		sep = ','
		b.WriteString(l.Name)
		b.WriteString(`="`)
		valueEscaper.WriteString(b, l.Value)
		b.WriteByte('"')
	}
	for _, l := range labels {
		label(l)
	}
	if extra.Name != "" {
		label(extra)
	}
	if sep == ',' {
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	num = appendFloat(num[:0], v)
	b.Write(num)
	b.WriteByte('\n')
	return num
}

// The text format escapes a backslash and a newline in help text, and a
// double quote too in label values.
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// appendFloat writes f as the text format (and client_golang) does.
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case f == 0:
		return append(dst, '0')
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "+Inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-Inf"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// A Counter counts up from zero.
type Counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Value is the count.
func (c *Counter) Value() uint64 { return c.n.Load() }

// A Histogram counts observations in buckets of fixed upper bounds.
type Histogram struct {
	bounds []float64       // ascending upper bounds, +Inf excluded
	counts []atomic.Uint64 // per bucket (not cumulative), +Inf's last
	sum    atomic.Uint64   // float64 bits
}

func newHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe counts v in its bucket, the first whose bound is at least v.
func (h *Histogram) Observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// series is h's series, its buckets cumulative; the count is the sum of
// the buckets read, so that a page's buckets and count always agree.
func (h *Histogram) series(labels []Label) Series {
	s := Series{Labels: labels, Buckets: make([]Bucket, len(h.bounds))}
	for i, b := range h.bounds {
		s.Count += h.counts[i].Load()
		s.Buckets[i] = Bucket{UpperBound: b, Count: s.Count}
	}
	s.Count += h.counts[len(h.bounds)].Load()
	s.Sum = math.Float64frombits(h.sum.Load())
	return s
}

// maxLabels is the most labels a vector's series have.
const maxLabels = 2

// vec holds the series of a family by their label values.
type vec[T any] struct {
	name, help string
	labels     []string
	mu         sync.RWMutex
	series     map[[maxLabels]string]*T
	make       func() *T
}

func newVec[T any](name, help string, labels []string, mk func() *T) *vec[T] {
	if len(labels) == 0 || len(labels) > maxLabels {
		panic(fmt.Sprintf("promtext: %s: between 1 and %d labels", name, maxLabels))
	}
	return &vec[T]{name: name, help: help, labels: labels, series: map[[maxLabels]string]*T{}, make: mk}
}

// With returns the series of the label values, made at its first use.
func (v *vec[T]) With(values ...string) *T {
	if len(values) != len(v.labels) {
		panic(fmt.Sprintf("promtext: %s: %d label values for %d labels", v.name, len(values), len(v.labels)))
	}
	var k [maxLabels]string
	copy(k[:], values)
	v.mu.RLock()
	s := v.series[k]
	v.mu.RUnlock()
	if s != nil {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s = v.series[k]; s == nil {
		s = v.make()
		v.series[k] = s
	}
	return s
}

// each calls f with each series and its labels.
func (v *vec[T]) each(f func([]Label, *T)) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for k, s := range v.series {
		ls := make([]Label, len(v.labels))
		for i, n := range v.labels {
			ls[i] = Label{n, k[i]}
		}
		f(ls, s)
	}
}

// A CounterVec is a family of counters by label values.
type CounterVec struct{ v *vec[Counter] }

// NewCounterVec returns a family of counters with one or two labels.
func NewCounterVec(name, help string, labels ...string) *CounterVec {
	return &CounterVec{newVec(name, help, labels, func() *Counter { return new(Counter) })}
}

// With returns the counter of the label values, given in the order of
// the family's labels.
func (c *CounterVec) With(values ...string) *Counter { return c.v.With(values...) }

// Name is the family's name.
func (c *CounterVec) Name() string { return c.v.name }

// Collect adds the family.
func (c *CounterVec) Collect(add func(Family)) {
	f := Family{Name: c.v.name, Help: c.v.help, Type: CounterType}
	c.v.each(func(ls []Label, s *Counter) {
		f.Series = append(f.Series, Series{Labels: ls, Value: float64(s.Value())})
	})
	add(f)
}

// A HistogramVec is a family of histograms by label values.
type HistogramVec struct{ v *vec[Histogram] }

// NewHistogramVec returns a family of histograms with one or two labels
// and the ascending upper bounds buckets (+Inf implied).
func NewHistogramVec(name, help string, buckets []float64, labels ...string) *HistogramVec {
	if !slices.IsSorted(buckets) {
		panic("promtext: " + name + ": buckets not ascending")
	}
	return &HistogramVec{newVec(name, help, labels, func() *Histogram { return newHistogram(buckets) })}
}

// With returns the histogram of the label values.
func (h *HistogramVec) With(values ...string) *Histogram { return h.v.With(values...) }

// Name is the family's name.
func (h *HistogramVec) Name() string { return h.v.name }

// Collect adds the family.
func (h *HistogramVec) Collect(add func(Family)) {
	f := Family{Name: h.v.name, Help: h.v.help, Type: HistogramType}
	h.v.each(func(ls []Label, s *Histogram) { f.Series = append(f.Series, s.series(ls)) })
	add(f)
}

// DefBuckets are client_golang's default buckets, for a request's
// seconds.
var DefBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Func is the collector of a family of one series without labels whose
// value f gives at each scrape.
func Func(name, help, typ string, f func() float64) Collector {
	return func(add func(Family)) {
		add(Family{Name: name, Help: help, Type: typ, Series: []Series{{Value: f()}}})
	}
}
