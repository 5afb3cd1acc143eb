package mcpbridge

import (
	"strings"
	"testing"
	"time"
)

// FuzzStateRead feeds srvStateRead what a client may send as requestState:
// it never panics, and accepts only states signed with the key, unchanged
// and unexpired, which read back as they were sealed.
func FuzzStateRead(f *testing.F) {
	key := []byte(strings.Repeat("k", MinStateKey))
	now := time.UnixMilli(1_800_000_000_000)
	good := srvState{V: 1, Approval: "a1", Call: "c1", Tool: "wipe", Digest: "d", Who: srvStateWho("mcp:x"), Exp: now.Add(time.Minute).UnixMilli()}
	f.Add(good.seal(key))
	f.Add(good.seal([]byte(strings.Repeat("o", MinStateKey))))
	f.Add("w1.")
	f.Add("w1.e30.")
	f.Add("w1." + strings.Repeat("A", 3000))
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := srvStateRead(key, s, now)
		if err != nil {
			if st != (srvState{}) {
				t.Errorf("refused %q but returned %+v", s, st)
			}
			return
		}
		if st.seal(key) != s {
			t.Errorf("accepted %q, which is not what the server sealed (%q)", s, st.seal(key))
		}
		if !now.Before(time.UnixMilli(st.Exp)) {
			t.Errorf("accepted an expired state %q", s)
		}
	})
}

// TestStateRead checks each refusal of srvStateRead and its message.
func TestStateRead(t *testing.T) {
	key := []byte(strings.Repeat("k", MinStateKey))
	now := time.UnixMilli(1_800_000_000_000)
	good := srvState{V: 1, Approval: "a1", Call: "c1", Tool: "wipe", Digest: "d", Who: "w", Exp: now.Add(time.Minute).UnixMilli()}
	sealed := good.seal(key)
	if st, err := srvStateRead(key, sealed, now); err != nil || st != good {
		t.Fatalf("read back %+v, %v; want %+v", st, err, good)
	}
	late := good
	late.Exp = now.UnixMilli()
	incomplete := good
	incomplete.Call = ""
	tests := []struct{ name, state, want string }{
		{"other key", good.seal([]byte(strings.Repeat("o", MinStateKey))), "signature does not match"},
		{"changed", strings.Replace(sealed, "w1.e", "w1.f", 1), "signature does not match"},
		{"expired", late.seal(key), "expired at"},
		{"incomplete", incomplete.seal(key), "incomplete"},
		{"too long", strings.Repeat("w", srvStateMax+1), "longer than"},
		{"no signature", "w1.abc", "no signature"},
	}
	for _, tt := range tests {
		if _, err := srvStateRead(key, tt.state, now); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
	if _, err := srvStateRead(key[:8], sealed, now); err == nil {
		t.Error("a short key checked a state")
	}
}
