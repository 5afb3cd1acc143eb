package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
)

// ClientOptions configures a [Client]. Every field is optional but Model.
type ClientOptions struct {
	// Model is the model name, such as "claude-sonnet-4-5".
	Model string
	// BaseURL is the API's address; empty means Anthropic's.
	BaseURL string
	// APIKey is sent as x-api-key.
	APIKey string
	// MaxTokens bounds each answer (Anthropic requires a bound): 4096 when
	// zero.
	MaxTokens int
	// HTTPClient replaces the SDK's default client.
	HTTPClient *http.Client
	// MaxRetries bounds the SDK's retries (2 when zero; negative for none).
	MaxRetries int
}

// Client is an [llm.Model] on Anthropic's Messages API, through the
// official SDK (github.com/anthropics/anthropic-sdk-go). Every Claude model
// calls tools natively.
type Client struct {
	c    sdk.Client
	opts ClientOptions
}

// NewClient returns a client; it fails only when opts.Model is empty.
func NewClient(opts ClientOptions) (*Client, error) {
	if opts.Model == "" {
		return nil, errors.New("anthropic client: no model name")
	}
	ro := []option.RequestOption{option.WithAPIKey(opts.APIKey)}
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
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 4096
	}
	return &Client{c: sdk.NewClient(ro...), opts: opts}, nil
}

// SupportsFunctionCalling is true: Claude models take tools natively.
func (c *Client) SupportsFunctionCalling() bool { return true }

// Generate sends the conversation and returns the model's answer. System
// messages become the request's system prompt; consecutive tool results
// travel together in one user turn, as the API requires. API errors keep
// their status and are wield.Transient for 429, 529 and 5xx.
func (c *Client) Generate(ctx context.Context, req *llm.ModelRequest) (*llm.ModelResponse, error) {
	params := sdk.MessageNewParams{Model: sdk.Model(c.opts.Model), MaxTokens: int64(c.opts.MaxTokens)}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			params.System = append(params.System, sdk.TextBlockParam{Text: m.Content})
		case llm.RoleUser:
			params.Messages = append(params.Messages, sdk.NewUserMessage(sdk.NewTextBlock(m.Content)))
		case llm.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				var input any = json.RawMessage(tc.Arguments)
				if len(tc.Arguments) == 0 {
					input = map[string]any{}
				}
				blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, input, tc.Name))
			}
			if len(blocks) == 0 {
				blocks = append(blocks, sdk.NewTextBlock(" "))
			}
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(blocks...))
		case llm.RoleTool:
			block := sdk.NewToolResultBlock(m.ToolCallID, m.ResultText(), m.Result != nil && !m.Result.OK)
			if n := len(params.Messages); n > 0 && params.Messages[n-1].Role == sdk.MessageParamRoleUser && onlyToolResults(params.Messages[n-1]) {
				params.Messages[n-1].Content = append(params.Messages[n-1].Content, block)
			} else {
				params.Messages = append(params.Messages, sdk.NewUserMessage(block))
			}
		default:
			return nil, fmt.Errorf("anthropic: message role %q is not system, user, assistant or tool", m.Role)
		}
	}
	for _, t := range req.Tools {
		schema := sdk.ToolInputSchemaParam{}
		if t.InputSchema != nil {
			b, err := json.Marshal(t.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("anthropic: schema of %s: %w", t.Name, err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				return nil, fmt.Errorf("anthropic: schema of %s: %w", t.Name, err)
			}
			schema.Properties = m["properties"]
			if req, ok := m["required"].([]any); ok {
				for _, r := range req {
					if s, ok := r.(string); ok {
						schema.Required = append(schema.Required, s)
					}
				}
			}
			delete(m, "properties")
			delete(m, "required")
			delete(m, "type")
			if len(m) > 0 {
				schema.ExtraFields = m
			}
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &sdk.ToolParam{
			Name: t.Name, Description: sdk.String(t.Description), InputSchema: schema,
		}})
	}
	resp, err := c.c.Messages.New(ctx, params)
	if err != nil {
		return nil, apiError(err)
	}
	out := &llm.ModelResponse{StopReason: string(resp.StopReason), Message: llm.Message{Role: llm.RoleAssistant}}
	var text []string
	for _, b := range resp.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args := b.Input
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage(`{}`)
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Message.Content = strings.Join(text, "\n")
	return out, nil
}

func onlyToolResults(m sdk.MessageParam) bool {
	for _, b := range m.Content {
		if b.OfToolResult == nil {
			return false
		}
	}
	return len(m.Content) > 0
}

func apiError(err error) error {
	var ae *sdk.Error
	if errors.As(err, &ae) {
		msg := http.StatusText(ae.StatusCode)
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(ae.RawJSON()), &body) == nil && body.Error.Message != "" {
			msg += ": " + body.Error.Type + ": " + body.Error.Message
		}
		e := fmt.Errorf("anthropic: %d %s", ae.StatusCode, msg)
		if ae.StatusCode == http.StatusTooManyRequests || ae.StatusCode >= 500 {
			return wield.Transient(e)
		}
		return e
	}
	return fmt.Errorf("anthropic: %w", err)
}
