package postgres

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/approval"
)

// TestDecisionWakesOtherServer: a call waits for approval on one server; a
// person decides on another; the waiting call resumes at once, through
// LISTEN/NOTIFY (polling is set to an hour, so nothing else could wake it).
func TestDecisionWakesOtherServer(t *testing.T) {
	schema := FreshSchema(t)
	a := OpenSchema(t, &Options{Schema: schema})
	b := OpenSchema(t, &Options{Schema: schema})
	inA := approval.New(a, &approval.Options{Poll: time.Hour})
	defer inA.Close()
	inB := approval.New(b, &approval.Options{Poll: time.Hour})
	defer inB.Close()

	req := &wield.ApprovalRequest{ID: "ap_" + wield.NewID(), CallID: wield.NewID(), Tool: "delete_file",
		Arguments: json.RawMessage(`{"path":"x"}`), Digest: "d1", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
	got := make(chan wield.Decision, 1)
	errs := make(chan error, 1)
	go func() {
		d, err := inA.Approve(context.Background(), req)
		errs <- err
		got <- d
	}()
	// Wait (bounded) until the request is pending, as a person would see it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ap, err := b.Approval(context.Background(), req.ID); err == nil && ap.Status == wield.ApprovalPending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never became pending")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := inB.Decide(context.Background(), req.ID, "d1", wield.Decision{Approved: true, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if d := <-got; err != nil || !d.Approved || d.By != "ops" {
			t.Fatalf("decision %+v, %v", d, err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the waiting call was not woken by the other server's decision")
	}
}
