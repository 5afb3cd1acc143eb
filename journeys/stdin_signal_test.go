//go:build unix

package journeys

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneyStdinSignal: Ctrl-C (SIGINT) or SIGTERM to `wield chat`
// waiting for the next line, or to `wield parse` waiting for its input,
// ends it at once: chat as at the end of its input (exit 0), parse saying
// it was interrupted (exit 1). Both went on waiting for input that never
// came. SIGTERM to `wield mcp` over stdio ends it with exit 0 and no ERROR
// line (the go-sdk logged "server run cancelled" as an error).
func TestJourneyStdinSignal(t *testing.T) {
	for _, c := range []struct {
		args   []string
		sig    syscall.Signal
		code   int
		stderr string
		absent string
	}{
		{[]string{"chat", "--model", "http://127.0.0.1:1/v1/m"}, syscall.SIGINT, 0, "conversation chat_", ""},
		{[]string{"chat", "--model", "http://127.0.0.1:1/v1/m"}, syscall.SIGTERM, 0, "conversation chat_", ""},
		{[]string{"parse"}, syscall.SIGINT, 1, "wield: parse: read stdin: interrupted while waiting for input on stdin", ""},
		{[]string{"mcp"}, syscall.SIGTERM, 0, "", "ERROR"},
	} {
		u := newUser(t)
		cmd := exec.Command(bin, c.args...)
		cmd.Dir, cmd.Env = u.dir, u.env
		in, err := cmd.StdinPipe() // open, nothing typed
		if err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		time.Sleep(500 * time.Millisecond)
		cmd.Process.Signal(c.sig)
		select {
		case <-done:
			if code := cmd.ProcessState.ExitCode(); code != c.code || !strings.Contains(errb.String(), c.stderr) || c.absent != "" && strings.Contains(errb.String(), c.absent) {
				t.Errorf("wield %s after %v: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), c.sig, code, errb.String(), c.code, c.stderr)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("wield %s still waits for stdin 3 s after %v", strings.Join(c.args, " "), c.sig)
			cmd.Process.Kill()
			<-done
		}
		in.Close()
	}
}
