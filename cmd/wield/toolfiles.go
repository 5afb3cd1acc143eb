package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/toolfile"
)

// loadToolFiles loads the tool folders into reg, where the built-ins are
// registered as defaults: a file's tool of a built-in's name replaces it,
// the first of a name in load order wins, and neither is an error (the
// warnings go to stderr). serve with reload configured (reload.watch or an
// interval) watches the folders and applies every change by the same rule;
// it logs the problems instead of failing on them, as a reload does. A
// command that waited for the MCP servers' imports, one of which did not
// answer, leaves out the toolsets and agents naming a tool not found, with
// a warning, instead of failing. It returns the agents the files define.
func (a *app) loadToolFiles(reg *wield.Registry, l *toolfile.Loader) ([]string, error) {
	// The configuration in use may be in a tool folder (tool_dirs: [.]):
	// it is no tool file. A folder it names that is missing is told at
	// its entry.
	l.ConfigFile, l.DirAt = a.config, a.toolDirAt()
	if l.KnownToolset == nil {
		// The toolsets reg has before the files load (programs, with
		// --programs) are there for agents to name.
		l.KnownToolset = func(name string) bool { _, ok := reg.Toolset(name); return ok }
	}
	if c := a.cfg; a.serving && c != nil && (c.Reload.Watch || c.Reload.Interval > 0) {
		w, err := l.Watch(context.Background(), reg, a.tools, &toolfile.WatchOptions{
			Interval: c.Reload.Interval, Logger: slog.New(slog.NewTextHandler(a.stderr, nil))})
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, w.Close)
		return w.Agents(), nil
	}
	set, err := l.LoadDirs(context.Background(), a.tools...)
	if err != nil {
		return nil, loadError{"load tool files", err}
	}
	err = set.Apply(reg)
	if err != nil && a.serving && a.importer != nil && errors.Is(err, wield.ErrNotFound) {
		// serve and mcp import MCP servers in the background: a toolset or
		// an agent that names a tool of one not imported yet is defined
		// once the imports end, and said so now.
		a.warnUndefined(set.Problems, err)
		a.warnf("(defined once the MCP servers have listed their tools, if they have them)")
		a.whenImported(func() { a.defineLate(reg, set) })
		return a.agentsOf(reg, set), nil
	}
	if err != nil && !a.serving && a.importer != nil && allNotFound(err) && a.importedPartly() {
		// A configured MCP server did not answer (a warning, as on a
		// first run): the toolsets and agents that name its tools are left
		// out of this command rather than stopping it; the others are
		// defined.
		a.warnUndefined(set.Problems, err)
		a.warnf("(left out: a configured MCP server does not answer now, and it may have the tool)")
		return a.agentsOf(reg, set), nil
	}
	if undef, ok := err.(*toolfile.UndefinedError); ok {
		// The load warned at the names that now stop the command: each is
		// told once, as the error.
		writeProblems(a.stderr, without(set.Problems, undef.Problems), nil)
		return nil, loadError{"load tool files", undef.Problems}
	}
	writeProblems(a.stderr, set.Problems, nil) // warnings: LoadDirs returned no error
	if err != nil {
		return nil, fmt.Errorf("load tool files: %w", err)
	}
	return a.agentsOf(reg, set), nil
}

// agentsOf names the set's agents that have a toolkit in reg (serve names
// them all: the late ones are defined once the imports end).
func (a *app) agentsOf(reg *wield.Registry, set *toolfile.Set) []string {
	var agents []string
	for _, ag := range set.Agents {
		if _, ok := reg.Toolkit(ag.Name); !ok && !a.serving {
			continue // left out above: not one to offer
		}
		agents = append(agents, ag.Name)
		a.agentDocs = append(a.agentDocs, ag)
	}
	return agents
}

// warnUndefined writes the load's problems with the names err could not
// define told as warnings in their place (the command goes on without
// them), then any other reason in err.
func (a *app) warnUndefined(ps []toolfile.Problem, err error) {
	var undef *toolfile.UndefinedError
	if !errors.As(err, &undef) {
		writeProblems(a.stderr, ps, nil)
		a.warnf("warning: %v", err)
		return
	}
	out := without(ps, undef.Problems)
	for _, p := range undef.Problems {
		p.Warning = true
		out = append(out, p)
	}
	writeProblems(a.stderr, out, nil)
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if e != error(undef) {
				a.warnf("warning: %v", e)
			}
		}
	}
}

// without is ps less the warnings at the place of one of these.
func without(ps, these []toolfile.Problem) []toolfile.Problem {
	type place struct {
		file      string
		line, col int
	}
	at := map[place]bool{}
	for _, p := range these {
		at[place{p.File, p.Line, p.Col}] = true
	}
	var out []toolfile.Problem
	for _, p := range ps {
		if !p.Warning || !at[place{p.File, p.Line, p.Col}] {
			out = append(out, p)
		}
	}
	return out
}

// allNotFound reports whether err, or every error joined in it, is a
// tool not found: other mistakes still stop the command.
func allNotFound(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !allNotFound(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, wield.ErrNotFound)
}

// importedPartly reports whether a configured MCP server did not answer
// the imports a command waited for.
func (a *app) importedPartly() bool {
	a.importsMu.Lock()
	defer a.importsMu.Unlock()
	return a.mcpDown
}

// defineLate defines the set's toolsets and agents that are not defined yet
// (their tools had not all been imported), warning of those that still
// cannot be.
func (a *app) defineLate(reg *wield.Registry, set *toolfile.Set) {
	for _, ts := range set.Toolsets {
		if _, ok := reg.Toolset(ts.Name); ok {
			continue
		}
		a.warnLate(ts.Define(reg))
	}
	for _, ag := range set.Agents {
		if _, ok := reg.Toolkit(ag.Name); ok {
			continue
		}
		a.warnLate(ag.CreateToolkit(reg))
	}
}

// warnLate tells why a toolset or an agent could not be defined once the
// imports ended, as warnings at the names missing.
func (a *app) warnLate(err error) {
	if err != nil {
		a.warnUndefined(nil, err)
	}
}

// toolDirAt says where the configuration names each of its tool folders
// (see toolfile.Loader.DirAt); nil without a configuration.
func (a *app) toolDirAt() map[string]toolfile.Position {
	if a.cfg == nil {
		return nil
	}
	return a.cfg.ToolDirAt
}
