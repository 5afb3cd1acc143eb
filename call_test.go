package wield_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

func TestNewID(t *testing.T) {
	const n = 100_000
	seen := make(map[string]bool, n)
	prev := ""
	for i := range n {
		id := wield.NewID()
		if len(id) != wield.IDLen {
			t.Fatalf("NewID() = %q, %d characters, want %d", id, len(id), wield.IDLen)
		}
		if strings.Trim(id, "0123456789abcdefghjkmnpqrstvwxyz") != "" {
			t.Fatalf("NewID() = %q has characters outside Crockford base32", id)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %q after %d IDs", id, i)
		}
		seen[id] = true
		// IDs sort by their millisecond (the first 10 characters); within
		// one, their order is random, which keeps them unguessable.
		if id[:10] < prev {
			t.Fatalf("NewID() = %q is of a millisecond before the earlier %q", id, prev)
		}
		prev = id[:10]
	}
}

func TestNewIDConcurrent(t *testing.T) {
	const workers, each = 4, 5_000
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				ids[w] = append(ids[w], wield.NewID())
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, list := range ids {
		for i, id := range list {
			if seen[id] {
				t.Fatalf("duplicate ID %q", id)
			}
			seen[id] = true
			if i > 0 && id[:10] < list[i-1][:10] {
				t.Fatalf("IDs of one goroutine out of time order: %q after %q", id, list[i-1])
			}
		}
	}
}

func TestCallers(t *testing.T) {
	tests := []struct {
		name string
		got  wield.Caller
		want wield.Caller
	}{
		{"conversation", wield.ForConversation("agent-1", "conv-9"),
			wield.Caller{ID: "agent-1", Type: wield.CallerConversationAgent, ConversationID: "conv-9"}},
		{"workflow", wield.ForWorkflow("wf-1", "node-3"),
			wield.Caller{ID: "node-3", Type: wield.CallerWorkflowNode, WorkflowID: "wf-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("caller mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallFrom(t *testing.T) {
	ctx := context.Background()
	if c := wield.CallFrom(ctx); c != nil {
		t.Errorf("CallFrom(background) = %+v, want nil", c)
	}
	c := &wield.Call{ID: "c1", Tool: "echo"}
	if got := wield.CallFrom(wield.WithCall(ctx, c)); got != c {
		t.Errorf("CallFrom(WithCall(c)) = %p, want %p", got, c)
	}
}
