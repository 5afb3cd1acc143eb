package main

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// returnMemory gives the server's free memory back to the system
// (debug.FreeOSMemory: a collection, then every free page of the heap
// returned) when [memoryReturn] says so, every half second until ctx ends:
// once a thousand or more MCP sessions open at a peak have closed, and
// once a server that was busy has gone quiet. Go's runtime would keep it
// until its next collection, which a server left idle reaches only every
// two minutes, and then hand it back slowly.
func returnMemory(ctx context.Context, sessions func() int) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	samples := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"}}
	read := func() memorySample {
		metrics.Read(samples)
		return memorySample{sessions: sessions(), cycles: samples[0].Value.Uint64(), allocs: samples[1].Value.Uint64()}
	}
	var m memoryReturn
	m.due(read())
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if m.due(read()) {
			debug.FreeOSMemory()
			m.returned(read())
		}
	}
}

// busyCycles is how many collections since memory was last returned make
// a server busy: its heap grew to the collector's goal and was collected
// that many times, and what the collections freed is held for the next
// ones. The return costs about one more collection, so it adds at most a
// sixteenth to the collector's work, and nothing to a server that stays
// busy (it is never quiet) or stays idle (it collects every two minutes).
const busyCycles = 16

// quietAllocs is the most a quiet server allocates in a tick of
// returnMemory: 1 MiB in half a second, a few hundred echo calls a second
// (about 6 KB each over MCP), where a busy `wield serve` allocates tens of
// MB a second.
const quietAllocs = 1 << 20

// memorySample is what returnMemory reads every tick: open MCP sessions,
// the collector's cycles and the bytes allocated, both since the start.
type memorySample struct {
	sessions int
	cycles   uint64
	allocs   uint64
}

// memoryReturn decides from a sample a tick when the memory goes back. Its
// zero value takes the first sample as where it starts from.
type memoryReturn struct {
	started    bool
	peak, last int    // sessions: the most since the last return, and at the last tick
	cycles     uint64 // at the last return
	allocs     uint64 // at the last tick
}

// due reports whether the memory should go back now: a thousand sessions
// fewer than at their peak, no longer falling; or a quiet tick after
// busyCycles collections.
func (m *memoryReturn) due(s memorySample) bool {
	if !m.started {
		m.started = true
		m.returned(s)
		return false
	}
	m.peak = max(m.peak, s.sessions)
	closed := m.peak-s.sessions >= 1000 && s.sessions >= m.last
	quiet := s.allocs-m.allocs < quietAllocs
	busy := s.cycles-m.cycles >= busyCycles
	m.last, m.allocs = s.sessions, s.allocs
	return closed || quiet && busy
}

// returned takes s, read after the memory went back, as where the next
// decision starts from.
func (m *memoryReturn) returned(s memorySample) {
	m.peak, m.last = s.sessions, s.sessions
	m.cycles, m.allocs = s.cycles, s.allocs
}

// releaseAfterStart gives back what starting a server used once and
// serving does not need: the pages of the program file it touched
// ([releaseStartPages]). A failure costs only memory, so it is logged at
// debug level.
func releaseAfterStart(log *slog.Logger) {
	n, err := releaseStartPages()
	if err != nil {
		log.Debug("could not give back the program's start-up pages", "advised_bytes", n, "err", err)
	}
}
