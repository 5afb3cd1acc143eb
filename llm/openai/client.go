package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/internal/modelapi"
)

// defaultBaseURL is OpenAI's API.
const defaultBaseURL = "https://api.openai.com/v1"

// ClientOptions configures a [Client]. Every field is optional but Model.
type ClientOptions struct {
	// Model is the model name, such as "gpt-4.1" or "qwen2.5:7b".
	Model string
	// BaseURL is the API's address, ending in /v1 for most servers:
	// "http://localhost:11434/v1" (Ollama), "http://localhost:8000/v1"
	// (vLLM), "http://localhost:8080/v1" (llama.cpp). Empty means
	// OPENAI_BASE_URL when it is set, else OpenAI's.
	BaseURL string
	// APIKey is sent as a bearer token; local servers usually want none.
	APIKey string
	// NoFunctionCalling says the server or model does not take `tools`
	// (many local models), so agents describe tools in the prompt instead.
	NoFunctionCalling bool
	// Strict sends tools in strict mode (Structured Outputs): their
	// schemas rewritten by [StrictSchema], and a tool strict mode cannot
	// express refused with an *[llm.ToolsError].
	Strict bool
	// HTTPClient replaces the default client (the default transport, with
	// response headers awaited at most 10 minutes). Either way an attempt
	// gets 10 minutes for its whole answer.
	HTTPClient *http.Client
	// MaxRetries bounds the retries of connection errors, 408, 409, 429
	// and 5xx answers (2 when zero; negative for none).
	MaxRetries int
}

// Client is an [llm.Model] on OpenAI's Chat Completions API: OpenAI itself
// or any server that speaks the same API (vLLM, Ollama, llama.cpp, LM
// Studio, ...).
//
// It speaks the documented wire format over net/http and encoding/json
// rather than through the official SDK (github.com/openai/openai-go), which
// links every OpenAI service (responses, realtime, audio, ...): the SDK made
// 53.5 MB of the 127.6 MB `wield` binary, for one endpoint. Its behaviour is
// kept: the same request bodies (testdata/requests.golden.json was written
// by the SDK), OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID and
// OPENAI_CUSTOM_HEADERS read from the environment, its retries (see
// [ClientOptions.MaxRetries]) and its error messages.
type Client struct {
	api   modelapi.Client
	url   string
	opts  ClientOptions
	tools llm.ToolCache
}

// NewClient returns a client; it fails only when opts.Model is empty.
func NewClient(opts ClientOptions) (*Client, error) {
	api, base, err := newAPI(opts)
	if err != nil {
		return nil, err
	}
	return &Client{
		api:   api,
		url:   base + "/chat/completions",
		opts:  opts,
		tools: llm.ToolCache{Dialect: Dialect{API: ChatAPI, Strict: opts.Strict}},
	}, nil
}

// newAPI is what the Chat Completions and Responses clients share: the
// base URL without its final slash, the headers and the retries.
func newAPI(opts ClientOptions) (modelapi.Client, string, error) {
	if opts.Model == "" {
		return modelapi.Client{}, "", errors.New("openai client: no model name")
	}
	base := opts.BaseURL
	if base == "" {
		base = os.Getenv("OPENAI_BASE_URL")
	}
	if base == "" {
		base = defaultBaseURL
	}
	key := opts.APIKey
	if key == "" {
		key = "none" // what the SDK sent; local servers ignore it
	}
	h := http.Header{}
	for _, line := range strings.Split(os.Getenv("OPENAI_CUSTOM_HEADERS"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) != "" {
			h.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	h.Set("Authorization", "Bearer "+key)
	if v := os.Getenv("OPENAI_ORG_ID"); v != "" {
		h.Set("OpenAI-Organization", v)
	}
	if v := os.Getenv("OPENAI_PROJECT_ID"); v != "" {
		h.Set("OpenAI-Project", v)
	}
	retries := opts.MaxRetries
	switch {
	case retries < 0:
		retries = 0
	case retries == 0:
		retries = 2
	}
	return modelapi.Client{HTTP: opts.HTTPClient, Header: h, MaxRetries: retries}, strings.TrimSuffix(base, "/"), nil
}

// SupportsFunctionCalling reports whether the client sends tools natively.
func (c *Client) SupportsFunctionCalling() bool { return !c.opts.NoFunctionCalling }

// chatRequest is the body of POST /chat/completions, as far as wield
// fills it.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	// Tools are [ChatTool]s, converted once each by the client's [Dialect].
	Tools               []json.RawMessage `json:"tools,omitempty"`
	MaxCompletionTokens int               `json:"max_completion_tokens,omitempty"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is left out only of an assistant message that is all tool
	// calls.
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatResponse is what wield reads of a chat.completion. Content and
// arguments are raw: servers that speak the API loosely send null, a
// string, or (for arguments) an object.
type chatResponse struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
}

// Generate sends the conversation and returns the model's answer. An error
// from the API is returned with its status and the provider's message (which
// never holds the key); it is wrapped with wield.Transient for 429 and 5xx.
func (c *Client) Generate(ctx context.Context, req *llm.ModelRequest) (*llm.ModelResponse, error) {
	body := chatRequest{Model: c.opts.Model, MaxCompletionTokens: max(req.MaxTokens, 0)}
	for _, m := range req.Messages {
		msg, err := messageParam(m)
		if err != nil {
			return nil, err
		}
		body.Messages = append(body.Messages, msg)
	}
	if len(req.Tools) > 0 && !c.opts.NoFunctionCalling {
		tools, err := c.tools.Tools(req.Tools)
		if err != nil {
			return nil, fmt.Errorf("openai: %w", err)
		}
		body.Tools = tools
	}
	var resp chatResponse
	if err := c.api.Post(ctx, c.url, body, &resp); err != nil {
		return nil, apiError(err)
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("openai: the answer has no choices")
	}
	ch := resp.Choices[0]
	out := &llm.ModelResponse{StopReason: ch.FinishReason, Message: llm.Message{Role: llm.RoleAssistant, Content: text(ch.Message.Content)}}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		args := arguments(tc.Function.Arguments)
		out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	return out, nil
}

// text is a message's content: a string, or (as Mistral's reasoning
// models answer) an array of parts, of which the text and refusal parts
// are the answer, joined; thinking and every other kind of part are not
// (reasoning is never where the prompt strategy reads calls); "" for null
// or a shape that is not text.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
		case "refusal":
			b.WriteString(p.Refusal)
		}
	}
	return b.String()
}

// arguments are a call's arguments as JSON: the API sends them as a string
// of JSON; some servers send the object itself. Empty means {}.
func arguments(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	if t := strings.TrimSpace(string(raw)); t == "" || t == "null" {
		return json.RawMessage(`{}`)
	}
	return raw
}

func messageParam(m llm.Message) (chatMessage, error) {
	content := func(s string) *string { return &s }
	switch m.Role {
	case llm.RoleSystem, llm.RoleUser:
		return chatMessage{Role: string(m.Role), Content: content(m.Content)}, nil
	case llm.RoleAssistant:
		a := chatMessage{Role: "assistant"}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content = content(m.Content)
		}
		for _, tc := range m.ToolCalls {
			var call chatToolCall
			call.ID, call.Type = tc.ID, "function"
			call.Function.Name, call.Function.Arguments = tc.Name, string(tc.Arguments)
			a.ToolCalls = append(a.ToolCalls, call)
		}
		return a, nil
	case llm.RoleTool:
		return chatMessage{Role: "tool", Content: content(m.ResultText()), ToolCallID: m.ToolCallID}, nil
	}
	return chatMessage{}, fmt.Errorf("openai: message role %q is not system, user, assistant or tool", m.Role)
}

// apiError keeps the status and the provider's message, marking what is
// worth retrying.
func apiError(err error) error {
	var se *modelapi.StatusError
	if errors.As(err, &se) {
		status := http.StatusText(se.StatusCode)
		if status == "" {
			status = fmt.Sprint(se.StatusCode)
		}
		e := fmt.Errorf("openai: %s", status)
		if msg := modelapi.Message(se.Body); msg != "" {
			e = fmt.Errorf("openai: %s: %s", status, msg)
		}
		if modelapi.ToolsRefused(se) {
			return modelapi.ToolsRefusal(e) // the agent loop may fall back to the prompt
		}
		if se.StatusCode == http.StatusTooManyRequests || se.StatusCode >= 500 {
			return wield.Transient(e)
		}
		return e
	}
	return fmt.Errorf("openai: %w", err)
}
