package wield

import (
	"context"
	"sync/atomic"
)

// TracePropagator writes the trace context current in a context where an
// outbound request carries it: the headers of an HTTP request, the
// params._meta of an MCP request. It lets the packages that call out (HTTP
// tools, web_fetch, remote entries, imported MCP tools) take part in a
// distributed trace without depending on a tracing library: the program
// that traces sets one with [SetTracePropagator] (cmd/wield does when an
// OTLP endpoint is configured, with OpenTelemetry's W3C Trace Context).
type TracePropagator interface {
	// Inject calls set for each key of the trace context current in ctx
	// (the W3C keys traceparent and, when there is one, tracestate). A
	// handler's ctx carries its call (see [CallKey]), whose span is the
	// parent the other side should see.
	Inject(ctx context.Context, set func(key, value string))
}

// tracePropagator is the process's propagator; nil until one is set.
var tracePropagator atomic.Pointer[TracePropagator]

// SetTracePropagator makes p the propagator every outbound request of the
// process goes through; nil removes it. It is meant to be called once, at
// start, by the program's main.
func SetTracePropagator(p TracePropagator) {
	if p == nil {
		tracePropagator.Store(nil)
		return
	}
	tracePropagator.Store(&p)
}

// InjectTrace writes the trace context of ctx with set, through the
// propagator [SetTracePropagator] set; without one it does nothing. Callers
// call it after their own headers, so that a traceparent in a tool's
// arguments or configuration cannot stand in for the real one.
func InjectTrace(ctx context.Context, set func(key, value string)) {
	if p := tracePropagator.Load(); p != nil {
		(*p).Inject(ctx, set)
	}
}
