package wield

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wieldhq/wield/schema"
)

// Entry is a registered tool with what the engine needs beside it: the
// compiled input validator and the call counters. Entries are immutable but
// for the counters.
type Entry struct {
	Tool  *Tool
	Input *schema.Validator
	stats *toolStats
}

type toolStats struct {
	calls, failures, nanos atomic.Int64
}

// Observe counts one finished call of the tool, for [Registry.Stats].
func (e *Entry) Observe(ok bool, d time.Duration) {
	e.stats.calls.Add(1)
	if !ok {
		e.stats.failures.Add(1)
	}
	e.stats.nanos.Add(int64(d))
}

type snapshot struct {
	byName map[string]*Entry
	order  []*Entry
}

// Registry is the library of all tools, safe for concurrent use. Lookups are
// lock-free; registrations copy the index, so register many tools in one call
// to [Registry.Register] when loading a catalog.
type Registry struct {
	mu       sync.Mutex // serialises writers
	snap     atomic.Pointer[snapshot]
	shadowed map[string][]*Tool
	defaults map[string]*Tool // by name, the default registered first, in place or replaced
	toolsets map[string]*Toolset
	toolkits map[string]*Toolkit
	bus      *Bus
	log      *slog.Logger

	// removed are the tools last removed, by name, the oldest forgotten
	// past maxRemoved (see Removed); removedOrder is their order.
	removedMu    sync.Mutex
	removed      map[string]*Tool
	removedOrder []string
}

// maxRemoved is how many removed tools [Registry.Removed] remembers: more
// than the events a bus keeps by default ([DefaultBusSize]), so that every
// event a stream can still read of a removed tool finds it.
const maxRemoved = 4096

// RegistryOptions configure a [Registry]; nil means defaults.
type RegistryOptions struct {
	// Bus receives tool_added, tool_updated, tool_removed and tool_shadowed events.
	Bus *Bus
	// Logger receives the warnings (duplicates); nil means slog.Default().
	Logger *slog.Logger
}

// NewRegistry returns an empty registry.
func NewRegistry(opts *RegistryOptions) *Registry {
	r := &Registry{
		shadowed: map[string][]*Tool{},
		defaults: map[string]*Tool{},
		toolsets: map[string]*Toolset{},
		toolkits: map[string]*Toolkit{},
		log:      slog.Default(),
	}
	if opts != nil {
		r.bus = opts.Bus
		if opts.Logger != nil {
			r.log = opts.Logger
		}
	}
	r.snap.Store(&snapshot{byName: map[string]*Entry{}})
	return r
}

// Bus returns the registry's event bus (nil if none).
func (r *Registry) Bus() *Bus { return r.bus }

func newEntry(t *Tool, stats *toolStats) (*Entry, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	v, err := schema.Compile(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	for i, ex := range t.Examples {
		// An example teaches a model a call: one the tool refuses is a
		// mistake of the definition, found here rather than by the model.
		if _, errs := v.NormalizeStrict(ex); len(errs) > 0 {
			return nil, fmt.Errorf("tool %q: examples[%d] does not match the input schema: %s", t.Name, i, errs[0])
		}
	}
	if stats == nil {
		stats = &toolStats{}
	}
	return &Entry{Tool: t, Input: v, stats: stats}, nil
}

// Register adds tools to the library, in order. A tool whose definition is
// invalid is not added. A tool whose name is taken by a default (see
// [Registry.RegisterDefaults]) takes the default's place. A tool whose name
// is taken otherwise is kept as shadowed: the first registration wins, a
// warning is logged and a tool_shadowed event is published, and the returned
// error wraps [ErrDuplicate]. Every other tool is added even when some fail;
// the error joins all the problems.
func (r *Registry) Register(tools ...*Tool) error { return r.register(tools, false) }

// RegisterDefaults is [Registry.Register] for the tools a program offers
// until its user configures otherwise (wield's built-in tools): a later
// Register of the same name replaces a default instead of being shadowed by
// it, and removing that tool brings the default back. Replacing a default
// is the caller's decision to report (the tool-file loader says which file
// replaced which built-in); the registry publishes tool_shadowed for the
// default and tool_updated for the name, and logs only at debug level.
func (r *Registry) RegisterDefaults(tools ...*Tool) error { return r.register(tools, true) }

func (r *Registry) register(tools []*Tool, asDefault bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	next := &snapshot{byName: make(map[string]*Entry, len(old.byName)+len(tools)), order: slices.Clip(old.order)}
	for k, v := range old.byName {
		next.byName[k] = v
	}
	var errs []error
	var events []Event
	cloned := false // next.order is old.order's array until a tool replaces one in place
	for _, t := range tools {
		if t == nil {
			errs = append(errs, errors.New("register: nil tool"))
			continue
		}
		if first, ok := next.byName[t.Name]; ok {
			if d := r.defaults[t.Name]; !asDefault && d != nil && first.Tool == d {
				e, err := newEntry(t, first.stats)
				if err != nil {
					errs = append(errs, fmt.Errorf("register: %w", err))
					continue
				}
				if !cloned {
					next.order, cloned = slices.Clone(next.order), true
				}
				next.order[slices.Index(next.order, first)] = e
				next.byName[t.Name] = e
				msg := fmt.Sprintf("default tool %q from %s replaced by the one from %s", t.Name, sourceOf(d), sourceOf(t))
				r.log.Debug(msg, "tool", t.Name)
				events = append(events,
					Event{Type: EventToolShadowed, Tool: t.Name, Message: msg, Source: d.Source},
					Event{Type: EventToolUpdated, Tool: t.Name, Message: msg, Source: t.Source})
				continue
			}
			r.shadowed[t.Name] = append(r.shadowed[t.Name], t)
			msg := fmt.Sprintf("duplicate tool %q from %s shadowed by the one from %s", t.Name, sourceOf(t), sourceOf(first.Tool))
			r.log.Warn(msg, "tool", t.Name)
			r.publish(Event{Type: EventToolShadowed, Tool: t.Name, Message: msg, Source: t.Source})
			errs = append(errs, fmt.Errorf("register %q: %w (%s)", t.Name, ErrDuplicate, msg))
			continue
		}
		e, err := newEntry(t, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("register: %w", err))
			continue
		}
		next.byName[t.Name] = e
		next.order = append(next.order, e)
		if asDefault {
			r.defaults[t.Name] = t
		}
		events = append(events, Event{Type: EventToolAdded, Tool: t.Name, Source: t.Source})
	}
	r.snap.Store(next)
	for _, e := range events {
		r.publish(e)
	}
	return errors.Join(errs...)
}

// IsDefault reports whether the tool registered under name is a default
// (see [Registry.RegisterDefaults]), which a Register of that name replaces.
func (r *Registry) IsDefault(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.snap.Load().byName[name]
	return e != nil && r.defaults[name] == e.Tool
}

// Shadow records tools as shadowed by the registered tools of their names,
// as Register does for a duplicate, for a caller that found the duplicates
// and reported them itself (the tool-file loader names both files): no
// warning is logged, a tool_shadowed event is published. A tool of the same
// name and source as one already recorded takes its place, so a file loaded
// again is recorded once.
func (r *Registry) Shadow(tools ...*Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range tools {
		if t == nil {
			continue
		}
		list := r.shadowed[t.Name]
		if i := slices.IndexFunc(list, func(x *Tool) bool { return x == t || x.Source == t.Source }); i >= 0 {
			if list[i] == t {
				continue
			}
			list[i] = t
		} else {
			r.shadowed[t.Name] = append(list, t)
		}
		winner := "(none)"
		if e := r.snap.Load().byName[t.Name]; e != nil {
			winner = sourceOf(e.Tool)
		}
		r.publish(Event{Type: EventToolShadowed, Tool: t.Name, Source: t.Source,
			Message: fmt.Sprintf("duplicate tool %q from %s shadowed by the one from %s", t.Name, sourceOf(t), winner)})
	}
}

// MustRegister is Register for start-up code: it panics on any error.
func (r *Registry) MustRegister(tools ...*Tool) {
	if err := r.Register(tools...); err != nil {
		panic(err)
	}
}

func sourceOf(t *Tool) string {
	if t.Source == "" {
		return "(unknown source)"
	}
	return t.Source
}

func (r *Registry) publish(e Event) {
	if r.bus != nil {
		r.bus.Publish(e)
	}
}

// Update replaces a registered tool of the same name, keeping its counters.
// Calls already running finish with the version they started with. It returns
// an error wrapping [ErrNotFound] for an unknown name.
func (r *Registry) Update(t *Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	prev, ok := old.byName[t.Name]
	if !ok {
		return fmt.Errorf("update %q: %w", t.Name, ErrNotFound)
	}
	e, err := newEntry(t, prev.stats)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	next := &snapshot{byName: make(map[string]*Entry, len(old.byName)), order: make([]*Entry, len(old.order))}
	for k, v := range old.byName {
		next.byName[k] = v
	}
	next.byName[t.Name] = e
	for i, x := range old.order {
		if x == prev {
			x = e
		}
		next.order[i] = x
	}
	r.snap.Store(next)
	r.publish(Event{Type: EventToolUpdated, Tool: t.Name, Source: t.Source})
	return nil
}

// UpdateTools is [Registry.Update] for many tools at once: the index is
// copied once, not once per tool, so an importer that refreshes a catalog
// of N tools does O(N) work. Every tool that can be updated is; the error
// joins the problems of the others (each wrapping [ErrNotFound] or naming
// what is wrong with the definition).
func (r *Registry) UpdateTools(tools ...*Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	var errs []error
	repl := make(map[*Entry]*Entry, len(tools))
	byName := make(map[string]*Entry, len(tools))
	for _, t := range tools {
		if t == nil {
			errs = append(errs, errors.New("update: nil tool"))
			continue
		}
		prev, ok := old.byName[t.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("update %q: %w", t.Name, ErrNotFound))
			continue
		}
		if p := byName[t.Name]; p != nil {
			prev = p // the same name twice: the last one wins
		}
		e, err := newEntry(t, prev.stats)
		if err != nil {
			errs = append(errs, fmt.Errorf("update: %w", err))
			continue
		}
		orig := old.byName[t.Name]
		repl[orig], byName[t.Name] = e, e
	}
	if len(byName) == 0 {
		return errors.Join(errs...)
	}
	next := &snapshot{byName: make(map[string]*Entry, len(old.byName)), order: make([]*Entry, len(old.order))}
	for k, v := range old.byName {
		next.byName[k] = v
	}
	for k, v := range byName {
		next.byName[k] = v
	}
	for i, x := range old.order {
		if e := repl[x]; e != nil {
			x = e
		}
		next.order[i] = x
	}
	r.snap.Store(next)
	for _, t := range tools {
		if t != nil && byName[t.Name] != nil && byName[t.Name].Tool == t {
			r.publish(Event{Type: EventToolUpdated, Tool: t.Name, Source: t.Source})
		}
	}
	return errors.Join(errs...)
}

// RemoveTools is [Registry.Remove] for many names at once, copying the index
// once; it returns how many of the names were there.
func (r *Registry) RemoveTools(names ...string) int {
	r.mu.Lock()
	old := r.snap.Load()
	var defaulted []string // names a default takes back: Remove's own path
	gone := make(map[*Entry]bool, len(names))
	for _, name := range names {
		prev, ok := old.byName[name]
		switch {
		case !ok || gone[prev]:
		case r.defaults[name] != nil && prev.Tool != r.defaults[name]:
			defaulted = append(defaulted, name)
		default:
			gone[prev] = true
		}
	}
	if len(gone) > 0 {
		next := &snapshot{byName: make(map[string]*Entry, len(old.byName)), order: make([]*Entry, 0, len(old.order))}
		for k, v := range old.byName {
			if !gone[v] {
				next.byName[k] = v
			}
		}
		for _, x := range old.order {
			if !gone[x] {
				next.order = append(next.order, x)
			}
		}
		for _, x := range old.order {
			if gone[x] {
				r.remember(x.Tool)
			}
		}
		r.snap.Store(next)
		for _, x := range old.order {
			if gone[x] {
				delete(r.shadowed, x.Tool.Name)
				delete(r.defaults, x.Tool.Name)
				r.publish(Event{Type: EventToolRemoved, Tool: x.Tool.Name, Source: x.Tool.Source})
			}
		}
	}
	r.mu.Unlock()
	n := len(gone)
	for _, name := range defaulted {
		if r.Remove(name) {
			n++
		}
	}
	return n
}

// Remove deletes a tool and reports whether it was there. A tool that
// replaced a default gives the name back to the default (a tool_updated
// event); otherwise the name is gone (tool_removed), and a shadowed tool of
// the same name does not take its place: register it again for that.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	prev, ok := old.byName[name]
	if !ok {
		return false
	}
	if d := r.defaults[name]; d != nil && prev.Tool != d {
		if e, err := newEntry(d, prev.stats); err == nil {
			next := &snapshot{byName: make(map[string]*Entry, len(old.byName)), order: slices.Clone(old.order)}
			for k, v := range old.byName {
				next.byName[k] = v
			}
			next.byName[name] = e
			next.order[slices.Index(next.order, prev)] = e
			r.snap.Store(next)
			r.publish(Event{Type: EventToolUpdated, Tool: name, Source: d.Source,
				Message: fmt.Sprintf("default tool %q from %s restored", name, sourceOf(d))})
			return true
		}
	}
	next := &snapshot{byName: make(map[string]*Entry, len(old.byName)), order: make([]*Entry, 0, len(old.order))}
	for k, v := range old.byName {
		if k != name {
			next.byName[k] = v
		}
	}
	for _, x := range old.order {
		if x != prev {
			next.order = append(next.order, x)
		}
	}
	r.remember(prev.Tool)
	r.snap.Store(next)
	delete(r.shadowed, name)
	delete(r.defaults, name)
	r.publish(Event{Type: EventToolRemoved, Tool: name, Source: prev.Tool.Source})
	return true
}

// remember keeps t as the tool last removed under its name, before it
// leaves the index, so that no reader finds it in neither.
func (r *Registry) remember(t *Tool) {
	r.removedMu.Lock()
	defer r.removedMu.Unlock()
	if r.removed == nil {
		r.removed = map[string]*Tool{}
	}
	if _, ok := r.removed[t.Name]; !ok {
		if len(r.removedOrder) >= maxRemoved {
			delete(r.removed, r.removedOrder[0])
			r.removedOrder = slices.Delete(r.removedOrder, 0, 1)
		}
		r.removedOrder = append(r.removedOrder, t.Name)
	}
	r.removed[t.Name] = t
}

// Removed returns the tool last removed under name, among the last 4096
// names removed, whether or not a tool of that name is registered again.
// Who decides on the events and the records of a tool that is no longer
// registered (what a caller's policies let it see of it) decides on it as
// it was, not by its name alone.
func (r *Registry) Removed(name string) (*Tool, bool) {
	r.removedMu.Lock()
	defer r.removedMu.Unlock()
	t, ok := r.removed[name]
	return t, ok
}

// Entry returns the registered entry of a tool, or nil.
func (r *Registry) Entry(name string) *Entry { return r.snap.Load().byName[name] }

// Tool returns a registered tool by name.
func (r *Registry) Tool(name string) (*Tool, bool) {
	e := r.Entry(name)
	if e == nil {
		return nil, false
	}
	return e.Tool, true
}

// Len returns the number of registered tools.
func (r *Registry) Len() int { return len(r.snap.Load().order) }

// Shadowed returns the tools that lost to an earlier one of the same name,
// and the defaults that a later registration replaced.
func (r *Registry) Shadowed() map[string][]*Tool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]*Tool, len(r.shadowed))
	for k, v := range r.shadowed {
		out[k] = slices.Clone(v)
	}
	s := r.snap.Load()
	for name, d := range r.defaults {
		if e := s.byName[name]; e != nil && e.Tool != d {
			out[name] = append(out[name], d)
		}
	}
	return out
}

// Query selects tools. Empty fields do not filter; Tags match any of the tags
// (their union, as in seed 001); all set fields must match.
type Query struct {
	Category Category
	Tags     []string
	Toolset  string
}

// List returns the tools matching q, in registration order. An unknown toolset
// matches nothing. A held tool (StatusHeld: its definition changed upstream
// and was not accepted) is never listed: what it says of itself now is
// exactly what pinning keeps from models, and a list is what exports,
// tool searches, MCP listings and agents read. Its name still resolves with
// [Registry.Tool] and [Registry.Entry], so a call of it is told it is held.
func (r *Registry) List(q Query) []*Tool {
	var set map[string]bool
	if q.Toolset != "" {
		r.mu.Lock()
		ts := r.toolsets[q.Toolset]
		r.mu.Unlock()
		if ts == nil {
			return nil
		}
		set = make(map[string]bool, len(ts.Tools))
		for _, n := range ts.Tools {
			set[n] = true
		}
	}
	var out []*Tool
	for _, e := range r.snap.Load().order {
		t := e.Tool
		if t.Status == StatusHeld {
			continue
		}
		if q.Category != "" && t.Category != q.Category {
			continue
		}
		if set != nil && !set[t.Name] {
			continue
		}
		if len(q.Tags) > 0 && !slices.ContainsFunc(q.Tags, t.HasTag) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// ToolStats are one tool's call counters (seed 003's callStats).
type ToolStats struct {
	Count       int64         `json:"count"`
	Failures    int64         `json:"failures"`
	AvgDuration time.Duration `json:"avg_duration_ns"`
}

// Stats describe the registry (seed 003's ToolStats).
type Stats struct {
	Total      int                  `json:"total"`
	ByCategory map[Category]int     `json:"by_category"`
	Calls      map[string]ToolStats `json:"call_stats"`
}

// Stats counts the tools by category and reports each tool's calls since it
// was registered.
func (r *Registry) Stats() Stats {
	s := r.snap.Load()
	st := Stats{Total: len(s.order), ByCategory: map[Category]int{}, Calls: map[string]ToolStats{}}
	for _, e := range s.order {
		st.ByCategory[e.Tool.Category]++
		n := e.stats.calls.Load()
		ts := ToolStats{Count: n, Failures: e.stats.failures.Load()}
		if n > 0 {
			ts.AvgDuration = time.Duration(e.stats.nanos.Load() / n)
		}
		st.Calls[e.Tool.Name] = ts
	}
	return st
}
