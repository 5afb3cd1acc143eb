package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/limit"
)

// TestCanceledSaysWhy: a call canceled with a cause a model may read (a
// *wield.Error of type canceled, as a server shutting down gives) says it,
// while running and while waiting for capacity; any other cause stays out
// of the result.
func TestCanceledSaysWhy(t *testing.T) {
	shutdown := &wield.Error{Type: wield.ErrCanceled, Message: "the server shut down: its grace period of 1s ended"}
	internal := errors.New("pq: connection reset by 10.0.0.7")
	tests := []struct {
		name  string
		cause error
		full  bool // a call holds the only slot, so the call waits for capacity
		want  string
	}{
		{"running, shutdown", shutdown, false, "the call was canceled before the tool finished: the server shut down: its grace period of 1s ended"},
		{"running, other cause", internal, false, "the call was canceled before the tool finished"},
		{"running, no cause", nil, false, "the call was canceled before the tool finished"},
		{"waiting, shutdown", shutdown, true, "the call was canceled while waiting for capacity: the server shut down: its grace period of 1s ended"},
		{"waiting, other cause", internal, true, "the call was canceled while waiting for capacity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tool := rawTool("hang", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
					<-ctx.Done()
					return nil, ctx.Err()
				})
				lim, err := limit.New(limit.Config{MaxConcurrent: 1})
				if err != nil {
					t.Fatal(err)
				}
				e := newEngine(t, &engine.Options{Limiter: lim}, tool)
				if tt.full {
					hold, release := context.WithCancel(context.Background())
					defer release()
					go e.Call(hold, wield.Call{Tool: "hang"})
					synctest.Wait()
				}
				ctx, cancel := context.WithCancelCause(context.Background())
				time.AfterFunc(time.Second, func() { cancel(tt.cause) })
				res, err := e.Call(ctx, wield.Call{Tool: "hang"})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(wield.ErrCanceled, res.ErrorType); diff != "" {
					t.Errorf("error type (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.want, res.Error); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			})
		})
	}
}
