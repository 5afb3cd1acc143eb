package toolfile

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/schema"
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
	// names. When it is non-nil, an unknown handler name is reported. Its
	// names are also the program's built-in tools (as [HandlersOf] makes
	// it): toolsets and agents may name them, and a file that defines one
	// of those names replaces the built-in (register the built-ins with
	// [wield.Registry.RegisterDefaults] so that the registry agrees).
	Builtins map[string]wield.Handler
	// Kinds adds entry types beside builtin and command, by type name. Their
	// entries' other keys arrive decoded in [Entry.Values].
	Kinds map[string]Kind
	// Known, when set, reports the other tools the program has (imported
	// from MCP servers, registered in Go), which toolsets and agents may
	// name without a warning. A Known that panics answers no; the panic is
	// logged and counted (see [wield.Protect]).
	Known func(name string) bool
	// KnownToolset, when set, reports the toolsets the program defines
	// beside the files (the programs toolset of --programs), which agents
	// may name without a warning. It is asked like Known, panics included.
	KnownToolset func(name string) bool
	// Importable, when set, says whether a tool (toolset false) or a
	// toolset that no file, built-in or Known defines may still be there
	// when the set is applied: a tool imported from an MCP server, a
	// toolset the program offers. A reference to one it says no to is then
	// an error rather than a warning, since every command applying the set
	// would stop on it (`wield validate` sets it from the configuration).
	Importable func(name string, toolset bool) bool
	// Off, when set, says why a built-in tool the program has turned off
	// is not there: the setting that turns it on (web_search without
	// web_search in the configuration), or "" for a name that is no such
	// tool. A toolset or an agent naming one is an error saying so, not
	// "not defined" alone, whatever Importable says: nothing defines it
	// later, and the tool a person sees in the documentation exists.
	Off func(name string) string
	// AgentTools are built-in tools that exist where agents do (wield's
	// call_subagent, which hands work to them): when the files define an
	// agent, toolsets and agents may name them as they name the
	// [Loader.Builtins], and applying the set ([Set.Apply], a [Watcher]'s
	// every load) registers them as defaults of the registry before it
	// defines toolsets and toolkits, unless the registry has a tool of that
	// name. A file's tool of the same name replaces one, as it replaces a
	// built-in. Without agents they do not exist.
	AgentTools []*wield.Tool
	// MCPServerURLs maps the URLs of the configured MCP servers to their
	// names, so that a tool written with the short keys' mcp_server_url
	// runs on the server of that URL (an mcp entry; see docs/tool-files.md).
	MCPServerURLs map[string]string
	// DirAt says where each folder given to LoadDirs or Watch is named (a
	// configuration's tool_dirs item: [Config.ToolDirAt]), by the path as
	// given: a folder that does not exist, or cannot be read, is reported
	// there rather than at the folder's own path, which is no place in a
	// file.
	DirAt map[string]Position
	// ConfigFile is the configuration in use (wield's --config): found in
	// a scanned folder, it is left out of the tool files without a word.
	// Any other configuration file found there ([IsConfig]) is left out
	// with a warning naming it, or checked with CheckConfigs.
	ConfigFile string
	// CheckConfigs has the configuration files found in the scanned
	// folders, but ConfigFile, checked as configurations, their problems
	// reported in place of the warning that they are left out (`wield
	// validate`).
	CheckConfigs bool
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
//
// Each handler keeps its tool, so that a file's tool running it works with
// what the file's own schema admits: the arguments are first fitted to the
// built-in's schema (the safe coercions of [schema.Validator.Normalize], such
// as 5 for a string header becoming "5", and the built-in's own rules, its
// required list aside) and a value it cannot take is a validation_error
// naming the field; and what the file does not say (timeout, annotations,
// permission, output schema) is the built-in's, so a file cannot make a
// destructive built-in look harmless by leaving its annotations out.
func HandlersOf(tools ...*wield.Tool) map[string]wield.Handler {
	m := make(map[string]wield.Handler, len(tools))
	for _, t := range tools {
		if t != nil && t.Handler != nil {
			m[t.Name] = &builtinHandler{tool: t}
		}
	}
	return m
}

// builtinHandler is a built-in tool's handler as [HandlersOf] offers it.
type builtinHandler struct {
	tool *wield.Tool
	once sync.Once
	fit  *schema.Validator // nil: the arguments go as they are
}

// fitter compiles, once, the built-in's input schema without its required
// list and with other members allowed: what the file's schema already
// judged (required parameters, parameters of its own that the handler
// ignores) is not judged again.
func (b *builtinHandler) fitter() *schema.Validator {
	b.once.Do(func() {
		in := b.tool.InputSchema
		if in == nil || len(in.Properties) == 0 {
			return
		}
		loose := *in
		loose.Required, loose.AdditionalProperties = nil, nil
		if v, err := schema.Compile(&loose); err == nil {
			b.fit = v
		}
	})
	return b.fit
}

// Handle fits args to the built-in's schema and runs its handler.
func (b *builtinHandler) Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	if v := b.fitter(); v != nil {
		fitted, errs := v.Normalize(args)
		if len(errs) > 0 {
			msgs := make([]string, len(errs))
			for i, e := range errs {
				msgs[i] = e.String()
			}
			return nil, wield.Errorf(wield.ErrValidation, "the built-in %s cannot take these arguments: %s", b.tool.Name, strings.Join(msgs, "; "))
		}
		args = fitted
	}
	return b.tool.Handler.Handle(ctx, args)
}

// ValidJSONOutput passes on the built-in handler's promise.
func (b *builtinHandler) ValidJSONOutput() bool {
	v, ok := b.tool.Handler.(interface{ ValidJSONOutput() bool })
	return ok && v.ValidJSONOutput()
}

// ReadsArgsOnly passes on the built-in handler's promise.
func (b *builtinHandler) ReadsArgsOnly() bool {
	v, ok := b.tool.Handler.(interface{ ReadsArgsOnly() bool })
	return ok && v.ReadsArgsOnly()
}

// builtinTool is the tool behind a handler of [HandlersOf], or nil.
func builtinTool(h wield.Handler) *wield.Tool {
	if b, ok := h.(*builtinHandler); ok {
		return b.tool
	}
	return nil
}

// inherit gives t what its file does not say and the built-in bt does:
// timeout, output budget, annotations, permission, output schema, category
// and secrets.
func inherit(t *wield.Tool, def *Def, bt *wield.Tool) {
	if def.Timeout == 0 {
		t.Timeout = bt.Timeout
	}
	if def.MaxOutput == 0 {
		t.MaxOutput = bt.MaxOutput
	}
	if def.Annotations == (wield.Annotations{}) {
		t.Annotations = bt.Annotations
	}
	if def.Permission == "" {
		t.Permission = bt.Permission
	}
	if def.Output == nil {
		t.OutputSchema = bt.OutputSchema
	}
	if def.Category == "" {
		t.Category = bt.Category
	}
	if len(def.Secrets) == 0 && t.InputSchema != nil {
		for _, s := range bt.Secrets {
			if t.InputSchema.Properties[s] != nil {
				t.Secrets = append(t.Secrets, s)
			}
		}
	}
	t.Inline = bt.Inline
}

// redeclared checks a file that re-declares a built-in (its name and its
// handler are the built-in's) against the built-in's parameters: one the
// built-in does not take is a warning (the handler never sees it), one the
// built-in requires and the file does not declare is a problem (every call
// would fail).
func redeclared(def *Def, in *jsonschema.Schema, bt *wield.Tool) []Problem {
	if in == nil || bt.InputSchema == nil || len(bt.InputSchema.Properties) == 0 {
		return nil
	}
	var out []Problem
	ap := bt.InputSchema.AdditionalProperties
	closed := ap != nil && (ap.Not != nil || isFalse(ap))
	takes := bt.InputSchema.PropertyOrder
	if len(takes) == 0 {
		for n := range bt.InputSchema.Properties {
			takes = append(takes, n)
		}
	}
	for _, p := range def.Parameters {
		if closed && bt.InputSchema.Properties[p.Name] == nil {
			out = append(out, Problem{File: def.File, Line: def.Entry.Line, Col: def.Entry.Col, Warning: true,
				Message: fmt.Sprintf("parameter %q: the built-in %s takes no such parameter (it takes %s) and never sees it", p.Name, bt.Name, strings.Join(takes, ", "))})
		}
	}
	for _, r := range bt.InputSchema.Required {
		if in.Properties[r] == nil {
			out = append(out, Problem{File: def.File, Line: def.Entry.Line, Col: def.Entry.Col,
				Message: fmt.Sprintf("the built-in %s needs the parameter %q, which the file does not declare: every call would fail", bt.Name, r)})
		}
	}
	return out
}

// isFalse reports whether s is the schema false, as encoding/json and
// jsonschema-go write `additionalProperties: false`.
func isFalse(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == "false"
}
