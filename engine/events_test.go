package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

// ready returns the events a subscription has ready, without waiting.
func ready(s *wield.Subscription) []wield.Event {
	var out []wield.Event
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Next returns the events it has before it looks at ctx
	for range 1000 {
		e, err := s.Next(ctx)
		if err != nil {
			break
		}
		out = append(out, e)
	}
	return out
}

func TestEvents(t *testing.T) {
	fails := rawTool("fails", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("it broke")
	})
	ran := 0
	rm := rmTool(&ran)
	yes := rmTool(&ran)
	yes.Name = "rm_ok"
	approver := wield.ApproverFunc(func(_ context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
		return wield.Decision{Approved: req.Tool == "rm_ok"}, nil
	})
	tests := []struct {
		name string
		call wield.Call
		want []wield.EventType
		msgs []string
	}{
		{
			name: "success",
			call: wield.Call{Tool: "echo", Arguments: args(`{"message":"hi"}`)},
			want: []wield.EventType{wield.EventExecutionStarted, wield.EventExecutionCompleted},
			msgs: []string{"", ""},
		},
		{
			name: "tool failure",
			call: wield.Call{Tool: "fails"},
			want: []wield.EventType{wield.EventExecutionStarted, wield.EventExecutionFailed},
			msgs: []string{"", ""},
		},
		{
			name: "validation failure",
			call: wield.Call{Tool: "echo", Arguments: args(`{"msg":"hi"}`)},
			want: []wield.EventType{wield.EventValidationError, wield.EventExecutionFailed},
			msgs: []string{`invalid arguments for tool 'echo': msg: unknown property; expected one of: message; message: missing required property (expected string)`, ""},
		},
		{
			name: "arguments too large",
			call: wield.Call{Tool: "echo", Arguments: args(`{"message":"` + strings.Repeat("x", 2000) + `"}`)},
			want: []wield.EventType{wield.EventValidationError, wield.EventExecutionFailed},
			msgs: []string{"invalid arguments for tool 'echo': arguments of 2014 bytes exceed the limit of 1024 bytes", ""},
		},
		{
			name: "not found",
			call: wield.Call{Tool: "nope"},
			want: []wield.EventType{wield.EventExecutionFailed},
			msgs: []string{""},
		},
		{
			name: "approved",
			call: wield.Call{Tool: "rm_ok", Arguments: args(`{"path":"/tmp/x"}`)},
			want: []wield.EventType{wield.EventPermissionRequested, wield.EventPermissionDecided, wield.EventExecutionStarted, wield.EventExecutionCompleted},
			msgs: []string{"approval", "approved", "", ""},
		},
		{
			name: "denied",
			call: wield.Call{Tool: "rm", Arguments: args(`{"path":"/tmp/x"}`)},
			want: []wield.EventType{wield.EventPermissionRequested, wield.EventPermissionDecided, wield.EventExecutionFailed},
			msgs: []string{"approval", "denied", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := wield.NewBus(64)
			reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: quiet})
			reg.MustRegister(echoTool(), fails, rm, yes)
			e := engine.New(reg, &engine.Options{Approver: approver, Logger: quiet, MaxArguments: 1024})
			if e.Bus() != bus {
				t.Fatal("the engine does not publish on the registry's bus")
			}
			sub := bus.Subscribe(nil)
			defer sub.Close()
			caller := wield.ForConversation("agent-7", "conv-7")
			tt.call.Caller = caller
			res := mustCall(t, e, tt.call)

			evs := ready(sub)
			var types []wield.EventType
			var msgs []string
			for i, ev := range evs {
				types = append(types, ev.Type)
				msg := ev.Message
				if ev.Type == wield.EventPermissionRequested && len(msg) > len("approval") {
					msg = msg[:len("approval")] // then the request's id
				}
				// The approval's ID is a field of both permission events,
				// the same in each, and of no other event.
				switch ev.Type {
				case wield.EventPermissionRequested:
					if ev.ApprovalID == "" || ev.Message != "approval "+ev.ApprovalID {
						t.Errorf("event %d %s: approval ID %q, message %q", i, ev.Type, ev.ApprovalID, ev.Message)
					}
				case wield.EventPermissionDecided:
					if ev.ApprovalID == "" || ev.ApprovalID != evs[0].ApprovalID {
						t.Errorf("event %d %s: approval ID %q, want %q as requested", i, ev.Type, ev.ApprovalID, evs[0].ApprovalID)
					}
				default:
					if ev.ApprovalID != "" {
						t.Errorf("event %d %s: approval ID %q, want none", i, ev.Type, ev.ApprovalID)
					}
				}
				msgs = append(msgs, msg)
				if ev.CallID != res.CallID || ev.Tool != tt.call.Tool || ev.CallerID != "agent-7" || ev.ConversationID != "conv-7" {
					t.Errorf("event %d %s: call %q tool %q caller %q conversation %q", i, ev.Type, ev.CallID, ev.Tool, ev.CallerID, ev.ConversationID)
				}
				if i > 0 && (ev.ID <= evs[i-1].ID || ev.Time.Before(evs[i-1].Time)) {
					t.Errorf("event %d %s (id %s, %v) is not after event %d (id %s, %v)", i, ev.Type, ev.ID, ev.Time, i-1, evs[i-1].ID, evs[i-1].Time)
				}
			}
			if diff := cmp.Diff(tt.want, types); diff != "" {
				t.Fatalf("event types (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.msgs, msgs); diff != "" {
				t.Errorf("event messages (-want +got):\n%s", diff)
			}
			last := evs[len(evs)-1]
			want := wield.Event{Type: last.Type, ErrorType: res.ErrorType, Error: res.Error, Duration: res.Duration, Attempts: res.Attempts, Time: res.FinishedAt}
			got := wield.Event{Type: last.Type, ErrorType: last.ErrorType, Error: last.Error, Duration: last.Duration, Attempts: last.Attempts, Time: last.Time}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("last event (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventsOnOptionsBus(t *testing.T) {
	regBus, ownBus := wield.NewBus(16), wield.NewBus(16)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: regBus, Logger: quiet})
	reg.MustRegister(echoTool())
	e := engine.New(reg, &engine.Options{Bus: ownBus, Logger: quiet})
	before := regBus.Last()
	own := ownBus.Subscribe(nil)
	defer own.Close()
	mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"x"}`)})
	if got := len(ready(own)); regBus.Last() != before || got != 2 {
		t.Errorf("registry bus's last event %q (was %q), own bus %d events; want no new one, 2", regBus.Last(), before, got)
	}
	// No bus at all is fine too.
	e = newEngine(t, nil, echoTool())
	if e.Bus() != nil {
		t.Errorf("Bus() = %v, want nil", e.Bus())
	}
	if res := mustCall(t, e, wield.Call{Tool: "echo", Arguments: args(`{"message":"x"}`)}); !res.OK {
		t.Errorf("%+v", failureOf(res))
	}
}

// TestSlowSubscriber checks that subscribers that never read, or never
// return, do not slow calls down: they lose events instead.
func TestSlowSubscriber(t *testing.T) {
	const ring, workers, perWorker = 64, 4, 2500
	bus := wield.NewBus(ring)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: quiet})
	reg.MustRegister(echoTool())
	e := engine.New(reg, &engine.Options{Logger: quiet})

	idle := bus.Subscribe(nil) // never reads
	defer idle.Close()
	stuck := make(chan struct{})
	var once sync.Once
	entered := make(chan struct{})
	stop := bus.Listen(nil, func(wield.Event) { // reads one event and stays there
		once.Do(func() { close(entered) })
		<-stuck
	})

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				res, err := e.Call(context.Background(), wield.Call{Tool: "echo", Arguments: args(`{"message":"x"}`)})
				if err != nil || !res.OK {
					errs <- fmt.Errorf("worker %d call %d: %v %+v", w, i, err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	<-entered
	stop()
	close(stuck)

	const events = 2 * workers * perWorker
	if ev, err := idle.Next(context.Background()); err != nil || ev.Type != wield.EventExecutionStarted && ev.Type != wield.EventExecutionCompleted {
		t.Fatalf("Next = %+v, %v", ev, err)
	}
	if n := idle.Lost(); n != events-ring {
		t.Errorf("the idle subscriber lost %d events, want %d", n, events-ring)
	}
	if bus.Lost() < idle.Lost() {
		t.Errorf("bus lost %d, less than one of its subscribers (%d)", bus.Lost(), idle.Lost())
	}
}
