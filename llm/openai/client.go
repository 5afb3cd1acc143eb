package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// ClientOptions configures a [Client]. Every field is optional but Model.
type ClientOptions struct {
	// Model is the model name, such as "gpt-4.1" or "qwen2.5:7b".
	Model string
	// BaseURL is the API's address, ending in /v1 for most servers:
	// "http://localhost:11434/v1" (Ollama), "http://localhost:8000/v1"
	// (vLLM), "http://localhost:8080/v1" (llama.cpp). Empty means OpenAI's.
	BaseURL string
	// APIKey is sent as a bearer token; local servers usually want none.
	APIKey string
	// NoFunctionCalling says the server or model does not take `tools`
	// (many local models), so agents describe tools in the prompt instead.
	NoFunctionCalling bool
	// HTTPClient replaces the SDK's default client.
	HTTPClient *http.Client
	// MaxRetries bounds the SDK's retries of 429 and 5xx answers (2 when
	// zero; negative for none).
	MaxRetries int
}

// Client is an [llm.Model] on OpenAI's Chat Completions API, through the
// official SDK (github.com/openai/openai-go): OpenAI itself or any server
// that speaks the same API (vLLM, Ollama, llama.cpp, LM Studio, ...).
type Client struct {
	c    sdk.Client
	opts ClientOptions
}

// NewClient returns a client; it fails only when opts.Model is empty.
func NewClient(opts ClientOptions) (*Client, error) {
	if opts.Model == "" {
		return nil, errors.New("openai client: no model name")
	}
	ro := []option.RequestOption{option.WithAPIKey(opts.APIKey)}
	if opts.APIKey == "" {
		ro = []option.RequestOption{option.WithAPIKey("none")} // the SDK insists on one; local servers ignore it
	}
	if opts.BaseURL != "" {
		ro = append(ro, option.WithBaseURL(strings.TrimSuffix(opts.BaseURL, "/")+"/"))
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	switch {
	case opts.MaxRetries < 0:
		ro = append(ro, option.WithMaxRetries(0))
	case opts.MaxRetries > 0:
		ro = append(ro, option.WithMaxRetries(opts.MaxRetries))
	}
	return &Client{c: sdk.NewClient(ro...), opts: opts}, nil
}

// SupportsFunctionCalling reports whether the client sends tools natively.
func (c *Client) SupportsFunctionCalling() bool { return !c.opts.NoFunctionCalling }

// Generate sends the conversation and returns the model's answer. An error
// from the API is returned with its status and the provider's message (which
// never holds the key); it is wrapped with wield.Transient for 429 and 5xx.
func (c *Client) Generate(ctx context.Context, req *llm.ModelRequest) (*llm.ModelResponse, error) {
	params := sdk.ChatCompletionNewParams{Model: shared.ChatModel(c.opts.Model)}
	for _, m := range req.Messages {
		msg, err := messageParam(m)
		if err != nil {
			return nil, err
		}
		params.Messages = append(params.Messages, msg)
	}
	if len(req.Tools) > 0 && !c.opts.NoFunctionCalling {
		for _, t := range req.Tools {
			var p shared.FunctionParameters
			if t.InputSchema != nil {
				b, err := json.Marshal(t.InputSchema)
				if err != nil {
					return nil, fmt.Errorf("openai: schema of %s: %w", t.Name, err)
				}
				if err := json.Unmarshal(b, &p); err != nil {
					return nil, fmt.Errorf("openai: schema of %s: %w", t.Name, err)
				}
			}
			params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
				Name: t.Name, Description: sdk.String(t.Description), Parameters: p,
			}))
		}
	}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
	}
	resp, err := c.c.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, apiError(err)
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("openai: the answer has no choices")
	}
	ch := resp.Choices[0]
	out := &llm.ModelResponse{StopReason: ch.FinishReason, Message: llm.Message{Role: llm.RoleAssistant, Content: ch.Message.Content}}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		args := json.RawMessage(tc.Function.Arguments)
		if strings.TrimSpace(tc.Function.Arguments) == "" {
			args = json.RawMessage(`{}`)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	return out, nil
}

func messageParam(m llm.Message) (sdk.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleSystem:
		return sdk.SystemMessage(m.Content), nil
	case llm.RoleUser:
		return sdk.UserMessage(m.Content), nil
	case llm.RoleAssistant:
		a := sdk.ChatCompletionAssistantMessageParam{}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = sdk.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID: tc.ID, Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: string(tc.Arguments)},
			}})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case llm.RoleTool:
		return sdk.ToolMessage(m.ResultText(), m.ToolCallID), nil
	}
	return sdk.ChatCompletionMessageParamUnion{}, fmt.Errorf("openai: message role %q is not system, user, assistant or tool", m.Role)
}

// apiError keeps the status and the provider's message, marking what is
// worth retrying.
func apiError(err error) error {
	var ae *sdk.Error
	if errors.As(err, &ae) {
		e := fmt.Errorf("openai: %s: %s", http.StatusText(ae.StatusCode), ae.Message)
		if ae.StatusCode == http.StatusTooManyRequests || ae.StatusCode >= 500 {
			return wield.Transient(e)
		}
		return e
	}
	return fmt.Errorf("openai: %w", err)
}
