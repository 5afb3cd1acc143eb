package wield

import (
	"context"
	"slices"
)

type scopeKey struct{}

// WithScope returns a context saying that the calls made with it may reach
// the tools of these toolsets only: the scope of the API key a server
// authenticated (see package httpapi). A server that serves MCP beside
// the API (package mcpbridge) reads it to narrow its calls, and the calls
// made on their behalf (a program's inner calls), to the scope, as the
// REST API narrows its own with [Registry.NarrowToolkit]. An empty list
// says nothing (every tool).
func WithScope(ctx context.Context, toolsets []string) context.Context {
	if len(toolsets) == 0 {
		return ctx
	}
	return context.WithValue(ctx, scopeKey{}, slices.Clone(toolsets))
}

// ScopeFrom returns the toolsets ctx is scoped to ([WithScope]), or nil
// for every tool. The list is the context's own, read on every request of
// a scoped key, not a copy: it must not be changed (an append makes a new
// one).
func ScopeFrom(ctx context.Context) []string {
	s, _ := ctx.Value(scopeKey{}).([]string)
	return s[:len(s):len(s)]
}

// ScopeToolkit is the toolkit of the tools of the toolsets a scope names
// (see [Registry.NarrowToolkit]), within kit when kit is not nil; nil when
// toolsets is empty (no scope: kit, or every tool).
func (r *Registry) ScopeToolkit(label string, toolsets []string, kit *Toolkit) *Toolkit {
	if len(toolsets) == 0 {
		return kit
	}
	var names []string
	for _, name := range toolsets {
		if ts, ok := r.Toolset(name); ok {
			names = append(names, ts.Tools...)
		}
	}
	slices.Sort(names)
	return r.NarrowToolkit(label, slices.Compact(names), kit)
}
