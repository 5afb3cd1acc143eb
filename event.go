package wield

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wieldhq/wield/internal/jsonenc"
)

// EventType names what happened. The names are those of the ToolEngine
// architecture's event types plus the ones wield adds (tool_shadowed,
// tool_held, permission_requested, permission_decided).
type EventType string

// The event types.
const (
	EventToolLoaded          EventType = "tool_loaded"
	EventToolAdded           EventType = "tool_added"
	EventToolUpdated         EventType = "tool_updated"
	EventToolRemoved         EventType = "tool_removed"
	EventToolShadowed        EventType = "tool_shadowed"
	EventReloadStarted       EventType = "reload_started"
	EventReloadCompleted     EventType = "reload_completed"
	EventLoadError           EventType = "load_error"
	EventValidationError     EventType = "validation_error"
	EventExecutionStarted    EventType = "execution_started"
	EventExecutionCompleted  EventType = "execution_completed"
	EventExecutionFailed     EventType = "execution_failed"
	EventPermissionRequested EventType = "permission_requested"
	EventPermissionDecided   EventType = "permission_decided"

	// EventToolHeld: an imported tool's definition changed since it was
	// pinned, and the tool is held (not listed, not callable) until an
	// operator accepts it (`wield pins accept`). Tool is its name, Source
	// "mcp:SERVER", Message the server, the remote tool and what changed.
	EventToolHeld EventType = "tool_held"

	// EventExecutionProgress: a running call reported how far it has got
	// ([ReportProgress]; an imported MCP tool's progress notifications
	// among them). Progress holds the figures, Message the tool's words.
	// At most one every [ProgressInterval] per call.
	EventExecutionProgress EventType = "execution_progress"
)

// Event is one thing that happened, as published on a [Bus]. Only the fields
// that apply are set.
type Event struct {
	// ID is assigned by the bus when it publishes the event: a [NewID],
	// so IDs are unique across restarts and across the servers that share
	// events (package redis's relay), and a later event of a bus has a
	// greater ID (the IDs sort as strings). A subscriber resumes after
	// one (see [Bus.SubscribeAfter]).
	ID             string        `json:"id"`
	Type           EventType     `json:"type"`
	Time           time.Time     `json:"time"`
	Tool           string        `json:"tool,omitempty"`
	CallID         string        `json:"call_id,omitempty"`
	CallerID       string        `json:"caller_id,omitempty"`
	ConversationID string        `json:"conversation_id,omitempty"`
	ErrorType      ErrorType     `json:"error_type,omitempty"`
	Error          string        `json:"error,omitempty"`
	Duration       time.Duration `json:"-"`
	Attempts       int           `json:"attempts,omitempty"`
	// ApprovalID names the approval of a permission_requested or
	// permission_decided event, so that a listener can approve or deny it
	// without reading Message.
	ApprovalID string `json:"approval_id,omitempty"`
	// Progress is the figures of an execution_progress event.
	Progress *Progress `json:"progress,omitempty"`
	// Message is free text: a warning, a load error's location.
	Message string `json:"message,omitempty"`
	// Source is where a tool came from (a file), for load events.
	Source string `json:"source,omitempty"`
	// Server names the server an event came from when a relay brought it
	// from another (package redis); empty for this process's own events.
	Server string `json:"server,omitempty"`
}

// MarshalJSON writes the duration in milliseconds, and text as it is
// (internal/jsonenc: people read events).
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	return jsonenc.Marshal(struct {
		plain
		DurationMS float64 `json:"duration_ms,omitempty"`
	}{plain(e), ms(e.Duration)})
}

// UnmarshalJSON reads what MarshalJSON writes, duration_ms included.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event
	var v struct {
		plain
		DurationMS float64 `json:"duration_ms"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = Event(v.plain)
	e.Duration = time.Duration(v.DurationMS * float64(time.Millisecond))
	return nil
}

// Bus carries events from the engine and the registry to whoever listens,
// without ever slowing the publisher: events go into a ring, each subscriber
// reads at its own pace, and one that falls more than the ring's size behind
// loses the oldest events, which it counts. The zero value is not usable; use
// [NewBus].
type Bus struct {
	mu   sync.Mutex
	ring []Event
	mask uint64
	// last is the sequence number of the newest event (0 before the
	// first): the ring's index, never seen outside the bus.
	last uint64
	subs []*Subscription
	lost atomic.Int64
	// linger is how long a subscriber that had to wait lets events gather.
	linger time.Duration
}

// DefaultLinger is how long a subscriber that had to wait for an event lets
// more gather before it reads: live views lag by at most this much, and a
// bus carrying a hundred thousand events a second wakes each subscriber at
// most a thousand times a second.
const DefaultLinger = time.Millisecond

// DefaultBusSize is how many events [NewBus] keeps when given no size: at
// two events a call, the last 512 calls (fewer when calls report progress:
// a few execution_progress events each, see [ProgressInterval]), for slow
// subscribers and for streams that resume. Every event kept is live heap (~250 bytes with its IDs),
// which the collector's goal counts twice: 4096 were a quarter of a
// default server's live heap under load.
const DefaultBusSize = 1024

// NewBus returns a bus that keeps the last size events (rounded up to a power
// of two; [DefaultBusSize] when size <= 0) for slow subscribers and for
// resuming.
func NewBus(size int) *Bus {
	if size <= 0 {
		size = DefaultBusSize
	}
	n := 1
	for n < size {
		n <<= 1
	}
	return &Bus{ring: make([]Event, n), mask: uint64(n - 1), linger: DefaultLinger}
}

// SetLinger changes how long a waking subscriber lets events gather (see
// [DefaultLinger]); 0 delivers each event at once, at a wake-up per event.
func (b *Bus) SetLinger(d time.Duration) {
	b.mu.Lock()
	b.linger = d
	b.mu.Unlock()
}

// Publish stamps the event with a new ID (and the time, if unset), whatever
// ID it had, hands it to the subscribers and returns the ID. It never blocks
// on a subscriber.
func (b *Bus) Publish(e Event) string {
	if b == nil {
		return ""
	}
	now := time.Now()
	if e.Time.IsZero() {
		e.Time = now
	}
	g := idGens.Get().(*idGen)
	r := g.random()
	b.mu.Lock()
	// Stamped under the lock: NewID's microseconds increase strictly
	// within the process, so the ring's IDs increase in its order and
	// SubscribeAfter finds one by bisection. The random bits are drawn
	// before it.
	e.ID = g.at(r, now)
	b.last++
	b.ring[b.last&b.mask] = e
	subs := b.subs
	b.mu.Unlock()
	idGens.Put(g)
	for _, s := range subs {
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
	return e.ID
}

// Last returns the ID of the newest event, "" if none.
func (b *Bus) Last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last == 0 {
		return ""
	}
	return b.ring[b.last&b.mask].ID
}

// Lost returns how many events all subscribers together have lost by falling
// behind.
func (b *Bus) Lost() int64 { return b.lost.Load() }

// Subscribe returns a subscription to the events published from now on that
// pass filter (nil: all). Close it when done. The filter runs on the
// subscriber's goroutine, in Next, never under the bus's lock: however slow
// it is, Publish does not wait for it. A filter that panics drops the event
// (see [Protect]).
func (b *Bus) Subscribe(filter func(*Event) bool) *Subscription {
	s, _ := b.SubscribeAfter("", filter)
	return s
}

// SubscribeAfter returns a subscription that starts after the event with ID
// after, replaying the later events the ring still holds: how a stream
// resumes after a reconnection. "" starts with the next event published.
//
// exact reports whether the bus knows what the subscriber missed: it holds
// the event after. When it does not (the ID is from before a restart, from
// another server, older than the ring, or not an event ID at all), the
// subscription replays the held events whose IDs sort after after (none
// when after is not an ID) and exact is false: events may be missing before
// the first one, and the subscriber should say so (the SSE stream writes
// ": lost"). Events the subscription loses later, by falling behind, count
// in [Subscription.Lost].
func (b *Bus) SubscribeAfter(after string, filter func(*Event) bool) (s *Subscription, exact bool) {
	s = &Subscription{bus: b, filter: filter,
		notify: make(chan struct{}, 1), done: make(chan struct{})}
	b.mu.Lock()
	s.next, exact = b.seqAfter(after)
	subs := make([]*Subscription, len(b.subs), len(b.subs)+1)
	copy(subs, b.subs)
	b.subs = append(subs, s)
	b.mu.Unlock()
	return s, exact
}

// seqAfter returns the sequence number of the first held event after the
// one with ID after, and whether the ring holds that one (see
// SubscribeAfter). b.mu is held.
func (b *Bus) seqAfter(after string) (next uint64, exact bool) {
	if after == "" {
		return b.last + 1, true
	}
	if !isID(after) {
		return b.last + 1, false
	}
	oldest := uint64(1)
	if size := uint64(len(b.ring)); b.last > size {
		oldest = b.last - size + 1
	}
	held := int(b.last + 1 - oldest)
	i := oldest + uint64(sort.Search(held, func(i int) bool {
		return b.ring[(oldest+uint64(i))&b.mask].ID > after
	}))
	return i, i > oldest && b.ring[(i-1)&b.mask].ID == after
}

// isID reports whether s has the form of a [NewID].
func isID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for i := range len(s) {
		if strings.IndexByte(crockford, s[i]) < 0 {
			return false
		}
	}
	return true
}

// Listen calls fn for every event that passes filter, in order, on a
// goroutine of its own, until stop is called. A slow fn loses events rather
// than slowing the bus down (they count in [Bus.Lost]; a subscriber that
// must know how many it lost uses [Bus.Subscribe] and [Subscription.Lost]).
// A panic in fn or filter is contained, logged and counted (see [Protect]);
// the listener goes on with the next event.
func (b *Bus) Listen(filter func(*Event) bool, fn func(Event)) (stop func()) {
	s := b.Subscribe(filter)
	go func() {
		for {
			e, err := s.Next(context.Background())
			if err != nil {
				return
			}
			Protect(nil, CallbackBusListener, func() { fn(e) })
		}
	}()
	return func() { s.Close() }
}

// Subscription reads events from a [Bus] in order.
type Subscription struct {
	bus       *Bus
	next      uint64 // sequence number of the next event to read
	filter    func(*Event) bool
	notify    chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	lost      atomic.Int64

	// Events are copied out of the ring a batch at a time, so that a busy
	// subscriber takes the bus's lock once per batch, not once per event.
	mu  sync.Mutex
	buf []Event
	pos int
}

// batch is how many events a subscriber copies out of the ring at once.
const batch = 64

// Next returns the next event, waiting for one. It returns ctx's error when
// ctx ends and [ErrClosed] after Close.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bus
	for {
		select {
		case <-s.done: // pending events too end with Close, so Listen's stop stops fn
			return Event{}, ErrClosed
		default:
		}
		if s.pos < len(s.buf) {
			e := s.buf[s.pos]
			s.buf[s.pos] = Event{}
			s.pos++
			return e, nil
		}
		s.buf, s.pos = s.buf[:0], 0
		b.mu.Lock()
		for s.next <= b.last && len(s.buf) < batch {
			size := uint64(len(b.ring))
			if b.last >= size && s.next <= b.last-size {
				oldest := b.last - size + 1
				n := int64(oldest - s.next)
				s.lost.Add(n)
				b.lost.Add(n)
				s.next = oldest
			}
			s.buf = append(s.buf, b.ring[s.next&b.mask])
			s.next++
		}
		caughtUp := s.next > b.last
		b.mu.Unlock()
		// The filter runs on the copies, outside the bus's lock: a slow
		// or stuck filter delays its own subscriber, never Publish nor
		// the other subscribers.
		if s.filter != nil {
			kept := s.buf[:0]
			for i := range s.buf {
				if s.pass(&s.buf[i]) {
					kept = append(kept, s.buf[i])
				}
			}
			clear(s.buf[len(kept):])
			s.buf = kept
		}
		if len(s.buf) > 0 || !caughtUp {
			continue
		}
		select {
		case <-s.notify:
			// Let events gather before reading them: a subscriber that
			// wakes once per event costs the publisher a wake-up each
			// time, while one that lingers costs it at most one per
			// Linger, whatever the rate.
			if b.linger > 0 {
				t := time.NewTimer(b.linger)
				select {
				case <-t.C:
				case <-s.done:
					t.Stop()
					return Event{}, ErrClosed
				case <-ctx.Done():
					t.Stop()
					return Event{}, ctx.Err()
				}
			}
		case <-s.done:
			return Event{}, ErrClosed
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// pass reports whether e passes the subscription's filter. A filter that
// panics is contained (see [Protect]) and drops the event: a filter may be
// what keeps a client from seeing tools outside its scope.
func (s *Subscription) pass(e *Event) bool {
	ok := false
	Protect(nil, CallbackBusFilter, func() { ok = s.filter(e) })
	return ok
}

// Lost returns how many events this subscription lost by falling behind.
func (s *Subscription) Lost() int64 { return s.lost.Load() }

// Close ends the subscription; a waiting Next returns [ErrClosed].
func (s *Subscription) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		b := s.bus
		b.mu.Lock()
		subs := make([]*Subscription, 0, len(b.subs))
		for _, x := range b.subs {
			if x != s {
				subs = append(subs, x)
			}
		}
		b.subs = subs
		b.mu.Unlock()
	})
}
