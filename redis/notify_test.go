package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/redis"
)

func TestNotifierDeliversAcrossClients(t *testing.T) {
	prefix := "wield:test:" + wield.NewID()
	a := redis.NewNotifier(client(t), prefix)
	b := redis.NewNotifier(client(t), prefix)
	other := redis.NewNotifier(client(t), prefix+"-other")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, err := a.Decisions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.NotifyDecision(ctx, "ap_elsewhere"); err != nil {
		t.Fatal(err)
	}
	if err := b.NotifyDecision(ctx, "ap_1"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ch:
		if id != "ap_1" {
			t.Errorf("got %q, want ap_1 (another prefix's decision leaked)", id)
		}
	case <-ctx.Done():
		t.Fatal("no decision delivered")
	}
	cancel()
	for range ch { // closed when ctx ends
	}
}
