package toolsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

// DefaultThreshold is the toolkit size above which [Catalog] hides the
// tools behind search_tools. Models choose well among a few dozen tools;
// beyond that the definitions cost more context than the search's extra
// turn.
const DefaultThreshold = 40

// Catalog returns what to offer a model: the tools themselves when there
// are at most threshold of them (DefaultThreshold when threshold <= 0),
// else search alone. The agent loop then adds the definitions that
// search_tools returns.
func Catalog(tools []*wield.Tool, threshold int, search *wield.Tool) []*wield.Tool {
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	if len(tools) <= threshold {
		return tools
	}
	return []*wield.Tool{search}
}

// ToolOptions configure the search_tools tool. The zero value is usable.
type ToolOptions struct {
	// Name is the tool's name; "search_tools" when empty.
	Name string
	// DefaultLimit is the number of tools returned when the call gives no
	// limit; 5 when zero.
	DefaultLimit int
	// MaxLimit caps the limit a call may ask for; 20 when zero.
	MaxLimit int
	// Registry names the toolsets of the tools found, for the policy's
	// decisions (resource in Toolset::"…"); without it, tools are decided
	// as if in no toolset.
	Registry *wield.Registry
}

// SearchInput is the input of search_tools.
type SearchInput struct {
	Query string `json:"query" description:"What you want to do, in plain words, e.g. 'open a bug about the login page' or 'list files in a folder'. A tool's exact name also works." minLength:"1" maxLength:"1000"`
	Limit int    `json:"limit,omitempty" description:"How many tools to return, best first" minimum:"1" maximum:"100" default:"5"`
}

// FoundTool is one match of search_tools: everything a model needs to call
// the tool next.
type FoundTool struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	InputSchema *jsonschema.Schema `json:"input_schema"`
	Score       float64            `json:"score"`
}

// SearchOutput is the output of search_tools. Total counts every tool that
// matched the query, of which Tools are the best; Hint tells the model what
// to do when nothing matched.
type SearchOutput struct {
	Tools []FoundTool `json:"tools"`
	Total int         `json:"total"`
	Hint  string      `json:"hint,omitempty"`
}

// Tool returns the search_tools tool over the index that ix returns. ix is
// called on every call, so a registry that was reloaded is searched as it
// is now; it should be cheap, as [Cache] is. The tool never lists itself
// (a tool of the same name in the index).
//
// A call made within an agent's toolkit ([wield.Call.Toolkit], as the agent
// loop's calls are) searches that toolkit's tools instead, so one
// registered search_tools serves every agent and each finds only what it
// may call. The indexes of the last 64 toolkits searched are kept, each
// rebuilt when its tools change.
//
// The tool only computes, so it runs inline. It answers validation_error
// for a query without a meaningful word or a limit above the maximum, and
// execution_error when ix returns nil.
func Tool(ix func() *Index, opts *ToolOptions) *wield.Tool {
	var o ToolOptions
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "search_tools"
	}
	if o.MaxLimit <= 0 {
		o.MaxLimit = 20
	}
	if o.DefaultLimit <= 0 {
		o.DefaultLimit = min(5, o.MaxLimit)
	}
	o.DefaultLimit = min(o.DefaultLimit, o.MaxLimit)
	name := o.Name

	kits := &kitIndexes{last: map[string]*kitIndex{}}
	t := wield.Func(name, "Find tools for a task. The catalog is too large to list, so describe what you want to do and this returns the best matching tools with their input schemas; then call the one that fits.",
		func(ctx context.Context, in SearchInput) (SearchOutput, error) {
			var index *Index
			if c := wield.CallFrom(ctx); c != nil && c.Toolkit != nil {
				index = kits.index(c.Toolkit)
			} else {
				index = ix()
			}
			if index == nil {
				return SearchOutput{}, wield.Errorf(wield.ErrExecution, "the tool catalog is not available right now")
			}
			limit := in.Limit
			if limit == 0 {
				limit = o.DefaultLimit
			}
			if limit < 1 || limit > o.MaxLimit {
				return SearchOutput{}, wield.Errorf(wield.ErrValidation, "limit %d is out of range: use 1 to %d", in.Limit, o.MaxLimit)
			}
			if !index.searchable(in.Query) {
				return SearchOutput{}, wield.Errorf(wield.ErrValidation, "query %q has no searchable word: describe the task, e.g. 'send an email'", in.Query)
			}
			hits, total := index.searchExcept(in.Query, limit, name)
			if p := wield.PolicyFrom(ctx); p != nil {
				// A tool the policies deny this caller is not found, as it
				// is not listed: rank every match, keep the visible ones.
				hits, total = visibleHits(ctx, p, o.Registry, index.searchAll(in.Query, name), limit)
			}
			out := SearchOutput{Tools: make([]FoundTool, 0, len(hits))}
			for _, h := range hits {
				desc := h.Tool.Description
				if h.Tool.ForCaller != nil {
					// Described for this caller, as the lists describe it
					// (wield.ListFor): run_program's functions are its own.
					var caller wield.Caller
					var kit *wield.Toolkit
					if c := wield.CallFrom(ctx); c != nil {
						caller, kit = c.Caller, c.Toolkit
					}
					if v := h.Tool.ForCaller(ctx, wield.PolicyFrom(ctx), caller, kit); v != nil {
						desc = v.Description
					}
				}
				out.Tools = append(out.Tools, FoundTool{
					Name:        h.Tool.Name,
					Description: desc,
					InputSchema: h.Tool.InputSchema,
					Score:       math.Round(h.Score*1000) / 1000,
				})
			}
			out.Total = total
			if total == 0 {
				out.Hint = "no tool matched: try other words for the task, or fewer of them"
			}
			return out, nil
		})
	if p := t.InputSchema.Properties["limit"]; p != nil {
		p.Maximum = new(float64(o.MaxLimit))
		p.Default, _ = json.Marshal(o.DefaultLimit)
	}
	t.Category = wield.CategorySystem
	t.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}
	t.Inline = true // ranks an index in memory: no I/O, no waiting
	t.Tags = []string{"tools", "search", "builtin"}
	t.Version = "1.0.0"
	t.Source = "builtin"
	return t
}

// Cache returns a function for [Tool] that indexes the tools list returns
// and builds a new index only when they changed. list is called on every
// call (for a registry, reg.List(wield.Query{}) or a toolkit's Tools), and
// the tools are compared by identity: a registry replaces a tool's value
// when it is updated, so an update is seen.
func Cache(list func() []*wield.Tool) func() *Index {
	var (
		mu    sync.Mutex
		last  []*wield.Tool
		index *Index
	)
	return func() *Index {
		tools := list()
		mu.Lock()
		defer mu.Unlock()
		if index == nil || !slices.Equal(tools, last) {
			index, last = New(tools), tools
		}
		return index
	}
}

// maxKitIndexes bounds the toolkits whose index a search_tools keeps: a
// server that makes a toolkit per request must not grow without end.
const maxKitIndexes = 64

// kitIndexes are the indexes of the toolkits searched lately, by the names
// of their tools: a scoped request narrows a new Toolkit each time, and
// the same tools must not be indexed again for each call.
type kitIndexes struct {
	mu   sync.Mutex
	tick uint64
	last map[string]*kitIndex
}

type kitIndex struct {
	tools []*wield.Tool
	index *Index
	used  uint64
}

// index returns the index of kit's tools as they are now, building it when
// they changed (compared by identity, as [Cache] does).
func (k *kitIndexes) index(kit *wield.Toolkit) *Index {
	tools := kit.Tools()
	key := kitKey(tools)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.tick++
	e := k.last[key]
	if e == nil {
		if len(k.last) >= maxKitIndexes {
			oldest, first := "", true
			for kk, v := range k.last {
				if first || v.used < k.last[oldest].used {
					oldest, first = kk, false
				}
			}
			delete(k.last, oldest)
		}
		e = &kitIndex{}
		k.last[key] = e
	}
	if e.index == nil || !slices.Equal(tools, e.tools) {
		e.tools, e.index = tools, New(tools)
	}
	e.used = k.tick
	return e.index
}

// kitKey names a toolkit's tools, the key of its index.
func kitKey(tools []*wield.Tool) string {
	var b strings.Builder
	for _, t := range tools {
		b.WriteString(t.Name)
		b.WriteByte(0)
	}
	return b.String()
}

// searchAll is every match of query, best first, but the tool named except.
func (ix *Index) searchAll(query, except string) []Hit {
	hits, _ := ix.searchExcept(query, max(len(ix.tools), 1), except)
	return hits
}

// visibleHits keeps the hits whose tools p lets the caller of ctx's call
// see ([wield.VisibleTools], the filter of every list), and returns the
// best limit of them and how many there are.
func visibleHits(ctx context.Context, p wield.Policy, reg *wield.Registry, hits []Hit, limit int) ([]Hit, int) {
	var caller wield.Caller
	if c := wield.CallFrom(ctx); c != nil {
		caller = c.Caller
	}
	tools := make([]*wield.Tool, len(hits))
	for i, h := range hits {
		tools[i] = h.Tool
	}
	visible := map[*wield.Tool]bool{}
	for _, t := range wield.VisibleTools(ctx, p, reg, caller, tools) {
		visible[t] = true
	}
	hits = slices.DeleteFunc(hits, func(h Hit) bool { return !visible[h.Tool] })
	return hits[:min(limit, len(hits))], len(hits)
}

// offerMu orders the Offers of a process: setup and the end of the MCP
// imports, or several agent loops, may ask at once, and a second
// registration of the name would be reported as a duplicate.
var offerMu sync.Mutex

// Offer registers search_tools in reg, as a default (a tool file of the
// name replaces it), when reg holds no tool of that name and more than
// threshold tools (DefaultThreshold when threshold <= 0): the one place
// that offers it, for `wield serve` and `wield mcp` and for the agent
// loop. The tool searches the whole registry as it is at each call, or
// the toolkit of a call made within one (see [Tool]). It returns the tool
// registered under the name, nil when there is none; the error is
// registration's.
func Offer(reg *wield.Registry, threshold int) (*wield.Tool, error) {
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	const name = "search_tools"
	offerMu.Lock()
	defer offerMu.Unlock()
	if t, ok := reg.Tool(name); ok {
		return t, nil
	}
	if reg.Len() <= threshold {
		return nil, nil
	}
	search := Tool(Cache(func() []*wield.Tool { return reg.List(wield.Query{}) }), &ToolOptions{Registry: reg})
	if err := reg.RegisterDefaults(search); err != nil {
		return nil, fmt.Errorf("register search_tools: %w", err)
	}
	t, _ := reg.Tool(name)
	return t, nil
}
