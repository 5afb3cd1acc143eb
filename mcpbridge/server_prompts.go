package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt is a prompt template a [Server] offers ([ServerOptions].Prompts):
// messages whose texts and URIs are Go templates of the arguments
// ({{.topic}}), filled in by prompts/get.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	Messages    []PromptMessage
	// Elicit are questions to the client's user, asked together before
	// the messages are filled in: each answer ({{.key.action}},
	// {{.key.content.field}}) is the template value of its Key. A client
	// of 2026-07-28 gets them as input_required and sends the answers
	// with its retry of prompts/get (no requestState: a prompt does
	// nothing, so each retry is read afresh, its answers checked against
	// the schemas); a session's client is asked them in turn. A client
	// that cannot elicit is refused (-32021 for 2026-07-28).
	Elicit []PromptQuestion
}

// PromptQuestion is a question of a [Prompt] to the client's user.
type PromptQuestion struct {
	Key     string // its input key, and its answer's name in the templates
	Message string
	Schema  *jsonschema.Schema // nil for a plain confirmation
	// BadSchema, when set, says why the schema could not be read: the
	// prompt is refused with it.
	BadSchema error
}

// PromptArgument is one argument of a [Prompt]. Values, when set, are what
// completion/complete offers for it.
type PromptArgument struct {
	Name        string
	Title       string
	Description string
	Required    bool
	Values      []string
}

// PromptMessage is one message of a [Prompt]: "user" or "assistant", and
// its content.
type PromptMessage struct {
	Role    string
	Content Content
}

// srvPrompt is a prompt ready to serve.
type srvPrompt struct {
	Prompt
	content []tplContent
	asks    []srvAskItem
}

// srvCompilePrompt checks a prompt and parses its templates.
func srvCompilePrompt(p Prompt) (*srvPrompt, error) {
	if p.Name == "" {
		return nil, fmt.Errorf("prompt: missing name")
	}
	out := &srvPrompt{Prompt: p}
	for i, q := range p.Elicit {
		what := fmt.Sprintf("prompt %s: elicit %d", p.Name, i+1)
		if err := srvCheckInputKey(q.Key); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if q.BadSchema != nil {
			return nil, fmt.Errorf("%s: schema: %w", what, q.BadSchema)
		}
		schema := q.Schema
		if schema == nil {
			schema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
		}
		resolved, err := schema.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("%s: schema: %w", what, err)
		}
		for _, o := range out.asks {
			if o.key == q.Key {
				return nil, fmt.Errorf("%s: key %q: another question has it", what, q.Key)
			}
		}
		for _, a := range p.Arguments {
			if a.Name == q.Key {
				// The messages read answers and arguments from one map:
				// the argument would replace the person's answer.
				return nil, fmt.Errorf("%s: key %q: an argument of the prompt has that name", what, q.Key)
			}
		}
		out.asks = append(out.asks, srvAskItem{kind: "elicit", key: q.Key, named: true, schema: resolved,
			req: &mcp.ElicitParams{Mode: "form", Message: q.Message, RequestedSchema: schema}})
	}
	for i, m := range p.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf("prompt %s: message %d: role %q is not user or assistant", p.Name, i+1, m.Role)
		}
		tc, err := newTplContent(fmt.Sprintf("prompt %s message %d", p.Name, i+1), m.Content)
		if err != nil {
			return nil, err
		}
		out.content = append(out.content, tc)
	}
	return out, nil
}

// srvAddPrompts adds the configured prompts to an endpoint.
func (s *Server) srvAddPrompts(ep *srvEndpoint) {
	for _, p := range s.promptList {
		mp := &mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			mp.Arguments = append(mp.Arguments, &mcp.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
		}
		ep.mcp.AddPrompt(mp, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if len(p.asks) == 0 {
				return s.srvGetPrompt(p, req.Params.Arguments, nil)
			}
			return s.srvGetPromptAsking(ctx, p, req)
		})
	}
}

// srvGetPrompt fills a prompt's messages with the arguments; a missing
// required argument is the client's mistake.
func (s *Server) srvGetPrompt(p *srvPrompt, args map[string]string, answers map[string]any) (*mcp.GetPromptResult, error) {
	data := make(map[string]any, len(p.Arguments)+len(answers))
	maps.Copy(data, answers)
	for _, a := range p.Arguments {
		v, ok := args[a.Name]
		if !ok && a.Required {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s: missing argument %q", p.Name, a.Name)}
		}
		data[a.Name] = v
	}
	res := &mcp.GetPromptResult{Description: p.Description}
	for i, tc := range p.content {
		c, err := tc.render(data)
		if err == nil {
			var mc mcp.Content
			if mc, err = c.mcp(); err == nil {
				res.Messages = append(res.Messages, &mcp.PromptMessage{Role: mcp.Role(p.Messages[i].Role), Content: mc})
				continue
			}
		}
		s.log.Error("mcp server: prompt", "prompt", p.Name, "message", i+1, "err", err)
		return nil, srvInternal
	}
	return res, nil
}

// srvGetPromptAsking serves prompts/get of a prompt with questions: for a
// client of 2026-07-28 the questions not answered by the request's
// inputResponses come back as input_required; a session's client is asked
// them in turn.
func (s *Server) srvGetPromptAsking(ctx context.Context, p *srvPrompt, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	for _, a := range p.Arguments {
		if _, ok := req.Params.Arguments[a.Name]; !ok && a.Required {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s: missing argument %q", p.Name, a.Name)}
		}
	}
	answers := make(map[string]any, len(p.asks))
	ip := req.Session.InitializeParams()
	if ip != nil && ip.ProtocolVersion >= srvStatelessEra {
		if ip.Capabilities == nil || !srvCanElicitCaps(ip.Capabilities.Elicitation) {
			return nil, srvMissingCapabilities(fmt.Sprintf("prompt %q", p.Name), []string{"elicitation"})
		}
		missing := mcp.InputRequestMap{}
		for _, it := range p.asks {
			v, ok := req.Params.InputResponses[it.key]
			if !ok {
				missing[it.key] = it.req
				continue
			}
			raw, err := json.Marshal(v)
			if err != nil {
				missing[it.key] = it.req
				continue
			}
			checked, err := srvCheckAnswer(&it, raw)
			if err != nil {
				return nil, err
			}
			var ans Answer
			if err := srvDecodeAnswer(it.kind, checked, &ans); err != nil {
				return nil, err
			}
			answers[it.key] = map[string]any{"action": ans.Action, "content": ans.Content}
		}
		if len(missing) > 0 {
			return &mcp.GetPromptResult{InputRequests: missing}, nil
		}
		return s.srvGetPrompt(p, req.Params.Arguments, answers)
	}
	if !srvCanElicit(req.Session) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s asks the user: it needs a client that declares elicitation", p.Name)}
	}
	for _, it := range p.asks {
		var ans Answer
		if err := srvSessionAsk(ctx, req.Session, it, &ans); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s: %s: %v", p.Name, it.key, err)}
		}
		answers[it.key] = map[string]any{"action": ans.Action, "content": ans.Content}
	}
	return s.srvGetPrompt(p, req.Params.Arguments, answers)
}
