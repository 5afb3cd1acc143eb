package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
)

// Several questions at once, the client's roots, and what a call of
// 2026-07-28 needs of its client.
//
// [Ask] puts several questions to the client in one round: a client of
// 2026-07-28 gets them together in one input_required result and answers
// them in one retry (a retry that answers some only is asked the rest,
// under the same requestState); a client of a session is asked them one
// after the other. [Elicit], [Sample] and [Roots] ask one.
//
// A request of 2026-07-28 whose processing needs a capability the client
// did not declare is refused with -32021 (MissingRequiredClientCapability,
// HTTP 400), error.data.requiredCapabilities naming it. Two cases:
//   - known before the call runs: a tool file's mcp_client entry whose
//     steps (before any fail step) elicit, sample or list roots needs
//     those capabilities; the call is refused without running (no record);
//   - found while it runs: a Go tool's Elicit, Sample, Roots or Ask
//     returns [ErrUnsupported] when the client lacks the capability, and
//     the tool decides. A tool that goes on without the answer (a default,
//     another way) returns its result as usual; a call that ends failed
//     after such a refusal is answered -32021 instead of its failed
//     result, since it failed for want of the capability. Its record says
//     how the tool failed.

// Question is one of the questions [Ask] puts to the MCP client: exactly
// one of Elicit, Sample and Roots is set.
type Question struct {
	// Key is the question's key in inputRequests for a client of
	// 2026-07-28 (as [WithInputKey]); "" names it wield_<kind>_<round>_<n>.
	Key    string
	Elicit *ElicitQuestion // the user is asked (as [Elicit])
	Sample *SampleQuestion // the client's model is asked (as [Sample])
	Roots  bool            // the client's roots are asked (as [Roots])
}

// ElicitQuestion is what [Elicit] takes.
type ElicitQuestion struct {
	Message string
	Schema  *jsonschema.Schema // nil for a plain confirmation
}

// SampleQuestion is what [Sample] takes.
type SampleQuestion struct {
	Messages  []SampleMessage
	MaxTokens int64
}

// Answer is the answer to one [Question], by its kind: Action and Content
// (set for accept) for an elicitation, Sampled for a sampling, Roots for
// roots.
type Answer struct {
	Action  string
	Content map[string]any
	Sampled Sampled
	Roots   []Root
}

// Root is one of the client's roots: a directory or file the client lets
// servers work in.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// Roots asks the MCP client for its roots. It returns [ErrNotMCP] outside
// an MCP call, [ErrUnsupported] when the client did not declare roots, or
// the client's error (for a client of 2026-07-28, as [Elicit]).
func Roots(ctx context.Context) ([]Root, error) {
	ans, err := Ask(ctx, Question{Key: srvCtxKey(ctx), Roots: true})
	if err != nil {
		return nil, srvRenameAsk(err, "roots")
	}
	return ans[0].Roots, nil
}

// srvCtxKey is the input key of ctx (WithInputKey), or "".
func srvCtxKey(ctx context.Context) string {
	k, _ := ctx.Value(srvInputKeyKey{}).(string)
	return k
}

// srvRenameAsk words an error of Ask as one of name.
func srvRenameAsk(err error, name string) error {
	var ae *srvAskError
	if errors.As(err, &ae) {
		return fmt.Errorf("%s: %w", name, ae.err)
	}
	return err
}

type srvAskError struct{ err error }

func (e *srvAskError) Error() string { return "ask: " + e.err.Error() }
func (e *srvAskError) Unwrap() error { return e.err }

// Ask puts questions to the MCP client and returns their answers, in the
// order asked: to a client of 2026-07-28 in one round (one input_required
// result carries them all), to a client of a session one after the other.
// It fails as a whole, with [ErrUnsupported] naming the capability when
// the client lacks one a question needs, before anything is asked; else as
// [Elicit].
func Ask(ctx context.Context, qs ...Question) ([]Answer, error) {
	fail := func(err error) ([]Answer, error) { return nil, &srvAskError{err} }
	r := srvRequestFrom(ctx)
	if r == nil {
		return fail(ErrNotMCP)
	}
	if len(qs) == 0 {
		return nil, nil
	}
	a := srvEraAskerFrom(ctx)
	items := make([]srvAskItem, len(qs))
	for i, q := range qs {
		kinds := 0
		for _, set := range []bool{q.Elicit != nil, q.Sample != nil, q.Roots} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return fail(fmt.Errorf("question %d: set exactly one of Elicit, Sample and Roots", i+1))
		}
		it, err := srvItemOf(q)
		if err != nil {
			return fail(fmt.Errorf("question %d: %w", i+1, err))
		}
		var can bool
		switch it.kind {
		case "elicit":
			can = a != nil && a.canElicit || a == nil && srvCanElicit(r.session)
		case "sample":
			can = a != nil && a.canSample || a == nil && srvCanSample(r.session)
		default:
			can = a != nil && a.canRoots || a == nil && srvCanRoots(r.session)
		}
		if !can {
			srvEraMissing(ctx, srvCapabilityOf[it.kind])
			return fail(fmt.Errorf("%w (%s)", ErrUnsupported, srvCapabilityOf[it.kind]))
		}
		items[i] = it
	}
	out := make([]Answer, len(qs))
	if a != nil {
		raws, err := a.askAll(ctx, items)
		if err != nil {
			return fail(err)
		}
		for i, it := range items {
			if err := srvDecodeAnswer(it.kind, raws[i], &out[i]); err != nil {
				return fail(err)
			}
		}
		return out, nil
	}
	for i, it := range items {
		if err := srvSessionAsk(ctx, r.session, it, &out[i]); err != nil {
			return fail(err)
		}
	}
	return out, nil
}

// srvItemOf is the question q as asked.
func srvItemOf(q Question) (srvAskItem, error) {
	it := srvAskItem{key: q.Key, named: q.Key != ""}
	switch {
	case q.Elicit != nil:
		it.kind = "elicit"
		schema := q.Elicit.Schema
		if schema == nil {
			schema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
		}
		resolved, err := schema.Resolve(nil)
		if err != nil {
			return it, fmt.Errorf("the schema: %w", err)
		}
		it.req, it.schema = &mcp.ElicitParams{Mode: "form", Message: q.Elicit.Message, RequestedSchema: schema}, resolved
	case q.Sample != nil:
		it.kind = "sample"
		p := &mcp.CreateMessageParams{MaxTokens: q.Sample.MaxTokens, Messages: make([]*mcp.SamplingMessage, len(q.Sample.Messages))}
		for j, m := range q.Sample.Messages {
			p.Messages[j] = &mcp.SamplingMessage{Role: mcp.Role(m.Role), Content: &mcp.TextContent{Text: m.Text}}
		}
		it.req = p
	default:
		it.kind = "roots"
		it.req = &mcp.ListRootsParams{}
	}
	return it, nil
}

// srvCapabilityOf is the client capability a kind of question needs.
var srvCapabilityOf = map[string]string{"elicit": "elicitation", "sample": "sampling", "roots": "roots"}

// srvDecodeAnswer reads an answer checked by srvCheckAnswer into out.
func srvDecodeAnswer(kind string, raw json.RawMessage, out *Answer) error {
	switch kind {
	case "elicit":
		var res mcp.ElicitResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return err
		}
		out.Action = res.Action
		if res.Action == ActionAccept {
			out.Content = res.Content
		}
	case "sample":
		return json.Unmarshal(raw, &out.Sampled)
	default:
		return json.Unmarshal(raw, &out.Roots)
	}
	return nil
}

// srvSessionAsk asks one question of a session's client.
func srvSessionAsk(ctx context.Context, ss *mcp.ServerSession, it srvAskItem, out *Answer) error {
	switch p := it.req.(type) {
	case *mcp.ElicitParams:
		cp := *p
		cp.Mode = "" // a session's client may predate modes
		res, err := ss.Elicit(ctx, &cp)
		if err != nil {
			return err
		}
		out.Action = res.Action
		if res.Action == ActionAccept {
			if err := it.schema.Validate(res.Content); err != nil {
				return fmt.Errorf("the answer does not match the schema asked: %w", err)
			}
			out.Content = res.Content
		}
	case *mcp.CreateMessageParams:
		res, err := ss.CreateMessage(ctx, p)
		if err != nil {
			return err
		}
		out.Sampled = Sampled{Role: string(res.Role), Model: res.Model, StopReason: res.StopReason}
		if t, ok := res.Content.(*mcp.TextContent); ok {
			out.Sampled.Text = t.Text
		}
	case *mcp.ListRootsParams:
		res, err := ss.ListRoots(ctx, p)
		if err != nil {
			return err
		}
		for _, r := range res.Roots {
			out.Roots = append(out.Roots, Root{URI: r.URI, Name: r.Name})
		}
	}
	return nil
}

// srvCanRoots reports whether the session's client declared roots.
func srvCanRoots(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return srvCanAsk(ip) && (ip.Capabilities.RootsV2 != nil || ip.Capabilities.Roots.ListChanged)
}

// srvEraNeeds travels in the context of every call of 2026-07-28: the
// capabilities its tool asked for that the client did not declare.
type srvEraNeeds struct {
	mu      sync.Mutex
	missing []string
}

type srvEraNeedsKey struct{}

// srvEraMissing notes, for a call of 2026-07-28, that its tool needed
// capability.
func srvEraMissing(ctx context.Context, capability string) {
	n, _ := ctx.Value(srvEraNeedsKey{}).(*srvEraNeeds)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !slices.Contains(n.missing, capability) {
		n.missing = append(n.missing, capability)
	}
}

// refusal is the -32021 error of a call of tool that ended failed after
// its tool was refused a capability, else nil.
func (n *srvEraNeeds) refusal(tool string, res *wield.Result) error {
	if n == nil || res == nil || res.OK {
		return nil
	}
	n.mu.Lock()
	missing := slices.Clone(n.missing)
	n.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	return srvMissingCapabilities(fmt.Sprintf("tool %q", tool), missing)
}

// srvMissingCapabilities is the error -32021 of a request that needs
// capabilities the client did not declare.
func srvMissingCapabilities(what string, missing []string) *jsonrpc.Error {
	slices.Sort(missing)
	caps := make(map[string]struct{}, len(missing))
	for _, c := range missing {
		caps[c] = struct{}{}
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": caps})
	return &jsonrpc.Error{Code: CodeMissingCapability,
		Message: fmt.Sprintf("%s needs the client's %s: declare it in the request's client capabilities", what, strings.Join(missing, " and ")),
		Data:    data}
}

// srvClientNeeder is a handler that knows before it runs which client
// capabilities it needs (a tool file's mcp_client entry).
type srvClientNeeder interface {
	clientNeeds() []string
}

// srvEraStaticNeeds is the -32021 error of a call of 2026-07-28 whose
// tool is known to need capabilities the client in did not declare, or nil.
// A tool hidden from caller (srvHidden) needs nothing: the engine answers
// its call as a call of an unknown tool, as for a tool not registered.
func (s *Server) srvEraStaticNeeds(ctx context.Context, name string, caller wield.Caller, in srvEraInput) error {
	t, ok := s.reg.Tool(name)
	if !ok {
		return nil
	}
	n, ok := t.Handler.(srvClientNeeder)
	if !ok {
		return nil
	}
	var missing []string
	for _, c := range n.clientNeeds() {
		if c == "elicitation" && !in.canElicit || c == "sampling" && !in.canSample || c == "roots" && !in.canRoots {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 || s.srvHidden(ctx, name, caller) {
		return nil
	}
	return srvMissingCapabilities(fmt.Sprintf("tool %q", name), missing)
}
