package toolfile_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/toolfile"
)

// route is a stand-in for call_subagent: a tool that exists where agents
// do (Loader.AgentTools).
func route() *wield.Tool {
	return wield.Func("route", "Hand a task to another agent", func(context.Context, struct{}) (string, error) { return "routed", nil })
}

// helloRegistry is a registry with the built-in hello, as a default.
func helloRegistry(t *testing.T) *wield.Registry {
	t.Helper()
	reg := wield.NewRegistry(nil)
	if err := reg.RegisterDefaults(wield.Func("hello", "built-in", func(context.Context, struct{}) (string, error) { return "hi", nil })); err != nil {
		t.Fatal(err)
	}
	return reg
}

// seed000 are seed 000's agents as agent documents: the lead names the
// routing tool among its tools, as the seed's lead names call_subagent.
const seed000 = `kind: agent
name: lead
tools: [route, hello]
---
kind: agent
name: search
tools: [hello]
`

// TestAgentToolsWithAgents: an agent that names an agent tool loads
// without a warning and its toolkit has it, by Apply as by a Watcher's
// first load; a reload keeps it.
func TestAgentToolsWithAgents(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "agents.yaml"), seed000+"---\n"+greet("Say hello"))
	l := &toolfile.Loader{Builtins: hello(), AgentTools: []*wield.Tool{route()}}
	set, err := l.LoadDirs(t.Context(), dir)
	if err != nil || len(set.Problems) > 0 {
		t.Fatalf("load: %v %v", err, set.Problems)
	}
	reg := helloRegistry(t)
	if err := set.Apply(reg); err != nil {
		t.Fatalf("apply: %v", err)
	}
	kit, ok := reg.Toolkit("lead")
	if !ok || !kit.Has("route") || !kit.Has("hello") {
		t.Fatalf("lead's toolkit: %v %v", ok, kit)
	}
	if !reg.IsDefault("route") {
		t.Errorf("route is not registered as a default")
	}

	reg = helloRegistry(t)
	w, err := l.Watch(t.Context(), reg, []string{dir}, &toolfile.WatchOptions{Debounce: time.Hour, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if kit, ok := reg.Toolkit("lead"); !ok || !kit.Has("route") {
		t.Fatalf("watched: lead's toolkit %v %v", ok, kit)
	}
	// A reload that adds a toolset naming it defines the toolset.
	write(t, filepath.Join(dir, "set.yaml"), "kind: toolset\nname: routing\ntools: [route]\n")
	if err := w.Reload(t.Context()); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if _, ok := reg.Tool("route"); !ok {
		t.Errorf("a reload removed route")
	}
	if ts, ok := reg.Toolset("routing"); !ok || len(ts.Tools) != 1 {
		t.Errorf("toolset routing after the reload: %v %v", ok, ts)
	}
}

// TestAgentToolsFileReplaces: a file's tool of an agent tool's name
// replaces it, as it replaces a built-in.
func TestAgentToolsFileReplaces(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), seed000+"---\nname: route\ndescription: Mine\nentry: {type: builtin, handler: hello}\n")
	l := &toolfile.Loader{Builtins: hello(), AgentTools: []*wield.Tool{route()}}
	set, err := l.LoadDirs(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := helloRegistry(t)
	if err := set.Apply(reg); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if tl, ok := reg.Tool("route"); !ok || tl.Description != "Mine" {
		t.Errorf("route: %v %+v", ok, tl)
	}
}

// TestAgentToolsWithoutAgents: without an agent, the agent tools do not
// exist: a toolset naming one is warned about (an error with Importable,
// as validate has it), and Apply registers nothing.
func TestAgentToolsWithoutAgents(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "set.yaml"), "kind: toolset\nname: routing\ntools: [route]\n")
	l := &toolfile.Loader{Builtins: hello(), AgentTools: []*wield.Tool{route()}}
	set, _ := l.LoadDirs(t.Context(), dir)
	if len(set.Problems) != 1 || !strings.Contains(set.Problems[0].Message, `tool "route" is not defined`) {
		t.Fatalf("problems: %v", set.Problems)
	}
	reg := wield.NewRegistry(nil)
	_ = set.Apply(reg)
	if _, ok := reg.Tool("route"); ok {
		t.Errorf("route registered without agents")
	}
	l.Importable = func(string, bool) bool { return false }
	if _, err := l.LoadDirs(t.Context(), dir); err == nil {
		t.Errorf("with Importable, want an error")
	}
}
