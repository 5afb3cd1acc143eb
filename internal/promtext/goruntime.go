package promtext

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// GoRuntime is the collector of the Go runtime's families, as
// client_golang's collectors.NewGoCollector() writes them by default:
// go_goroutines, go_threads, go_gc_duration_seconds, go_info,
// go_memstats_* (from runtime/metrics, without stopping the world), and
// the runtime metrics /gc/gogc:percent, /gc/gomemlimit:bytes and
// /sched/gomaxprocs:threads.
func GoRuntime() Collector {
	return func(add func(Family)) {
		add(gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())))
		threads, _ := runtime.ThreadCreateProfile(nil)
		add(gauge("go_threads", "Number of OS threads created.", float64(threads)))

		var gc debug.GCStats
		gc.PauseQuantiles = make([]time.Duration, 5)
		debug.ReadGCStats(&gc)
		qs := make([]Quantile, len(gc.PauseQuantiles))
		for i, q := range gc.PauseQuantiles {
			qs[i] = Quantile{float64(i) / float64(len(qs)-1), q.Seconds()}
		}
		add(Family{Name: "go_gc_duration_seconds", Help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.",
			Type: SummaryType, Series: []Series{{Quantiles: qs, Sum: gc.PauseTotal.Seconds(), Count: uint64(gc.NumGC)}}})
		add(gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", float64(gc.LastGC.UnixNano())/1e9))
		add(Family{Name: "go_info", Help: "Information about the Go environment.", Type: GaugeType,
			Series: []Series{{Labels: []Label{{"version", runtime.Version()}}, Value: 1}}})

		goSamplesMu.Lock()
		defer goSamplesMu.Unlock()
		goSamplesOnce.Do(initGoSamples)
		metrics.Read(goSamples)
		v := func(name string) float64 {
			if s := goSamples[goSampleIndex[name]]; s.Value.Kind() == metrics.KindUint64 {
				return float64(s.Value.Uint64())
			} else if s.Value.Kind() == metrics.KindFloat64 {
				return s.Value.Float64()
			}
			return 0
		}
		for _, r := range goRuntimeGauges {
			if d, ok := goDescriptions[r.source]; ok {
				add(gauge(r.name, d+" Sourced from "+r.source+".", v(r.source)))
			}
		}
		tiny := v("/gc/heap/tiny/allocs:objects")
		heapObjects := v("/memory/classes/heap/objects:bytes")
		heapInuse := heapObjects + v("/memory/classes/heap/unused:bytes")
		released := v("/memory/classes/heap/released:bytes")
		heapIdle := released + v("/memory/classes/heap/free:bytes")
		stacks := v("/memory/classes/heap/stacks:bytes")
		mspan := v("/memory/classes/metadata/mspan/inuse:bytes")
		mcache := v("/memory/classes/metadata/mcache/inuse:bytes")
		for _, m := range []struct {
			name, help string
			counter    bool
			v          float64
		}{
			{"alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", false, heapObjects},
			{"alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", true, v("/gc/heap/allocs:bytes")},
			{"sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", false, v("/memory/classes/total:bytes")},
			{"mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", true, v("/gc/heap/allocs:objects") + tiny},
			{"frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", true, v("/gc/heap/frees:objects") + tiny},
			{"heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", false, heapObjects},
			{"heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", false, heapInuse + heapIdle},
			{"heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", false, heapIdle},
			{"heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", false, heapInuse},
			{"heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", false, released},
			{"heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", false, v("/gc/heap/objects:objects")},
			{"stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", false, stacks},
			{"stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", false, stacks + v("/memory/classes/os-stacks:bytes")},
			{"mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", false, mspan},
			{"mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", false, mspan + v("/memory/classes/metadata/mspan/free:bytes")},
			{"mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", false, mcache},
			{"mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", false, mcache + v("/memory/classes/metadata/mcache/free:bytes")},
			{"buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", false, v("/memory/classes/profiling/buckets:bytes")},
			{"gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", false, v("/memory/classes/metadata/other:bytes")},
			{"other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", false, v("/memory/classes/other:bytes")},
			{"next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", false, v("/gc/heap/goal:bytes")},
		} {
			f := gauge("go_memstats_"+m.name, m.help, m.v)
			if m.counter {
				f.Type = CounterType
			}
			add(f)
		}
	}
}

func gauge(name, help string, v float64) Family {
	return Family{Name: name, Help: help, Type: GaugeType, Series: []Series{{Value: v}}}
}

// goRuntimeGauges are the runtime metrics client_golang's Go collector
// writes by default, named as it names them.
var goRuntimeGauges = []struct{ name, source string }{
	{"go_gc_gogc_percent", "/gc/gogc:percent"},
	{"go_gc_gomemlimit_bytes", "/gc/gomemlimit:bytes"},
	{"go_sched_gomaxprocs_threads", "/sched/gomaxprocs:threads"},
}

// The runtime's samples, found at the first scrape and read into one
// buffer, under goSamplesMu.
var (
	goSamplesMu    sync.Mutex
	goSamplesOnce  sync.Once
	goSamples      []metrics.Sample
	goSampleIndex  map[string]int
	goDescriptions map[string]string // of goRuntimeGauges' sources this runtime has
)

func initGoSamples() {
	names := []string{
		"/gc/heap/tiny/allocs:objects", "/gc/heap/allocs:objects", "/gc/heap/frees:objects", "/gc/heap/allocs:bytes",
		"/gc/heap/objects:objects", "/gc/heap/goal:bytes", "/memory/classes/total:bytes", "/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes", "/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes",
		"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes", "/memory/classes/metadata/mspan/inuse:bytes",
		"/memory/classes/metadata/mspan/free:bytes", "/memory/classes/metadata/mcache/inuse:bytes",
		"/memory/classes/metadata/mcache/free:bytes", "/memory/classes/profiling/buckets:bytes",
		"/memory/classes/metadata/other:bytes", "/memory/classes/other:bytes",
	}
	goDescriptions = map[string]string{}
	for _, d := range metrics.All() {
		for _, r := range goRuntimeGauges {
			if d.Name == r.source {
				goDescriptions[d.Name] = d.Description
				names = append(names, d.Name)
			}
		}
	}
	goSampleIndex = map[string]int{}
	for i, n := range names {
		goSamples = append(goSamples, metrics.Sample{Name: n})
		goSampleIndex[n] = i
	}
}
