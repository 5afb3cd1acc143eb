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
	writeProblems(a.stderr, set.Problems, nil) // warnings: LoadDirs returned no error
	if err != nil && a.serving && a.importer != nil && errors.Is(err, wield.ErrNotFound) {
		// serve and mcp import MCP servers in the background: a toolset or
		// an agent that names a tool of one not imported yet is defined
		// once the imports end, and said so now.
		a.warnf("warning: %v\n(defined once the MCP servers have listed their tools, if they have them)", err)
		a.whenImported(func() { a.defineLate(reg, set) })
		err = nil
	}
	if err != nil && !a.serving && a.importer != nil && allNotFound(err) && a.importedPartly() {
		// A configured MCP server did not answer (a warning, as on a
		// first run): the toolsets and agents that name its tools are left
		// out of this command rather than stopping it; the others are
		// defined.
		a.warnf("warning: %v\n(left out: a configured MCP server does not answer now, and it may have the tool)", err)
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("load tool files: %w", err)
	}
	var agents []string
	for _, ag := range set.Agents {
		if _, ok := reg.Toolkit(ag.Name); !ok && !a.serving {
			continue // left out above: not one to offer
		}
		agents = append(agents, ag.Name)
		a.agentDocs = append(a.agentDocs, ag)
	}
	return agents, nil
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
		if err := reg.DefineToolset(ts.Toolset); err != nil {
			a.warnf("%s:%d: warning: %v", ts.File, ts.Line, err)
		}
	}
	for _, ag := range set.Agents {
		if _, ok := reg.Toolkit(ag.Name); ok {
			continue
		}
		if _, err := reg.CreateToolkit(ag.Name, ag.Toolkit()...); err != nil {
			a.warnf("%s:%d: warning: %v", ag.File, ag.Line, err)
		}
	}
}
