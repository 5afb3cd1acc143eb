package redis

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	goredis "github.com/redis/go-redis/v9"
	"github.com/wieldhq/wield"
)

// Relay shares events between servers: this server's events go to Redis,
// and the other servers' events come into this server's bus, marked with
// their Server, so that each server's live stream (SSE, the console) shows
// the calls of all. Delivery is best effort, like the bus itself.
type Relay struct {
	rdb     goredis.UniversalClient
	channel string
	bus     *wield.Bus
	server  string
	log     *slog.Logger
}

// NewRelay returns a relay between bus and the channel PREFIX:events
// ("wield" when prefix is empty); server names this server in the events
// the others receive, and must differ between servers.
func NewRelay(rdb goredis.UniversalClient, prefix string, bus *wield.Bus, server string, log *slog.Logger) *Relay {
	if prefix == "" {
		prefix = "wield"
	}
	if log == nil {
		log = slog.Default()
	}
	return &Relay{rdb: rdb, channel: prefix + ":events", bus: bus, server: server, log: log}
}

// Run relays until ctx ends; it returns ctx's error, or the error of a
// subscription that could not start. It returns once it no longer uses the
// client, so its owner may close the client then.
func (r *Relay) Run(ctx context.Context) error {
	sub := r.rdb.Subscribe(ctx, r.channel)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		return fmt.Errorf("redis relay: subscribe: %w", err)
	}
	local := r.bus.Subscribe(func(e *wield.Event) bool { return e.Server == "" })
	defer local.Close()
	var publishing sync.WaitGroup
	defer publishing.Wait()
	pctx, stop := context.WithCancel(ctx)
	defer stop() // before the wait: the publisher ends with it
	publishing.Go(func() {
		for {
			e, err := local.Next(pctx)
			if err != nil {
				return
			}
			e.Server = r.server
			b, err := json.Marshal(e)
			if err != nil {
				continue
			}
			if err := r.rdb.Publish(pctx, r.channel, b).Err(); err != nil && pctx.Err() == nil {
				r.log.Warn("redis relay: publish event", "error", err)
			}
		}
	})
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m, ok := <-ch:
			if !ok {
				return ctx.Err()
			}
			var e wield.Event
			if err := json.Unmarshal([]byte(m.Payload), &e); err != nil || e.Server == "" || e.Server == r.server {
				continue
			}
			// This bus gives the event an ID of its own, so that the IDs
			// of its stream increase and a client resumes it exactly; a
			// resume with another server's ID is answered as one from
			// elsewhere (see wield.Bus.SubscribeAfter).
			r.bus.Publish(e)
		}
	}
}
