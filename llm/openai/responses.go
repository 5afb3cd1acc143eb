package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/internal/modelapi"
)

// maxFailure bounds the message of a failed response that an error keeps,
// as an error answer's body is bounded.
const maxFailure = 64 << 10

// ResponsesClient is an [llm.Model] on OpenAI's Responses API (POST
// /responses), where OpenAI's newer tool features live. It takes the same
// [ClientOptions] as [Client], with the same environment, headers and
// retries, and offers tools as [Responses] (or [ResponsesStrict]) exports
// them, converted once per tool.
//
// Each request carries the whole conversation (input items) and asks
// nothing to be stored ("store": false), as Chat Completions does, so the
// conversation lives in wield, its records and its history. Reasoning
// items in an answer are never a source of calls or text: only
// function_call items are calls, and only the output_text of message
// items is the answer.
type ResponsesClient struct {
	api   modelapi.Client
	url   string
	opts  ClientOptions
	tools llm.ToolCache
}

// NewResponsesClient returns a client on the Responses API; it fails only
// when opts.Model is empty.
func NewResponsesClient(opts ClientOptions) (*ResponsesClient, error) {
	api, base, err := newAPI(opts)
	if err != nil {
		return nil, err
	}
	return &ResponsesClient{
		api:   api,
		url:   base + "/responses",
		opts:  opts,
		tools: llm.ToolCache{Dialect: Dialect{API: ResponsesAPI, Strict: opts.Strict}},
	}, nil
}

// SupportsFunctionCalling reports whether the client sends tools natively.
func (c *ResponsesClient) SupportsFunctionCalling() bool { return !c.opts.NoFunctionCalling }

// responsesRequest is the body of POST /responses, as far as wield fills
// it.
type responsesRequest struct {
	Model string `json:"model"`
	// Input holds inputMessage, functionCallItem and functionOutputItem.
	Input []any `json:"input"`
	// Tools are [ResponsesTool]s, converted once each.
	Tools           []json.RawMessage `json:"tools,omitempty"`
	MaxOutputTokens int               `json:"max_output_tokens,omitempty"`
	Store           bool              `json:"store"`
}

// inputMessage is a message input item with text content.
type inputMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

// functionCallItem is a call the model made, sent back as input.
type functionCallItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// functionOutputItem is the result of a call.
type functionOutputItem struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// responsesResponse is what wield reads of a response object.
type responsesResponse struct {
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Output []struct {
		Type    string `json:"type"`
		CallID  string `json:"call_id"`
		ID      string `json:"id"`
		Name    string `json:"name"`
		Role    string `json:"role"`
		Content []struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Refusal string `json:"refusal"`
		} `json:"content"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"output"`
}

// Generate sends the conversation as input items and returns the model's
// answer: the text of its messages (a refusal included, in the model's
// words), and its function calls. StopReason is
// the response's status ("completed"), or the reason it is incomplete
// ("max_output_tokens", "content_filter"). Errors are as [Client.Generate]'s.
func (c *ResponsesClient) Generate(ctx context.Context, req *llm.ModelRequest) (*llm.ModelResponse, error) {
	body := responsesRequest{Model: c.opts.Model, MaxOutputTokens: max(req.MaxTokens, 0), Input: []any{}}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser:
			body.Input = append(body.Input, inputMessage{Type: "message", Role: string(m.Role), Content: m.Content})
		case llm.RoleAssistant:
			if m.Content != "" {
				body.Input = append(body.Input, inputMessage{Type: "message", Role: "assistant", Content: m.Content})
			}
			for _, tc := range m.ToolCalls {
				args := string(tc.Arguments)
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				body.Input = append(body.Input, functionCallItem{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: args})
			}
		case llm.RoleTool:
			body.Input = append(body.Input, functionOutputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: m.ResultText()})
		default:
			return nil, fmt.Errorf("openai: message role %q is not system, user, assistant or tool", m.Role)
		}
	}
	if len(req.Tools) > 0 && !c.opts.NoFunctionCalling {
		tools, err := c.tools.Tools(req.Tools)
		if err != nil {
			return nil, fmt.Errorf("openai: %w", err)
		}
		body.Tools = tools
	}
	var resp responsesResponse
	if err := c.api.Post(ctx, c.url, body, &resp); err != nil {
		return nil, apiError(err)
	}
	if resp.Status == "failed" {
		if resp.Error != nil && resp.Error.Message != "" {
			// The message is read from a 2xx answer (up to 64 MiB): kept to
			// what an error body may be.
			return nil, fmt.Errorf("openai: the response failed: %s: %s", safetext.Clip(resp.Error.Code, 200), safetext.Clip(resp.Error.Message, maxFailure))
		}
		return nil, errors.New("openai: the response failed")
	}
	out := &llm.ModelResponse{StopReason: resp.Status, Message: llm.Message{Role: llm.RoleAssistant}}
	if resp.IncompleteDetails != nil && resp.IncompleteDetails.Reason != "" {
		out.StopReason = resp.IncompleteDetails.Reason
	}
	var texts []string
	for _, item := range resp.Output {
		switch item.Type {
		case "message":
			var text strings.Builder
			for _, part := range item.Content {
				switch part.Type {
				case "output_text":
					text.WriteString(part.Text)
				case "refusal":
					text.WriteString(part.Refusal) // the model's answer, in its words
				}
			}
			if text.Len() > 0 {
				texts = append(texts, text.String())
			}
		case "function_call":
			id := item.CallID
			if id == "" {
				id = item.ID
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: id, Name: item.Name, Arguments: arguments(item.Arguments)})
		}
		// reasoning items, and the calls of OpenAI's hosted tools
		// (web_search_call, ...), which OpenAI ran itself, are not calls
		// for wield.
	}
	out.Message.Content = strings.Join(texts, "\n")
	return out, nil
}
