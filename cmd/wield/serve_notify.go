package main

import (
	"context"
	"sync"

	"github.com/wieldhq/wield"
	wredis "github.com/wieldhq/wield/redis"
)

// localNotifier is a wield.DecisionNotifier within one process: it lets
// the API's approval inbox wake a call that waits in the engine's inbox at
// once, rather than at the engine inbox's next look in the store.
type localNotifier struct {
	mu   sync.Mutex
	subs map[chan string]struct{}
}

func newLocalNotifier() *localNotifier { return &localNotifier{subs: map[chan string]struct{}{}} }

// NotifyDecision tells every listener of this process, never waiting for
// a slow one (listeners also look in the store now and then).
func (n *localNotifier) NotifyDecision(_ context.Context, id string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch := range n.subs {
		select {
		case ch <- id:
		default:
		}
	}
	return nil
}

// Decisions delivers the decisions notified until ctx ends.
func (n *localNotifier) Decisions(ctx context.Context) (<-chan string, error) {
	ch := make(chan string, 64)
	n.mu.Lock()
	n.subs[ch] = struct{}{}
	n.mu.Unlock()
	go func() {
		<-ctx.Done()
		n.mu.Lock()
		delete(n.subs, ch)
		close(ch)
		n.mu.Unlock()
	}()
	return ch, nil
}

// notifyingStore is a store that carries decisions with a notifier, so
// that every approval inbox over it (the engine's and the API's) hears them.
type notifyingStore struct {
	wield.Storage
	wield.DecisionNotifier
}

// decisionChannel gives the store the serve command hands to setup and to
// the API a way to carry decisions between the engine's approval inbox and
// the API's, and returns the notifier the API's inbox must use (nil: the
// store's own). A store that notifies (postgres) keeps its notifier; with
// Redis configured, both inboxes use Redis (setup makes the engine's); else
// an in-process notifier joins them.
func (a *app) decisionChannel(raw, observed wield.Storage) (wield.Storage, wield.DecisionNotifier, error) {
	if n, ok := raw.(wield.DecisionNotifier); ok {
		return notifyingStore{observed, n}, nil, nil
	}
	if a.cfg != nil && a.cfg.Redis.URL != "" {
		rdb, err := a.redisClient()
		if err != nil {
			return nil, nil, usageError{err}
		}
		a.closers = append(a.closers, rdb.Close) // after the API's inbox, which serve closes first
		return observed, wredis.NewNotifier(rdb, a.cfg.Redis.Prefix), nil
	}
	return notifyingStore{observed, newLocalNotifier()}, nil, nil
}
