package mcpbridge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/internal/schemadec"
)

// impConvertTool makes the wield tool of a remote tool: category mcp, the
// schemas as sent, the annotations with MCP's defaults, the tool's _meta
// tags followed by the server's configured ones.
func (s *impServer) impConvertTool(r *mcp.Tool) (*wield.Tool, error) {
	in, err := impSchema(r.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if in == nil {
		return nil, errors.New("input schema: missing")
	}
	if err := impObjectSchema(in); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	out, err := impSchema(r.OutputSchema)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	desc := impClipDescription(ImportDescription(r), s.im.maxDescription())
	ann := ImportAnnotations(r.Annotations)
	return &wield.Tool{
		Name:         s.im.opts.Naming(s.cfg.Name, r.Name),
		Description:  desc,
		Category:     wield.CategoryMCP,
		Tags:         impTags(r.Meta, s.cfg.Tags),
		InputSchema:  in,
		OutputSchema: out,
		Annotations:  ann,
		Permission:   ImportPermission(cmp.Or(s.cfg.Permission, s.im.opts.Permission), ann, r.Meta),
		Source:       "mcp:" + s.cfg.Name,
		Handler:      &impHandler{s: s, remote: r.Name, out: out},
	}, nil
}

// ImportDescription is the text a model reads of a remote tool: its
// description, else its title, else its annotations' title. [PinTool] pins
// this text, so a title that stands in for an empty description cannot
// change unnoticed.
func ImportDescription(t *mcp.Tool) string {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	return desc
}

// impClipDescription cuts a description longer than max bytes (a server
// can send megabytes, which every model given the tool would read) to its
// head, on a character boundary, with a notice; max < 0 keeps it whole.
func impClipDescription(desc string, max int) string {
	if max < 0 || len(desc) <= max {
		return desc
	}
	n := max
	for n > 0 && !utf8.RuneStart(desc[n]) {
		n--
	}
	return desc[:n] + fmt.Sprintf("\n\n[... description cut by wield: it was %d bytes, over the %d-byte limit]", len(desc), max)
}

// ImportAnnotations converts MCP tool annotations to wield's, applying MCP's
// defaults for hints that are absent: a tool is not read-only, is
// destructive (unless read-only: the hint only means something for tools
// that write), is not idempotent and reaches an open world. Absent
// annotations are all defaults, so an unannotated tool needs confirmation.
func ImportAnnotations(a *mcp.ToolAnnotations) wield.Annotations {
	if a == nil {
		return wield.Annotations{Destructive: true, OpenWorld: true}
	}
	return wield.Annotations{
		ReadOnly:    a.ReadOnlyHint,
		Destructive: !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint),
		Idempotent:  a.IdempotentHint,
		OpenWorld:   a.OpenWorldHint == nil || *a.OpenWorldHint,
	}
}

// ImportPermission is the permission of an imported tool: the configured
// one (local, else derived from the annotations), unless the tool's _meta
// asks for a stricter one under [MetaPermission], as a wield exporting a
// confirm tool does. The stricter wins (deny over confirm over auto), so a
// server can make its tool more guarded than the local configuration says,
// never less.
func ImportPermission(local wield.Permission, ann wield.Annotations, meta mcp.Meta) wield.Permission {
	eff := (&wield.Tool{Permission: local, Annotations: ann}).EffectivePermission()
	remote, _ := meta[MetaPermission].(string)
	if impStrictness[wield.Permission(remote)] > impStrictness[eff] {
		return wield.Permission(remote)
	}
	return local
}

var impStrictness = map[wield.Permission]int{wield.PermissionAuto: 1, wield.PermissionConfirm: 2, wield.PermissionDeny: 3}

// impTags returns the tool's own tags (FastMCP's _meta._fastmcp.tags, as seed
// 001 §7.1 reads them, a plain _meta.tags, or another wield's
// [MetaTags]) and then the configured ones, without repeats. The server's
// are bounded: the first impMaxTags of at most impMaxTag bytes each (a
// longer one is left out, not cut into another tag a policy might name);
// a list of 100,000 tags cost a comparison with each before.
func impTags(meta mcp.Meta, extra []string) []string {
	var out []string
	add := func(v any) {
		list, _ := v.([]any)
		for _, x := range list {
			if len(out) >= impMaxTags {
				return
			}
			if tag, ok := x.(string); ok && tag != "" && len(tag) <= impMaxTag && !slices.Contains(out, tag) {
				out = append(out, tag)
			}
		}
	}
	if fm, ok := meta["_fastmcp"].(map[string]any); ok {
		add(fm["tags"])
	}
	add(meta["tags"])
	add(meta[MetaTags])
	for _, tag := range extra {
		if tag != "" && !slices.Contains(out, tag) {
			out = append(out, tag)
		}
	}
	return out
}

// Bounds on the tags a server gives one tool.
const (
	impMaxTags = 32
	impMaxTag  = 64
)

// impObjectSchema refuses an input schema whose type says its instances
// are not objects: MCP's inputSchema is an object schema, and a model's
// provider refuses a request whose tool takes anything else (the whole
// request, with every other tool). A schema naming no type, or object
// among others, is let be.
func impObjectSchema(s *jsonschema.Schema) error {
	switch {
	case s.Type != "" && s.Type != "object":
		return fmt.Errorf("its type is %q, not object: an MCP tool takes an object of arguments", s.Type)
	case len(s.Types) > 0 && !slices.Contains(s.Types, "object"):
		return fmt.Errorf("its type is %q, not object: an MCP tool takes an object of arguments", s.Types)
	}
	return nil
}

// impSchema reads a schema as the SDK decoded it (a map), or nil for none.
func impSchema(v any) (*jsonschema.Schema, error) {
	// schemadec, not json.Unmarshal: jsonschema-go decodes a schema again
	// at every schema it holds, which a server sends nested as deep as it
	// likes.
	return schemadec.FromValue(v)
}

// impSameTool reports whether two conversions of a tool would look the same
// to the registry's readers, given that their pins (names, description,
// schemas) are equal.
func impSameTool(a, b *wield.Tool) bool {
	return a.Description == b.Description && a.Annotations == b.Annotations &&
		slices.Equal(a.Tags, b.Tags) && a.Permission == b.Permission && a.Status == b.Status
}

// impHandler calls one remote tool over the server's current session.
type impHandler struct {
	s      *impServer
	remote string
	// out is the tool's outputSchema, nil for none; it is resolved at the
	// first result that needs it (outV is nil when it does not resolve:
	// the results are then taken as they are).
	out     *jsonschema.Schema
	outOnce sync.Once
	outV    *jsonschema.Resolved
}

// checkStructured refuses structuredContent that does not match the
// tool's outputSchema, as MCP asks clients to: a model, a program or
// another MCP client would otherwise be given what the schema says cannot
// be.
//
// The check is JSON Schema's (members the schema does not name are
// allowed unless it says otherwise), not the stricter one wield gives a
// tool's arguments.
func (h *impHandler) checkStructured(res *mcp.CallToolResult) error {
	if h.out == nil || res.IsError || res.StructuredContent == nil {
		return nil
	}
	h.outOnce.Do(func() { h.outV, _ = h.out.Resolve(nil) })
	if h.outV == nil {
		return nil
	}
	err := h.outV.Validate(res.StructuredContent)
	if err == nil {
		return nil
	}
	return &wield.Error{Type: wield.ErrExecution, Message: fmt.Sprintf("MCP server %q answered the call of %q with structuredContent that does not match the tool's outputSchema (%s). The server is misbehaving: calling it again is unlikely to help",
		h.s.cfg.Name, h.remote, safetext.Line(safetext.Clip(err.Error(), 300)))}
}

// ValidJSONOutput tells the engine the output needs no second check: it is
// made by json.Marshal or checked with json.Valid.
func (h *impHandler) ValidJSONOutput() bool { return true }

// ReadsArgsOnly tells the engine the handler neither keeps nor changes its
// arguments: they are only written to the wire.
func (h *impHandler) ReadsArgsOnly() bool { return true }

// Handle calls the remote tool and converts its result as seed 001 §7.2
// says. While the server is unreachable it fails at once with a transient
// execution_error that names the server and nothing else.
func (h *impHandler) Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	s := h.s
	sess := s.session()
	if sess == nil {
		return nil, s.unavailable(nil)
	}
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		args = json.RawMessage("{}") // MCP arguments are an object, never null
	}
	params := &mcp.CallToolParams{Name: h.remote, Arguments: args}
	// The call's trace context goes in params._meta, where MCP carries
	// it (traceparent, tracestate), when the process traces.
	wield.InjectTrace(ctx, func(k, v string) {
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		params.Meta[k] = v
	})
	r := sess.relays.begin(ctx, sess.cs)
	if r != nil {
		defer sess.relays.end(r) // progress, logs and cancellation pass through (client_relay.go)
		if r.progress {
			params.SetProgressToken(r.token)
		}
	}
	// A tool that runs as a task is called as one (client_tasks.go).
	if sess.raw != nil {
		// execution.taskSupport is 2025-11-25's: a server of 2026-07-28
		// says so with -32021, below.
		oldEra := sess.cs.InitializeResult() != nil && sess.cs.InitializeResult().ProtocolVersion < srvStatelessEra
		switch support, declared := sess.tasks.coreMode(h.remote); {
		case sess.tasks.extMode(h.remote):
			return h.callTask(ctx, sess, params, true, r)
		case !oldEra:
		case support != "" && declared:
			return h.callTask(ctx, sess, params, false, r)
		case support == "required":
			return nil, &wield.Error{Type: wield.ErrExecution, Message: fmt.Sprintf("MCP server %q lists tool %q as one that runs only as a task (execution.taskSupport: required), but does not declare tasks for tools/call in its capabilities, so wield cannot call it", s.cfg.Name, h.remote)}
		}
	}
	res, err := sess.cs.CallTool(ctx, params)
	if err != nil && sess.raw != nil && ctx.Err() == nil && impWantsExtension(err) {
		// The server runs this tool only as a task of the extension:
		// called again, and from now on, as one.
		sess.tasks.setExt(h.remote)
		return h.callTask(ctx, sess, params, true, r)
	}
	if err != nil {
		return nil, s.callFailed(ctx, sess, h.remote, err)
	}
	return h.result(res)
}

// result is the tool's output from its result, the one conversion of a
// call's answer and of a task's: ImportResult, with structuredContent
// checked against the tool's outputSchema.
func (h *impHandler) result(res *mcp.CallToolResult) (json.RawMessage, error) {
	out, err := ImportResult(res)
	if err == nil {
		err = h.checkStructured(res)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// callFailed turns a failed tools/call into the error the model sees, and
// when the connection is at fault has it re-established.
func (s *impServer) callFailed(ctx context.Context, sess *impSession, tool string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err() // the engine reports timeout or canceled
	}
	if why := sess.badFrame(); why != "" {
		// Not an outage: the server broke the protocol, and would likely do
		// so again; the model is told so, not invited to retry.
		s.im.log.Warn("mcp server sent a message that could not be read; its connection is reset", "server", s.cfg.Name, "tool", tool, "problem", why, "error", err)
		s.markBroken(sess)
		return &wield.Error{Type: wield.ErrExecution, Err: err,
			Message: fmt.Sprintf("MCP server %q sent %s, so its connection was reset; the call of %q did not complete. The server is misbehaving: calling it again is unlikely to help", s.cfg.Name, why, tool)}
	}
	// The SDK reports some local transport failures as JSON-RPC errors too
	// (code -32005, "rejected by transport", wrapping the network error), so
	// the network comes first.
	var rpc *jsonrpc.Error
	network := impConnectionError(err)
	if !network && errors.As(err, &rpc) && rpc.Code != impCodeRejected && rpc.Code != impCodeClientClosing {
		return &wield.Error{Type: wield.ErrExecution, Err: err,
			Message: fmt.Sprintf("MCP server %q refused the call of %q: %s", s.cfg.Name, tool, rpc.Message)}
	}
	if !network {
		// Not a protocol answer and not plainly the network: the session
		// decides. A server that still answers a ping has failed this call
		// only.
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		perr := sess.cs.Ping(pctx, nil)
		cancel()
		if what := impUnreadableResult(err); perr == nil && what != "" {
			// It answered, with a result the go-sdk could not decode: the
			// model is told what was wrong in words, not the decoder's.
			s.im.log.Warn("mcp server answered a call with a result that could not be read", "server", s.cfg.Name, "tool", tool, "error", err)
			return &wield.Error{Type: wield.ErrExecution, Err: err,
				Message: fmt.Sprintf("MCP server %q answered the call of %q with %s, which wield could not read. The server is misbehaving: calling it again is unlikely to help", s.cfg.Name, tool, what)}
		}
		if perr == nil {
			return &wield.Error{Type: wield.ErrExecution, Err: err,
				Message: fmt.Sprintf("The call of %q on MCP server %q failed", tool, s.cfg.Name)}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	s.im.log.Warn("mcp call lost its connection", "server", s.cfg.Name, "tool", tool, "error", err)
	s.markBroken(sess)
	return s.unavailable(err)
}

func (s *impServer) unavailable(cause error) error {
	if cause == nil {
		cause = ErrUnavailable
	}
	return wield.Transient(&wield.Error{Type: wield.ErrExecution, Err: cause,
		Message: fmt.Sprintf("MCP server %q is not reachable right now; try again shortly", s.cfg.Name)})
}

// JSON-RPC codes the SDK uses for failures on this side of the wire.
const (
	impCodeClientClosing = -32003
	impCodeRejected      = -32005
)

// impUnreadableResult says what was wrong with a tools/call result the
// go-sdk could not decode, in words for a model, or "" for another error.
func impUnreadableResult(err error) string {
	var typ *json.UnmarshalTypeError
	var syn *json.SyntaxError
	var b64 base64.CorruptInputError
	switch msg := err.Error(); {
	case strings.Contains(msg, "unrecognized content type"):
		return "content of a type MCP does not define"
	case errors.As(err, &b64):
		return "content whose data is not base64"
	case errors.As(err, &typ), errors.As(err, &syn):
		return "a result that is not a tools/call result"
	}
	return ""
}

func impConnectionError(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.As(err, &ue) || errors.As(err, &ne)
}

// ImportResult converts the result of a tools/call as seed 001 §7.2 says:
//
//   - isError: a tool failure (execution_error) whose message, the text of
//     the result, the model sees; the result then reads {"error": text}
//   - structuredContent, when present: as is
//   - else the first content block: a text that is JSON as that JSON, other
//     text as a JSON string, an image, audio, resource link or embedded
//     resource as its JSON form ({"type":"image","data":…,"mimeType":…})
//   - no content at all: null
func ImportResult(res *mcp.CallToolResult) (json.RawMessage, error) {
	if res.IsError {
		var texts []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok && t.Text != "" {
				texts = append(texts, t.Text)
			}
		}
		msg := strings.Join(texts, "\n")
		if msg == "" {
			msg = "the tool reported an error without a message"
		}
		return nil, &wield.Error{Type: wield.ErrExecution, Message: msg}
	}
	if res.StructuredContent != nil {
		b, err := jsonenc.Marshal(res.StructuredContent) // <, > and & as they are: a model reads it
		if err != nil {
			return nil, fmt.Errorf("encode structured content: %w", err)
		}
		return b, nil
	}
	if len(res.Content) == 0 || res.Content[0] == nil {
		return json.RawMessage("null"), nil
	}
	if t, ok := res.Content[0].(*mcp.TextContent); ok {
		if json.Valid([]byte(t.Text)) {
			if b, err := jsonenc.Compact(nil, []byte(t.Text)); err == nil {
				return b, nil
			}
		}
		return jsonenc.AppendString(nil, t.Text), nil
	}
	b, err := jsonenc.Marshal(res.Content[0])
	if err != nil {
		return nil, fmt.Errorf("encode content: %w", err)
	}
	return b, nil
}
