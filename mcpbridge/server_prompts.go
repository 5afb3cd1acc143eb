package mcpbridge

import (
	"context"
	"fmt"

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
}

// srvCompilePrompt checks a prompt and parses its templates.
func srvCompilePrompt(p Prompt) (*srvPrompt, error) {
	if p.Name == "" {
		return nil, fmt.Errorf("prompt: missing name")
	}
	out := &srvPrompt{Prompt: p}
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
			return s.srvGetPrompt(p, req.Params.Arguments)
		})
	}
}

// srvGetPrompt fills a prompt's messages with the arguments; a missing
// required argument is the client's mistake.
func (s *Server) srvGetPrompt(p *srvPrompt, args map[string]string) (*mcp.GetPromptResult, error) {
	data := make(map[string]any, len(p.Arguments))
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
