package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wieldhq/wield"
)

// Role is who wrote a [Message].
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one call a model asked for: natively (with the provider's
// ID) or written in its text and parsed.
type ToolCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Signature is an opaque token the provider gave the call, which must
	// go back with it: Gemini's thoughtSignature, without which a thinking
	// model refuses the conversation. It travels in the call itself, so a
	// call renamed or copied (the agent loop gives a repeated ID one of its
	// own) keeps its own signature, not its namesake's.
	Signature string `json:"signature,omitempty"`
}

// Message is one turn of a conversation in wield's provider-neutral form;
// each client translates it to and from its provider's shape.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the native calls of an assistant message.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Result is set on a tool message: the call it answers (ToolCallID,
	// ToolName) and the result itself; clients format it for their provider.
	ToolCallID string        `json:"tool_call_id,omitempty"`
	ToolName   string        `json:"tool_name,omitempty"`
	Result     *wield.Result `json:"result,omitempty"`
}

// ResultText is a tool message's text for a provider: [wield.Result.Text]
// when the message has a Result, else its Content. Clients share it so every
// provider sees a failed call in the same words.
func (m Message) ResultText() string {
	if m.Result == nil {
		return m.Content
	}
	return m.Result.Text()
}

// ModelRequest is what an agent loop sends a model: the conversation and,
// for native function calling, the tools it may call.
type ModelRequest struct {
	Messages []Message
	// Tools are offered natively; empty when calls are asked for in the
	// prompt instead (see [Strategy]).
	Tools []*wield.Tool
	// MaxTokens bounds the answer; zero means the client's default.
	MaxTokens int
}

// ModelResponse is a model's answer: text, native calls, or both.
type ModelResponse struct {
	Message Message
	// StopReason is the provider's own word for why it stopped.
	StopReason string
}

// Model is a chat model. Generate is one round trip; its error means the
// model could not be asked (network, auth, a refused request), and says so
// without the provider's secrets.
type Model interface {
	Generate(ctx context.Context, req *ModelRequest) (*ModelResponse, error)
	// SupportsFunctionCalling reports whether Generate honours
	// ModelRequest.Tools (seed 002's supports_function_calling).
	SupportsFunctionCalling() bool
}

// Strategy is how tools reach a model (seed 002 §4.3.1).
type Strategy string

// The strategies.
const (
	// StrategyNative sends the tools in the provider's function calling
	// form and reads the calls from its structured answer.
	StrategyNative Strategy = "function_calling"
	// StrategyPrompt describes the tools in the system prompt and parses
	// the calls from the model's text.
	StrategyPrompt Strategy = "structured_output"
)

// OutputStrategy is an agent's configuration: seed 002's
// output_strategy {function_calling, fallback_to_structured_output}.
type OutputStrategy struct {
	FunctionCalling            bool
	FallbackToStructuredOutput bool
	// PromptFormat is how the prompt strategy asks for calls: the XML call
	// format (the zero value) or JSON objects (see [PromptFormat]).
	PromptFormat PromptFormat
}

// OrDefault is s, or the default strategy when s is the zero value (an
// agent that configures none): native function calling, and the tools in
// the prompt (the XML call format) when the model has none. The agent
// loop, the chat and an agent file's output_strategy (for the keys it
// leaves out) all take their default from here.
func (s OutputStrategy) OrDefault() OutputStrategy {
	if s == (OutputStrategy{}) {
		return OutputStrategy{FunctionCalling: true, FallbackToStructuredOutput: true, PromptFormat: PromptXML}
	}
	return s
}

// ErrNoStrategy is returned by [DetectStrategy] when the model cannot call
// tools natively and the configuration forbids the fallback.
var ErrNoStrategy = errors.New("llm: no way to offer tools to this model")

// ErrToolsUnsupported marks a model's error (from [Model.Generate]) that
// says the model or its server does not take tools natively although the
// client offered them: Ollama's "… does not support tools", vLLM's
// "\"auto\" tool choice requires --enable-auto-tool-choice …" and their
// like. The request can be made again with the tools in the prompt; the
// agent loop does so when the output strategy allows the fallback.
var ErrToolsUnsupported = errors.New("llm: the model does not take tools natively")

// DetectStrategy chooses how to offer tools to m: natively when the
// configuration prefers it and the model supports it, else in the prompt
// when the configuration allows the fallback, else [ErrNoStrategy].
func DetectStrategy(m Model, cfg OutputStrategy) (Strategy, error) {
	if cfg.FunctionCalling && m.SupportsFunctionCalling() {
		return StrategyNative, nil
	}
	if cfg.FallbackToStructuredOutput || !cfg.FunctionCalling {
		return StrategyPrompt, nil
	}
	return "", fmt.Errorf("%w: it does not support function calling, and fallback_to_structured_output is off; set it to true in the agent's output_strategy to describe the tools in the prompt instead", ErrNoStrategy)
}
