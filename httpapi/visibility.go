package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/wieldhq/wield"
)

// What the policies hide from a request's caller stays hidden on the event
// stream and in the statistics too, decided as the lists decide
// ([wield.VisibleTools]: a call of the tool without arguments, by the
// request's key): an event naming a hidden tool is not sent, and a hidden
// tool's calls are not counted. Both treat the trace of a call for which no
// tool was found (tool_not_found, "Can not find tool named …") as the
// trace of a call of a tool that does not exist, whatever its name, as
// recordShown does records (see foundNoTool): a call of a hidden tool leaves that very
// trace, so that dropping it would tell the tool from an unknown one.

// generational is a [wield.Policy] that says when its decisions change
// (package policy's Set: see its Generation); the event stream caches the
// decisions of one that does, per tool, until the generation changes.
type generational interface{ Generation() uint64 }

// foundNoTool reports whether e is the failure of a call for which no tool
// was found, which tells nothing of the tool it names: a call of a tool
// that does not exist, and of one hidden from its caller ("Can not find
// tool named …", the engine's msgNotFound), or of a tool outside the
// caller's toolkit ([wield.Toolkit].NotAvailable, decided before the tool
// is looked for). Not one of a tool found disabled or held.
func foundNoTool(e *wield.Event) bool {
	if e.ErrorType != wield.ErrToolNotFound {
		return false
	}
	q := "'" + e.Tool + "'"
	return e.Error == "Can not find tool named "+q || strings.HasPrefix(e.Error, "Tool "+q+" not available in ")
}

// maxDecided bounds the decisions an event stream caches.
const maxDecided = 4096

// eventShown returns the filter of the events a request's caller may see,
// nil when it may see every one (there are no policies). It runs on the stream's
// goroutine, in [wield.Subscription.Next], never on the publisher's: its
// decisions cost that stream only. They are cached per tool (the tool as
// registered, its toolsets) for as long as the policies' generation stays,
// so a reload of the policies counts from the next event on; a policy that
// has no generation is asked for every event naming a tool.
//
// A tool no longer registered (the event of its removal, of a call that
// ended after it) is decided as it was last seen by this stream, or as
// registered when the stream opened, or as it was when it was removed
// ([wield.Registry.Removed]: a stream that asks for removals only, or
// resumes from before the tool was added, never saw it); one never
// registered is decided by its name alone.
func (s *Server) eventShown(r *http.Request) func(*wield.Event) bool {
	p := s.eng.Policy()
	if p == nil {
		return nil
	}
	g, _ := p.(generational)
	ctx := r.Context()
	seen := map[string]*wield.Tool{}
	for _, t := range s.reg.List(wield.Query{}) {
		seen[t.Name] = t
	}
	decided := map[string]decision{}
	return func(e *wield.Event) bool {
		if e.Tool == "" {
			return true
		}
		if foundNoTool(e) {
			return true
		}
		t, ok := s.reg.Tool(e.Tool)
		if ok {
			if seen[e.Tool] != t {
				if len(seen) >= maxDecided {
					clear(seen)
				}
				seen[e.Tool] = t
			}
		} else if t = seen[e.Tool]; t == nil {
			if t, ok = s.reg.Removed(e.Tool); !ok {
				t = &wield.Tool{Name: e.Tool}
			}
		}
		return visible(ctx, p, g, s.reg, t, decided)
	}
}

// decision is a cached answer of visible.
type decision struct {
	tool     *wield.Tool
	toolsets string
	gen      uint64
	visible  bool
}

// visible decides whether the policies let the caller of ctx see t, as
// [wield.VisibleTools] does, with decided as its cache when g is not nil.
func visible(ctx context.Context, p wield.Policy, g generational, reg *wield.Registry, t *wield.Tool, decided map[string]decision) bool {
	req := wield.NewPolicyRequest(ctx, reg, t, wield.Caller{}, nil)
	if g == nil {
		return p.Decide(ctx, req).Allow
	}
	sets := strings.Join(req.Toolsets, "\x00")
	gen := g.Generation() // before deciding: see Generation
	if d, ok := decided[t.Name]; ok && d.tool == t && d.toolsets == sets && d.gen == gen {
		return d.visible
	}
	v := p.Decide(ctx, req).Allow
	if len(decided) >= maxDecided {
		clear(decided)
	}
	decided[t.Name] = decision{t, sets, gen, v}
	return v
}

// knownTool returns the tool registered as name, or the one last removed
// under it ([wield.Registry.Removed]): the calls of a tool removed since
// are decided on as it was. A name never registered is no tool.
func (s *Server) knownTool(name string) (*wield.Tool, bool) {
	if t, ok := s.reg.Tool(name); ok {
		return t, true
	}
	return s.reg.Removed(name)
}

// toolHidden returns whether the policies hide the tool name, registered
// or removed, from the request's caller (a tool never registered is not
// hidden: it is one that does not exist), deciding each name once per
// request.
func (s *Server) toolHidden(r *http.Request, p wield.Policy) func(name string) bool {
	decided := map[string]bool{}
	return func(name string) bool {
		if h, ok := decided[name]; ok {
			return h
		}
		h := false
		if t, ok := s.knownTool(name); ok {
			h = len(wield.VisibleTools(r.Context(), p, s.reg, wield.Caller{}, []*wield.Tool{t})) == 0
		}
		decided[name] = h
		return h
	}
}

// maxFigureQueries bounds the queries of figures.
const maxFigureQueries = 4

// figures returns the statistics of q as the request's caller may see
// them: without the calls of the tools the policies hide from it
// (q.Hidden; see [wield.StatsQuery]). The tools are decided among those
// the figures name, so a query that names none hidden is the only one; a
// tool hidden is left out by a second one, which is checked in turn (a
// tool first called between the two).
func (s *Server) figures(r *http.Request, q wield.StatsQuery) (wield.Statistics, error) {
	st, err := s.store.Statistics(r.Context(), q)
	p := s.eng.Policy()
	if err != nil || p == nil {
		return st, err
	}
	hidden := s.toolHidden(r, p)
	left := map[string]bool{}
	for _, h := range q.Hidden {
		left[h] = true
	}
	for range maxFigureQueries {
		more := false
		for name := range st.Tools {
			if !left[name] && hidden(name) {
				left[name] = true
				q.Hidden = append(q.Hidden, name)
				more = true
			}
		}
		if !more {
			return st, nil
		}
		if st, err = s.store.Statistics(r.Context(), q); err != nil {
			return st, err
		}
	}
	// Names keep coming (tools made hidden as fast as they are asked):
	// the figures still name no hidden tool.
	for name := range st.Tools {
		if hidden(name) {
			delete(st.Tools, name)
		}
	}
	return st, nil
}

// summaryShown is the store's summary of a conversation's calls, or, when
// it names a tool the policies hide from the request's caller, the summary
// made from figures that leave that tool's calls out.
func (s *Server) summaryShown(r *http.Request, id string) (wield.Summary, error) {
	sum, err := s.store.Summary(r.Context(), id)
	p := s.eng.Policy()
	if err != nil || p == nil {
		return sum, err
	}
	hidden := s.toolHidden(r, p)
	for name := range sum.ToolUsage {
		if hidden(name) {
			st, err := s.figures(r, wield.StatsQuery{ConversationID: id})
			if err != nil {
				return wield.Summary{}, err
			}
			return summaryOf(id, st), nil
		}
	}
	return sum, nil
}
