//go:build unix

package journeys

// MCP servers that flood wield serve with notifications (issue 19): one
// sends 50,000 small log lines, progress notices (for tokens nobody asked
// for) and list_changed with each call, and 10,000 list_changed as soon as
// it is connected; another sends 300 of 256 KiB with each call. The calls
// answer, the server keeps serving, and its peak resident memory grows by
// a bounded amount, however many calls flood it.

import (
	"bytes"
	"syscall"
	"testing"
	"time"
)

func TestJourneyHostileFlood(t *testing.T) {
	h := hostileMCP(t)
	u := newUser(t)
	u.write("wield.yaml", `mcp_servers:
  - {name: many, command: [`+h+`, -id, many, -flood-log, "20000", -flood-progress, "20000", -flood-list-changed, "10000", -flood-idle]}
  - {name: big, command: [`+h+`, -id, big, -flood-log, "100", -flood-progress, "100", -flood-list-changed, "100", -flood-size, "262144"]}
`)
	s := u.serve("--config", "wield.yaml")
	if !eventually(30*time.Second, func() bool {
		_, body := s.do("GET", "/v1/tools", "")
		return bytes.Contains(body, []byte(`"many__echo"`)) && bytes.Contains(body, []byte(`"big__echo"`))
	}) {
		t.Fatalf("many__echo and big__echo never both appeared in /v1/tools:\n%s", s.stderr)
	}
	pid := s.cmd.Process.Pid
	before := peakRSS(t, pid)
	// Two calls of each: memory a flood left behind would show as growth
	// from the first to the second.
	var after1 int64
	for round := range 2 {
		for _, server := range []string{"many", "big"} {
			code, body := s.do("POST", "/v1/tools/"+server+"__echo/call", `{"arguments":{}}`)
			if code != 200 || !bytes.Contains(body, []byte(server+" answered echo")) {
				t.Errorf("round %d, %s__echo: status %d: %.400s", round+1, server, code, body)
			}
		}
		if round == 0 {
			after1 = peakRSS(t, pid)
		}
	}
	after2 := peakRSS(t, pid)
	t.Logf("wield serve peak RSS: %d MiB with the tools listed, %d MiB after a round of floods, %d MiB after two",
		before>>20, after1>>20, after2>>20)
	// Generous: the large flood alone is 75 MiB on the wire.
	if after1-before > 96<<20 {
		t.Errorf("peak RSS grew by %d MiB during a round of floods, want under 96 MiB", (after1-before)>>20)
	}
	if after2-after1 > 32<<20 {
		t.Errorf("peak RSS grew by %d MiB more in the second round, want under 32 MiB (the first round's memory is reused)",
			(after2-after1)>>20)
	}
	if _, body := s.do("GET", "/v1/tools", ""); !bytes.Contains(body, []byte(`"many__echo"`)) {
		t.Errorf("many__echo is gone from /v1/tools after the floods:\n%s", s.stderr)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("exit %d after %v of SIGTERM, want 0:\n%s", code, took, s.stderr)
	}
}
