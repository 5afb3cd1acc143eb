package journeys

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// programResident is how much of wield's program file is in the resident
// set of process pid, in bytes: the Rss of its mappings of the binary, as
// /proc/PID/smaps lists them.
func programResident(t *testing.T, pid int) int64 {
	t.Helper()
	var exe syscall.Stat_t
	if err := syscall.Stat(bin, &exe); err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var kib int64
	ours := false
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			ino, _ := strconv.ParseUint(f[4], 10, 64)
			ours = ino == exe.Ino
		case ours && len(f) == 3 && f[0] == "Rss:":
			n, _ := strconv.ParseInt(f[1], 10, 64)
			kib += n
		}
	}
	return kib << 10
}

// TestJourneyStartPagesGivenBack: `wield serve`, `wield mcp --http` and
// `wield mcp` over stdio, started as the README says, give back the pages
// of their program that starting touched (a quarter of the binary at most
// stays resident, where about half of it did: 24 of 46 MB), and serve
// calls after that.
func TestJourneyStartPagesGivenBack(t *testing.T) {
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	u := newUser(t)
	for _, c := range []struct {
		name  string
		start func() *server
	}{
		{"serve", func() *server { return u.serve() }},
		{"mcp --http", func() *server { return u.mcpHTTP() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			u.t = t
			s := c.start()
			var resident int64
			for i := 0; i < 50; i++ { // up to 5 s for the advice to be taken
				time.Sleep(100 * time.Millisecond)
				if resident = programResident(t, s.cmd.Process.Pid); resident <= st.Size()/4 {
					break
				}
			}
			t.Logf("%s: %.1f MiB of the %.1f MB program resident", c.name, float64(resident)/(1<<20), float64(st.Size())/1e6)
			if resident > st.Size()/4 {
				t.Errorf("%s keeps %.1f MiB of its %.1f MB program resident after start, want a quarter at most", c.name, float64(resident)/(1<<20), float64(st.Size())/1e6)
			}
			if c.name == "serve" {
				code, res, err := lcCall(s.url, "echo", `{"message":"a<b && c>d"}`)
				if err != nil || code != 200 || !res.OK || !strings.Contains(string(res.Output), "a<b && c>d") {
					t.Fatalf("a call after the pages went back: %d %+v %v", code, res, err)
				}
			}
			if code, _ := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
				t.Errorf("exit %d after SIGTERM:\n%s", code, s.stderr)
			}
		})
	}

	// `wield mcp` over stdio, as an MCP client starts it: ready once it
	// answers initialize.
	t.Run("mcp", func(t *testing.T) {
		cmd := exec.Command(bin, "mcp")
		cmd.Dir, cmd.Env = u.dir, u.env
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		if _, err := io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"journey","version":"1"}}}`+"\n"); err != nil {
			t.Fatal(err)
		}
		line := make(chan string, 1)
		go func() {
			r := bufio.NewReader(out)
			l, _ := r.ReadString('\n')
			line <- l
			_, _ = io.Copy(io.Discard, r)
		}()
		select {
		case l := <-line:
			if !strings.Contains(l, `"id":1`) || !strings.Contains(l, "protocolVersion") {
				t.Fatalf("initialize answered %q", l)
			}
		case <-time.After(time.Minute):
			t.Fatal("no answer to initialize within a minute")
		}
		var resident int64
		for i := 0; i < 50; i++ {
			time.Sleep(100 * time.Millisecond)
			if resident = programResident(t, cmd.Process.Pid); resident <= st.Size()/4 {
				break
			}
		}
		t.Logf("mcp over stdio: %.1f MiB of the %.1f MB program resident", float64(resident)/(1<<20), float64(st.Size())/1e6)
		if resident > st.Size()/4 {
			t.Errorf("wield mcp keeps %.1f MiB of its %.1f MB program resident after start, want a quarter at most", float64(resident)/(1<<20), float64(st.Size())/1e6)
		}
		_ = in.Close()
	})
}
