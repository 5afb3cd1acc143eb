package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

// TestProgressEvents: a handler's reports become execution_progress events
// between the call's start and end, at most one per wield.ProgressInterval
// but the first reaching the total at once, their messages cut and escaped for
// a person; every report reaches the caller's reporter, its message as an
// event would carry it; a report that is not
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

	up := &lines{}
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
	// Every report, each message as an event would carry it.
	wantUp := []string{"1/4 one", "2/4 two", `3/4 three\x1b[2J\u202e`, "4/4 done", "6/0 " + long[:1024] + "…"}
	if diff := cmp.Diff(wantUp, up.got); diff != "" {
		t.Errorf("the caller's reporter (-want +got):\n%s", diff)
	}
}

// TestProgressBounds: what a handler reports reaches the event stream
// bounded and whole. A report repeating its total is published out of turn
// once, then keeps the interval (a handler, or an imported server, cannot
// flood the bus); the newest report kept back within an interval is
// published when the interval is over; a report that is not a finite
// number, even one made to the reporter itself, publishes nothing (no JSON
// could carry it); and a message is redacted before it is cut, so a cut
// through a secret does not hide it from the redactor.
func TestProgressBounds(t *testing.T) {
	pad := strings.Repeat("a", 1000)
	for _, tc := range []struct {
		name   string
		report func(ctx context.Context)
		want   []string
	}{
		{"total repeated", func(ctx context.Context) {
			for range 1000 {
				wield.ReportProgress(ctx, 1, 1, "again")
			}
			time.Sleep(2 * time.Second)
		}, []string{"1/1 again @0s", "1/1 again @500ms"}},
		{"newest wins", func(ctx context.Context) {
			wield.ReportProgress(ctx, 1, 4, "one")
			wield.ReportProgress(ctx, 2, 4, "two")
			time.Sleep(100 * time.Millisecond)
			wield.ReportProgress(ctx, 3, 4, "three")
			time.Sleep(2 * time.Second)
		}, []string{"1/4 one @0s", "3/4 three @500ms"}},
		{"not a number", func(ctx context.Context) {
			r := ctx.Value(wield.ProgressKey).(wield.ProgressReporter)
			r.ReportProgress(math.NaN(), 1, "nan")
			r.ReportProgress(1, math.Inf(1), "inf")
			r.ReportProgress(1, 2, "half")
		}, []string{"1/2 half @0s"}},
		{"secret at the cut", func(ctx context.Context) {
			wield.ReportProgress(ctx, 1, 2, pad+" https://bob:hunter2hunter2@example.com/x")
		}, []string{"1/2 " + pad + " https://[REDACTED]@exam… @0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				tool := wield.Raw("work", "reports progress", &jsonschema.Schema{Type: "object"},
					wield.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
						tc.report(ctx)
						return json.RawMessage(`{}`), nil
					}))
				bus := wield.NewBus(4096)
				reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
				reg.MustRegister(tool)
				e := New(reg, nil)
				defer e.Close(context.Background())
				sub := bus.Subscribe(func(ev *wield.Event) bool { return ev.Type == wield.EventExecutionProgress })
				defer sub.Close()
				if res, err := e.Call(context.Background(), wield.Call{Tool: "work"}); err != nil || !res.OK {
					t.Fatalf("call: %v %+v", err, res)
				}
				synctest.Wait()
				var got []string
				for _, ev := range published(sub, 2000) {
					if _, err := json.Marshal(ev); err != nil {
						t.Errorf("event %+v: %v", ev, err)
					}
					got = append(got, fmt.Sprintf("%v/%v %s @%v", ev.Progress.Progress, ev.Progress.Total, ev.Message, ev.Time.Sub(start)))
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// lines is a caller's progress reporter (an MCP server's, say): the
// reports it was told, whole.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (r *lines) ReportProgress(done, total float64, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("%v/%v %s", done, total, message))
}

// TestProgressInner: the reports of a program's inner calls reach the
// program's caller, and its events, as the program's count of them, with
// no total, the inner figures and message in the caller's message (and in
// no event of the program's, which a key that may not see the inner tool
// may see): the program's
// progress increases with each report (as MCP requires of a client's
// notices) and never ends full while the program goes on, though each
// inner call ends full. The inner calls' own events keep their figures.
func TestProgressInner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		bus := wield.NewBus(256)
		reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
		e := New(reg, nil)
		defer e.Close(context.Background())
		reg.MustRegister(wield.Raw("work", "reports progress", &jsonschema.Schema{Type: "object"},
			wield.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
				wield.ReportProgress(ctx, 1, 2, "a")
				time.Sleep(time.Second)
				wield.ReportProgress(ctx, 2, 2, "b")
				return json.RawMessage(`{}`), nil
			})))
		reg.MustRegister(wield.Raw("program", "calls work twice", &jsonschema.Schema{Type: "object"},
			wield.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
				for range 2 {
					if res, err := e.Call(ctx, wield.Call{Tool: "work"}); err != nil || !res.OK {
						return nil, fmt.Errorf("inner call: %v %+v", err, res)
					}
				}
				return json.RawMessage(`{}`), nil
			})))
		sub := bus.Subscribe(func(ev *wield.Event) bool { return ev.Type == wield.EventExecutionProgress })
		defer sub.Close()
		up := &lines{}
		ctx := context.WithValue(context.Background(), wield.ProgressKey, up)
		if res, err := e.Call(ctx, wield.Call{Tool: "program"}); err != nil || !res.OK {
			t.Fatalf("call: %v %+v", err, res)
		}
		synctest.Wait()
		got := map[string][]string{}
		for _, ev := range published(sub, 100) {
			got[ev.Tool] = append(got[ev.Tool], fmt.Sprintf("%v/%v %s @%v", ev.Progress.Progress, ev.Progress.Total, ev.Message, ev.Time.Sub(start)))
		}
		want := map[string][]string{
			"program": {"1/0  @0s", "2/0  @1s", "3/0  @1.5s", "4/0  @2s"},
			"work":    {"1/2 a @0s", "2/2 b @1s", "1/2 a @1s", "2/2 b @2s"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		wantUp := []string{"1/0 1 of 2: a", "2/0 2 of 2: b", "3/0 1 of 2: a", "4/0 2 of 2: b"}
		if diff := cmp.Diff(wantUp, up.got); diff != "" {
			t.Errorf("the program's caller's reporter (-want +got):\n%s", diff)
		}
	})
}

// TestProgressCallerToldAsEvent: the caller's reporter (an MCP server's,
// which sends notifications/progress) is told each message as the call's
// event carries it: redacted, cut to 1 KiB and escaped, a program's inner
// call's message too (results are not this test's business).
func TestProgressCallerToldAsEvent(t *testing.T) {
	pad := strings.Repeat("a", 1000)
	messages := []string{
		"fetching https://bob:hunter2hunter2@example.com/x",
		"token=s3cr3t-value-1234 sent",
		"\x1b[2J\u202ecleared",
		pad + " https://bob:hunter2hunter2@example.com/x",
	}
	synctest.Test(t, func(t *testing.T) {
		bus := wield.NewBus(256)
		reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
		e := New(reg, nil)
		defer e.Close(context.Background())
		reg.MustRegister(wield.Raw("work", "reports progress", &jsonschema.Schema{Type: "object"},
			wield.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
				for i, m := range messages {
					wield.ReportProgress(ctx, float64(i+1), float64(len(messages)+1), m)
					time.Sleep(time.Second) // each is published
				}
				return json.RawMessage(`{}`), nil
			})))
		reg.MustRegister(wield.Raw("program", "calls work", &jsonschema.Schema{Type: "object"},
			wield.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
				if res, err := e.Call(ctx, wield.Call{Tool: "work"}); err != nil || !res.OK {
					return nil, fmt.Errorf("inner call: %v %+v", err, res)
				}
				return json.RawMessage(`{}`), nil
			})))
		for _, tool := range []string{"work", "program"} {
			sub := bus.Subscribe(func(ev *wield.Event) bool { return ev.Type == wield.EventExecutionProgress && ev.Tool == "work" })
			up := &lines{}
			ctx := context.WithValue(context.Background(), wield.ProgressKey, up)
			if res, err := e.Call(ctx, wield.Call{Tool: tool}); err != nil || !res.OK {
				t.Fatalf("call %s: %v %+v", tool, err, res)
			}
			synctest.Wait()
			var events []string
			for _, ev := range published(sub, 100) {
				events = append(events, ev.Message)
			}
			sub.Close()
			var told []string
			for _, l := range up.got {
				_, m, _ := strings.Cut(l, " ")
				if tool == "program" {
					_, m, _ = strings.Cut(m, ": ") // after the inner figures
				}
				told = append(told, m)
			}
			if len(events) != len(messages) {
				t.Fatalf("%s: %d events of work, want %d: %q", tool, len(events), len(messages), events)
			}
			for _, m := range told {
				if strings.Contains(m, "hunter2") || strings.Contains(m, "s3cr3t") || strings.ContainsAny(m, "\x1b\u202e") || len(m) > maxProgressMessage+len("…")+len(" of 5: ")+8 {
					t.Errorf("%s: the caller was told %q", tool, m)
				}
			}
			if tool == "work" {
				if diff := cmp.Diff(events, told); diff != "" {
					t.Errorf("work: the caller's messages, against the events' (-events +caller):\n%s", diff)
				}
			}
		}
	})
}

// TestProgressLongCall: a call reporting every 100 ms for five minutes
// (as an imported server may, at the relay's pace) publishes few enough
// events that it does not push the other calls' events out of the bus's
// history (DefaultBusSize): each event comes a sixteenth of the call's
// reporting time after the one before, once that is more than
// wield.ProgressInterval, the newest report each time; the last report,
// which reaches the total, is published at once.
func TestProgressLongCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		bus := wield.NewBus(wield.DefaultBusSize)
		reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
		e := New(reg, nil)
		defer e.Close(context.Background())
		const n = 3000 // one every 100 ms
		reg.MustRegister(wield.Raw("long", "reports progress", &jsonschema.Schema{Type: "object"},
			wield.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
				for i := range n {
					wield.ReportProgress(ctx, float64(i+1), n, "")
					time.Sleep(100 * time.Millisecond)
				}
				return json.RawMessage(`{}`), nil
			})))
		sub := bus.Subscribe(func(ev *wield.Event) bool { return ev.Type == wield.EventExecutionProgress })
		defer sub.Close()
		if res, err := e.Call(context.Background(), wield.Call{Tool: "long", Timeout: time.Hour}); err != nil || !res.OK {
			t.Fatalf("call: %v %+v", err, res)
		}
		synctest.Wait()
		var got []time.Duration
		var last float64
		for _, ev := range published(sub, n) {
			at := ev.Time.Sub(start)
			// The newest report: the one made at that instant, or the one
			// before when the event's timer ran first.
			if newest := float64(at/(100*time.Millisecond)) + 1; ev.Progress.Progress != newest && ev.Progress.Progress != newest-1 {
				t.Errorf("event at %v: progress %v, want the newest report, %v", at, ev.Progress.Progress, newest)
			}
			got, last = append(got, at), ev.Progress.Progress
		}
		if len(got) < 16 || len(got) > 80 || last != n {
			t.Fatalf("%d events over five minutes, the last %v of %d, want 16 to 80 ending with the total: at %v", len(got), last, n, got)
		}
		t.Logf("%d events", len(got))
		for i := 1; i < len(got)-1; i++ { // the last is the total's
			if gap, least := got[i]-got[i-1], max(wield.ProgressInterval, got[i-1]/16); gap < least {
				t.Errorf("event %d at %v, %v after the one before, want at least %v", i, got[i], gap, least)
			}
		}
	})
}

// TestProgressInnerApproval: what an approver reports while a program's
// inner call waits for a decision (mcpbridge's approver tells an MCP
// client what it waits for) reaches the program's caller as an inner
// report, counted, not as the program's own figures (which went back to 0
// at the second inner call's wait).
func TestProgressInnerApproval(t *testing.T) {
	bus := wield.NewBus(64)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
	approver := wield.ApproverFunc(func(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
		wield.ReportProgress(ctx, 0, 0, "waiting for approval")
		return wield.Decision{Approved: true, By: "test"}, nil
	})
	e := New(reg, &Options{Approver: approver})
	defer e.Close(context.Background())
	work := wield.Raw("work", "reports progress", &jsonschema.Schema{Type: "object"},
		wield.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			wield.ReportProgress(ctx, 1, 1, "done")
			return json.RawMessage(`{}`), nil
		}))
	work.Permission = wield.PermissionConfirm
	work.AllowedCallers = []string{"direct", "program"}
	reg.MustRegister(work)
	reg.MustRegister(wield.Raw("program", "calls work twice", &jsonschema.Schema{Type: "object"},
		wield.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			for range 2 {
				c := wield.Call{Tool: "work", Caller: wield.Caller{ID: "p", Type: wield.CallerProgram}}
				if res, err := e.Call(ctx, c); err != nil || !res.OK {
					return nil, fmt.Errorf("inner call: %v %+v", err, res)
				}
			}
			return json.RawMessage(`{}`), nil
		})))
	up := &lines{}
	ctx := context.WithValue(context.Background(), wield.ProgressKey, up)
	if res, err := e.Call(ctx, wield.Call{Tool: "program"}); err != nil || !res.OK {
		t.Fatalf("call: %v %+v", err, res)
	}
	want := []string{"1/0 0: waiting for approval", "2/0 1 of 1: done", "3/0 0: waiting for approval", "4/0 1 of 1: done"}
	if diff := cmp.Diff(want, up.got); diff != "" {
		t.Errorf("the program's caller's reporter (-want +got):\n%s", diff)
	}
}

// published is what sub holds now, at most max events: Next with a context
// already ended gives an event that is there and fails when none is.
func published(sub *wield.Subscription, max int) []wield.Event {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out []wield.Event
	for len(out) < max {
		ev, err := sub.Next(ctx)
		if err != nil {
			break
		}
		out = append(out, ev)
	}
	return out
}
