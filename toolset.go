package wield

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Toolset is a named group of tools (seed 002: configs/tool_sets/*.yaml).
type Toolset struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Tools       []string `json:"tools"`
}

// DefineToolset adds or replaces a toolset. Every tool it names must be
// registered; the error lists those that are not.
func (r *Registry) DefineToolset(ts Toolset) error {
	if ts.Name == "" {
		return errors.New("define toolset: empty name")
	}
	if missing := r.missing(ts.Tools); len(missing) > 0 {
		return fmt.Errorf("define toolset %q: %w: %s", ts.Name, ErrNotFound, strings.Join(missing, ", "))
	}
	ts.Tools = slices.Clone(ts.Tools)
	r.mu.Lock()
	r.toolsets[ts.Name] = &ts
	r.mu.Unlock()
	return nil
}

func (r *Registry) missing(names []string) []string {
	var out []string
	s := r.snap.Load()
	for _, n := range names {
		if s.byName[n] == nil {
			out = append(out, n)
		}
	}
	return out
}

// Toolset returns a toolset by name.
func (r *Registry) Toolset(name string) (Toolset, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ts, ok := r.toolsets[name]
	if !ok {
		return Toolset{}, false
	}
	return Toolset{Name: ts.Name, Description: ts.Description, Tools: slices.Clone(ts.Tools)}, true
}

// Toolsets returns all toolsets, sorted by name.
func (r *Registry) Toolsets() []Toolset {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Toolset, 0, len(r.toolsets))
	for _, ts := range r.toolsets {
		out = append(out, Toolset{Name: ts.Name, Description: ts.Description, Tools: slices.Clone(ts.Tools)})
	}
	slices.SortFunc(out, func(a, b Toolset) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// toolsetsHolding names the toolsets that hold tool, sorted: what
// toolsetsOf finds in Toolsets, without a copy of every toolset (a policy
// request is made for every call).
func (r *Registry) toolsetsHolding(tool string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ts := range r.toolsets {
		if slices.Contains(ts.Tools, tool) {
			out = append(out, ts.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Toolkit is one agent's view of the registry (seed 000's AgentToolkit): only
// its tools are listed, and a call to any other answers
// "Tool 'x' not available in A's toolkit". Tools are resolved by name at call
// time, so an updated tool is seen at once.
type Toolkit struct {
	agent string
	reg   *Registry
	mu    sync.RWMutex
	names []string
	set   map[string]bool
}

// CreateToolkit makes (or replaces) the toolkit of an agent from tool names
// and the tools of toolsets, written "toolset:NAME". Every name must exist;
// the error lists those that do not, and no toolkit is made.
func (r *Registry) CreateToolkit(agent string, names ...string) (*Toolkit, error) {
	if agent == "" {
		return nil, errors.New("create toolkit: empty agent name")
	}
	k := &Toolkit{agent: agent, reg: r, set: map[string]bool{}}
	if err := k.Add(names...); err != nil {
		return nil, fmt.Errorf("create toolkit for %q: %w", agent, err)
	}
	r.mu.Lock()
	r.toolkits[agent] = k
	r.mu.Unlock()
	return k, nil
}

// NarrowToolkit returns a toolkit of the named tools that is not an agent's
// and is not registered: the tools one caller may reach (an API key's
// scope), carried by its calls so that calls made on their behalf (a
// program's inner calls) stay within it. Names of tools that do not exist
// are kept, so a tool imported later is reached once it is. Within, when
// not nil, narrows further: only its tools are kept.
func (r *Registry) NarrowToolkit(label string, names []string, within *Toolkit) *Toolkit {
	k := &Toolkit{agent: label, reg: r, set: make(map[string]bool, len(names))}
	for _, n := range names {
		if !k.set[n] && (within == nil || within.Has(n)) {
			k.set[n] = true
			k.names = append(k.names, n)
		}
	}
	return k
}

// Toolkit returns the toolkit of an agent.
func (r *Registry) Toolkit(agent string) (*Toolkit, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.toolkits[agent]
	return k, ok
}

// Agent returns the name of the toolkit's agent.
func (k *Toolkit) Agent() string { return k.agent }

// Add puts tools, or the tools of "toolset:NAME", into the toolkit. Nothing is
// added if any name is unknown.
func (k *Toolkit) Add(names ...string) error {
	var expanded, missing []string
	for _, n := range names {
		if set, ok := strings.CutPrefix(n, "toolset:"); ok {
			ts, ok := k.reg.Toolset(set)
			if !ok {
				missing = append(missing, n)
				continue
			}
			expanded = append(expanded, ts.Tools...)
			continue
		}
		expanded = append(expanded, n)
	}
	missing = append(missing, k.reg.missing(expanded)...)
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s", ErrNotFound, strings.Join(missing, ", "))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, n := range expanded {
		if !k.set[n] {
			k.set[n] = true
			k.names = append(k.names, n)
		}
	}
	return nil
}

// Has reports whether the toolkit includes the tool.
func (k *Toolkit) Has(name string) bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.set[name]
}

// Names returns the toolkit's tool names in the order they were added.
func (k *Toolkit) Names() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return slices.Clone(k.names)
}

// Tools returns the toolkit's tools that are currently registered and not
// held: an agent is given no definition that pinning has not accepted (see
// [Registry.List]).
func (k *Toolkit) Tools() []*Tool {
	var out []*Tool
	for _, n := range k.Names() {
		if t, ok := k.reg.Tool(n); ok && t.Status != StatusHeld {
			out = append(out, t)
		}
	}
	return out
}

// NotAvailable is the message for a call outside the toolkit, as seed 000 words it.
func (k *Toolkit) NotAvailable(tool string) string {
	return fmt.Sprintf("Tool '%s' not available in %s's toolkit", tool, k.agent)
}

// Bind returns an [Invoker] that runs calls through inv restricted to the
// toolkit.
func (k *Toolkit) Bind(inv Invoker) Invoker { return kitInvoker{k, inv} }

type kitInvoker struct {
	k   *Toolkit
	inv Invoker
}

func (ki kitInvoker) Call(ctx context.Context, c Call) (*Result, error) {
	c.Toolkit = ki.k
	return ki.inv.Call(ctx, c)
}
