package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wieldhq/wield"
)

// ErrNoDeferredLoading is returned by [ExportDeferred] for a dialect whose
// provider has no tool search of its own.
var ErrNoDeferredLoading = errors.New("llm: the dialect has no deferred loading of tools")

// ErrNoNamespaces is returned by [ExportDeferredIn] when namespaces are
// asked of a dialect whose provider has none (Anthropic groups tools only
// by MCP server).
var ErrNoNamespaces = errors.New("llm: the dialect has no namespaces of tools")

// ErrNamespaceName is returned by [ExportDeferredIn] for a namespace whose
// name the provider would refuse.
var ErrNamespaceName = errors.New("llm: a namespace name must be 1-64 letters, digits, _ or -")

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

// namespaceDialects are the dialects whose provider groups deferred tools
// in namespaces: the Responses API's {"type": "namespace", "name",
// "description", "tools"} (the tool search guide,
// https://developers.openai.com/api/docs/guides/tools-tool-search, which
// recommends namespaces of fewer than 10 functions over loose ones).
var namespaceDialects = map[string]bool{"openai-responses": true, "openai-responses-strict": true}

// Namespace is a group of tools a provider's tool search loads together,
// made from a toolset: the model sees its name and description until the
// search opens it.
type Namespace struct {
	Name        string
	Description string
	// Tools are the names of its tools.
	Tools []string
}

// NamespacesOf makes a namespace of each toolset.
func NamespacesOf(sets []wield.Toolset) []Namespace {
	out := make([]Namespace, 0, len(sets))
	for _, ts := range sets {
		out = append(out, Namespace{Name: ts.Name, Description: ts.Description, Tools: ts.Tools})
	}
	return out
}

// namespaceName tells whether name follows the rule wield applies to a
// namespace's name (`^[A-Za-z0-9_-]{1,64}$`): the function name rule, since
// the model calls tools through it. Checked by hand rather than by that
// regular expression, whose {1,64} compiles to 64 nested repetitions: at
// package init that recursion grew the main goroutine's stack three times
// in every wield process, each copy reading the function table.
func namespaceName(name string) bool {
	if len(name) < 1 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
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
	return ExportDeferredIn(d, tools, load, nil)
}

// ExportDeferredIn is [ExportDeferred] with the deferred tools grouped in
// namespaces (the Responses dialects only; others answer
// [ErrNoNamespaces]): a deferred tool of a namespace goes inside it, in the
// first namespace that names it, the others stay at the top level. A
// namespace left without deferred tools is not written; one without a
// description gets "Tools: " and the names of the tools it holds, since
// the API requires one and the model chooses a namespace by it. A
// namespace whose name breaks the function name rule is an error.
func ExportDeferredIn(d Dialect, tools []*wield.Tool, load func(*wield.Tool) bool, spaces []Namespace) ([]any, []Problem, error) {
	search, ok := deferredSearch[d.Name()]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s (use anthropic, anthropic-strict, openai-responses or openai-responses-strict)", ErrNoDeferredLoading, d.Name())
	}
	if len(spaces) > 0 && !namespaceDialects[d.Name()] {
		return nil, nil, fmt.Errorf("%w: %s (namespaces are the Responses API's: openai-responses or openai-responses-strict)", ErrNoNamespaces, d.Name())
	}
	inSpace := map[string]int{} // tool name -> index of its namespace
	for i, ns := range spaces {
		if !namespaceName(ns.Name) {
			return nil, nil, fmt.Errorf("%w: namespace %q (from the toolset of that name)", ErrNamespaceName, ns.Name)
		}
		for _, n := range ns.Tools {
			if _, dup := inSpace[n]; !dup {
				inSpace[n] = i
			}
		}
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
	grouped := make([][]json.RawMessage, len(spaces))
	groupedNames := make([][]string, len(spaces))
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
		deferred := json.RawMessage(append(raw[:len(raw)-1:len(raw)-1], `,"defer_loading":true}`...))
		if i, ok := inSpace[head.Name]; ok {
			grouped[i] = append(grouped[i], deferred)
			groupedNames[i] = append(groupedNames[i], head.Name)
			continue
		}
		out = append(out, deferred)
	}
	for i, ns := range spaces {
		if len(grouped[i]) == 0 {
			continue
		}
		desc := ns.Description
		if desc == "" {
			desc = "Tools: " + strings.Join(groupedNames[i], ", ")
		}
		out = append(out, namespaceTool{Type: "namespace", Name: ns.Name, Description: desc, Tools: grouped[i]})
	}
	return out, problems, nil
}

// namespaceTool is a namespace of the Responses API's tools.
type namespaceTool struct {
	Type        string            `json:"type"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Tools       []json.RawMessage `json:"tools"`
}
