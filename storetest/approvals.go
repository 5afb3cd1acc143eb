package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

func request(id string, created, expires time.Time) *wield.ApprovalRequest {
	return &wield.ApprovalRequest{
		ID:        id,
		CallID:    "call-" + id,
		Tool:      "delete_file",
		Caller:    wield.Caller{ID: "agent-1", Type: wield.CallerConversationAgent, ConversationID: "conv-1", Variables: map[string]any{"k": "v"}},
		Arguments: json.RawMessage(`{"path":"/tmp/x"}`),
		Digest:    "digest-" + id,
		CreatedAt: created,
		ExpiresAt: expires,
	}
}

func testApprovals(t *testing.T, e *env) {
	ctx := t.Context()
	now := time.Now()
	a := request("a1", now.Add(-3*time.Minute), now.Add(time.Hour))
	b := request("a2", now.Add(-2*time.Minute), now.Add(time.Hour))
	c := request("a3", now.Add(-time.Minute), time.Time{}) // never expires
	c.Timeout = 1500 * time.Millisecond                    // the call's own, kept to the nanosecond
	b.RequestedBy = "key:key_0a1b2c"                       // the API key that asked, kept for the decision
	for _, r := range []*wield.ApprovalRequest{a, b, c} {
		if err := e.s.CreateApproval(ctx, r); err != nil {
			t.Fatalf("CreateApproval: %v", err)
		}
	}
	if err := e.s.CreateApproval(ctx, request("a1", now, now.Add(time.Hour))); err == nil {
		t.Error("CreateApproval with a taken id: no error")
	}
	pending := func(r *wield.ApprovalRequest) *wield.Approval {
		return &wield.Approval{ApprovalRequest: *r, Status: wield.ApprovalPending}
	}
	got, err := e.s.Approval(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pending(a), got, cmpOpts); diff != "" {
		t.Errorf("Approval after CreateApproval (-want +got)\n%s", diff)
	}
	list := func(status wield.ApprovalStatus, want ...*wield.Approval) {
		t.Helper()
		got, err := e.s.Approvals(ctx, status)
		if err != nil {
			t.Fatalf("Approvals(%q): %v", status, err)
		}
		if diff := cmp.Diff(want, got, cmpOpts); diff != "" {
			t.Errorf("Approvals(%q) (-want +got)\n%s", status, diff)
		}
	}
	list(wield.ApprovalPending, pending(a), pending(b), pending(c))

	// A decision on other arguments is refused, and changes nothing.
	_, err = e.s.DecideApproval(ctx, "a1", "digest-other", wield.Decision{Approved: true, By: "eve"})
	mustErr(t, "decision with another digest", err, wield.ErrDigestMismatch)
	if got, _ := e.s.Approval(ctx, "a1"); got == nil || got.Status != wield.ApprovalPending || got.Decision != nil {
		t.Errorf("after a refused decision: %+v, want it pending", got)
	}

	before := time.Now()
	decided, err := e.s.DecideApproval(ctx, "a1", "digest-a1", wield.Decision{Approved: true, By: "ann", Reason: "fine", Note: "from the phone"})
	after := time.Now()
	if err != nil {
		t.Fatalf("DecideApproval: %v", err)
	}
	if decided.DecidedAt.Before(before.Add(-time.Microsecond)) || decided.DecidedAt.After(after.Add(time.Microsecond)) {
		t.Errorf("DecidedAt %v, not between %v and %v", decided.DecidedAt, before, after)
	}
	approved := &wield.Approval{ApprovalRequest: *a, Status: wield.ApprovalApproved,
		Decision: &wield.Decision{Approved: true, By: "ann", Reason: "fine", Note: "from the phone"}, DecidedAt: decided.DecidedAt}
	if diff := cmp.Diff(approved, decided, cmpOpts); diff != "" {
		t.Errorf("DecideApproval (-want +got)\n%s", diff)
	}
	if got, err := e.s.Approval(ctx, "a1"); err != nil {
		t.Fatal(err)
	} else if diff := cmp.Diff(approved, got, cmpOpts); diff != "" {
		t.Errorf("Approval after the decision (-want +got)\n%s", diff)
	}
	_, err = e.s.DecideApproval(ctx, "a1", "digest-a1", wield.Decision{Approved: false, By: "bob"})
	mustErr(t, "second decision", err, wield.ErrAlreadyDecided)
	_, err = e.s.DecideApproval(ctx, "a1", "", wield.Decision{Approved: false, By: "bob"})
	mustErr(t, "second decision without digest", err, wield.ErrAlreadyDecided)

	// An empty digest decides without checking the arguments.
	denied, err := e.s.DecideApproval(ctx, "a2", "", wield.Decision{Approved: false, By: "bob", Reason: "no"})
	if err != nil {
		t.Fatal(err)
	}
	if denied.Status != wield.ApprovalDenied || denied.Decision == nil || denied.Decision.Approved || denied.Decision.Reason != "no" {
		t.Errorf("denied: %+v", denied)
	}

	list(wield.ApprovalPending, pending(c))
	list(wield.ApprovalApproved, approved)
	list(wield.ApprovalDenied, denied)
	list("", approved, denied, pending(c))
	list(wield.ApprovalExpired)

	_, err = e.s.Approval(ctx, "nope")
	mustErr(t, "Approval of an unknown id", err, wield.ErrNotFound)
	_, err = e.s.DecideApproval(ctx, "nope", "", wield.Decision{Approved: true})
	mustErr(t, "DecideApproval of an unknown id", err, wield.ErrNotFound)
}

func testApprovalExpiry(t *testing.T, e *env) {
	ctx := t.Context()
	now := time.Now()
	old := request("old", now.Add(-time.Hour), now.Add(-time.Second))
	live := request("live", now, now.Add(time.Hour))
	for _, r := range []*wield.ApprovalRequest{old, live} {
		if err := e.s.CreateApproval(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	expired := &wield.Approval{ApprovalRequest: *old, Status: wield.ApprovalExpired}
	check := func(when string) {
		t.Helper()
		got, err := e.s.Approval(ctx, "old")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(expired, got, cmpOpts); diff != "" {
			t.Errorf("%s (-want +got)\n%s", when, diff)
		}
	}
	check("an approval past its expiry")
	_, err := e.s.DecideApproval(ctx, "old", "digest-old", wield.Decision{Approved: true, By: "late"})
	mustErr(t, "a decision after expiry", err, wield.ErrAlreadyDecided)
	check("after a decision that came too late")
	got, err := e.s.Approvals(ctx, wield.ApprovalExpired)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]*wield.Approval{expired}, got, cmpOpts); diff != "" {
		t.Errorf("Approvals(expired) (-want +got)\n%s", diff)
	}
	got, err = e.s.Approvals(ctx, wield.ApprovalPending)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]*wield.Approval{{ApprovalRequest: *live, Status: wield.ApprovalPending}}, got, cmpOpts); diff != "" {
		t.Errorf("Approvals(pending) (-want +got)\n%s", diff)
	}
}

// testApprovalOneWinner has 20 people decide one approval at once.
func testApprovalOneWinner(t *testing.T, e *env) {
	ctx := t.Context()
	if err := e.s.CreateApproval(ctx, request("x", time.Now(), time.Now().Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	errs := race(20, func(i int) error {
		_, err := e.s.DecideApproval(context.Background(), "x", "digest-x",
			wield.Decision{Approved: i%2 == 0, By: fmt.Sprintf("person-%d", i)})
		return err
	})
	winner := oneWinner(t, errs, wield.ErrAlreadyDecided, "person")
	got, err := e.s.Approval(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	want := wield.Decision{Approved: winner%2 == 0, By: fmt.Sprintf("person-%d", winner)}
	if got.Decision == nil || *got.Decision != want {
		t.Errorf("stored decision %+v, want the winner's %+v", got.Decision, want)
	}
}

// testApprovalClaim checks that a decision is acted on once, when the
// store can claim approvals ([wield.ApprovalClaimer]): an approved call
// runs once, a refused one is recorded once, and of 20 claims at once
// exactly one wins.
func testApprovalClaim(t *testing.T, e *env) {
	c, ok := e.s.(wield.ApprovalClaimer)
	if !ok {
		t.Skip("the store does not claim approvals")
	}
	ctx := t.Context()
	now := time.Now()
	for _, id := range []string{"yes", "no", "wait", "race"} {
		if err := e.s.CreateApproval(ctx, request(id, now, now.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.s.CreateApproval(ctx, request("late", now.Add(-time.Hour), now.Add(-time.Second))); err != nil {
		t.Fatal(err)
	}
	for id, ok := range map[string]bool{"yes": true, "no": false, "race": true} {
		if _, err := e.s.DecideApproval(ctx, id, "digest-"+id, wield.Decision{Approved: ok, By: "ann"}); err != nil {
			t.Fatal(err)
		}
	}
	mustErr(t, "claim of a pending approval", c.ClaimApproval(ctx, "wait"), wield.ErrAlreadyDecided)
	mustErr(t, "claim of an unknown approval", c.ClaimApproval(ctx, "nope"), wield.ErrNotFound)

	for _, tt := range []struct {
		id     string
		status wield.ApprovalStatus
	}{{"yes", wield.ApprovalApproved}, {"no", wield.ApprovalDenied}, {"late", wield.ApprovalExpired}} {
		before := time.Now()
		if err := c.ClaimApproval(ctx, tt.id); err != nil {
			t.Fatalf("claim of an approval that is %s: %v", tt.status, err)
		}
		after := time.Now()
		got, err := e.s.Approval(ctx, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != tt.status || got.ClaimedAt.Before(before.Add(-time.Microsecond)) || got.ClaimedAt.After(after.Add(time.Microsecond)) {
			t.Errorf("after the claim of %s: status %s, claimed %v; want %s, claimed between %v and %v", tt.id, got.Status, got.ClaimedAt, tt.status, before, after)
		}
		mustErr(t, "second claim of "+tt.id, c.ClaimApproval(ctx, tt.id), wield.ErrAlreadyDecided)
	}
	// The expired one is marked so for good.
	if got, err := e.s.Approvals(ctx, wield.ApprovalExpired); err != nil || len(got) != 1 || got[0].ID != "late" {
		t.Errorf("Approvals(expired) after the claim: %v, %v", got, err)
	}
	if got, err := e.s.Approval(ctx, "wait"); err != nil || !got.ClaimedAt.IsZero() {
		t.Errorf("a refused claim marked the approval: %+v, %v", got, err)
	}

	errs := race(20, func(int) error { return c.ClaimApproval(context.Background(), "race") })
	oneWinner(t, errs, wield.ErrAlreadyDecided, "claim")
}

// testApprovalBacklog checks UnclaimedApprovals: what servers act on when
// a caller went away. Pending, decided-unclaimed and expired-unclaimed
// approvals are listed, oldest first; claimed ones are not.
func testApprovalBacklog(t *testing.T, e *env) {
	ctx := t.Context()
	now := time.Now()
	reqs := map[string]*wield.ApprovalRequest{}
	for i, id := range []string{"pending", "approved", "denied", "expired", "ran", "refused"} {
		expires := now.Add(time.Hour)
		if id == "expired" {
			expires = now.Add(-time.Second)
		}
		reqs[id] = request(id, now.Add(time.Duration(i-10)*time.Minute), expires)
		reqs[id].Timeout = time.Duration(i+1) * time.Second
		if err := e.s.CreateApproval(ctx, reqs[id]); err != nil {
			t.Fatal(err)
		}
	}
	decided := map[string]*wield.Approval{}
	for id, ok := range map[string]bool{"approved": true, "denied": false, "ran": true, "refused": false} {
		a, err := e.s.DecideApproval(ctx, id, "digest-"+id, wield.Decision{Approved: ok, By: "ann"})
		if err != nil {
			t.Fatal(err)
		}
		decided[id] = a
	}
	for _, id := range []string{"ran", "refused"} {
		if err := e.s.ClaimApproval(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.s.UnclaimedApprovals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []*wield.Approval{
		{ApprovalRequest: *reqs["pending"], Status: wield.ApprovalPending},
		decided["approved"],
		decided["denied"],
		{ApprovalRequest: *reqs["expired"], Status: wield.ApprovalExpired},
	}
	if diff := cmp.Diff(want, got, cmpOpts); diff != "" {
		t.Errorf("UnclaimedApprovals (-want +got)\n%s", diff)
	}
}
