package mcpbench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A process is a server under measurement, a process of its own: one of
// this program's peers (re-run with MCPBENCH_SERVE, see [Serve]) or the
// wield binary.
type process struct {
	name    string
	cmd     *exec.Cmd
	pid     string
	addr    string         // host:port
	stdin   io.WriteCloser // the peers serve until it closes
	log     string         // wield's log file
	idleRSS int64
	done    chan struct{} // closed once the process has exited
}

// wait reaps the process in the background.
func (p *process) wait() {
	p.done = make(chan struct{})
	go func() { p.cmd.Wait(); close(p.done) }()
}

// exited tells whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the process: a peer when its stdin closes, wield on SIGTERM
// (its graceful shutdown); either is killed if still there 10 s later.
func (p *process) stop() {
	if p.stdin != nil {
		p.stdin.Close()
	} else {
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// cpu is the process's CPU time so far.
func (p *process) cpu(clkTck int) (time.Duration, error) {
	if p.exited() {
		return 0, fmt.Errorf("%s exited", p.name)
	}
	return ProcCPU(p.pid, clkTck)
}

// rss is the process's resident set size now.
func (p *process) rss() (int64, error) {
	if p.exited() {
		return 0, fmt.Errorf("%s exited", p.name)
	}
	return ProcRSS(p.pid)
}

// anon is the anonymous part of the process's RSS now (see ProcRSSAnon).
func (p *process) anon() (int64, error) {
	if p.exited() {
		return 0, fmt.Errorf("%s exited", p.name)
	}
	return ProcRSSAnon(p.pid)
}

// startPeer starts this program as a server of kind (see [Serve]), with
// the tools of the listing in file when file is not empty.
func startPeer(name, kind, file string) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("MCPBENCH_SERVE=%s,1,false", kind))
	if file != "" {
		cmd.Env = append(cmd.Env, "MCPBENCH_TOOLS="+file)
	}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{name: name, cmd: cmd, pid: strconv.Itoa(cmd.Process.Pid), stdin: in}
	line, err := bufio.NewReader(out).ReadString('\n')
	p.wait()
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p.addr = strings.TrimSpace(line)
	return p, nil
}

// startWield starts the wield binary as a user starts it: `wield serve`
// with its embedded defaults, in a fresh folder that is both its working
// directory and its HOME (so its records go to a new SQLite database
// under it), with no WIELD_, XDG_ or OTEL_ variable of ours, its output
// to a log file as an operator's would go. Only the address is chosen:
// a free port of 127.0.0.1, read back from --addr-file. extra are more
// flags (--records async, --tools DIR).
func startWield(name, bin, dir string, extra ...string) (*process, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addrFile := filepath.Join(dir, "addr")
	logPath := filepath.Join(dir, "wield.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--addr-file", addrFile}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "HOME" || strings.HasPrefix(k, "WIELD_") || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "OTEL_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "HOME="+dir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{name: name, cmd: cmd, pid: strconv.Itoa(cmd.Process.Pid), log: logPath}
	p.wait()
	for deadline := time.Now().Add(60 * time.Second); ; {
		// The file may be seen half written: the address counts once a
		// connection to it succeeds.
		if data, err := os.ReadFile(addrFile); err == nil {
			if addr := strings.TrimSpace(string(data)); addr != "" && dialable(addr) {
				p.addr = addr
				return p, nil
			}
		}
		if p.exited() {
			tail, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("start %s: it exited: %s", name, lastLines(tail, 10))
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("start %s: no address in %s after 60 s", name, addrFile)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dialable tells whether a TCP connection to addr succeeds.
func dialable(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// lastLines is the last n lines of text.
func lastLines(text []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
