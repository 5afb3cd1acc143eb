package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/postgres"
)

func approvalRequest(id string, ttl time.Duration) *wield.ApprovalRequest {
	now := time.Now()
	return &wield.ApprovalRequest{ID: id, CallID: "call-" + id, Tool: "rm", Caller: wield.ForConversation("agent", "c1"),
		Arguments: json.RawMessage(`{"path":"/tmp/x"}`), Digest: "d-" + id, CreatedAt: now, ExpiresAt: now.Add(ttl)}
}

func statuses(as []*wield.Approval) map[string]wield.ApprovalStatus {
	out := map[string]wield.ApprovalStatus{}
	for _, a := range as {
		out[a.ID] = a.Status
	}
	return out
}

func TestApprovals(t *testing.T) {
	t.Parallel()
	s := postgres.OpenTest(t, nil)
	ctx := context.Background()
	for _, r := range []*wield.ApprovalRequest{
		approvalRequest("yes", time.Hour), approvalRequest("no", time.Hour),
		approvalRequest("late", 100*time.Millisecond), approvalRequest("open", time.Hour),
	} {
		if err := s.CreateApproval(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateApproval(ctx, approvalRequest("yes", time.Hour)); err == nil {
		t.Error("a second approval with the same ID was created")
	}
	got, err := s.Approval(ctx, "yes")
	if err != nil {
		t.Fatal(err)
	}
	want := &wield.Approval{ApprovalRequest: *approvalRequest("yes", time.Hour), Status: wield.ApprovalPending}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Sub(b).Abs() < time.Second })); diff != "" {
		t.Errorf("pending approval (-want +got)\n%s", diff)
	}

	if _, err := s.DecideApproval(ctx, "yes", "d-other", wield.Decision{Approved: true}); !errors.Is(err, wield.ErrDigestMismatch) {
		t.Errorf("decision on other arguments: %v, want ErrDigestMismatch", err)
	}
	a, err := s.DecideApproval(ctx, "yes", "d-yes", wield.Decision{Approved: true, By: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != wield.ApprovalApproved || a.Decision == nil || !a.Decision.Approved || a.Decision.By != "ann" || a.DecidedAt.IsZero() {
		t.Errorf("approved: %+v", a)
	}
	if _, err := s.DecideApproval(ctx, "yes", "", wield.Decision{}); !errors.Is(err, wield.ErrAlreadyDecided) {
		t.Errorf("second decision: %v, want ErrAlreadyDecided", err)
	}
	if a, err := s.DecideApproval(ctx, "no", "", wield.Decision{Reason: "not today"}); err != nil || a.Status != wield.ApprovalDenied || a.Decision.Reason != "not today" {
		t.Errorf("denied: %+v, %v", a, err)
	}
	if _, err := s.DecideApproval(ctx, "nope", "", wield.Decision{}); !errors.Is(err, wield.ErrNotFound) {
		t.Errorf("unknown approval: %v, want ErrNotFound", err)
	}
	if _, err := s.Approval(ctx, "nope"); !errors.Is(err, wield.ErrNotFound) {
		t.Errorf("Approval(nope): %v, want ErrNotFound", err)
	}

	time.Sleep(150 * time.Millisecond) // the database's clock, not a goroutine, decides expiry
	if a, err := s.Approval(ctx, "late"); err != nil || a.Status != wield.ApprovalExpired {
		t.Errorf("expired approval reads as %+v, %v", a, err)
	}
	if _, err := s.DecideApproval(ctx, "late", "d-late", wield.Decision{Approved: true}); !errors.Is(err, wield.ErrAlreadyDecided) {
		t.Errorf("decision after expiry: %v, want ErrAlreadyDecided", err)
	}
	if n, err := s.QueryInt(ctx, "SELECT count(*) FROM approvals WHERE status = 'expired'"); err != nil || n != 1 {
		t.Errorf("%d approvals marked expired (%v), want 1", n, err)
	}

	all, err := s.Approvals(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	wantAll := map[string]wield.ApprovalStatus{"yes": "approved", "no": "denied", "late": "expired", "open": "pending"}
	if diff := cmp.Diff(wantAll, statuses(all)); diff != "" {
		t.Errorf("all approvals (-want +got)\n%s", diff)
	}
	for status, want := range map[wield.ApprovalStatus]string{"pending": "open", "approved": "yes", "denied": "no", "expired": "late"} {
		as, err := s.Approvals(ctx, status)
		if err != nil {
			t.Fatal(err)
		}
		if len(as) != 1 || as[0].ID != want {
			t.Errorf("Approvals(%s) = %v, want %s", status, statuses(as), want)
		}
	}
	if _, err := s.Approvals(ctx, "maybe"); err == nil {
		t.Error("an unknown status was accepted")
	}
}

// TestApprovalOneWinner has many people decide one approval at once, from
// two stores (two servers) on the same schema: exactly one wins.
func TestApprovalOneWinner(t *testing.T) {
	t.Parallel()
	s1 := postgres.OpenTest(t, nil)
	s2 := postgres.OpenSchema(t, &postgres.Options{Schema: s1.Schema()})
	ctx := context.Background()
	for round := range 5 {
		id := "a" + string(rune('0'+round))
		if err := s1.CreateApproval(ctx, approvalRequest(id, time.Hour)); err != nil {
			t.Fatal(err)
		}
		var wins, lost atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 16 {
			s := s1
			if i%2 == 1 {
				s = s2
			}
			wg.Go(func() {
				<-start
				_, err := s.DecideApproval(ctx, id, "d-"+id, wield.Decision{Approved: i%3 == 0})
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, wield.ErrAlreadyDecided):
					lost.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 || lost.Load() != 15 {
			t.Errorf("round %d: %d won, %d were told it was decided; want 1 and 15", round, wins.Load(), lost.Load())
		}
	}
}

func TestArtifacts(t *testing.T) {
	t.Parallel()
	s := postgres.OpenTest(t, nil)
	ctx := context.Background()
	a := &wield.Artifact{Title: "Plan", Type: "markdown", Content: "v1", ConversationID: "c1"}
	if err := s.CreateArtifact(ctx, a); err != nil {
		t.Fatal(err)
	}
	if a.ID == "" || a.Version != 1 || a.CreatedAt.IsZero() {
		t.Fatalf("created %+v", a)
	}
	if err := s.CreateArtifact(ctx, &wield.Artifact{ID: a.ID, Content: "again"}); !errors.Is(err, wield.ErrConflict) {
		t.Errorf("second create with one ID: %v, want ErrConflict", err)
	}
	v2, err := s.PutArtifactVersion(ctx, "", a.ID, 1, "v2")
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version != 2 || v2.Title != "Plan" || v2.Type != "markdown" || v2.ConversationID != "c1" || v2.Content != "v2" {
		t.Errorf("version 2: %+v", v2)
	}
	if _, err := s.PutArtifactVersion(ctx, "", a.ID, 1, "stale"); !errors.Is(err, wield.ErrConflict) {
		t.Errorf("put on a stale version: %v, want ErrConflict", err)
	}
	if _, err := s.PutArtifactVersion(ctx, "", "nope", 1, "x"); !errors.Is(err, wield.ErrNotFound) {
		t.Errorf("put on an unknown artifact: %v, want ErrNotFound", err)
	}
	for v, want := range map[int]string{0: "v2", 1: "v1", 2: "v2"} {
		got, err := s.Artifact(ctx, "", a.ID, v)
		if err != nil || got.Content != want {
			t.Errorf("Artifact(%d) = %+v, %v; want %q", v, got, err, want)
		}
	}
	if diff := cmp.Diff(a, mustArtifact(t, s, a.ID, 1)); diff != "" {
		t.Errorf("version 1 (-want +got)\n%s", diff)
	}
	for _, v := range []int{3, -1} {
		if _, err := s.Artifact(ctx, "", a.ID, v); !errors.Is(err, wield.ErrNotFound) {
			t.Errorf("Artifact(%d): %v, want ErrNotFound", v, err)
		}
	}

	// Writers racing from the same base: one wins each round.
	for base := 2; base < 6; base++ {
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, err := s.PutArtifactVersion(ctx, "", a.ID, base, "race")
				switch {
				case err == nil:
					wins.Add(1)
				case !errors.Is(err, wield.ErrConflict):
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Errorf("base %d: %d writers won, want 1", base, wins.Load())
		}
	}
	if got := mustArtifact(t, s, a.ID, 0); got.Version != 6 {
		t.Errorf("latest version %d, want 6", got.Version)
	}
}

func mustArtifact(t *testing.T, s *postgres.Store, id string, v int) *wield.Artifact {
	t.Helper()
	a, err := s.Artifact(context.Background(), "", id, v)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
