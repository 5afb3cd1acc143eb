package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
)

// Notifier is a wield.DecisionNotifier on Redis pub/sub, for servers that
// share an approval store without LISTEN/NOTIFY (several SQLite-less
// stores, or a store behind a proxy that drops notifications).
type Notifier struct {
	rdb     goredis.UniversalClient
	channel string
}

// NewNotifier returns a notifier on the channel PREFIX:decisions; servers
// with the same prefix hear each other ("wield" when empty).
func NewNotifier(rdb goredis.UniversalClient, prefix string) *Notifier {
	if prefix == "" {
		prefix = "wield"
	}
	return &Notifier{rdb: rdb, channel: prefix + ":decisions"}
}

// NotifyDecision publishes the approval's id.
func (n *Notifier) NotifyDecision(ctx context.Context, id string) error {
	if err := n.rdb.Publish(ctx, n.channel, id).Err(); err != nil {
		return fmt.Errorf("redis: notify decision %s: %w", id, err)
	}
	return nil
}

// Decisions subscribes to the channel until ctx ends.
func (n *Notifier) Decisions(ctx context.Context) (<-chan string, error) {
	sub := n.rdb.Subscribe(ctx, n.channel)
	if _, err := sub.Receive(ctx); err != nil { // the subscription is confirmed
		sub.Close()
		return nil, fmt.Errorf("redis: listen for decisions: %w", err)
	}
	out := make(chan string, 16)
	go func() {
		defer close(out)
		defer sub.Close()
		ch := sub.Channel()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-ch:
				if !ok {
					return
				}
				select {
				case out <- m.Payload:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}
