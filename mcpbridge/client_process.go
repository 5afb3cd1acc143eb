package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield/internal/procgroup"
)

// impProcess is the transport of a stdio server: the go-sdk's newline
// framing ([mcp.IOTransport]) over the pipes of a process that wield
// starts, and stops as MCP's stdio transport says (close its stdin, wait,
// SIGTERM, wait, SIGKILL), to the whole process: on Unix the server runs
// in a process group of its own and the signals go to the group.
//
// Why not [mcp.CommandTransport]: it signals only the process it started.
// A server started through a wrapper (`sh -c '… | node …'`, `npx`, `uv
// run`) left its real server running once the wrapper died, holding the
// stderr pipe open, so that closing it took both grace periods (Wait
// waits for the pipe) and the server outlived wield, orphaned. Here the
// group is signalled, and the pipes are given up [impPipeDelay] after the
// process exits.
type impProcess struct {
	cmd   *exec.Cmd
	grace time.Duration // each of the two waits
	name  string        // the server's, for the log
	log   *slog.Logger
	stdin atomic.Pointer[impProcessStdin] // once started
}

// abort stops the server now, in the background, as closing its
// connection would once the go-sdk's work on it ended: for a server whose
// connection cannot end because the go-sdk waits to write to its stdin.
func (t *impProcess) abort() {
	if p := t.stdin.Load(); p != nil {
		go p.Close()
	}
}

// impPipeDelay is how long Wait waits for a server's pipes to close once
// the process has exited (exec.Cmd.WaitDelay).
const impPipeDelay = time.Second

func (t *impProcess) Connect(ctx context.Context) (mcp.Connection, error) {
	cmd := t.cmd
	procgroup.Own(cmd)
	cmd.WaitDelay = impPipeDelay
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &impProcessStdin{WriteCloser: stdin, cmd: cmd, grace: t.grace, name: t.name, log: t.log, exited: make(chan struct{})}
	t.stdin.Store(p)
	go p.reap()
	// Closing the connection closes the server's stdin, not its stdout:
	// what it still writes is read until it exits (as the go-sdk's
	// CommandTransport does).
	return (&mcp.IOTransport{Reader: io.NopCloser(stdout), Writer: p}).Connect(ctx)
}

// impProcessStdin is the server's stdin; closing it stops the server.
type impProcessStdin struct {
	io.WriteCloser
	cmd     *exec.Cmd
	grace   time.Duration
	name    string
	log     *slog.Logger
	exited  chan struct{} // closed when Wait has returned
	waitErr error
	// groupLeft says whether any of the server's process group was
	// running when the server had exited: a group found empty then is
	// gone for good, and its ID, the server's PID, free for the system to
	// give again to a process that leads a group of its own (a command
	// tool's program, another server), which endGroup must not signal.
	groupLeft bool

	once sync.Once
	err  error
}

// reap waits for the server to exit and notes whether it left any of its
// group behind, before the PID can be given again.
func (p *impProcessStdin) reap() {
	p.waitErr = p.cmd.Wait()
	p.groupLeft = procgroup.Alive(p.cmd.Process)
	close(p.exited)
}

func (p *impProcessStdin) Close() error {
	p.once.Do(func() { p.err = p.stop() })
	return p.err
}

// stop ends the server as MCP's stdio transport says: stdin closed, then
// SIGTERM after the grace period, then SIGKILL after another; on Unix
// each signal goes to the server's process group, and what is left of the
// group when the server itself has exited is signalled too (a wrapper
// that exits leaves no server behind).
func (p *impProcessStdin) stop() error {
	// A server that exited by itself had its stdin closed by exec's Wait
	// (os.ErrClosed): what it left of its group is still to be stopped.
	if err := p.WriteCloser.Close(); err != nil && !errors.Is(err, io.ErrClosedPipe) && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("closing stdin: %w", err)
	}
	pid := p.cmd.Process.Pid
	wait := func() bool {
		t := time.NewTimer(p.grace)
		defer t.Stop()
		select {
		case <-p.exited:
			return true
		case <-t.C:
			return false
		}
	}
	exited := wait()
	if !exited {
		// Said, so that whoever waits for wield to exit knows why: at
		// WARN, the level wield's commands log the importer at.
		p.log.Warn("mcp server did not exit when its stdin was closed; sending SIGTERM", "server", p.name, "pid", pid, "waited", p.grace)
		_ = procgroup.Signal(p.cmd.Process, syscall.SIGTERM)
		exited = wait()
	}
	if !exited {
		p.log.Warn("mcp server did not exit on SIGTERM; killing it", "server", p.name, "pid", pid, "waited", p.grace)
		_ = procgroup.Signal(p.cmd.Process, syscall.SIGKILL)
		if !wait() {
			return fmt.Errorf("unresponsive subprocess %d", pid)
		}
	}
	p.endGroup()
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) || errors.Is(p.waitErr, exec.ErrWaitDelay) {
		return nil // how it ended is not the caller's concern: it has
	}
	return p.waitErr
}

// endGroup ends what is left of the group of a server that has exited:
// SIGTERM, then SIGKILL once the grace period has passed with any of it
// still running.
func (p *impProcessStdin) endGroup() {
	proc := p.cmd.Process
	if !p.groupLeft || !procgroup.Alive(proc) {
		return
	}
	_ = procgroup.Signal(proc, syscall.SIGTERM)
	deadline := time.Now().Add(p.grace)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if !procgroup.Alive(proc) {
			return
		}
	}
	_ = procgroup.Signal(proc, syscall.SIGKILL)
}
