package wield

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// The kinds of user callbacks that [Protect] contains, as logs and
// [CallbackPanics] name them.
const (
	CallbackBusFilter        = "bus_filter"         // a Subscribe, SubscribeAfter or Listen filter
	CallbackBusListener      = "bus_listener"       // a Listen function
	CallbackApprover         = "approver"           // an Approver's Approve
	CallbackApprovalNotify   = "approval_notify"    // memstore.NewApprovals' notify
	CallbackAgentOnMessage   = "agent_on_message"   // agent.LoopOptions.OnMessage
	CallbackAgentOnCall      = "agent_on_call"      // agent.LoopOptions.OnCall
	CallbackAgentOnFallback  = "agent_on_fallback"  // agent.LoopOptions.OnFallback
	CallbackSubagentOnResult = "subagent_on_result" // agent.SubAgentOptions.OnResult
	CallbackSummaryKeep      = "summary_keep"       // agent.SummaryQuery.Keep
	CallbackMCPNaming        = "mcp_naming"         // mcpbridge.ImportOptions.Naming
	CallbackMCPAuthorize     = "mcp_authorize"      // mcpbridge.OAuthConfig.Authorize
	CallbackToolfileKnown    = "toolfile_known"     // toolfile.Loader.Known
)

// callbackPanics counts the panics Protect contained, by kind: kind →
// *atomic.Int64. A map guarded by a mutex would serialise every panic;
// panics are rare, but a broken callback can panic on every event.
var callbackPanics sync.Map

// Protect calls fn, a callback the program gave a wield package, and
// contains a panic in it: the panic is logged on log (nil: slog.Default())
// at ERROR with the callback's kind, the panic value and the stack, counted
// under kind (see [CallbackPanics]), and reported as false. A callback runs
// on goroutines wield owns (a bus listener's, a batch's, a reload's), where
// a panic would end the whole process; and its text is the program's own,
// so it goes to the log, never to a model.
func Protect(log *slog.Logger, kind string, fn func()) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			ok = false
			countPanic(kind)
			if log == nil {
				log = slog.Default()
			}
			log.Error("callback panicked", "kind", kind, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	fn()
	return true
}

func countPanic(kind string) {
	v, ok := callbackPanics.Load(kind)
	if !ok {
		v, _ = callbackPanics.LoadOrStore(kind, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// CallbackPanics returns how many callbacks have panicked in this process
// since it started, by kind (the Callback* constants, or a package's own
// kind), for metrics and tests. Kinds that never panicked are absent.
func CallbackPanics() map[string]int64 {
	out := map[string]int64{}
	callbackPanics.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}
