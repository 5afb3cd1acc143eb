package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	got.ID, got.Time = 0, time.Time{}
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
