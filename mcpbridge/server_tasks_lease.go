package mcpbridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
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
	return srvLeaseOwnerOn(host)
}

// srvLeaseOwnerOn is srvLeaseOwner on the host named host: at most 64 bytes
// of its name, cut on a character boundary (the owner is stored as text,
// which PostgreSQL refuses as invalid UTF-8).
func srvLeaseOwnerOn(host string) string {
	return fmt.Sprintf("%s pid %d (%s)", cmp.Or(safetext.Clip(host, 64), "?"), os.Getpid(), wield.NewID()[:8])
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
	lost, err := ls.HoldCallLeases(ctx, srvLeaseName(owner, t.owner), []string{id}, now, now.Add(s.srvTaskLease()))
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
		// By the task owner each lease names (srvLeaseName): one
		// renewal for each requester whose tasks run here.
		ids := map[string][]string{}
		for id, t := range ts.running {
			if t.leased.Load() {
				ids[t.owner] = append(ids[t.owner], id)
			}
		}
		ts.mu.Unlock()
		for taskOwner, ids := range ids {
			if ctx.Err() != nil {
				return
			}
			rctx, cancel := context.WithTimeout(ctx, lease/3)
			now := time.Now()
			lost, err := ls.HoldCallLeases(rctx, srvLeaseName(owner, taskOwner), ids, now, now.Add(lease))
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
}

// srvLeaseTaskOwner separates, in the owner a task's lease names, the
// server running the task from the owner of the task (srvTaskOwner of the
// requester that started it): a server reading a task not recorded and not
// running there knows whose it is by its lease alone, the reservation
// naming no one. A host name has no space.
const srvLeaseTaskOwner = " task of "

// srvLeaseName is the owner the lease of a task of taskOwner names, held by
// the server server: server alone for a task of no requester.
func srvLeaseName(server, taskOwner string) string {
	if taskOwner == "" {
		return server
	}
	return server + srvLeaseTaskOwner + taskOwner
}

// srvLeaseNamed reads a lease's owner made by srvLeaseName: the server
// holding it and the task's owner ("" for none, and for a lease of a server
// from before task owners were named in leases).
func srvLeaseNamed(lease string) (server, taskOwner string) {
	if i := strings.LastIndex(lease, srvLeaseTaskOwner); i >= 0 {
		return lease[:i], lease[i+len(srvLeaseTaskOwner):]
	}
	return lease, ""
}

// srvReservedFor reads the lease of a task reserved, not recorded and not
// running here, and reports whether the requester whose srvTaskOwner is
// reader may read the task: a task is its owner's, as one running here or
// recorded is (cancelableBy, srvTaskOwnerVar). A task of no requester is
// anyone's; one whose lease is not known (not taken yet, or a store
// without leases) only a reader of no requester's, as the reservation
// names no one: a server with keys answers it as an unknown task until
// it is recorded.
func (s *Server) srvReservedFor(ctx context.Context, v *srvTaskView, reader string) (bool, error) {
	ls, ok := s.opts.Calls.(wield.CallLeases)
	if !ok {
		return reader == "", nil
	}
	lease, until, err := ls.CallLease(ctx, v.TaskID)
	if err != nil {
		if errors.Is(err, wield.ErrNotFound) {
			return reader == "", nil
		}
		return false, err
	}
	if lease == "" {
		return reader == "", nil
	}
	server, taskOwner := srvLeaseNamed(lease)
	if taskOwner != "" && taskOwner != reader {
		return false, nil
	}
	srvOrphaned(v, server, until)
	return true, nil
}

// srvOrphaned reads, in the lease of a task reserved, not recorded and not
// running here (held by server until until), whether the task's server
// stopped: when the lease has expired, v reads failed, and it reports true.
func srvOrphaned(v *srvTaskView, server string, until time.Time) bool {
	if server == "" || !time.Now().After(until) {
		return false
	}
	msg := fmt.Sprintf("the server running this task (%s) stopped without recording it (killed or crashed: its lease expired at %s); the task's outcome is unknown, and the tool may have had effects",
		server, until.UTC().Format(time.RFC3339))
	v.Status, v.StatusMessage = "failed", msg
	v.LastUpdatedAt = srvTaskTime(until)
	v.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server running the task stopped before the task ended"}
	return true
}
