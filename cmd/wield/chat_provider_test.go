package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/gemini"
)

// TestChatModelResolve: the provider of `wield chat`, named or inferred
// from the URL's host, else the model name, else OpenAI; and each
// provider's URL/NAME split where its client adds the rest of the path.
func TestChatModelResolve(t *testing.T) {
	for _, tt := range []struct {
		m    chatModel
		want resolved
	}{
		{chatModel{model: "gpt-4.1"}, resolved{provider: "openai", name: "gpt-4.1", inferred: "the default: an OpenAI-compatible API"}},
		{chatModel{model: "claude-sonnet-4-5"}, resolved{provider: "anthropic", name: "claude-sonnet-4-5", inferred: "from the model name claude-sonnet-4-5"}},
		{chatModel{model: "gemini-2.5-flash"}, resolved{provider: "gemini", name: "gemini-2.5-flash", inferred: "from the model name gemini-2.5-flash"}},
		{chatModel{model: "models/gemini-2.5-pro"}, resolved{provider: "gemini", name: "models/gemini-2.5-pro", inferred: "from the model name models/gemini-2.5-pro"}},
		{chatModel{model: "claude-x", provider: "openai"}, resolved{provider: "openai", name: "claude-x"}},
		{chatModel{model: "http://127.0.0.1:11434/v1/qwen2.5:7b"}, resolved{provider: "openai", base: "http://127.0.0.1:11434/v1", name: "qwen2.5:7b", inferred: "the default: an OpenAI-compatible API"}},
		{chatModel{model: "http://127.0.0.1:8000/v1/meta-llama/Llama-3-8B"}, resolved{provider: "openai", base: "http://127.0.0.1:8000/v1", name: "meta-llama/Llama-3-8B", inferred: "the default: an OpenAI-compatible API"}},
		{chatModel{model: "https://api.anthropic.com/v1/my-model"}, resolved{provider: "anthropic", base: "https://api.anthropic.com", name: "my-model", inferred: "from the host api.anthropic.com"}},
		{chatModel{model: "http://127.0.0.1:9/v1/claude-haiku-4-5"}, resolved{provider: "anthropic", base: "http://127.0.0.1:9", name: "claude-haiku-4-5", inferred: "from the model name claude-haiku-4-5"}},
		{chatModel{model: "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"}, resolved{provider: "gemini", base: "https://generativelanguage.googleapis.com", name: "gemini-2.5-flash", inferred: "from the host generativelanguage.googleapis.com"}},
		{chatModel{model: "http://127.0.0.1:9/gemini-x", provider: "gemini"}, resolved{provider: "gemini", base: "http://127.0.0.1:9", name: "gemini-x"}},
		// A name with a vendor before it is a router's, on OpenAI's API.
		{chatModel{model: "https://openrouter.ai/api/v1/anthropic/claude-sonnet-4.5"}, resolved{provider: "openai", base: "https://openrouter.ai/api/v1", name: "anthropic/claude-sonnet-4.5", inferred: "the default: an OpenAI-compatible API"}},
		// Google's OpenAI-compatible endpoint speaks OpenAI's API.
		{chatModel{model: "https://generativelanguage.googleapis.com/v1beta/openai/gpt-like"}, resolved{provider: "openai", base: "https://generativelanguage.googleapis.com/v1beta/openai", name: "gpt-like", inferred: "the default: an OpenAI-compatible API"}},
	} {
		got, err := tt.m.resolve()
		if err != nil {
			t.Errorf("%+v: %v", tt.m, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(resolved{})); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tt.m, diff)
		}
	}
}

// TestChatModelRefused: what cannot work is a usage error saying what to
// change, before any request.
func TestChatModelRefused(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("WIELD_TEST_EMPTY", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	for _, tt := range []struct {
		m    chatModel
		want string
	}{
		{chatModel{}, "--model is required"},
		{chatModel{model: "gpt-4.1", provider: "mistral"}, `--provider "mistral": want one of openai, anthropic, gemini`},
		{chatModel{model: "gpt-4.1", api: "assistants"}, `--api "assistants": want chat or responses`},
		{chatModel{model: "claude-x", api: "responses"}, "--api responses is OpenAI's Responses API; the provider is anthropic"},
		{chatModel{model: "gemini-x", strict: true}, "--strict is OpenAI's strict mode and Anthropic's strict tool use; the provider is gemini (--json-schema"},
		{chatModel{model: "claude-x", jsonSchema: true}, "--json-schema is Gemini's parametersJsonSchema; the provider is anthropic"},
		{chatModel{model: "claude-x"}, "anthropic: no API key: set ANTHROPIC_API_KEY"},
		{chatModel{model: "gemini-x"}, "gemini: no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY)"},
		// OpenAI itself answers a request without a key with 401.
		{chatModel{model: "gpt-4.1"}, "openai: no API key for api.openai.com: set OPENAI_API_KEY"},
		{chatModel{model: "gpt-4.1", api: "responses"}, "openai: no API key for api.openai.com"},
		{chatModel{model: "https://api.openai.com/v1/gpt-4.1"}, "openai: no API key for api.openai.com"},
		{chatModel{model: "gpt-4.1", keyEnv: "WIELD_TEST_EMPTY"}, "--api-key-env WIELD_TEST_EMPTY: the variable is not set"},
		{chatModel{model: "http://127.0.0.1:9/"}, "no model name after the URL"},
	} {
		_, _, err := tt.m.newModel(context.Background(), &bytes.Buffer{})
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want a usage error with %q", tt.m, err, tt.want)
		}
	}
}

// TestChatModelOpenAINoKey: without a key, a server of one's own (URL/NAME,
// OPENAI_BASE_URL) is talked to as it is, as local servers want no key;
// only OpenAI's own API is refused (TestChatModelRefused).
func TestChatModelOpenAINoKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tt := range []struct {
		m    chatModel
		base string
	}{
		{chatModel{model: "http://127.0.0.1:11434/v1/qwen2.5:7b"}, ""},
		{chatModel{model: "gpt-4.1"}, "http://127.0.0.1:8000/v1"},
		{chatModel{model: "gpt-4.1", api: "responses"}, "http://127.0.0.1:8000/v1"},
	} {
		t.Setenv("OPENAI_BASE_URL", tt.base)
		if _, _, err := tt.m.newModel(context.Background(), &bytes.Buffer{}); err != nil {
			t.Errorf("%+v with OPENAI_BASE_URL %q and no key: %v", tt.m, tt.base, err)
		}
	}
}

// TestChatModelClients: each provider gets its client and the dialect its
// tools go out in (none in the prompt mode); notes that change what is
// used go to stderr.
func TestChatModelClients(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("GOOGLE_API_KEY", "g")
	t.Setenv("GEMINI_API_KEY", "other")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "")
	t.Setenv("GEMINI_BASE_URL", "http://127.0.0.1:9")
	t.Setenv("WIELD_TEST_KEY", "k")
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OPENAI_BASE_URL", "")
	for _, tt := range []struct {
		m       chatModel
		client  string
		dialect string
		stderr  string
	}{
		{m: chatModel{model: "gpt-4.1"}, client: "*openai.Client", dialect: "openai"},
		{m: chatModel{model: "gpt-4.1", api: "responses"}, client: "*openai.ResponsesClient", dialect: "openai-responses"},
		{m: chatModel{model: "gpt-4.1", strict: true}, client: "*openai.Client", dialect: "openai-strict"},
		{m: chatModel{model: "gpt-4.1", api: "responses", strict: true}, client: "*openai.ResponsesClient", dialect: "openai-responses-strict"},
		{m: chatModel{model: "claude-x"}, client: "*anthropic.Client", dialect: "anthropic"},
		{m: chatModel{model: "claude-x", strict: true}, client: "*anthropic.Client", dialect: "anthropic-strict"},
		{m: chatModel{model: "gemini-x", jsonSchema: true}, client: "*gemini.Client", dialect: "gemini-json-schema", stderr: "GOOGLE_API_KEY"},
		{m: chatModel{model: "http://127.0.0.1:9/v1/claude-x"}, client: "*anthropic.Client", dialect: "anthropic", stderr: "--provider anthropic, from the model name claude-x"},
		{m: chatModel{model: "gemini-x"}, client: "*gemini.Client", dialect: "gemini", stderr: "GOOGLE_API_KEY and GEMINI_API_KEY are both set and differ: using GOOGLE_API_KEY"},
		{m: chatModel{model: "gemini-x", noFC: true}, client: "*gemini.Client", stderr: "GOOGLE_API_KEY"},
		{m: chatModel{model: "gemini-x", keyEnv: "WIELD_TEST_KEY"}, client: "*gemini.Client", dialect: "gemini", stderr: "GEMINI_BASE_URL is set but not read: the base URL is GOOGLE_GEMINI_BASE_URL"},
	} {
		var stderr bytes.Buffer
		model, d, err := tt.m.newModel(context.Background(), &stderr)
		if err != nil {
			t.Errorf("%+v: %v", tt.m, err)
			continue
		}
		if got := fmt.Sprintf("%T", model); got != tt.client {
			t.Errorf("%+v: client %s, want %s", tt.m, got, tt.client)
		}
		name := ""
		if d != nil {
			name = d.Name()
		}
		if name != tt.dialect || model.SupportsFunctionCalling() == tt.m.noFC {
			t.Errorf("%+v: dialect %q (function calling %v), want %q", tt.m, name, model.SupportsFunctionCalling(), tt.dialect)
		}
		if tt.stderr == "" && stderr.Len() > 0 || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("%+v: stderr %q, want %q", tt.m, stderr.String(), tt.stderr)
		}
	}
}

// TestOfferable: the tools a provider refuses are named on stderr and
// left out of the agent's toolkit; the others stay, in order; in the
// prompt mode (no dialect) nothing is left out.
func TestOfferable(t *testing.T) {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(append([]*wield.Tool{builtin.Echo(), builtin.Calculator()}, builtin.NetTools(builtin.NetOptions{})...)...)
	kit, err := reg.CreateToolkit("helper", "echo", "http_get", "calculator")
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := offerable(reg, kit, nil, &bytes.Buffer{}); k != kit {
		t.Error("the prompt mode changed the toolkit")
	}
	var stderr bytes.Buffer
	k, err := offerable(reg, kit, gemini.Dialect, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"echo", "calculator"}, k.Names()); diff != "" {
		t.Errorf("toolkit (-want +got):\n%s", diff)
	}
	if want := `wield: not offered to the model: gemini: tool "http_get" at /properties/headers/additionalProperties: a map`; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q, want %q...", stderr.String(), want)
	}
	if got, _ := reg.Toolkit("helper"); got != k {
		t.Error("the registry keeps the toolkit with the refused tool")
	}
}

// TestNativeDialect: the tools are held to the provider's dialect only
// when they go to it natively; an agent whose output strategy puts them in
// the prompt keeps every tool.
func TestNativeDialect(t *testing.T) {
	m := chatModel{model: "gemini-x"}
	t.Setenv("GEMINI_API_KEY", "k")
	t.Setenv("GOOGLE_API_KEY", "")
	client, d, err := m.newModel(context.Background(), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cfg    llm.OutputStrategy
		native bool
	}{
		{llm.OutputStrategy{}, true},
		{llm.OutputStrategy{FunctionCalling: true}, true},
		{llm.OutputStrategy{FallbackToStructuredOutput: true}, false},
	} {
		if got := nativeDialect(client, tt.cfg, d) != nil; got != tt.native {
			t.Errorf("%+v: native %v, want %v", tt.cfg, got, tt.native)
		}
	}
}
