package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/openai"
)

// The providers `wield chat` talks to, and the APIs of OpenAI's.
const (
	providerOpenAI    = "openai"
	providerAnthropic = "anthropic"
	providerGemini    = "gemini"

	apiChat      = "chat"
	apiResponses = "responses"
)

var providers = []string{providerOpenAI, providerAnthropic, providerGemini}

// chatModel is how `wield chat` reaches a model: its flags.
type chatModel struct {
	// provider is --provider; "" infers it from the model.
	provider string
	// api is --api: chat (Chat Completions) or responses, OpenAI's only.
	api string
	// model is --model: NAME, or URL/NAME to name the endpoint too.
	model string
	// keyEnv is --api-key-env when given: the variable holding the key,
	// instead of the provider's usual ones.
	keyEnv string
	noFC   bool
	// strict is --strict: OpenAI's strict mode, Anthropic's strict tool
	// use.
	strict bool
	// jsonSchema is --json-schema: Gemini's parametersJsonSchema.
	jsonSchema bool
}

// resolved is a chatModel made definite: the provider, the API base (""
// for the provider's variable or default) and the model name.
type resolved struct {
	provider, base, name string
	// inferred says how the provider was chosen, when it was not named:
	// "" when --provider named it.
	inferred string
}

// resolve chooses the provider and splits the endpoint from the name.
// Without --provider the URL's host decides (api.anthropic.com,
// generativelanguage.googleapis.com), else the name (claude-*, gemini-*),
// else OpenAI, whose API most servers speak.
func (m chatModel) resolve() (resolved, error) {
	var r resolved
	if m.model == "" {
		return r, usagef("--model is required: a model name (gpt-4.1, claude-sonnet-4-5, gemini-2.5-flash) or URL/NAME (http://127.0.0.1:11434/v1/qwen2.5:7b)")
	}
	switch m.provider {
	case "", providerOpenAI, providerAnthropic, providerGemini:
	default:
		return r, usagef("--provider %q: want one of %s", m.provider, strings.Join(providers, ", "))
	}
	isURL := strings.HasPrefix(m.model, "http://") || strings.HasPrefix(m.model, "https://")
	var u *url.URL
	if isURL {
		var err error
		if u, err = url.Parse(m.model); err != nil || u.Host == "" {
			return r, usagef("--model %q: not a URL/NAME: %v", m.model, err)
		}
	}
	r.provider = m.provider
	if r.provider == "" {
		r.provider, r.inferred = inferProvider(u, m.model)
	}
	if !isURL {
		r.name = m.model
		return r, nil
	}
	var err error
	switch r.provider {
	case providerOpenAI:
		r.base, r.name, err = splitModel(m.model)
	case providerAnthropic:
		r.base, r.name, err = splitLast(m.model, "/v1")
	case providerGemini:
		r.base, r.name, err = splitLast(m.model, "/v1beta", "/v1beta/models", "/models")
	}
	return r, err
}

// inferProvider chooses the provider of a model given without --provider,
// and says why.
func inferProvider(u *url.URL, model string) (provider, why string) {
	if u != nil {
		host := strings.ToLower(u.Hostname())
		switch {
		case host == "api.anthropic.com":
			return providerAnthropic, "from the host " + host
		case host == "generativelanguage.googleapis.com" && !strings.Contains(u.Path, "/openai"):
			return providerGemini, "from the host " + host
		}
		// The name is what follows /v1/ (OpenRouter's
		// anthropic/claude-... is an OpenAI-compatible name), else the
		// last segment.
		if i := strings.Index(model, "/v1/"); i >= 0 {
			model = model[i+len("/v1/"):]
		} else {
			model = model[strings.LastIndex(model, "/")+1:]
		}
	}
	name := strings.ToLower(strings.TrimPrefix(model, "models/"))
	switch {
	case strings.HasPrefix(name, "claude-"):
		return providerAnthropic, "from the model name " + model
	case strings.HasPrefix(name, "gemini-"):
		return providerGemini, "from the model name " + model
	}
	return providerOpenAI, "the default: an OpenAI-compatible API"
}

// splitLast splits URL/NAME at its last slash, and takes from the base
// the first of suffixes it ends with: the part of the path the client
// adds itself (Anthropic's /v1, Gemini's /v1beta/models).
func splitLast(s string, suffixes ...string) (base, name string, err error) {
	i := strings.LastIndex(s, "/")
	if i <= len("https://") {
		return "", "", usagef("--model %q: no model name after the URL", s)
	}
	base, name = s[:i], s[i+1:]
	if name == "" {
		return "", "", usagef("--model %q: no model name after the URL", s)
	}
	slices.SortFunc(suffixes, func(a, b string) int { return len(b) - len(a) })
	for _, suf := range suffixes {
		if b, ok := strings.CutSuffix(base, suf); ok {
			base = b
			break
		}
	}
	return base, name, nil
}

// openAIHosted reports whether an OpenAI client on base (empty: the
// client's default, OPENAI_BASE_URL or OpenAI's) talks to OpenAI itself,
// which answers every request without a key with 401: such a chat is
// refused before it starts, as Anthropic's and Gemini's are.
func openAIHosted(base string) bool {
	if base == "" {
		base = os.Getenv("OPENAI_BASE_URL")
	}
	if base == "" {
		return true
	}
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// newModel returns the client of the chosen provider and the dialect its
// tools go out in (nil when they go in the prompt). Notes about the
// choice go to warn: a provider inferred from a name on a server that is
// not the provider's own, two keys set of which one is used.
func (m chatModel) newModel(ctx context.Context, warn io.Writer) (llm.Model, llm.Dialect, error) {
	r, err := m.resolve()
	if err != nil {
		return nil, nil, err
	}
	if m.api == "" {
		m.api = apiChat
	}
	switch {
	case m.api != apiChat && m.api != apiResponses:
		return nil, nil, usagef("--api %q: want chat or responses", m.api)
	case m.api == apiResponses && r.provider != providerOpenAI:
		return nil, nil, usagef("--api responses is OpenAI's Responses API; the provider is %s (--provider openai to use it)", r.provider)
	case m.strict && r.provider == providerGemini:
		return nil, nil, usagef("--strict is OpenAI's strict mode and Anthropic's strict tool use; the provider is gemini (--json-schema sends its tools as JSON Schema)")
	case m.jsonSchema && r.provider != providerGemini:
		return nil, nil, usagef("--json-schema is Gemini's parametersJsonSchema; the provider is %s", r.provider)
	}
	if r.inferred != "" && r.provider != providerOpenAI && r.base != "" {
		if u, _ := url.Parse(r.base); u != nil && !strings.HasSuffix(u.Hostname(), ".anthropic.com") && !strings.HasSuffix(u.Hostname(), ".googleapis.com") {
			fmt.Fprintf(warn, "wield: --provider %s, %s (name --provider openai for an OpenAI-compatible server)\n", r.provider, safetext.Line(r.inferred))
		}
	}
	key := ""
	if m.keyEnv != "" {
		if key = os.Getenv(m.keyEnv); key == "" {
			return nil, nil, usagef("--api-key-env %s: the variable is not set", m.keyEnv)
		}
	}
	var model llm.Model
	var dialect llm.Dialect
	switch r.provider {
	case providerOpenAI:
		if key == "" {
			key = os.Getenv("OPENAI_API_KEY") // local servers want none
		}
		if key == "" && openAIHosted(r.base) {
			return nil, nil, usagef("openai: no API key for api.openai.com: set OPENAI_API_KEY, or name the variable that holds it with --api-key-env (a server of your own needs none: --model URL/NAME, or OPENAI_BASE_URL)")
		}
		opts := openai.ClientOptions{Model: r.name, BaseURL: r.base, APIKey: key, NoFunctionCalling: m.noFC, Strict: m.strict}
		if m.api == apiResponses {
			model, err = openai.NewResponsesClient(opts)
			dialect = openai.Dialect{API: openai.ResponsesAPI, Strict: m.strict}
		} else {
			model, err = openai.NewClient(opts)
			dialect = openai.Dialect{API: openai.ChatAPI, Strict: m.strict}
		}
	case providerAnthropic:
		if key == "" && os.Getenv("ANTHROPIC_API_KEY") == "" && os.Getenv("ANTHROPIC_AUTH_TOKEN") == "" {
			return nil, nil, usagef("anthropic: no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or name the variable that holds it with --api-key-env")
		}
		model, err = anthropic.NewClient(anthropic.ClientOptions{Model: r.name, BaseURL: r.base, APIKey: key, NoFunctionCalling: m.noFC, Strict: m.strict})
		dialect = anthropic.Dialect
		if m.strict {
			dialect = anthropic.Strict
		}
	case providerGemini:
		if key == "" {
			g, k := os.Getenv("GOOGLE_API_KEY"), os.Getenv("GEMINI_API_KEY")
			if g != "" && k != "" && g != k {
				fmt.Fprintln(warn, "wield: GOOGLE_API_KEY and GEMINI_API_KEY are both set and differ: using GOOGLE_API_KEY, as Google's SDKs do")
			}
			if g == "" && k == "" {
				return nil, nil, usagef("gemini: no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or name the variable that holds it with --api-key-env")
			}
		}
		if r.base == "" && os.Getenv("GOOGLE_GEMINI_BASE_URL") == "" && os.Getenv("GEMINI_BASE_URL") != "" {
			fmt.Fprintln(warn, "wield: GEMINI_BASE_URL is set but not read: the base URL is GOOGLE_GEMINI_BASE_URL, as in Google's SDKs")
		}
		model, err = gemini.NewClient(ctx, gemini.ClientOptions{Model: r.name, BaseURL: r.base, APIKey: key, NoFunctionCalling: m.noFC, JSONSchema: m.jsonSchema})
		dialect = gemini.Dialect
		if m.jsonSchema {
			dialect = gemini.JSONSchema
		}
	}
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	if m.noFC {
		dialect = nil
	}
	return model, dialect, nil
}

// nativeDialect is d when the agent's tools go to the model natively, nil
// when its output strategy puts them in the prompt, where every tool can
// be described.
func nativeDialect(m llm.Model, cfg llm.OutputStrategy, d llm.Dialect) llm.Dialect {
	if s, err := llm.DetectStrategy(m, cfg.OrDefault()); err != nil || s != llm.StrategyNative {
		return nil
	}
	return d
}

// offerable is the toolkit without the tools the dialect refuses, each
// named on warn with the reason: a provider answers a request that holds
// one such tool with an error for the whole request, and the client
// refuses to send it (llm.ToolsError), so the chat goes on with the others
// and says which are missing. A nil dialect (tools in the prompt) keeps
// the toolkit.
func offerable(reg *wield.Registry, kit *wield.Toolkit, d llm.Dialect, warn io.Writer) (*wield.Toolkit, error) {
	if d == nil {
		return kit, nil
	}
	_, problems := llm.Export(d, kit.Tools())
	if len(problems) == 0 {
		return kit, nil
	}
	refused := map[string]bool{}
	for _, p := range problems {
		refused[p.Tool] = true
		fmt.Fprintf(warn, "wield: not offered to the model: %s\n", safetext.Line(p.String()))
	}
	var keep []string
	for _, n := range kit.Names() {
		if !refused[n] {
			keep = append(keep, n)
		}
	}
	return reg.CreateToolkit(kit.Agent(), keep...)
}
