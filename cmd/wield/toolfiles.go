package main

import (
	"context"
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
// it logs the problems instead of failing on them, as a reload does. It
// returns the agents the files define.
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
		return nil, fmt.Errorf("load tool files:\n%w", err)
	}
	err = set.Apply(reg)
	for _, p := range set.Problems {
		fmt.Fprintln(a.stderr, "warning:", p)
	}
	if err != nil {
		return nil, fmt.Errorf("load tool files: %w", err)
	}
	var agents []string
	for _, ag := range set.Agents {
		agents = append(agents, ag.Name)
	}
	return agents, nil
}
