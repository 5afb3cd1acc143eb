package wield_test

import (
	"context"
	"encoding/json"
	"errors"
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

func publish(b *wield.Bus, tools ...string) {
	for _, tl := range tools {
		b.Publish(wield.Event{Type: wield.EventToolAdded, Tool: tl})
	}
}

func TestBusOrder(t *testing.T) {
	b := wield.NewBus(8)
	if got := b.Last(); got != 0 {
		t.Errorf("Last() of a new bus = %d", got)
	}
	s := b.Subscribe(nil)
	defer s.Close()

	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, e := range []wield.Event{
		{Type: wield.EventToolAdded, Tool: "a"},
		{Type: wield.EventToolAdded, Tool: "b", Time: at},
		{Type: wield.EventToolRemoved, Tool: "a", ID: 99}, // the bus assigns IDs
	} {
		if got, want := b.Publish(e), uint64(i+1); got != want {
			t.Errorf("Publish #%d = %d, want %d", i, got, want)
		}
	}
	if got := b.Last(); got != 3 {
		t.Errorf("Last() = %d, want 3", got)
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
		{ID: 1, Type: wield.EventToolAdded, Tool: "a"},
		{ID: 2, Type: wield.EventToolAdded, Tool: "b"},
		{ID: 3, Type: wield.EventToolRemoved, Tool: "a"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

func TestBusNil(t *testing.T) {
	var b *wield.Bus
	if got := b.Publish(wield.Event{}); got != 0 {
		t.Errorf("Publish on a nil bus = %d, want 0", got)
	}
}

func TestBusFilter(t *testing.T) {
	b := wield.NewBus(16)
	s := b.Subscribe(func(e *wield.Event) bool { return e.Type == wield.EventExecutionFailed })
	defer s.Close()
	for _, typ := range []wield.EventType{
		wield.EventExecutionStarted, wield.EventExecutionFailed, wield.EventExecutionCompleted,
		wield.EventExecutionStarted, wield.EventExecutionFailed,
	} {
		b.Publish(wield.Event{Type: typ})
	}
	var got []uint64
	for _, e := range drain(t, s) {
		got = append(got, e.ID)
	}
	if diff := cmp.Diff([]uint64{2, 5}, got); diff != "" {
		t.Errorf("filtered IDs mismatch (-want +got):\n%s", diff)
	}
}

func TestBusSubscribeAfter(t *testing.T) {
	tests := []struct {
		name     string
		size     int
		events   int
		after    uint64
		want     []string
		wantLost int64
	}{
		{"resume", 8, 5, 2, []string{"3", "4", "5"}, 0},
		{"from the start", 8, 3, 0, []string{"1", "2", "3"}, 0},
		{"up to date", 8, 3, 3, nil, 0},
		{"after the future", 8, 3, 100, nil, 0},
		{"partly overwritten", 4, 10, 3, []string{"7", "8", "9", "10"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := wield.NewBus(tt.size)
			for i := range tt.events {
				publish(b, itoa(i+1))
			}
			s := b.SubscribeAfter(tt.after, nil)
			defer s.Close()
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
	for range 4096 + 1 {
		b.Publish(wield.Event{Type: wield.EventToolAdded})
	}
	e, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != 2 || s.Lost() != 1 {
		t.Errorf("first event %d with %d lost, want 2 with 1 lost (4096 kept)", e.ID, s.Lost())
	}
}

func TestBusPublishNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := wield.NewBus(16)
		stuck := b.Subscribe(nil) // never read
		defer stuck.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 10_000 {
				b.Publish(wield.Event{Type: wield.EventToolAdded})
			}
		}()
		select {
		case <-done:
		case <-time.After(time.Minute): // fake time: passes only if the publisher is stuck
			t.Fatal("Publish blocked on a subscriber that does not read")
		}
		if got := b.Last(); got != 10_000 {
			t.Errorf("Last() = %d", got)
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
		synctest.Wait()
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
	var last uint64
	for range publishers * each {
		e, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if e.ID != last+1 {
			t.Fatalf("event %d after %d", e.ID, last)
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
		ID: 7, Type: wield.EventExecutionCompleted, Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
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
		"id": 7.0, "type": "execution_completed", "time": "2025-01-02T03:04:05Z",
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
		synctest.Wait()
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
