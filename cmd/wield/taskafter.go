package main

import (
	"time"

	"github.com/wieldhq/wield/toolfile"
)

// defaultTaskAfter is how long a tools/call of a 2026-07-28 client that
// declared the MCP Tasks extension runs before it is answered with a task
// (it goes on as that task). In that revision the request is the call: a
// connection cut by a proxy's idle timeout or by the client's own request
// timeout (60 s in the official TypeScript SDK, a common proxy default)
// cancels it. 30 s answers well before those, and long enough that an
// ordinary call never becomes a task. A client that declared the
// extension said it can follow one.
const defaultTaskAfter = 30 * time.Second

const taskAfterName = "task-after"

// taskAfterFlag is --task-after of `wield serve` and `wield mcp`, which
// overrides the configuration's mcp.task_after.
type taskAfterFlag struct {
	d   time.Duration
	set bool
}

func (f *taskAfterFlag) add(fl interface {
	DurationVar(p *time.Duration, name string, value time.Duration, usage string)
}) {
	fl.DurationVar(&f.d, taskAfterName, defaultTaskAfter, "over HTTP, a tools/call of a 2026-07-28 client that declared the MCP Tasks extension still running after this long is answered with a task and goes on as it; 0: never (overrides mcp.task_after)")
}

// of is the TaskAfter of the MCP server: the flag when given, else the
// configuration's mcp.task_after, else the default.
func (f *taskAfterFlag) of(cfg *toolfile.Config) time.Duration {
	switch {
	case f.set:
		return f.d
	case cfg != nil && cfg.MCP.TaskAfter != nil:
		return *cfg.MCP.TaskAfter
	}
	return defaultTaskAfter
}
