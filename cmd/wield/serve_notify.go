package main

import (
	"github.com/wieldhq/wield"
)

// notifyingStore is a store that carries decisions with a notifier: the
// metrics wrapper serve puts around a store would otherwise hide the store's
// own LISTEN/NOTIFY from the approval inbox.
type notifyingStore struct {
	wield.Storage
	wield.DecisionNotifier
}

// withDecisions is observed, the wrapped raw store, still carrying raw's
// decision notifications when it has them (PostgreSQL). With Redis
// configured, setup gives the inbox a Redis notifier; in one process the
// inbox wakes its own waiters.
func withDecisions(raw, observed wield.Storage) wield.Storage {
	if n, ok := raw.(wield.DecisionNotifier); ok {
		return notifyingStore{observed, n}
	}
	return observed
}
