package mcpbridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wieldhq/wield"
)

// A task whose server was killed outright (SIGKILL, a crash, the machine
// lost) is never recorded: its call ID stays reserved, and would read
// working forever. So the server running a task holds a lease on its
// reserved ID (wield.CallLeases, in the store every server shares) and
// renews it while the call runs; a server that reads a task with no
// record, not running there, whose lease has expired, reads it failed,
// saying its server stopped. An expired lease is never renewed: a server
// that could not renew in time (cut from its store that long) finds the
// lease lost at its next renewal and cancels the task, whose record then
// says so.

// DefaultTaskLease is how long a task's lease lasts without renewal
// ([ServerOptions].TaskLease): a task whose server was killed reads failed
// at most this long after. It is renewed every third of it.
const DefaultTaskLease = 15 * time.Second

// srvTaskLeaseLost is the cause of a task canceled because its server
// could not renew its lease in time: other servers read it failed.
var srvTaskLeaseLost = errors.Join(wield.ErrCallerCanceled, &wield.Error{Type: wield.ErrCanceled,
	Message: "this server could not renew the task's lease in time (its store out of reach), so other servers took it for stopped; the task was canceled"})

func (s *Server) srvTaskLease() time.Duration { return cmp.Or(s.opts.TaskLease, DefaultTaskLease) }

// srvLeaseOwner names this server in the leases it holds: the host, the
// process and a random part (a restarted process is another owner).
func srvLeaseOwner() string {
	host, _ := os.Hostname()
	if len(host) > 64 {
		host = host[:64]
	}
	return fmt.Sprintf("%s pid %d (%s)", cmp.Or(host, "?"), os.Getpid(), wield.NewID()[:8])
}

// srvHoldLease takes the lease of a task just answered, and starts the
// renewal of this server's leases with the first one.
func (s *Server) srvHoldLease(ctx context.Context, id string, t *srvTask) {
	ls, ok := s.opts.Calls.(wield.CallLeases)
	if !ok {
		return
	}
	ts := &s.tasks
	ts.mu.Lock()
	if ts.owner == "" {
		ts.owner = srvLeaseOwner()
	}
	owner := ts.owner
	if ts.stopRenew == nil && !ts.stopped {
		rctx, stop := context.WithCancel(context.Background())
		ts.stopRenew = stop
		go s.srvRenewLeases(rctx, ls, owner)
	}
	ts.mu.Unlock()
	now := time.Now()
	lost, err := ls.HoldCallLeases(ctx, owner, []string{id}, now, now.Add(s.srvTaskLease()))
	if err != nil || len(lost) > 0 {
		// Not leased: the task reads working elsewhere until it is
		// recorded, as before leases.
		s.log.Warn("mcp server: take a task's lease", "task", id, "err", err, "lost", lost)
		return
	}
	t.leased.Store(true)
}

// srvRenewLeases renews the leases of the tasks running here, every third
// of a lease, until ctx ends (once no task runs, at DrainTasks); a task
// whose lease is lost is canceled.
func (s *Server) srvRenewLeases(ctx context.Context, ls wield.CallLeases, owner string) {
	lease := s.srvTaskLease()
	tick := time.NewTicker(lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ts := &s.tasks
		ts.mu.Lock()
		ids := make([]string, 0, len(ts.running))
		for id, t := range ts.running {
			if t.leased.Load() {
				ids = append(ids, id)
			}
		}
		ts.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, lease/3)
		now := time.Now()
		lost, err := ls.HoldCallLeases(rctx, owner, ids, now, now.Add(lease))
		cancel()
		if err != nil {
			s.log.Warn("mcp server: renew the leases of tasks", "tasks", len(ids), "err", err)
			continue
		}
		for _, id := range lost {
			if t := ts.local(id); t != nil {
				s.log.Warn("mcp server: a task's lease was lost; canceling it", "task", id)
				t.cancel(srvTaskLeaseLost)
			}
		}
	}
}

// srvOrphaned reads the lease of a task reserved, not recorded and not
// running here: when it has expired, v reads failed, and it reports true.
func (s *Server) srvOrphaned(ctx context.Context, v *srvTaskView) bool {
	ls, ok := s.opts.Calls.(wield.CallLeases)
	if !ok {
		return false
	}
	owner, until, err := ls.CallLease(ctx, v.TaskID)
	if err != nil {
		if !errors.Is(err, wield.ErrNotFound) {
			s.log.Warn("mcp server: read a task's lease", "task", v.TaskID, "err", err)
		}
		return false
	}
	if owner == "" || !time.Now().After(until) {
		return false
	}
	msg := fmt.Sprintf("the server running this task (%s) stopped without recording it (killed or crashed: its lease expired at %s); the task's outcome is unknown, and the tool may have had effects",
		owner, until.UTC().Format(time.RFC3339))
	v.Status, v.StatusMessage = "failed", msg
	v.LastUpdatedAt = srvTaskTime(until)
	v.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server running the task stopped before the task ended"}
	return true
}
