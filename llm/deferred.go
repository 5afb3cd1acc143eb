package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wieldhq/wield"
)

// ErrNoDeferredLoading is returned by [ExportDeferred] for a dialect whose
// provider has no tool search of its own.
var ErrNoDeferredLoading = errors.New("llm: the dialect has no deferred loading of tools")

// deferredSearch is the tool search each provider runs itself, by dialect
// name: Anthropic's BM25 tool search tool and the Responses API's
// tool_search. A tool marked "defer_loading": true is hidden from the
// model until that search returns it.
var deferredSearch = map[string]json.RawMessage{
	"anthropic":               json.RawMessage(`{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`),
	"anthropic-strict":        json.RawMessage(`{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`),
	"openai-responses":        json.RawMessage(`{"type":"tool_search"}`),
	"openai-responses-strict": json.RawMessage(`{"type":"tool_search"}`),
}

// ExportDeferred is [Export] for a provider's own tool search, the
// alternative to wield's search_tools for a catalog too large to send: the
// provider's search tool comes first, then every tool as Export makes it,
// those for which load reports false marked "defer_loading": true, so the
// model sees them only once the provider's search found them. load nil
// defers every tool. The dialects with a search of their own are Anthropic
// (its tool_search_tool_bm25; the Messages API may ask for a beta header)
// and OpenAI's Responses API (tool_search); any other dialect is refused
// with [ErrNoDeferredLoading] rather than exported without the deferral.
func ExportDeferred(d Dialect, tools []*wield.Tool, load func(*wield.Tool) bool) ([]any, []Problem, error) {
	search, ok := deferredSearch[d.Name()]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s (use anthropic, anthropic-strict, openai-responses or openai-responses-strict)", ErrNoDeferredLoading, d.Name())
	}
	vs, problems := Export(d, tools)
	byName := make(map[string]*wield.Tool, len(tools))
	for _, t := range tools {
		if t != nil {
			if _, dup := byName[t.Name]; !dup {
				byName[t.Name] = t
			}
		}
	}
	out := make([]any, 0, len(vs)+1)
	out = append(out, search)
	for _, v := range vs {
		raw, err := JSON(v, "")
		if err != nil {
			return nil, problems, fmt.Errorf("export deferred: %w", err)
		}
		var head struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &head) != nil || !bytes.HasSuffix(raw, []byte("}")) {
			return nil, problems, fmt.Errorf("export deferred: %s: a definition that is not a JSON object with a name", d.Name())
		}
		if t := byName[head.Name]; load != nil && t != nil && load(t) {
			out = append(out, json.RawMessage(raw))
			continue
		}
		deferred := append(raw[:len(raw)-1:len(raw)-1], `,"defer_loading":true}`...)
		out = append(out, json.RawMessage(deferred))
	}
	return out, problems, nil
}
