//go:build unix

package journeys

// An MCP server that never answers tools/list, or answers a call with a line
// wield cannot read: wield serve listens at once and the good server's tools
// appear, wield list ends within the server's timeout with a warning, a
// signal ends the wait, and the model is told what the server did.

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestJourneyHostileImportServe(t *testing.T) {
	h := hostileMCP(t)
	u := newUser(t)
	u.write("wield.yaml", `mcp_servers:
  - {name: hang, command: [`+h+`, -hang-list]}
  - {name: good, command: [`+h+`, -id, good]}
`)
	began := time.Now()
	s := u.serve("--config", "wield.yaml")
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("wield serve listened after %v beside a server that never lists its tools", took)
	}
	if !s.listed("good__echo", 10*time.Second) {
		t.Errorf("good__echo never appeared in /v1/tools:\n%s", s.stderr)
	}
	code, took := s.stop(syscall.SIGTERM, 10*time.Second)
	if code != 0 || took > 5*time.Second {
		t.Errorf("exit %d after %v of SIGTERM, want 0 within 5s:\n%s", code, took, s.stderr)
	}
}

func TestJourneyHostileImportList(t *testing.T) {
	h := hostileMCP(t)
	u := newUser(t)
	u.write("wield.yaml", `mcp_servers:
  - {name: hang, command: [`+h+`, -hang-list], timeout: 2s}
  - {name: slow, command: [`+h+`, -trickle-list, -trickle-every, 300ms], timeout: 2s}
  - {name: good, command: [`+h+`, -id, good]}
`)
	r := u.must("--config", "wield.yaml", "list")
	if r.took > 6*time.Second {
		t.Errorf("wield list took %v with servers whose timeout is 2s (imported concurrently)", r.took)
	}
	if got := listedMCP(r); strings.Join(got, " ") != "good__echo" {
		t.Errorf("mcp tools listed %v, want [good__echo]:\n%s", got, r)
	}
	for _, w := range []string{
		`wield.yaml:2:6: warning: mcp server hang (` + h + ` -hang-list) does not answer now (mcp server "hang" did not list its tools within 2s (timeout))`,
		`mcp server "slow" did not list its tools within 2s (timeout); the `,
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %s:\n%s", w, r)
		}
	}
}

func TestJourneyHostileImportSignal(t *testing.T) {
	h := hostileMCP(t)
	u := newUser(t)
	u.write("wield.yaml", "mcp_servers:\n  - {name: hang, command: ["+h+", -hang-list], timeout: 60s}\n")
	cmd := exec.Command(bin, "--config", "wield.yaml", "list")
	cmd.Dir, cmd.Env = u.dir, u.env
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(time.Second) // wield list is waiting for the server by then
	began := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("wield list still waited 10s after SIGTERM:\n%s", stderr.String())
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("wield list exited %v after SIGTERM", took)
	}
	if code := cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(stderr.String(), "wield: interrupted while waiting for the mcp servers to list their tools") {
		t.Errorf("exit %d, want non-zero and a message saying the wait was interrupted:\n%s", code, stderr.String())
	}
}

func TestJourneyHostileImportBadFrame(t *testing.T) {
	t.Parallel() // waits on its programs for seconds: see waitBound
	h := hostileMCP(t)
	u := newUser(t)
	for _, tc := range []struct{ mode, want string }{
		{"json", `MCP server \"bad\" sent a line that is not JSON, which wield could not read, so its connection was reset`},
		{"oversized", `MCP server \"bad\" sent a message over 16 MiB, which wield could not read, so its connection was reset`},
	} {
		u.write("wield.yaml", "mcp_servers:\n  - {name: bad, command: ["+h+", -bad-frame, "+tc.mode+"]}\n")
		r := u.wield("--config", "wield.yaml", "call", "bad__echo")
		if r.code == 0 || !strings.Contains(r.stdout, tc.want) || !strings.Contains(r.stdout, "calling it again is unlikely to help") {
			t.Errorf("%s: want a failed call saying %s:\n%s", tc.mode, tc.want, r)
		}
		for _, leak := range []string{"try again shortly", "invalid character", "exceeded the configured"} {
			if strings.Contains(r.stdout, leak) {
				t.Errorf("%s: the result says %q:\n%s", tc.mode, leak, r)
			}
		}
	}
}
