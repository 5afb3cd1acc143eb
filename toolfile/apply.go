package toolfile

import (
	"errors"
	"fmt"
	"slices"

	"github.com/wieldhq/wield"
)

// applier puts loaded sets into a registry by one rule, at start
// ([Set.Apply]) and on every reload ([Watcher]), so that a reload never
// leaves the registry in a state that the next start would judge otherwise:
//
//   - of the set's tools, the first of each name in load order is
//     registered; later ones are recorded as shadowed
//     ([wield.Registry.Shadow]; [Loader.check] has warned at both places);
//   - a tool whose name the registry holds as a default (a built-in, see
//     [wield.Registry.RegisterDefaults]) replaces it, and removing the file
//     brings the default back;
//   - a tool whose name the program's own tool holds (registered in Go,
//     imported from an MCP server) is shadowed, with a warning;
//   - a tool of a file with problems keeps its last good version;
//   - when the set defines an agent, the loader's AgentTools
//     (call_subagent) are registered as defaults first, unless the
//     registry has their names, and stay.
type applier struct {
	reg   *wield.Registry
	tools map[string]owned // what it registered, by name
}

// applied is what one apply did.
type applied struct {
	added, updated, removed int
	// warnings are the tools left out because the program's own tool
	// holds their name, and updates the registry refused.
	warnings []Problem
	// undefined are the names of tools and toolsets that toolsets and
	// agents use and the registry does not hold; errs are the other
	// reasons one could not be defined.
	undefined Problems
	errs      []error
}

// refused records why a toolset or an agent could not be defined.
func (res *applied) refused(err error) {
	var u *UndefinedError
	switch {
	case err == nil:
	case errors.As(err, &u):
		res.undefined = append(res.undefined, u.Problems...)
	default:
		res.errs = append(res.errs, err)
	}
}

// err is what could not be defined as one error: an [*UndefinedError] when
// the names the registry does not hold are all of it.
func (res *applied) err() error {
	errs := res.errs
	if len(res.undefined) > 0 {
		u := &UndefinedError{Problems: slices.Clone(res.undefined)}
		sortProblems(u.Problems)
		if len(errs) == 0 {
			return u
		}
		errs = append([]error{u}, errs...)
	}
	return errors.Join(errs...)
}

// apply makes the registry hold the set's tools (see [applier]), defines its
// toolsets and, when first, makes its agents' toolkits. broken names the
// files with problems.
func (a *applier) apply(set *Set, broken map[string]bool, first bool) applied {
	var res applied
	// The tools that exist where agents do come first, as defaults: a
	// file's tool of the same name, registered below, replaces one.
	for _, t := range set.agentTools {
		if a.reg.Entry(t.Name) != nil {
			continue
		}
		if err := a.reg.RegisterDefaults(t); err != nil {
			res.errs = append(res.errs, fmt.Errorf("register %s: %w", t.Name, err))
		}
	}
	want := map[string]owned{}
	var order []string
	var losers []*wield.Tool
	for i, t := range set.Tools {
		if _, ok := want[t.Name]; ok {
			losers = append(losers, t)
			continue
		}
		want[t.Name] = owned{tool: t, def: set.Defs[i]}
		order = append(order, t.Name)
	}
	for name, o := range a.tools {
		if _, ok := want[name]; !ok && broken[o.def.File] {
			want[name] = o
		}
	}

	var toAdd []*wield.Tool
	var loaded []owned // added or updated: each announced as tool_loaded
	for _, name := range order {
		n := want[name]
		old, ok := a.tools[name]
		switch {
		case !ok:
			if e := a.reg.Entry(name); e != nil && !a.reg.IsDefault(name) {
				res.warnings = append(res.warnings, Problem{File: n.def.File, Line: n.def.Line, Col: n.def.Col, Warning: true,
					Message: fmt.Sprintf("tool %q is shadowed by the program's own tool of that name (from %s)", name, e.Tool.Source)})
				losers = append(losers, n.tool)
				delete(want, name)
				continue
			}
			toAdd = append(toAdd, n.tool)
		case old.def.File == n.def.File && broken[n.def.File]:
			// Part of a file with problems may still load, maybe without
			// its handler: keep what was known to work.
			want[name] = old
		case !same(old, n):
			if err := a.reg.Update(n.tool); err != nil {
				res.warnings = append(res.warnings, Problem{File: n.def.File, Line: n.def.Line, Col: n.def.Col, Warning: true,
					Message: fmt.Sprintf("tool %q keeps its previous version: %v", name, err)})
				want[name] = old
				continue
			}
			res.updated++
			loaded = append(loaded, n)
		}
	}
	if len(toAdd) > 0 {
		// Definitions were checked at load and names just now: an error
		// here is another writer's registration in between, and the check
		// below leaves out whatever did not land.
		_ = a.reg.Register(toAdd...)
		for _, t := range toAdd {
			if e := a.reg.Entry(t.Name); e != nil && e.Tool == t {
				res.added++
				loaded = append(loaded, want[t.Name])
			} else {
				delete(want, t.Name)
			}
		}
	}
	for name := range a.tools {
		if _, ok := want[name]; ok {
			continue
		}
		if a.reg.Remove(name) {
			res.removed++
		}
	}
	a.tools = want
	a.reg.Shadow(losers...)
	if bus := a.reg.Bus(); bus != nil {
		// The tool-file format's tool_loaded: one per tool that this load
		// brought in or changed, naming the file and line it came from.
		for _, o := range loaded {
			bus.Publish(wield.Event{Type: wield.EventToolLoaded, Tool: o.tool.Name, Source: o.def.File,
				Message: fmt.Sprintf("loaded from %s:%d", o.def.File, o.def.Line)})
		}
	}

	// Toolsets are redefined on every load; agents' toolkits are made once,
	// as the program may have changed them since.
	defined := map[string]bool{}
	for _, ts := range set.Toolsets {
		if defined[ts.Name] {
			continue
		}
		defined[ts.Name] = true
		res.refused(ts.Define(a.reg))
	}
	if first {
		for _, ag := range set.Agents {
			res.refused(ag.CreateToolkit(a.reg))
		}
	}
	return res
}

// Apply registers the set's tools, defines its toolsets and creates each
// agent's toolkit, in that order, by the rule a [Watcher] applies on every
// reload: the first tool of a name in load order wins and later ones are
// recorded as shadowed; a tool named like a default of the registry (a
// built-in registered with [wield.Registry.RegisterDefaults]) replaces it; a
// tool named like one of the program's own tools is shadowed by it. None of
// these is an error: the warnings Apply finds are added to
// [Set.Problems] (the duplicates and shadowed built-ins were put there at
// load). The returned error says which toolsets and agents could not be
// defined: an [*UndefinedError] (wrapping [wield.ErrNotFound]) located at
// each tool or toolset they name that the registry does not hold, joined
// with any other reason.
func (s *Set) Apply(reg *wield.Registry) error {
	a := &applier{reg: reg, tools: map[string]owned{}}
	res := a.apply(s, nil, true)
	if len(res.warnings) > 0 {
		s.Problems = append(s.Problems, res.warnings...)
		sortProblems(s.Problems)
	}
	return res.err()
}
