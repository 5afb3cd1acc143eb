package main

import (
	"context"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
)

// client returns the API client of --server, or nil when the commands work
// on the local registry and store.
func (a *app) client() *httpapi.Client {
	if a.server == "" {
		return nil
	}
	return httpapi.NewClient(a.server, a.key)
}

// remoteRecords answers the record queries of `calls` and `stats` from a
// running server, in the shapes the local store gives.
type remoteRecords struct{ c *httpapi.Client }

func (r remoteRecords) Calls(ctx context.Context, q wield.CallQuery) (wield.CallPage, error) {
	list, err := r.c.Calls(ctx, q)
	if err != nil {
		return wield.CallPage{}, err
	}
	page := wield.CallPage{Next: list.Next}
	for _, rec := range list.Calls {
		page.Records = append(page.Records, rec.Record)
	}
	return page, nil
}

func (r remoteRecords) Summary(ctx context.Context, conversation string) (wield.Summary, error) {
	s, err := r.c.Summary(ctx, conversation)
	if err != nil {
		return wield.Summary{}, err
	}
	return *s, nil
}

func (r remoteRecords) Statistics(ctx context.Context, q wield.StatsQuery) (wield.Statistics, error) {
	s, err := r.c.Statistics(ctx, q)
	if err != nil {
		return wield.Statistics{}, err
	}
	conv := func(l httpapi.LatencySummary) wield.LatencyStats {
		ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
		return wield.LatencyStats{Count: l.Count, Failures: l.Failures, SuccessRate: l.SuccessRate, P50: ms(l.P50MS), P95: ms(l.P95MS), Max: ms(l.MaxMS)}
	}
	out := wield.Statistics{Overall: conv(s.Overall), Tools: map[string]wield.LatencyStats{}, Categories: map[wield.Category]wield.LatencyStats{}}
	for k, v := range s.Tools {
		out.Tools[k] = conv(v)
	}
	for k, v := range s.Categories {
		out.Categories[wield.Category(k)] = conv(v)
	}
	return out, nil
}

// records is what `calls` and `stats` read: the server's, or the local
// store's.
type records interface {
	Calls(ctx context.Context, q wield.CallQuery) (wield.CallPage, error)
	Summary(ctx context.Context, conversation string) (wield.Summary, error)
	Statistics(ctx context.Context, q wield.StatsQuery) (wield.Statistics, error)
}

// withRecords runs fn with the records of --server, else of --db.
func (a *app) withRecords(ctx context.Context, fn func(records) error) error {
	if c := a.client(); c != nil {
		return fn(remoteRecords{c})
	}
	return a.withStore(ctx, func(s wield.Storage) error { return fn(s) })
}
