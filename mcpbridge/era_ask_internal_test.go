package mcpbridge

import (
	"strings"
	"testing"
	"time"
)

// TestStateReadParked checks the states of a tool's questions: a state
// names an approval or a parked call with its round, never both nor
// neither, and a well-signed state naming a call this server does not hold
// is refused saying so.
func TestStateReadParked(t *testing.T) {
	key := []byte(strings.Repeat("k", MinStateKey))
	now := time.UnixMilli(1_800_000_000_000)
	base := srvState{V: 1, Call: "c1", Tool: "survey", Digest: "d", Who: srvStateWho("mcp:x"), Exp: now.Add(time.Minute).UnixMilli()}
	tests := []struct {
		name string
		edit func(*srvState)
		ok   bool
	}{
		{"parked", func(st *srvState) { st.Park, st.Round = "p1", 1 }, true},
		{"approval", func(st *srvState) { st.Approval = "a1" }, true},
		{"both", func(st *srvState) { st.Park, st.Round, st.Approval = "p1", 1, "a1" }, false},
		{"neither", func(*srvState) {}, false},
		{"parked without a round", func(st *srvState) { st.Park = "p1" }, false},
		{"a round without a call", func(st *srvState) { st.Approval, st.Round = "a1", 2 }, false},
	}
	for _, tt := range tests {
		st := base
		tt.edit(&st)
		got, err := srvStateRead(key, st.seal(key), now)
		if (err == nil) != tt.ok {
			t.Errorf("%s: %v, want ok %v", tt.name, err, tt.ok)
		}
		if err == nil && got != st {
			t.Errorf("%s: read %+v, want %+v", tt.name, got, st)
		}
	}

	var pc srvParkedCalls
	st := base
	st.Park, st.Round = "p-unknown", 1
	if _, _, err := pc.take(st, nil); err == nil || !strings.Contains(err.Error(), "not waiting for an answer on this server") {
		t.Errorf("unknown parked call: %v, want it refused as not held here", err)
	}
}
