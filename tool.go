package wield

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Category groups tools by what they touch. The categories are those of the
// source documents taken together; the concurrency controller keys its buckets
// by category, and network categories get the longer default timeout.
type Category string

// The categories known to wield. Any other non-empty string is accepted as a
// custom category name.
const (
	CategorySystem       Category = "system"
	CategoryFile         Category = "file"
	CategoryNetwork      Category = "network"
	CategoryHTTP         Category = "http"
	CategoryData         Category = "data"
	CategoryCode         Category = "code"
	CategoryDatabase     Category = "database"
	CategoryAI           Category = "ai"
	CategoryNotification Category = "notification"
	CategoryMCP          Category = "mcp"
	CategoryCustom       Category = "custom"
)

// Categories lists the known categories in a stable order.
var Categories = []Category{
	CategorySystem, CategoryFile, CategoryNetwork, CategoryHTTP, CategoryData, CategoryCode,
	CategoryDatabase, CategoryAI, CategoryNotification, CategoryMCP, CategoryCustom,
}

// IsNetwork reports whether tools of the category talk to other machines, and
// so get the network default timeout (60 s instead of 30 s).
func (c Category) IsNetwork() bool {
	return c == CategoryNetwork || c == CategoryHTTP || c == CategoryMCP
}

// Permission says whether a call may run without a person's approval.
type Permission string

// The permissions. The zero value means "derive from the annotations": a
// destructive tool needs confirmation, every other tool runs automatically.
const (
	PermissionAuto    Permission = "auto"
	PermissionConfirm Permission = "confirm"
	PermissionDeny    Permission = "deny"
)

// Status is a tool's lifecycle state. Only active tools can be called.
type Status string

// The statuses. The zero value counts as active.
const (
	StatusActive   Status = "active"
	StatusDisabled Status = "disabled"
	StatusHeld     Status = "held" // changed upstream and not yet accepted
)

// TaskSupport says whether a tool's calls run as MCP tasks (see Tool.Task).
type TaskSupport string

// The task supports of a tool; the empty value means calls are never tasks.
const (
	TaskOptional TaskSupport = "optional"
	TaskRequired TaskSupport = "required"
)

// Annotations describe a tool's effects, as MCP tool annotations do. They drive
// defaults: a destructive tool needs confirmation unless its Permission says
// otherwise, and only an idempotent tool is ever retried.
type Annotations struct {
	ReadOnly    bool `json:"read_only,omitempty"`
	Destructive bool `json:"destructive,omitempty"`
	Idempotent  bool `json:"idempotent,omitempty"`
	OpenWorld   bool `json:"open_world,omitempty"`
}

// Tool is one callable capability. Build one with [Func] or [Raw], adjust its
// fields, and register it in a [Registry]; a registered tool must not be
// modified (use [Registry.Update] with a new value).
type Tool struct {
	Name         string             `json:"name"`
	Version      string             `json:"version,omitempty"`
	Description  string             `json:"description"`
	Category     Category           `json:"category,omitempty"`
	Tags         []string           `json:"tags,omitempty"`
	InputSchema  *jsonschema.Schema `json:"input_schema"`
	OutputSchema *jsonschema.Schema `json:"output_schema,omitempty"`
	Annotations  Annotations        `json:"annotations"`
	// Permission overrides the default derived from Annotations.
	Permission Permission `json:"permission,omitempty"`
	// Timeout bounds one call; zero means the engine's default for the category.
	Timeout time.Duration `json:"timeout,omitempty"`
	// MaxOutput is the output budget in bytes; zero means the engine's default,
	// negative means unlimited.
	MaxOutput int    `json:"max_output,omitempty"`
	Status    Status `json:"status,omitempty"`
	// Inline runs the handler on the caller's goroutine instead of a worker
	// of the engine's, saving the hand-over (about a microsecond). Set it
	// only for handlers that compute and return, with no I/O and no
	// waiting: an inline handler that ignores its context holds its caller
	// past the timeout, which the engine otherwise guarantees. Panics are
	// contained either way.
	Inline bool `json:"inline,omitempty"`
	// Secrets names parameters whose values are redacted in records and logs.
	Secrets []string `json:"secrets,omitempty"`
	// Source says where the tool came from (a file path, an MCP server, "go").
	Source string `json:"source,omitempty"`
	// Task says whether an MCP client that speaks tasks gets a task for a
	// call of this tool instead of waiting for its result: "" (never),
	// [TaskOptional] or [TaskRequired] (a client that cannot take a task
	// is refused). See docs/mcp.md, "Tasks".
	Task TaskSupport `json:"task,omitempty"`
	// Examples are argument objects that show a model how to call the tool,
	// each valid against InputSchema as it is, without coercion (tool files
	// check them at load, the registry at registration). The dialects that
	// take examples send them: Anthropic's input_examples, MCP's _meta, the
	// prompt formats' example calls. They are whole calls, so they are a
	// field of the tool, not a struct tag of one parameter (the `examples`
	// tag of a parameter stays the JSON Schema keyword).
	Examples []json.RawMessage `json:"examples,omitempty"`
	// AllowedCallers says who may call the tool: "direct" (a model, a
	// client, a workflow) and "program" (a program's inner call, see
	// [CallerProgram]). Empty means both for a tool whose permission is
	// auto, direct only otherwise (see [Tool.AllowsCaller]).
	AllowedCallers []string `json:"allowed_callers,omitempty"`
	// ForCaller, when set, is the tool as one caller sees it, for a tool
	// whose description depends on who asks: run_program lists the
	// functions that caller's programs can call. Lists and exports apply
	// it through [ListFor]; it returns the tool itself or a copy, and must
	// be quick and safe for concurrent use. kit is the toolkit the
	// caller's calls are confined to (an agent's, an API key's scope;
	// nil for every tool) and p the engine's policy; with p nil the tool
	// may look the policy up itself (run_program asks its invoker's, so
	// its functions follow the engine's policy either way).
	ForCaller func(ctx context.Context, p Policy, caller Caller, kit *Toolkit) *Tool `json:"-"`

	// Handler runs the tool. A tool without one can be registered (a tool file
	// may name an executor that is not loaded) and answers executor_not_found.
	Handler Handler `json:"-"`
}

// EffectivePermission is the permission the engine applies: the explicit one,
// or confirm for destructive tools and auto for the rest.
func (t *Tool) EffectivePermission() Permission {
	if t.Permission != "" {
		return t.Permission
	}
	if t.Annotations.Destructive {
		return PermissionConfirm
	}
	return PermissionAuto
}

// EffectiveCallers is what AllowedCallers means for the tool: the list
// when it is set, else both "direct" and "program" for a tool whose
// permission is auto and "direct" alone otherwise (see
// [Tool.AllowsCaller]), as descriptions of the tool show it.
func (t *Tool) EffectiveCallers() []string {
	if len(t.AllowedCallers) > 0 {
		return t.AllowedCallers
	}
	if t.EffectivePermission() == PermissionAuto {
		return []string{AllowDirect, AllowProgram}
	}
	return []string{AllowDirect}
}

// Callable reports whether the tool's status lets it run.
func (t *Tool) Callable() bool { return t.Status == "" || t.Status == StatusActive }

// HasTag reports whether the tool carries the tag.
func (t *Tool) HasTag(tag string) bool {
	for _, x := range t.Tags {
		if x == tag {
			return true
		}
	}
	return false
}

// toolName is what models and the MCP specification accept as a tool name,
// with at most maxToolName bytes (its characters are ASCII). The length is
// not a counted repetition ({0,127}) in the expression: that compiles into
// one state per count, 100 KB allocated at start-up and 52 KB held for the
// life of every process that imports wield; this one holds under 1 KB.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-]*$`)

// maxToolName is the longest tool name, in bytes.
const maxToolName = 128

// Check reports what is wrong with a tool definition, for registration.
func (t *Tool) Check() error {
	var errs []error
	if len(t.Name) > maxToolName || !toolName.MatchString(t.Name) {
		errs = append(errs, fmt.Errorf("name %q must be 1-128 characters of letters, digits, _ . -", t.Name))
	}
	if t.InputSchema == nil {
		errs = append(errs, errors.New("no input schema"))
	}
	switch t.Permission {
	case "", PermissionAuto, PermissionConfirm, PermissionDeny:
	default:
		errs = append(errs, fmt.Errorf("permission %q is not auto, confirm or deny", t.Permission))
	}
	switch t.Status {
	case "", StatusActive, StatusDisabled, StatusHeld:
	default:
		errs = append(errs, fmt.Errorf("status %q is not active, disabled or held", t.Status))
	}
	if t.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %s is negative", t.Timeout))
	}
	if err := checkAllowedCallers(t.AllowedCallers); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tool %q: %w", t.Name, err)
	}
	return nil
}
