package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

// recorder is a caller's progress reporter (an MCP server's, say).
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) ReportProgress(done, total float64, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("%v/%v %.12s", done, total, message))
}

// TestProgressEvents: a handler's reports become execution_progress events
// between the call's start and end, at most one per wield.ProgressInterval
// but the one reaching the total always, their messages cut and escaped for
// a person; every report reaches the caller's reporter; a report that is not
// a finite number, or that comes after the call has ended, goes nowhere.
func TestProgressEvents(t *testing.T) {
	base := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var clock time.Duration
	progressNow = func() time.Time { return base.Add(clock) }
	defer func() { progressNow = time.Now }()

	var saved context.Context
	long := strings.Repeat("é", 1000) // 2,000 bytes
	tool := wield.Raw("work", "reports progress", &jsonschema.Schema{Type: "object"},
		wield.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			saved = ctx
			for _, r := range []struct {
				at          time.Duration
				done, total float64
				msg         string
			}{
				{0, 1, 4, "one"},
				{100 * time.Millisecond, 2, 4, "two"}, // within the interval: no event
				{600 * time.Millisecond, 3, 4, "three\x1b[2J\u202e"},
				{700 * time.Millisecond, 4, 4, "done"}, // the total: an event however soon
				{800 * time.Millisecond, math.NaN(), 4, "nan"},
				{900 * time.Millisecond, 5, math.Inf(1), "inf"},
				{2 * time.Second, 6, 0, long},
			} {
				clock = r.at
				wield.ReportProgress(ctx, r.done, r.total, r.msg)
			}
			return json.RawMessage(`{}`), nil
		}))
	bus := wield.NewBus(64)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
	reg.MustRegister(tool)
	e := New(reg, nil)
	defer e.Close(context.Background())
	sub := bus.Subscribe(func(ev *wield.Event) bool { return ev.CallID != "" })
	defer sub.Close()

	up := &recorder{}
	ctx := context.WithValue(context.Background(), wield.ProgressKey, up)
	res, err := e.Call(ctx, wield.Call{Tool: "work", Caller: wield.ForConversation("agent-1", "conv-1")})
	if err != nil || !res.OK {
		t.Fatalf("call: %v %+v", err, res)
	}
	clock = 3 * time.Second
	wield.ReportProgress(saved, 7, 8, "after the end")

	var got []string
	for range 8 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ev, err := sub.Next(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != wield.EventExecutionProgress {
			got = append(got, string(ev.Type))
			if ev.Type == wield.EventExecutionCompleted {
				break
			}
			continue
		}
		if ev.CallID != res.CallID || ev.Tool != "work" || ev.CallerID != "agent-1" || ev.ConversationID != "conv-1" {
			t.Errorf("event %+v names another call", ev)
		}
		got = append(got, fmt.Sprintf("%v/%v %s @%v", ev.Progress.Progress, ev.Progress.Total, ev.Message, ev.Time.Sub(base)))
	}
	want := []string{
		"execution_started",
		"1/4 one @0s",
		`3/4 three\x1b[2J\u202e @600ms`,
		"4/4 done @700ms",
		"6/0 " + long[:1024] + "… @2s",
		"execution_completed",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	wantUp := []string{"1/4 one", "2/4 two", "3/4 three\x1b[2J\u202e", "4/4 done", "6/0 " + strings.Repeat("é", 12)}
	if diff := cmp.Diff(wantUp, up.got); diff != "" {
		t.Errorf("the caller's reporter (-want +got):\n%s", diff)
	}
}
