package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"google.golang.org/genai"
)

// ClientOptions configures a [Client]. Every field is optional but Model.
type ClientOptions struct {
	// Model is the model name, such as "gemini-2.5-flash".
	Model string
	// BaseURL is the API's address; empty means Google's.
	BaseURL string
	// APIKey is the Gemini API key.
	APIKey string
	// HTTPClient replaces the SDK's default client.
	HTTPClient *http.Client
}

// Client is an [llm.Model] on the Gemini API, through Google's official Go
// SDK (google.golang.org/genai). Tools are declared with their JSON Schema
// (parametersJsonSchema), so nothing of their meaning is lost in transit.
type Client struct {
	c    *genai.Client
	opts ClientOptions
}

// NewClient returns a client on the Gemini API backend.
func NewClient(ctx context.Context, opts ClientOptions) (*Client, error) {
	if opts.Model == "" {
		return nil, errors.New("gemini client: no model name")
	}
	cc := &genai.ClientConfig{APIKey: opts.APIKey, Backend: genai.BackendGeminiAPI, HTTPClient: opts.HTTPClient}
	if opts.BaseURL != "" {
		cc.HTTPOptions.BaseURL = strings.TrimSuffix(opts.BaseURL, "/") + "/"
	}
	c, err := genai.NewClient(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("gemini client: %w", err)
	}
	return &Client{c: c, opts: opts}, nil
}

// SupportsFunctionCalling is true: Gemini models take function
// declarations natively.
func (c *Client) SupportsFunctionCalling() bool { return true }

// Generate sends the conversation and returns the model's answer. System
// messages become the system instruction; tool results are function
// responses ({"output": ...} or {"error": ...}). API errors keep their
// status and are wield.Transient for 429 and 5xx.
func (c *Client) Generate(ctx context.Context, req *llm.ModelRequest) (*llm.ModelResponse, error) {
	cfg := &genai.GenerateContentConfig{}
	if req.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(req.MaxTokens)
	}
	var contents []*genai.Content
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			if cfg.SystemInstruction == nil {
				cfg.SystemInstruction = &genai.Content{}
			}
			cfg.SystemInstruction.Parts = append(cfg.SystemInstruction.Parts, genai.NewPartFromText(m.Content))
		case llm.RoleUser:
			contents = append(contents, genai.NewContentFromText(m.Content, genai.RoleUser))
		case llm.RoleAssistant:
			ct := &genai.Content{Role: genai.RoleModel}
			if m.Content != "" {
				ct.Parts = append(ct.Parts, genai.NewPartFromText(m.Content))
			}
			for _, tc := range m.ToolCalls {
				var args map[string]any
				if len(tc.Arguments) > 0 {
					if err := json.Unmarshal(tc.Arguments, &args); err != nil {
						return nil, fmt.Errorf("gemini: arguments of call %s: %w", tc.Name, err)
					}
				}
				p := genai.NewPartFromFunctionCall(tc.Name, args)
				p.FunctionCall.ID = tc.ID
				ct.Parts = append(ct.Parts, p)
			}
			contents = append(contents, ct)
		case llm.RoleTool:
			p := genai.NewPartFromFunctionResponse(m.ToolName, functionResponse(m))
			p.FunctionResponse.ID = m.ToolCallID
			if n := len(contents); n > 0 && contents[n-1].Role == genai.RoleUser && contents[n-1].Parts[0].FunctionResponse != nil {
				contents[n-1].Parts = append(contents[n-1].Parts, p)
			} else {
				contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{p}})
			}
		default:
			return nil, fmt.Errorf("gemini: message role %q is not system, user, assistant or tool", m.Role)
		}
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if t.InputSchema != nil {
				d.ParametersJsonSchema = t.InputSchema
			}
			decls = append(decls, d)
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	resp, err := c.c.Models.GenerateContent(ctx, c.opts.Model, contents, cfg)
	if err != nil {
		return nil, apiError(err)
	}
	out := &llm.ModelResponse{Message: llm.Message{Role: llm.RoleAssistant}}
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return nil, errors.New("gemini: the answer has no candidates")
	}
	cand := resp.Candidates[0]
	out.StopReason = string(cand.FinishReason)
	var text []string
	for i, p := range cand.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			args, err := json.Marshal(p.FunctionCall.Args)
			if err != nil || p.FunctionCall.Args == nil {
				args = []byte(`{}`)
			}
			id := p.FunctionCall.ID
			if id == "" {
				id = fmt.Sprintf("call_%d", i) // Gemini names calls only sometimes
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: args})
		case p.Text != "" && !p.Thought:
			text = append(text, p.Text)
		}
	}
	out.Message.Content = strings.Join(text, "")
	return out, nil
}

// functionResponse is a tool result as Gemini wants it: an object, with
// the output under "output" (an object output as it is) or the failure
// under "error" in seed 001's words.
func functionResponse(m llm.Message) map[string]any {
	r := m.Result
	switch {
	case r == nil:
		return map[string]any{"output": m.Content}
	case !r.OK:
		return map[string]any{"error": m.ResultText()}
	}
	var v any
	if json.Unmarshal(r.Output, &v) != nil {
		return map[string]any{"output": string(r.Output)}
	}
	if obj, ok := v.(map[string]any); ok {
		return obj
	}
	return map[string]any{"output": v}
}

func apiError(err error) error {
	var ae genai.APIError
	if errors.As(err, &ae) {
		e := fmt.Errorf("gemini: %d %s: %s", ae.Code, ae.Status, ae.Message)
		if ae.Code == http.StatusTooManyRequests || ae.Code >= 500 {
			return wield.Transient(e)
		}
		return e
	}
	return fmt.Errorf("gemini: %w", err)
}
