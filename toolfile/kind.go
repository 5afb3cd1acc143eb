package toolfile

import (
	"context"
	"fmt"

	"github.com/wieldhq/wield"
)

// Kind turns the entry of a tool definition into a handler. Kinds are how new
// entry types (http, mcp, remote) plug in without changing this package.
// Files load in parallel, so a Kind must be safe for concurrent use.
type Kind interface {
	Handler(ctx context.Context, def *Def) (wield.Handler, error)
}

// KindFunc adapts a function to a [Kind].
type KindFunc func(ctx context.Context, def *Def) (wield.Handler, error)

// Handler calls f.
func (f KindFunc) Handler(ctx context.Context, def *Def) (wield.Handler, error) { return f(ctx, def) }

// Loader loads tool files. The zero value loads command tools and leaves
// builtin tools without a handler (they answer executor_not_found).
type Loader struct {
	// Builtins are the Go handlers that `entry: {type: builtin, handler: NAME}`
	// names. When it is non-nil, an unknown handler name is reported.
	Builtins map[string]wield.Handler
	// Kinds adds entry types beside builtin and command, by type name. Their
	// entries' other keys arrive decoded in [Entry.Values].
	Kinds map[string]Kind
}

// handler makes the handler of a definition. A nil handler with a nil error
// means the tool is registered without one.
func (l *Loader) handler(ctx context.Context, def *Def) (wield.Handler, error) {
	switch e := def.Entry; {
	case e.Type == "builtin":
		return l.Builtins[e.Handler], nil
	case e.Type == "command" && e.Command != nil:
		return e.Command, nil
	case l.Kinds[e.Type] != nil:
		h, err := l.Kinds[e.Type].Handler(ctx, def)
		if err != nil {
			return nil, fmt.Errorf("entry type %s: %w", e.Type, err)
		}
		return h, nil
	}
	return nil, nil
}

// HandlersOf maps tool names to their handlers, to offer Go tools as
// builtins: Loader{Builtins: HandlersOf(builtin.Defaults()...)} lets a file
// write `entry: {type: builtin, handler: echo}`.
func HandlersOf(tools ...*wield.Tool) map[string]wield.Handler {
	m := make(map[string]wield.Handler, len(tools))
	for _, t := range tools {
		if t != nil && t.Handler != nil {
			m[t.Name] = t.Handler
		}
	}
	return m
}
