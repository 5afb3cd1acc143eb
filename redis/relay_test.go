package redis_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goredis "github.com/redis/go-redis/v9"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/redis"
)

func TestRelaySharesEventsBetweenServers(t *testing.T) {
	prefix := "wield:test:" + wield.NewID()
	busA, busB := wield.NewBus(0), wield.NewBus(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 2)
	go func() { done <- redis.NewRelay(client(t), prefix, busA, "a", nil).Run(ctx) }()
	go func() { done <- redis.NewRelay(client(t), prefix, busB, "b", nil).Run(ctx) }()

	subB := busB.Subscribe(nil)
	defer subB.Close()
	subA := busA.Subscribe(nil)
	defer subA.Close()
	// The relays subscribe asynchronously: publish on A until B hears one
	// (bounded), then check what arrived.
	deadline := time.Now().Add(10 * time.Second)
	want := wield.Event{Type: wield.EventExecutionCompleted, Tool: "echo", CallID: "c1", ConversationID: "conv", Duration: 1500 * time.Microsecond, Server: "a"}
	var got wield.Event
	for {
		busA.Publish(wield.Event{Type: want.Type, Tool: want.Tool, CallID: want.CallID, ConversationID: want.ConversationID, Duration: want.Duration})
		rctx, rcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		e, err := subB.Next(rctx)
		rcancel()
		if err == nil {
			got = e
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("B never received A's events")
		}
	}
	if len(got.ID) != wield.IDLen {
		t.Errorf("relayed event's ID %q is not a wield.NewID", got.ID)
	}
	got.ID, got.Time = "", time.Time{}
	want.Time = time.Time{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("relayed event (-want +got):\n%s", diff)
	}
	// A does not get its own events back: everything A's bus holds is local.
	rctx, rcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer rcancel()
	for {
		e, err := subA.Next(rctx)
		if err != nil {
			break
		}
		if e.Server != "" {
			t.Fatalf("A received an event from %q: a loop", e.Server)
		}
	}
	cancel()
	for range 2 {
		if err := <-done; err != context.Canceled {
			t.Errorf("relay ended with %v", err)
		}
	}
}

// publishHook holds each PUBLISH until its context ends, then a moment
// longer, and counts those still held.
type publishHook struct {
	entered chan struct{}
	held    atomic.Int32
}

func (h *publishHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *publishHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

func (h *publishHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmd.Name() != "publish" {
			return next(ctx, cmd)
		}
		h.held.Add(1)
		defer h.held.Add(-1)
		select {
		case h.entered <- struct{}{}:
		default:
		}
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond) // a reply on its way
		return ctx.Err()
	}
}

// TestRelayRunReturnsWhenDone: Run returns only once nothing of it uses the
// client, so that its owner can close the client right after.
func TestRelayRunReturnsWhenDone(t *testing.T) {
	rdb := client(t)
	hook := &publishHook{entered: make(chan struct{}, 1)}
	rdb.AddHook(hook)
	bus := wield.NewBus(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- redis.NewRelay(rdb, "wield:test:"+wield.NewID(), bus, "a", nil).Run(ctx) }()
	// The relay subscribes to the bus asynchronously: publish (bounded)
	// until one of its publications is under way.
	for i := 0; ; i++ {
		bus.Publish(wield.Event{Type: wield.EventExecutionCompleted, Tool: "echo"})
		select {
		case <-hook.entered:
		case <-time.After(20 * time.Millisecond):
			if i == 500 {
				t.Fatal("the relay never published")
			}
			continue
		}
		break
	}
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return 10 s after its context ended")
	}
	if n := hook.held.Load(); n != 0 {
		t.Errorf("Run returned with %d publications still using the client", n)
	}
}
