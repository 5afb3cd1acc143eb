package gemini

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

const (
	// defaultBaseURL is the Gemini API.
	defaultBaseURL = "https://generativelanguage.googleapis.com"
	// apiVersion is the version the Go SDK called.
	apiVersion = "v1beta"
)

// ClientOptions configures a [Client]. Every field is optional but Model.
type ClientOptions struct {
	// Model is the model name, such as "gemini-2.5-flash" (or
	// "models/gemini-2.5-flash", "tunedModels/...").
	Model string
	// BaseURL is the API's address; empty means GOOGLE_GEMINI_BASE_URL when
	// it is set, else Google's.
	BaseURL string
	// APIKey is the Gemini API key; empty means GOOGLE_API_KEY, else
	// GEMINI_API_KEY.
	APIKey string
	// HTTPClient replaces the default client (http.DefaultClient's
	// transport). Either way the request gets 10 minutes for its whole
	// answer, within its context.
	HTTPClient *http.Client
	// NoFunctionCalling makes agents describe tools in the prompt instead
	// of sending them (`wield chat --no-function-calling`).
	NoFunctionCalling bool
	// JSONSchema sends the tools' schemas as JSON Schema, in the
	// [JSONSchema] dialect (`wield chat --json-schema`), for the models
	// that take parametersJsonSchema.
	JSONSchema bool
}

// dialect is the dialect the options choose.
func (o ClientOptions) dialect() llm.Dialect {
	if o.JSONSchema {
		return JSONSchema
	}
	return Dialect
}

// Client is an [llm.Model] on the Gemini API's generateContent. Tools are
// declared as [Dialect] exports them, once each: "parameters" in the
// OpenAPI subset every Gemini model and Vertex AI accept ($ref inlined,
// oneOf as anyOf, additionalProperties false left out, see
// [ConvertSchema]), and a tool whose meaning that subset cannot keep is
// refused with an *[llm.ToolsError] rather than sent changed. The newer
// parametersJsonSchema is opt-in (ClientOptions.JSONSchema): models
// before the November 2025 releases refuse most of JSON Schema there.
//
// It speaks the documented wire format over net/http and encoding/json
// rather than through Google's Go SDK (google.golang.org/genai), which
// brought Google Cloud authentication, gRPC status types, a websocket
// client and go-cmp into the binary for one endpoint. Its behaviour is
// kept: the same request bodies (testdata/requests.golden.json was written
// by the SDK), the same environment (GOOGLE_API_KEY, GEMINI_API_KEY,
// GOOGLE_GEMINI_BASE_URL), no retries, and its errors' code, status and
// message.
type Client struct {
	api   modelapi.Client
	url   string
	opts  ClientOptions
	tools llm.ToolCache
}

// NewClient returns a client on the Gemini API. It fails when opts.Model
// is empty or names no model, and when there is no API key.
func NewClient(_ context.Context, opts ClientOptions) (*Client, error) {
	if opts.Model == "" {
		return nil, errors.New("gemini client: no model name")
	}
	if strings.ContainsAny(opts.Model, "?&") || strings.Contains(opts.Model, "..") {
		return nil, fmt.Errorf("gemini client: model %q is not a model name", opts.Model)
	}
	key := opts.APIKey
	if key == "" {
		key = os.Getenv("GOOGLE_API_KEY")
	}
	if key == "" {
		key = os.Getenv("GEMINI_API_KEY")
	}
	if key == "" {
		return nil, errors.New("gemini client: no API key: set it in the client's options, GOOGLE_API_KEY or GEMINI_API_KEY")
	}
	base := opts.BaseURL
	if base == "" {
		base = os.Getenv("GOOGLE_GEMINI_BASE_URL")
	}
	if base == "" {
		base = defaultBaseURL
	}
	model := opts.Model
	if !strings.HasPrefix(model, "models/") && !strings.HasPrefix(model, "tunedModels/") {
		model = "models/" + model
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{
		api:   modelapi.Client{HTTP: hc, Header: http.Header{"X-Goog-Api-Key": {key}}},
		url:   strings.TrimSuffix(base, "/") + "/" + apiVersion + "/" + model + ":generateContent",
		opts:  opts,
		tools: llm.ToolCache{Dialect: opts.dialect()},
	}, nil
}

// SupportsFunctionCalling is true, as Gemini models take function
// declarations natively, unless the options say otherwise.
func (c *Client) SupportsFunctionCalling() bool { return !c.opts.NoFunctionCalling }

// generateRequest is the body of models.generateContent, as far as wield
// fills it.
type generateRequest struct {
	Contents          []*content `json:"contents"`
	SystemInstruction *content   `json:"systemInstruction,omitempty"`
	Tools             []toolDecl `json:"tools,omitempty"`
	GenerationConfig  struct {
		MaxOutputTokens int `json:"maxOutputTokens,omitempty"`
	} `json:"generationConfig"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts,omitempty"`
}

type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
}

type functionCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Args is an object (a map[string]any, nil for none) in a request; in
	// an answer, whatever the model sent: args that are not an object are
	// the call's to fail, as its result, not the whole answer's.
	Args any `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

// toolDecl is a [Tool] whose [FunctionDeclaration]s were converted once
// each by [Dialect].
type toolDecl struct {
	FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
}

// generateResponse is what wield reads of a GenerateContentResponse.
type generateResponse struct {
	Candidates []struct {
		Content      *content `json:"content"`
		FinishReason string   `json:"finishReason"`
	} `json:"candidates"`
}

// Generate sends the conversation and returns the model's answer. System
// messages become the system instruction; tool results are function
// responses ({"output": ...} or {"error": ...}). API errors keep their
// status and are wield.Transient for 429 and 5xx.
//
// A call the model made with a thought signature goes back with it, as
// Gemini 3 models require of the calls of the current turn (a 400
// "Function call is missing a thought_signature" otherwise): a call read
// keeps its signature in [llm.ToolCall.Signature], which goes back with
// it whatever its ID becomes, and calls without an ID from Gemini get one
// unique to them.
func (c *Client) Generate(ctx context.Context, req *llm.ModelRequest) (*llm.ModelResponse, error) {
	var body generateRequest
	body.GenerationConfig.MaxOutputTokens = max(req.MaxTokens, 0)
	body.Contents = []*content{}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			if body.SystemInstruction == nil {
				body.SystemInstruction = &content{Role: "user"}
			}
			body.SystemInstruction.Parts = append(body.SystemInstruction.Parts, part{Text: m.Content})
		case llm.RoleUser:
			body.Contents = append(body.Contents, &content{Role: "user", Parts: []part{{Text: m.Content}}})
		case llm.RoleAssistant:
			ct := &content{Role: "model"}
			if m.Content != "" {
				ct.Parts = append(ct.Parts, part{Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				var args map[string]any
				if len(tc.Arguments) > 0 {
					if err := json.Unmarshal(tc.Arguments, &args); err != nil {
						return nil, fmt.Errorf("gemini: arguments of call %s: %w", tc.Name, err)
					}
				}
				fc := &functionCall{ID: tc.ID, Name: tc.Name}
				if len(args) > 0 {
					fc.Args = args
				}
				ct.Parts = append(ct.Parts, part{FunctionCall: fc, ThoughtSignature: tc.Signature})
			}
			body.Contents = append(body.Contents, ct)
		case llm.RoleTool:
			p := part{FunctionResponse: &functionResponse{ID: m.ToolCallID, Name: m.ToolName, Response: responseOf(m)}}
			if n := len(body.Contents); n > 0 && body.Contents[n-1].Role == "user" && len(body.Contents[n-1].Parts) > 0 && body.Contents[n-1].Parts[0].FunctionResponse != nil {
				body.Contents[n-1].Parts = append(body.Contents[n-1].Parts, p)
			} else {
				body.Contents = append(body.Contents, &content{Role: "user", Parts: []part{p}})
			}
		default:
			return nil, fmt.Errorf("gemini: message role %q is not system, user, assistant or tool", m.Role)
		}
	}
	if len(req.Tools) > 0 && !c.opts.NoFunctionCalling {
		decls, err := c.tools.Tools(req.Tools)
		if err != nil {
			return nil, fmt.Errorf("gemini: %w", err)
		}
		body.Tools = []toolDecl{{FunctionDeclarations: decls}}
	}
	var resp generateResponse
	if err := c.api.Post(ctx, c.url, body, &resp); err != nil {
		return nil, apiError(err)
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return nil, errors.New("gemini: the answer has no candidates")
	}
	cand := resp.Candidates[0]
	out := &llm.ModelResponse{StopReason: cand.FinishReason, Message: llm.Message{Role: llm.RoleAssistant}}
	var text []string
	for i, p := range cand.Content.Parts {
		switch {
		case p.Thought:
			// The model's reasoning: neither the answer nor a source of
			// calls, whatever the part holds.
		case p.FunctionCall != nil:
			args, err := json.Marshal(p.FunctionCall.Args)
			if err != nil || p.FunctionCall.Args == nil {
				args = []byte(`{}`)
			}
			id := p.FunctionCall.ID
			if id == "" {
				// Gemini names calls only sometimes; the name must tell
				// this call from every other, for its signature.
				id = fmt.Sprintf("call_%s_%d", wield.NewID(), i)
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: args, Signature: p.ThoughtSignature})
		case p.Text != "":
			text = append(text, p.Text)
		}
	}
	out.Message.Content = strings.Join(text, "")
	return out, nil
}

// responseOf is a tool result as Gemini wants it: an object, with the
// output under "output" (an object output as it is) or the failure under
// "error" in seed 001's words.
func responseOf(m llm.Message) map[string]any {
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

// apiError keeps the code, status and message of Google's error object
// ({"error":{"code":...,"status":...,"message":...}}), marking what is
// worth retrying. A body that is not one (an HTML page from a proxy) is
// left out.
func apiError(err error) error {
	var se *modelapi.StatusError
	if errors.As(err, &se) {
		var body struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Status  string `json:"status"`
			} `json:"error"`
		}
		_ = json.Unmarshal(se.Body, &body)
		status := body.Error.Status
		if status == "" {
			status = http.StatusText(se.StatusCode)
		}
		e := fmt.Errorf("gemini: %d %s", se.StatusCode, status)
		if body.Error.Message != "" {
			e = fmt.Errorf("gemini: %d %s: %s", se.StatusCode, status, body.Error.Message)
		}
		if modelapi.ToolsRefused(se) {
			return modelapi.ToolsRefusal(e) // the agent loop may fall back to the prompt
		}
		if se.StatusCode == http.StatusTooManyRequests || se.StatusCode >= 500 {
			return wield.Transient(e)
		}
		return e
	}
	return fmt.Errorf("gemini: %w", err)
}
