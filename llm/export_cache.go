package llm

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/wieldhq/wield"
)

// checkListed is the rule [Export] applies to tool i of a list before its
// dialect sees it: a nil tool, a tool without an input schema and a second
// tool of a name are refused. seen collects the names accepted so far.
func checkListed(d Dialect, tools []*wield.Tool, i int, seen map[string]bool) *Problem {
	t := tools[i]
	switch {
	case t == nil:
		return &Problem{Dialect: d.Name(), Message: fmt.Sprintf("tool %d of the list is nil", i)}
	case t.InputSchema == nil:
		return &Problem{Tool: t.Name, Dialect: d.Name(), Message: "the tool has no input schema"}
	case seen[t.Name]:
		return &Problem{Tool: t.Name, Dialect: d.Name(), Message: "a tool of the same name comes earlier in the list; names must be unique"}
	}
	seen[t.Name] = true
	return nil
}

// maxCachedTools bounds a [ToolCache]: past it the cache starts again, so
// a process that keeps loading new tools (hot reload, MCP servers whose
// lists change) does not keep every old one.
const maxCachedTools = 4096

// ToolCache is [Export] for a model client, which offers the same tools on
// every turn of a conversation: each tool is converted to the dialect once
// and kept as the JSON the request carries. It is the one conversion of
// tools for a provider: `wield list --format`, GET /v1/tools?format= and
// the clients of packages openai, anthropic and gemini all go through the
// dialect's ExportTool, so what is exported is what is sent.
//
// Tools are told apart by pointer: a registered tool is never modified
// ([wield.Registry.Update] registers a new value). A zero ToolCache with
// Dialect set is ready; it is safe for concurrent use.
type ToolCache struct {
	// Dialect converts the tools.
	Dialect Dialect

	mu sync.Mutex
	m  map[*wield.Tool]cachedTool
}

type cachedTool struct {
	json     json.RawMessage
	problems []Problem
}

// Tools returns tools in the dialect as JSON, one value per tool, in order.
// When the dialect refuses any of them it returns a *[ToolsError] with
// every problem and no tools: a request never leaves with some of its
// tools silently missing, nor with a schema the provider would reject or
// read differently.
func (c *ToolCache) Tools(tools []*wield.Tool) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(tools))
	var problems []Problem
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		if p := checkListed(c.Dialect, tools, i, seen); p != nil {
			problems = append(problems, *p)
			continue
		}
		ct := c.tool(t)
		if len(ct.problems) > 0 {
			problems = append(problems, ct.problems...)
			continue
		}
		out = append(out, ct.json)
	}
	if len(problems) > 0 {
		return nil, &ToolsError{Problems: problems}
	}
	return out, nil
}

func (c *ToolCache) tool(t *wield.Tool) cachedTool {
	c.mu.Lock()
	ct, ok := c.m[t]
	c.mu.Unlock()
	if ok {
		return ct
	}
	v, ps := c.Dialect.ExportTool(t)
	switch {
	case len(ps) > 0:
		ct.problems = ps
	case v == nil:
		ct.problems = []Problem{{Tool: t.Name, Dialect: c.Dialect.Name(), Message: "the dialect gave no value and no reason"}}
	default:
		b, err := JSON(v, "")
		if err != nil {
			ct.problems = []Problem{{Tool: t.Name, Dialect: c.Dialect.Name(), Message: "the converted tool cannot be written as JSON: " + err.Error()}}
		}
		ct.json = b
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedTools {
		c.m = make(map[*wield.Tool]cachedTool)
	}
	c.m[t] = ct
	c.mu.Unlock()
	return ct
}

// ToolsError is a model client's refusal to send a request whose tools its
// dialect cannot take as they are. Problems say which tools and why, in
// the words of [Export]; leave those tools out of the request (or fix
// their schemas) to go on.
type ToolsError struct {
	Problems []Problem
}

// Error names every tool refused and why.
func (e *ToolsError) Error() string {
	var b strings.Builder
	tools := map[string]bool{}
	for _, p := range e.Problems {
		tools[p.Tool] = true
	}
	b.WriteString(strconv.Itoa(len(tools)))
	if len(tools) == 1 {
		b.WriteString(" tool cannot be offered: ")
	} else {
		b.WriteString(" tools cannot be offered: ")
	}
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}
