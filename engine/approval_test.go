package engine_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
)

type pathIn struct {
	Path string `json:"path" description:"What to remove"`
}

// rmTool is a destructive tool that counts its runs in *ran.
func rmTool(ran *int) *wield.Tool {
	t := wield.Func("rm", "Remove a file", func(_ context.Context, in pathIn) (string, error) {
		*ran++
		return "removed " + in.Path, nil
	})
	t.Annotations.Destructive = true
	return t
}

func TestPermission(t *testing.T) {
	tests := []struct {
		name       string
		permission wield.Permission
		approver   wield.Approver
		want       failure
		ran        int
	}{
		{
			name:       "deny",
			permission: wield.PermissionDeny,
			approver:   approveAll(),
			want:       failure{ErrorType: wield.ErrPermissionDenied, Error: "Permission denied: tool 'rm' may not be called"},
		},
		{
			name: "destructive needs approval, no approver",
			want: failure{ErrorType: wield.ErrApprovalDenied, Error: "Tool 'rm' needs a person's approval and no approver is configured"},
		},
		{
			name:       "explicit confirm, no approver",
			permission: wield.PermissionConfirm,
			want:       failure{ErrorType: wield.ErrApprovalDenied, Error: "Tool 'rm' needs a person's approval and no approver is configured"},
		},
		{
			name:       "explicit auto overrides destructive",
			permission: wield.PermissionAuto,
			want:       failure{OK: true, Attempts: 1},
			ran:        1,
		},
		{
			name: "approver errs",
			approver: wield.ApproverFunc(func(context.Context, *wield.ApprovalRequest) (wield.Decision, error) {
				return wield.Decision{}, errors.New("inbox down")
			}),
			want: failure{ErrorType: wield.ErrApprovalDenied, Error: "Approval for tool 'rm' was not given: no decision"},
		},
		{
			name:     "approved",
			approver: approveAll(),
			want:     failure{OK: true, Attempts: 1},
			ran:      1,
		},
		{
			name: "denied with a reason",
			approver: wield.ApproverFunc(func(context.Context, *wield.ApprovalRequest) (wield.Decision, error) {
				return wield.Decision{Approved: false, By: "ann", Reason: "not that file"}, nil
			}),
			want: failure{ErrorType: wield.ErrApprovalDenied, Error: "The user denied the call of tool 'rm': not that file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := 0
			tool := rmTool(&ran)
			tool.Permission = tt.permission
			e := newEngine(t, &engine.Options{Approver: tt.approver}, tool)
			res := mustCall(t, e, wield.Call{Tool: "rm", Arguments: args(`{"path":"/tmp/x"}`)})
			if diff := cmp.Diff(tt.want, failureOf(res)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if ran != tt.ran {
				t.Errorf("the handler ran %d times, want %d", ran, tt.ran)
			}
		})
	}
}

func approveAll() wield.Approver {
	return wield.ApproverFunc(func(context.Context, *wield.ApprovalRequest) (wield.Decision, error) {
		return wield.Decision{Approved: true, By: "test"}, nil
	})
}

func TestApprovalInbox(t *testing.T) {
	tests := []struct {
		name   string
		decide func(t *testing.T, inbox *memstore.Approvals, req *wield.ApprovalRequest)
		want   failure
		output string
		ran    int
	}{
		{
			name: "approve",
			decide: func(t *testing.T, inbox *memstore.Approvals, req *wield.ApprovalRequest) {
				if err := inbox.Decide(req.ID, req.Digest, wield.Decision{Approved: true, By: "ann"}); err != nil {
					t.Fatal(err)
				}
			},
			want:   failure{OK: true, Attempts: 1},
			output: `"removed /tmp/x"`,
			ran:    1,
		},
		{
			name: "deny",
			decide: func(t *testing.T, inbox *memstore.Approvals, req *wield.ApprovalRequest) {
				if err := inbox.Decide(req.ID, req.Digest, wield.Decision{By: "ann", Reason: "keep it"}); err != nil {
					t.Fatal(err)
				}
			},
			want: failure{ErrorType: wield.ErrApprovalDenied, Error: "The user denied the call of tool 'rm': keep it"},
		},
		{
			name: "wrong digest refused",
			decide: func(t *testing.T, inbox *memstore.Approvals, req *wield.ApprovalRequest) {
				other := engine.Digest([]byte(`{"path":"/etc/passwd"}`))
				if err := inbox.Decide(req.ID, other, wield.Decision{Approved: true}); err == nil {
					t.Error("Decide with the digest of other arguments succeeded")
				}
				if n := len(inbox.Pending()); n != 1 {
					t.Fatalf("%d pending after a refused decision, want 1", n)
				}
				if err := inbox.Decide(req.ID, req.Digest, wield.Decision{Reason: "no"}); err != nil {
					t.Fatal(err)
				}
				if err := inbox.Decide(req.ID, req.Digest, wield.Decision{Approved: true}); !errors.Is(err, memstore.ErrDecided) {
					t.Errorf("second Decide = %v, want ErrDecided", err)
				}
			},
			want: failure{ErrorType: wield.ErrApprovalDenied, Error: "The user denied the call of tool 'rm': no"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ran := 0
				inbox := memstore.NewApprovals(nil)
				e := newEngine(t, &engine.Options{Approver: inbox}, rmTool(&ran))
				ctx := context.Background()
				caller := wield.ForConversation("agent", "conv")
				p := e.Go(ctx, wield.Call{Tool: "rm", Arguments: args(`{"path":"/tmp/x"}`), Caller: caller})
				synctest.Wait()
				if ran != 0 {
					t.Fatal("the tool ran before approval")
				}
				pending := inbox.Pending()
				if len(pending) != 1 {
					t.Fatalf("%d pending requests, want 1", len(pending))
				}
				req := pending[0]
				if req.Tool != "rm" || req.CallID == "" || req.ID == "" || !cmp.Equal(req.Caller, caller) ||
					string(req.Arguments) != `{"path":"/tmp/x"}` || req.ExpiresAt.Sub(req.CreatedAt) != engine.DefaultApprovalTimeout {
					t.Errorf("request = %+v", req)
				}
				tt.decide(t, inbox, req)
				res, err := p.Wait(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, failureOf(res)); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
				if string(res.Output) != tt.output || ran != tt.ran {
					t.Errorf("output %s, ran %d; want %s, %d", res.Output, ran, tt.output, tt.ran)
				}
				if res.CallID != req.CallID {
					t.Errorf("result call id %q, request call id %q", res.CallID, req.CallID)
				}
				if n := len(inbox.Pending()); n != 0 {
					t.Errorf("%d requests still pending", n)
				}
			})
		})
	}
}

func TestApprovalExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ran := 0
		inbox := memstore.NewApprovals(nil)
		e := newEngine(t, &engine.Options{Approver: inbox, ApprovalTimeout: time.Minute}, rmTool(&ran))
		start := time.Now()
		res := mustCall(t, e, wield.Call{Tool: "rm", Arguments: args(`{"path":"/tmp/x"}`)})
		if d := time.Since(start); d != time.Minute {
			t.Errorf("the call waited %v, want the approval timeout of 1m", d)
		}
		want := failure{ErrorType: wield.ErrApprovalDenied, Error: "Approval for tool 'rm' was not given: expired"}
		if diff := cmp.Diff(want, failureOf(res)); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
		if ran != 0 || len(inbox.Pending()) != 0 {
			t.Errorf("ran %d, %d pending; want 0, 0", ran, len(inbox.Pending()))
		}
	})
}

func TestApprovalCallerGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ran := 0
		inbox := memstore.NewApprovals(nil)
		e := newEngine(t, &engine.Options{Approver: inbox}, rmTool(&ran))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(10*time.Second, cancel)
		start := time.Now()
		res, err := e.Call(ctx, wield.Call{Tool: "rm", Arguments: args(`{"path":"/tmp/x"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("the call ended after %v, want 10s", d)
		}
		if res.ErrorType != wield.ErrCanceled || ran != 0 {
			t.Errorf("got %+v, ran %d; want canceled, not run", failureOf(res), ran)
		}
		if n := len(inbox.Pending()); n != 0 {
			t.Errorf("%d requests still pending after the caller left", n)
		}
	})
}

type abIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func TestApprovalDigest(t *testing.T) {
	var reqs []*wield.ApprovalRequest
	approver := wield.ApproverFunc(func(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
		if dl, ok := ctx.Deadline(); !ok || !dl.Equal(req.ExpiresAt) {
			t.Errorf("approver's deadline = %v, %v; want the request's expiry %v", dl, ok, req.ExpiresAt)
		}
		reqs = append(reqs, req)
		return wield.Decision{Approved: true}, nil
	})
	tool := wield.Func("ab", "Add", func(_ context.Context, in abIn) (int, error) { return in.A + in.B, nil })
	tool.Permission = wield.PermissionConfirm
	e := newEngine(t, &engine.Options{Approver: approver}, tool)
	for _, a := range []string{`{"a":1,"b":2}`, `{"b":2,"a":"1"}`, `{"a":1,"b":3}`} {
		if res := mustCall(t, e, wield.Call{Tool: "ab", Arguments: args(a)}); !res.OK {
			t.Fatalf("%s: %+v", a, failureOf(res))
		}
	}
	if len(reqs) != 3 {
		t.Fatalf("%d approval requests, want 3", len(reqs))
	}
	var got []string
	for _, r := range reqs {
		got = append(got, string(r.Arguments))
		if want := engine.Digest(r.Arguments); r.Digest != want {
			t.Errorf("request digest %s, Digest(%s) = %s", r.Digest, r.Arguments, want)
		}
	}
	// The request shows the arguments the tool will get: coerced, in the caller's order.
	if diff := cmp.Diff([]string{`{"a":1,"b":2}`, `{"b":2,"a":1}`, `{"a":1,"b":3}`}, got); diff != "" {
		t.Errorf("request arguments (-want +got):\n%s", diff)
	}
	if reqs[0].Digest != reqs[1].Digest {
		t.Errorf("the same arguments in another order have digests %s and %s", reqs[0].Digest, reqs[1].Digest)
	}
	if reqs[0].Digest == reqs[2].Digest {
		t.Errorf("different arguments share the digest %s", reqs[0].Digest)
	}
}

func TestDigest(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{`{"a":1,"b":2}`, ` { "a" : 1 , "b" : 2 } `, true},
		{`{"x":{"b":[1,{"d":1,"c":2}],"a":null}}`, `{"x":{"a":null,"b":[1,{"c":2,"d":1}]}}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `{"a":"1"}`, false},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		// Integers beyond float64's 53 bits must not collide.
		{`{"n":12345678901234567890}`, `{"n":12345678901234567891}`, false},
		{`{"n":9007199254740993}`, `{"n":9007199254740992}`, false},
	}
	for _, tt := range tests {
		da, db := engine.Digest([]byte(tt.a)), engine.Digest([]byte(tt.b))
		if (da == db) != tt.same {
			t.Errorf("Digest(%s) == Digest(%s) is %v, want %v", tt.a, tt.b, da == db, tt.same)
		}
		if len(da) != 64 {
			t.Errorf("Digest(%s) = %q, want 64 hex digits", tt.a, da)
		}
	}
}

// TestApproverPanics: an approver that panics, on a goroutine of the
// caller's (as a server's or a batch's), is no decision: the call does not
// run, the model reads no panic text, and the panic is counted. A notify
// callback of the in-memory inbox that panics leaves its request pending,
// to be decided as usual.
func TestApproverPanics(t *testing.T) {
	before := wield.CallbackPanics()
	ran := 0
	e := newEngine(t, &engine.Options{Approver: wield.ApproverFunc(func(context.Context, *wield.ApprovalRequest) (wield.Decision, error) {
		panic("approver bug: secret internals")
	})}, rmTool(&ran))
	resc := make(chan *wield.Result)
	go func() {
		res, _ := e.Call(context.Background(), wield.Call{Tool: "rm", Arguments: args(`{"path":"/tmp/x"}`)})
		resc <- res
	}()
	res := <-resc
	want := failure{ErrorType: wield.ErrApprovalDenied, Error: "Approval for tool 'rm' was not given: no decision"}
	if diff := cmp.Diff(want, failureOf(res)); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if ran != 0 {
		t.Errorf("the handler ran %d times", ran)
	}
	if got := wield.CallbackPanics()[wield.CallbackApprover] - before[wield.CallbackApprover]; got != 1 {
		t.Errorf("approver panics counted: %d, want 1", got)
	}

	synctest.Test(t, func(t *testing.T) {
		inbox := memstore.NewApprovals(func(*wield.ApprovalRequest) { panic("notify bug") })
		e := newEngine(t, &engine.Options{Approver: inbox}, rmTool(&ran))
		resc := make(chan *wield.Result)
		go func() {
			res, _ := e.Call(context.Background(), wield.Call{Tool: "rm", Arguments: args(`{"path":"/tmp/y"}`)})
			resc <- res
		}()
		synctest.Wait()
		pending := inbox.Pending()
		if len(pending) != 1 {
			t.Fatalf("%d pending after a panicking notify, want 1", len(pending))
		}
		if err := inbox.Decide(pending[0].ID, pending[0].Digest, wield.Decision{Approved: true, By: "ann"}); err != nil {
			t.Fatal(err)
		}
		if res := <-resc; !res.OK || ran != 1 {
			t.Errorf("approved after a panicking notify: %+v, ran %d", failureOf(res), ran)
		}
		if got := wield.CallbackPanics()[wield.CallbackApprovalNotify] - before[wield.CallbackApprovalNotify]; got != 1 {
			t.Errorf("approval_notify panics counted: %d, want 1", got)
		}
	})
}
