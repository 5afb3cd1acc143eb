package wield_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// ids reads n events and returns their IDs and tools.
func read(t *testing.T, s *wield.Subscription, n int) []string {
	t.Helper()
	var out []string
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		e, err := s.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("Next after %v: %v", out, err)
		}
		out = append(out, e.Tool)
	}
	return out
}

// settle waits, in a synctest bubble, until a listener has taken what was
// published: a listener that waited for the first event lingers
// (DefaultLinger) before it reads, so the bubble's clock must pass that.
func settle() {
	synctest.Wait()
	time.Sleep(wield.DefaultLinger)
	synctest.Wait()
}

func publish(b *wield.Bus, tools ...string) {
	for _, tl := range tools {
		b.Publish(wield.Event{Type: wield.EventToolAdded, Tool: tl})
	}
}

func TestBusOrder(t *testing.T) {
	b := wield.NewBus(8)
	if got := b.Last(); got != "" {
		t.Errorf("Last() of a new bus = %q", got)
	}
	s := b.Subscribe(nil)
	defer s.Close()

	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var ids []string
	for i, e := range []wield.Event{
		{Type: wield.EventToolAdded, Tool: "a"},
		{Type: wield.EventToolAdded, Tool: "b", Time: at},
		{Type: wield.EventToolRemoved, Tool: "a", ID: "x"}, // the bus assigns IDs
	} {
		id := b.Publish(e)
		if len(id) != wield.IDLen || (i > 0 && id <= ids[i-1]) {
			t.Errorf("Publish #%d = %q, not a NewID after %v", i, id, ids)
		}
		ids = append(ids, id)
	}
	if got := b.Last(); got != ids[2] {
		t.Errorf("Last() = %q, want %q", got, ids[2])
	}
	var got []wield.Event
	for range 3 {
		e, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if got[0].Time.IsZero() {
		t.Error("Publish did not stamp the time")
	}
	if !got[1].Time.Equal(at) {
		t.Errorf("Publish changed a set time to %v", got[1].Time)
	}
	for i := range got {
		got[i].Time = time.Time{}
	}
	want := []wield.Event{
		{ID: ids[0], Type: wield.EventToolAdded, Tool: "a"},
		{ID: ids[1], Type: wield.EventToolAdded, Tool: "b"},
		{ID: ids[2], Type: wield.EventToolRemoved, Tool: "a"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

func TestBusNil(t *testing.T) {
	var b *wield.Bus
	if got := b.Publish(wield.Event{}); got != "" {
		t.Errorf("Publish on a nil bus = %q, want \"\"", got)
	}
}

func TestBusFilter(t *testing.T) {
	b := wield.NewBus(16)
	s := b.Subscribe(func(e *wield.Event) bool { return e.Type == wield.EventExecutionFailed })
	defer s.Close()
	var ids []string
	for _, typ := range []wield.EventType{
		wield.EventExecutionStarted, wield.EventExecutionFailed, wield.EventExecutionCompleted,
		wield.EventExecutionStarted, wield.EventExecutionFailed,
	} {
		ids = append(ids, b.Publish(wield.Event{Type: typ}))
	}
	var got []string
	for _, e := range drain(t, s) {
		got = append(got, e.ID)
	}
	if diff := cmp.Diff([]string{ids[1], ids[4]}, got); diff != "" {
		t.Errorf("filtered IDs mismatch (-want +got):\n%s", diff)
	}
}

func TestBusSubscribeAfter(t *testing.T) {
	// An ID of a bus that was (a server before its restart, another
	// server): older than every event of the bus under test, or newer.
	before := wield.NewBus(4).Publish(wield.Event{})
	tests := []struct {
		name      string
		size      int
		events    int
		after     func(ids []string) string
		want      []string
		wantLost  int64
		wantExact bool
	}{
		{"resume", 8, 5, func(ids []string) string { return ids[1] }, []string{"3", "4", "5"}, 0, true},
		{"from now", 8, 3, func([]string) string { return "" }, nil, 0, true},
		{"up to date", 8, 3, func(ids []string) string { return ids[2] }, nil, 0, true},
		{"after the oldest held", 4, 10, func(ids []string) string { return ids[6] }, []string{"8", "9", "10"}, 0, true},
		// Cannot be honoured exactly: the subscriber is told (exact is
		// false) and gets what the bus holds after the ID, if any.
		{"overwritten", 4, 10, func(ids []string) string { return ids[2] }, []string{"7", "8", "9", "10"}, 0, false},
		{"before a restart", 8, 3, func([]string) string { return before }, []string{"1", "2", "3"}, 0, false},
		{"from the future", 8, 3, func([]string) string { return wield.NewID() }, nil, 0, false},
		{"an old number", 8, 3, func([]string) string { return "2" }, nil, 0, false},
		{"not an ID", 8, 3, func(ids []string) string { return strings.ToUpper(ids[0]) }, nil, 0, false},
		{"empty bus", 8, 0, func([]string) string { return before }, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := wield.NewBus(tt.size)
			var ids []string
			for i := range tt.events {
				ids = append(ids, b.Publish(wield.Event{Type: wield.EventToolAdded, Tool: itoa(i + 1)}))
			}
			s, exact := b.SubscribeAfter(tt.after(ids), nil)
			defer s.Close()
			if exact != tt.wantExact {
				t.Errorf("exact = %v, want %v", exact, tt.wantExact)
			}
			var got []string
			for _, e := range drain(t, s) {
				got = append(got, e.Tool)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("replay mismatch (-want +got):\n%s", diff)
			}
			if got := s.Lost(); got != tt.wantLost {
				t.Errorf("Lost() = %d, want %d", got, tt.wantLost)
			}
			// What comes next is read live.
			publish(b, "live")
			if got := read(t, s, 1); got[0] != "live" {
				t.Errorf("after the replay read %v, want live", got)
			}
		})
	}
}

// Two buses (two servers, or one server before and after a restart) never
// give the same ID, and the later one's sort after the earlier one's.
func TestBusIDsUniqueAcrossBuses(t *testing.T) {
	seen := map[string]bool{}
	var last string
	for range 3 {
		b := wield.NewBus(4)
		for range 100 {
			id := b.Publish(wield.Event{})
			if seen[id] || id <= last {
				t.Fatalf("ID %q repeated or not after %q", id, last)
			}
			seen[id], last = true, id
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestBusLost(t *testing.T) {
	b := wield.NewBus(3) // rounded up to 4
	slow := b.Subscribe(nil)
	defer slow.Close()
	slower := b.Subscribe(nil)
	defer slower.Close()
	for i := range 10 {
		publish(b, itoa(i+1))
	}
	if diff := cmp.Diff([]string{"7", "8", "9", "10"}, read(t, slow, 4)); diff != "" {
		t.Errorf("slow read mismatch (-want +got):\n%s", diff)
	}
	if got := slow.Lost(); got != 6 {
		t.Errorf("slow.Lost() = %d, want 6", got)
	}
	// Falling behind again adds to the count.
	for i := range 6 {
		publish(b, itoa(i+11))
	}
	if diff := cmp.Diff([]string{"13", "14", "15", "16"}, read(t, slow, 4)); diff != "" {
		t.Errorf("slow second read mismatch (-want +got):\n%s", diff)
	}
	if got := slow.Lost(); got != 8 {
		t.Errorf("slow.Lost() = %d, want 8", got)
	}
	if diff := cmp.Diff([]string{"13", "14", "15", "16"}, read(t, slower, 4)); diff != "" {
		t.Errorf("slower read mismatch (-want +got):\n%s", diff)
	}
	if got := slower.Lost(); got != 12 {
		t.Errorf("slower.Lost() = %d, want 12", got)
	}
	if got := b.Lost(); got != 20 {
		t.Errorf("bus Lost() = %d, want 20", got)
	}
}

func TestBusDefaultSize(t *testing.T) {
	b := wield.NewBus(0)
	s := b.Subscribe(nil)
	defer s.Close()
	var ids []string
	for range wield.DefaultBusSize + 1 {
		ids = append(ids, b.Publish(wield.Event{Type: wield.EventToolAdded}))
	}
	e, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != ids[1] || s.Lost() != 1 {
		t.Errorf("first event %s with %d lost, want %s with 1 lost (%d kept)", e.ID, s.Lost(), ids[1], wield.DefaultBusSize)
	}
}

func TestBusPublishNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := wield.NewBus(16)
		stuck := b.Subscribe(nil) // never read
		defer stuck.Close()
		done := make(chan struct{})
		var last string
		go func() {
			defer close(done)
			for range 10_000 {
				last = b.Publish(wield.Event{Type: wield.EventToolAdded})
			}
		}()
		select {
		case <-done:
		case <-time.After(time.Minute): // fake time: passes only if the publisher is stuck
			t.Fatal("Publish blocked on a subscriber that does not read")
		}
		if got := b.Last(); got != last {
			t.Errorf("Last() = %q, want the last published %q", got, last)
		}
	})
}

func TestSubscriptionClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := wield.NewBus(16)
		s := b.Subscribe(nil)
		errc := make(chan error, 1)
		go func() {
			_, err := s.Next(context.Background())
			errc <- err
		}()
		synctest.Wait() // Next is waiting
		s.Close()
		if err := <-errc; !errors.Is(err, wield.ErrClosed) {
			t.Errorf("Next after Close = %v, want ErrClosed", err)
		}
		s.Close() // a second Close is harmless
		b.Publish(wield.Event{Type: wield.EventToolAdded})
	})
}

func TestSubscriptionContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := wield.NewBus(16)
		s := b.Subscribe(nil)
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := s.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Next = %v, want DeadlineExceeded", err)
		}
	})
}

func TestBusListen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := wield.NewBus(16)
		var mu sync.Mutex
		var got []string
		stop := b.Listen(func(e *wield.Event) bool { return e.Type == wield.EventToolAdded }, func(e wield.Event) {
			mu.Lock()
			got = append(got, e.Tool)
			mu.Unlock()
		})
		publish(b, "a", "b")
		b.Publish(wield.Event{Type: wield.EventToolRemoved, Tool: "a"})
		publish(b, "c")
		settle()
		mu.Lock()
		if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
			t.Errorf("listened mismatch (-want +got):\n%s", diff)
		}
		mu.Unlock()
		stop()
		synctest.Wait() // the listener has returned
		publish(b, "d")
		synctest.Wait()
		mu.Lock()
		if len(got) != 3 {
			t.Errorf("listener called after stop: %v", got)
		}
		mu.Unlock()
	})
}

func TestBusConcurrent(t *testing.T) {
	const publishers, each = 4, 500
	b := wield.NewBus(publishers * each)
	s := b.Subscribe(nil)
	defer s.Close()
	var wg sync.WaitGroup
	for range publishers {
		wg.Go(func() {
			for range each {
				b.Publish(wield.Event{Type: wield.EventToolAdded})
			}
		})
	}
	var last string
	for range publishers * each {
		e, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if e.ID <= last {
			t.Fatalf("event %s after %s", e.ID, last)
		}
		last = e.ID
	}
	wg.Wait()
	if s.Lost() != 0 {
		t.Errorf("Lost() = %d with a ring large enough", s.Lost())
	}
}

func TestEventJSON(t *testing.T) {
	e := wield.Event{
		ID: "0ke1x6ajm8c1q3n4w7yq2b5d9fh", Type: wield.EventExecutionCompleted, Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Tool: "echo", CallID: "c1", Duration: 1500 * time.Microsecond, Attempts: 1,
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"id": "0ke1x6ajm8c1q3n4w7yq2b5d9fh", "type": "execution_completed", "time": "2025-01-02T03:04:05Z",
		"tool": "echo", "call_id": "c1", "duration_ms": 1.5, "attempts": 1.0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event JSON mismatch (-want +got):\n%s", diff)
	}
}

func TestNextAfterClose(t *testing.T) {
	b := wield.NewBus(16)
	s := b.Subscribe(nil)
	publish(b, "a", "b")
	s.Close()
	if e, err := s.Next(context.Background()); !errors.Is(err, wield.ErrClosed) {
		t.Errorf("Next after Close = %+v, %v, want ErrClosed although events were pending", e, err)
	}
}

func TestListenStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := wield.NewBus(16)
		entered, release := make(chan string), make(chan struct{})
		var mu sync.Mutex
		var got []string
		stop := b.Listen(nil, func(e wield.Event) {
			mu.Lock()
			got = append(got, e.Tool)
			mu.Unlock()
			if e.Tool == "a" {
				entered <- e.Tool
				<-release
			}
		})
		publish(b, "a", "b", "c")
		<-entered // fn is busy with a; b and c wait
		stop()
		close(release)
		synctest.Wait() // the listener has returned
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff([]string{"a"}, got); diff != "" {
			t.Errorf("events after stop were delivered (-want +got):\n%s", diff)
		}
	})
}

// TestBusStuckFilter: a subscriber whose filter never returns stalls
// neither Publish nor the other subscribers; once it returns, the stuck
// subscriber goes on in order and counts what it lost.
func TestBusStuckFilter(t *testing.T) {
	b := wield.NewBus(8)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stuck := b.Subscribe(func(e *wield.Event) bool {
		once.Do(func() { close(entered); <-release })
		return true
	})
	defer stuck.Close()
	other := b.Subscribe(nil)
	defer other.Close()

	got := make(chan []string, 1)
	go func() { // not read: t.Fatal belongs to the test's goroutine
		var tools []string
		for range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			e, err := stuck.Next(ctx)
			cancel()
			if err != nil {
				break
			}
			tools = append(tools, e.Tool)
		}
		got <- tools
	}()
	publish(b, "first")
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the filter was never called")
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 300 {
			publish(b, itoa(i+2))
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("Publish waited for a filter that does not return")
	}
	// The other subscriber is not held up: it reads the newest events.
	if diff := cmp.Diff([]string{"294", "295", "296", "297", "298", "299", "300", "301"}, read(t, other, 8)); diff != "" {
		t.Errorf("other subscriber (-want +got):\n%s", diff)
	}
	close(release)
	// The stuck one had copied its batch (only "first") before filtering;
	// the ring kept the last 8 of the 300 that followed.
	if diff := cmp.Diff([]string{"first", "294"}, <-got); diff != "" {
		t.Errorf("stuck subscriber after release (-want +got):\n%s", diff)
	}
	if got := stuck.Lost(); got != 292 {
		t.Errorf("stuck.Lost() = %d, want 292", got)
	}
}

// TestBusFilterPanics: a filter that panics drops the event for its
// subscriber only, is counted, and the subscription goes on.
func TestBusFilterPanics(t *testing.T) {
	before := wield.CallbackPanics()[wield.CallbackBusFilter]
	b := wield.NewBus(16)
	s := b.Subscribe(func(e *wield.Event) bool {
		if e.Tool == "boom" {
			panic("filter bug")
		}
		return true
	})
	defer s.Close()
	publish(b, "a", "boom", "b")
	if diff := cmp.Diff([]string{"a", "b"}, read(t, s, 2)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := wield.CallbackPanics()[wield.CallbackBusFilter] - before; got != 1 {
		t.Errorf("bus_filter panics counted: %d, want 1", got)
	}
}

// TestListenPanics: a Listen function that panics leaves the process up,
// is counted, and hears the next events.
func TestListenPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := wield.CallbackPanics()[wield.CallbackBusListener]
		b := wield.NewBus(16)
		var mu sync.Mutex
		var got []string
		stop := b.Listen(nil, func(e wield.Event) {
			if e.Tool == "boom" {
				panic("listener bug")
			}
			mu.Lock()
			got = append(got, e.Tool)
			mu.Unlock()
		})
		defer stop()
		publish(b, "a", "boom", "b")
		settle()
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff([]string{"a", "b"}, got); diff != "" {
			t.Errorf("listened (-want +got):\n%s", diff)
		}
		if got := wield.CallbackPanics()[wield.CallbackBusListener] - before; got != 1 {
			t.Errorf("bus_listener panics counted: %d, want 1", got)
		}
	})
}

// BenchmarkBusPublish measures Publish with one subscriber that keeps up,
// beside NewID alone (the ID each event is stamped with, under the bus's
// lock): the difference is the bus's own cost.
func BenchmarkBusPublish(b *testing.B) {
	b.Run("NewID", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = wield.NewID()
		}
	})
	b.Run("Publish", func(b *testing.B) {
		bus := wield.NewBus(0)
		s := bus.Subscribe(nil)
		defer s.Close()
		go func() {
			for {
				if _, err := s.Next(context.Background()); err != nil {
					return
				}
			}
		}()
		b.ReportAllocs()
		for b.Loop() {
			bus.Publish(wield.Event{Type: wield.EventExecutionCompleted, Tool: "echo"})
		}
	})
}

// FuzzSubscribeAfter: whatever a client sends as Last-Event-ID, resuming
// neither panics nor claims to be exact unless the bus holds that event,
// and replays only events after it.
func FuzzSubscribeAfter(f *testing.F) {
	b := wield.NewBus(8)
	var ids []string
	for i := range 12 {
		ids = append(ids, b.Publish(wield.Event{Type: wield.EventToolAdded, Tool: itoa(i)}))
	}
	for _, s := range []string{"", "42", ids[0], ids[5], ids[11], wield.NewID(), "zzzzzzzzzzzzzzzzzzzzzzzzzzz", "\x00", strings.Repeat("0", 27)} {
		f.Add(s)
	}
	held := map[string]bool{}
	for _, id := range ids[4:] {
		held[id] = true
	}
	f.Fuzz(func(t *testing.T, after string) {
		s, exact := b.SubscribeAfter(after, nil)
		defer s.Close()
		if exact != (after == "" || held[after]) {
			t.Errorf("SubscribeAfter(%q) exact = %v", after, exact)
		}
		for _, e := range drain(t, s) {
			if after != "" && e.ID <= after {
				t.Errorf("after %q replayed %s", after, e.ID)
			}
		}
	})
}
