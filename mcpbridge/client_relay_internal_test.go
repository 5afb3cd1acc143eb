package mcpbridge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRelayProgressIncreases: an imported server's progress notice that
// goes back on the greatest before (MCP requires that progress increases)
// is dropped, whether or not that one was sent yet, so that the client's
// progress never goes back; one at the same figure passes (a new message).
func TestRelayProgressIncreases(t *testing.T) {
	rs := newImpRelays("up")
	r := &impRelay{token: "wield-1", progress: true, wake: make(chan struct{}, 1)}
	rs.calls[r.token] = r
	rs.active.Add(1)
	var got []float64
	for _, step := range []struct {
		progress float64
		flush    bool // the relay sends what it holds
	}{{2, true}, {1, true}, {2, true}, {5, false}, {3, true}, {6, true}} {
		rs.onProgress(&mcp.ProgressNotificationParams{ProgressToken: r.token, Progress: step.progress, Total: 10})
		if step.flush {
			r.mu.Lock()
			if r.newest != nil {
				got = append(got, r.newest.Progress)
			}
			r.newest = nil
			r.mu.Unlock()
		}
	}
	if diff := cmp.Diff([]float64{2, 2, 5, 6}, got); diff != "" {
		t.Errorf("progress sent (-want +got):\n%s", diff)
	}
}
