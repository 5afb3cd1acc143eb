package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/internal/modelapi"
)

const (
	// defaultBaseURL is Anthropic's API.
	defaultBaseURL = "https://api.anthropic.com"
	// apiVersion is the anthropic-version header the Messages API asks for.
	apiVersion = "2023-06-01"
	// attemptTimeout bounds one non-streaming request, as the SDK did.
	attemptTimeout = 10 * time.Minute
	// maxNonStreamingTokens is the largest max_tokens the SDK let through
	// without streaming: at the 128,000 tokens an hour it reckons with, more
	// may take longer than the 10 minutes a non-streaming request is given.
	maxNonStreamingTokens = 128000 * 10 / 60
)

// nonStreamingTokens are the models the SDK held to a lower max_tokens
// without streaming.
var nonStreamingTokens = map[string]int{
	"claude-opus-4-20250514": 8192, "claude-4-opus-20250514": 8192, "claude-opus-4-0": 8192,
	"anthropic.claude-opus-4-20250514-v1:0": 8192, "claude-opus-4@20250514": 8192,
	"anthropic.claude-opus-4-1-20250805-v1:0": 8192, "claude-opus-4-1@20250805": 8192,
}

// ClientOptions configures a [Client]. Every field is optional but Model.
type ClientOptions struct {
	// Model is the model name, such as "claude-sonnet-4-5".
	Model string
	// BaseURL is the API's address; empty means ANTHROPIC_BASE_URL when it
	// is set, else Anthropic's.
	BaseURL string
	// APIKey is sent as x-api-key. Empty means ANTHROPIC_API_KEY, else
	// ANTHROPIC_AUTH_TOKEN as a bearer token; a request without either
	// fails.
	APIKey string
	// MaxTokens bounds each answer (Anthropic requires a bound): 4096 when
	// zero.
	MaxTokens int
	// HTTPClient replaces the default client (the default transport, with
	// response headers awaited at most 10 minutes).
	HTTPClient *http.Client
	// MaxRetries bounds the retries of connection errors, 408, 409, 429
	// and 5xx answers (2 when zero; negative for none).
	MaxRetries int
	// NoFunctionCalling makes agents describe tools in the prompt instead
	// of sending them (`wield chat --no-function-calling`).
	NoFunctionCalling bool
	// Strict sends tools for strict tool use, in the [Strict] dialect
	// (`wield chat --strict`).
	Strict bool
}

// dialect is the dialect the options choose.
func (o ClientOptions) dialect() llm.Dialect {
	if o.Strict {
		return Strict
	}
	return Dialect
}

// Client is an [llm.Model] on Anthropic's Messages API. Every Claude model
// calls tools natively.
//
// It speaks the documented wire format over net/http and encoding/json
// rather than through the official SDK (github.com/anthropics/anthropic-sdk-go),
// whose every beta service and dependency (a YAML, a JSON path and a schema
// library) came along: the SDK made 11.8 MB of the 127.6 MB `wield` binary,
// for one endpoint. Its behaviour is kept: the same request bodies
// (testdata/requests.golden.json was written by the SDK), but for the
// tools, which are [Dialect]'s export of each, converted once per tool
// (a tool the dialect refuses fails Generate with an *[llm.ToolsError]
// rather than the whole request at the API); the environment it read (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY,
// ANTHROPIC_AUTH_TOKEN, ANTHROPIC_CUSTOM_HEADERS), its retries, its
// 10-minute bound on a request and its refusal of a max_tokens that needs
// streaming.
type Client struct {
	api   modelapi.Client
	url   string
	opts  ClientOptions
	tools llm.ToolCache
}

// NewClient returns a client; it fails only when opts.Model is empty.
func NewClient(opts ClientOptions) (*Client, error) {
	if opts.Model == "" {
		return nil, errors.New("anthropic client: no model name")
	}
	base := opts.BaseURL
	if base == "" {
		base = os.Getenv("ANTHROPIC_BASE_URL")
	}
	if base == "" {
		base = defaultBaseURL
	}
	h := http.Header{}
	for _, line := range strings.Split(os.Getenv("ANTHROPIC_CUSTOM_HEADERS"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) != "" {
			h.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	h.Set("Anthropic-Version", apiVersion)
	key := opts.APIKey
	if key == "" {
		key = os.Getenv("ANTHROPIC_API_KEY")
	}
	if key != "" {
		h.Set("X-Api-Key", key)
	} else if tok := os.Getenv("ANTHROPIC_AUTH_TOKEN"); tok != "" {
		h.Set("Authorization", "Bearer "+tok)
	}
	retries := opts.MaxRetries
	switch {
	case retries < 0:
		retries = 0
	case retries == 0:
		retries = 2
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 4096
	}
	return &Client{
		api:   modelapi.Client{HTTP: opts.HTTPClient, Header: h, MaxRetries: retries, Timeout: attemptTimeout},
		url:   strings.TrimSuffix(base, "/") + "/v1/messages",
		opts:  opts,
		tools: llm.ToolCache{Dialect: opts.dialect()},
	}, nil
}

// SupportsFunctionCalling is true, as every Claude model takes tools
// natively, unless the options say otherwise.
func (c *Client) SupportsFunctionCalling() bool { return !c.opts.NoFunctionCalling }

// messagesRequest is the body of POST /v1/messages, as far as wield fills
// it.
type messagesRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    []textBlock `json:"system,omitempty"`
	Messages  []message   `json:"messages"`
	// Tools are [Tool]s, converted once each by [Dialect].
	Tools []json.RawMessage `json:"tools,omitempty"`
}

// message is one turn; its content blocks are textBlock, toolUseBlock or
// toolResultBlock.
type message struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type      string      `json:"type"`
	ToolUseID string      `json:"tool_use_id"`
	Content   []textBlock `json:"content"`
	IsError   bool        `json:"is_error"`
}

// messagesResponse is what wield reads of a message.
type messagesResponse struct {
	StopReason string `json:"stop_reason"`
	Content    []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
}

func text(s string) textBlock { return textBlock{Type: "text", Text: s} }

// Generate sends the conversation and returns the model's answer. System
// messages become the request's system prompt; consecutive tool results
// travel together in one user turn, as the API requires. API errors keep
// their status and are wield.Transient for 429, 529 and 5xx.
func (c *Client) Generate(ctx context.Context, req *llm.ModelRequest) (*llm.ModelResponse, error) {
	if c.api.Header.Get("X-Api-Key") == "" && c.api.Header.Get("Authorization") == "" {
		return nil, errors.New("anthropic: no API key: set it in the client's options or ANTHROPIC_API_KEY")
	}
	body := messagesRequest{Model: c.opts.Model, MaxTokens: c.opts.MaxTokens}
	if req.MaxTokens > 0 {
		body.MaxTokens = req.MaxTokens
	}
	limit := maxNonStreamingTokens
	if n, ok := nonStreamingTokens[c.opts.Model]; ok {
		limit = n
	}
	if body.MaxTokens > limit {
		return nil, fmt.Errorf("anthropic: max_tokens %d may take longer than the 10 minutes a request without streaming is given: ask for %d at most", body.MaxTokens, limit)
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			body.System = append(body.System, text(m.Content))
		case llm.RoleUser:
			body.Messages = append(body.Messages, message{Role: "user", Content: []any{text(m.Content)}})
		case llm.RoleAssistant:
			var blocks []any
			if m.Content != "" {
				blocks = append(blocks, text(m.Content))
			}
			for _, tc := range m.ToolCalls {
				input := tc.Arguments
				if len(input) == 0 {
					input = json.RawMessage(`{}`)
				}
				blocks = append(blocks, toolUseBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input})
			}
			if len(blocks) == 0 {
				blocks = append(blocks, text(" "))
			}
			body.Messages = append(body.Messages, message{Role: "assistant", Content: blocks})
		case llm.RoleTool:
			block := toolResultBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: []textBlock{text(m.ResultText())},
				IsError: m.Result != nil && !m.Result.OK}
			if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == "user" && onlyToolResults(body.Messages[n-1]) {
				body.Messages[n-1].Content = append(body.Messages[n-1].Content, block)
			} else {
				body.Messages = append(body.Messages, message{Role: "user", Content: []any{block}})
			}
		default:
			return nil, fmt.Errorf("anthropic: message role %q is not system, user, assistant or tool", m.Role)
		}
	}
	if len(req.Tools) > 0 && !c.opts.NoFunctionCalling {
		tools, err := c.tools.Tools(req.Tools)
		if err != nil {
			return nil, fmt.Errorf("anthropic: %w", err)
		}
		body.Tools = tools
	}
	var resp messagesResponse
	if err := c.api.Post(ctx, c.url, body, &resp); err != nil {
		return nil, apiError(err)
	}
	out := &llm.ModelResponse{StopReason: resp.StopReason, Message: llm.Message{Role: llm.RoleAssistant}}
	var texts []string
	for _, b := range resp.Content {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_use":
			args := b.Input
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage(`{}`)
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Message.Content = strings.Join(texts, "\n")
	return out, nil
}

func onlyToolResults(m message) bool {
	for _, b := range m.Content {
		if _, ok := b.(toolResultBlock); !ok {
			return false
		}
	}
	return len(m.Content) > 0
}

// apiError keeps the status and the provider's error type and message
// ({"type":"error","error":{"type":...,"message":...}}), marking what is
// worth retrying.
func apiError(err error) error {
	var se *modelapi.StatusError
	if errors.As(err, &se) {
		msg := fmt.Sprint(se.StatusCode)
		if st := http.StatusText(se.StatusCode); st != "" {
			msg += " " + st
		}
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(se.Body, &body) == nil && body.Error.Message != "" {
			msg += ": " + body.Error.Type + ": " + body.Error.Message
		}
		e := errors.New("anthropic: " + msg)
		if modelapi.ToolsRefused(se) {
			return modelapi.ToolsRefusal(e) // the agent loop may fall back to the prompt
		}
		if se.StatusCode == http.StatusTooManyRequests || se.StatusCode >= 500 {
			return wield.Transient(e)
		}
		return e
	}
	return fmt.Errorf("anthropic: %w", err)
}
