package toolfile

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/walkroot"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/schema"
	"go.yaml.in/yaml/v3"
)

// Toolset is a toolset file (seed 002 configs/tool_sets/*.yaml) with where
// it was defined.
type Toolset struct {
	wield.Toolset
	File      string
	Line, Col int
	refs      []ref
}

// OutputStrategy is an agent's choice between native function calling and
// structured output (the agent file's output_strategy). A key the file
// leaves out takes the defaults ([llm.OutputStrategy.OrDefault]):
// function_calling and fallback_to_structured_output true, prompt_format
// "xml"; an agent file without output_strategy has the zero value, which
// the agent loop reads as those same defaults.
type OutputStrategy struct {
	FunctionCalling            bool `json:"function_calling"`
	FallbackToStructuredOutput bool `json:"fallback_to_structured_output"`
	// PromptFormat is how the structured output describes the tools and
	// reads the calls: "xml" (the XML call format) or "json" (JSON
	// objects).
	PromptFormat string `json:"prompt_format"`
}

// Agent is an agent file: the tools and toolsets merged into its toolkit.
type Agent struct {
	Name           string
	Description    string
	Tools          []string
	ToolSets       []string
	OutputStrategy OutputStrategy
	File           string
	Line, Col      int
	refs           []ref
}

// Toolkit is what the agent's toolkit is made of, as
// [wield.Registry.CreateToolkit] takes it: its tools, then each of its
// toolsets as "toolset:NAME".
func (a *Agent) Toolkit() []string {
	names := append([]string(nil), a.Tools...)
	for _, ts := range a.ToolSets {
		names = append(names, "toolset:"+ts)
	}
	return names
}

// ref is a name used somewhere, to report it where it is written.
type ref struct {
	name      string
	toolset   bool
	line, col int
}

// Set is what a load found: definitions in load order (the first of a name
// wins when applied), toolsets, agents, every problem met, warnings
// included, and the notes that are no mistake (a file re-declaring a
// built-in tool), located like problems.
type Set struct {
	Tools    []*wield.Tool
	Defs     []*Def
	Toolsets []*Toolset
	Agents   []*Agent
	Problems []Problem
	Notes    []Problem

	// agentTools are the loader's AgentTools when the set defines an
	// agent: applying the set registers them.
	agentTools []*wield.Tool
}

// LoadDirs loads the tool files under dirs with a zero [Loader].
func LoadDirs(dirs ...string) (*Set, error) {
	var l Loader
	return l.LoadDirs(context.Background(), dirs...)
}

// LoadDirs scans dirs (or files) recursively for *.yaml, *.yml and *.json,
// in the order given and in sorted order within each, and loads them all.
// Hidden files and folders are skipped. The set is returned even with an
// error; the error is [Problems], the mistakes that left documents out.
// Warnings are only in [Set.Problems].
func (l *Loader) LoadDirs(ctx context.Context, dirs ...string) (*Set, error) {
	return l.loadDirs(ctx, dirs, nil)
}

// fileCache remembers what each file loaded as, by path, with the size and
// modification time it had: a [Watcher] parses again only the files that
// changed. Parts in the cache are never modified.
type fileCache map[string]cachedFile

type cachedFile struct {
	size int64
	mod  time.Time
	part *Set
}

// loadDirs is LoadDirs with a cache of unchanged files (nil for none); it
// leaves in cache exactly the files it found.
func (l *Loader) loadDirs(ctx context.Context, dirs []string, cache fileCache) (*Set, error) {
	set := &Set{}
	var paths []string
	var named []bool // paths[i] was given, not found in a folder
	for _, dir := range dirs {
		root := walkroot.Of(dir)
		err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				if path == root {
					set.Problems = append(set.Problems, l.folderProblem(dir, err))
				} else {
					set.Problems = append(set.Problems, Problem{File: path, Line: 1, Col: 1, Message: err.Error()})
				}
				return nil
			}
			if path != root && strings.HasPrefix(e.Name(), ".") {
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if e.IsDir() || !isToolFile(path) && path != root {
				return nil
			}
			if t := e.Type(); path != root && !t.IsRegular() && t&fs.ModeSymlink == 0 {
				// A named pipe would hold the load until a writer came.
				set.Problems = append(set.Problems, unreadableFile(path, false, &notRegularError{path: path, mode: t}))
				return nil
			}
			paths, named = append(paths, path), append(named, path == root)
			return nil
		})
		if err != nil {
			return set, fmt.Errorf("load tool files: %w", err)
		}
	}
	// Files are parsed in parallel (the YAML parser is most of the time)
	// and merged in order, so the first of a name still wins.
	parts := make([]*Set, len(paths))
	stamps := make([]cachedFile, len(paths)) // of files parsed now, for the cache
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Go(func() {
			for i := range next {
				var info fs.FileInfo
				if cache != nil {
					var err error
					if info, err = os.Stat(paths[i]); err == nil {
						if c, ok := cache[paths[i]]; ok && c.size == info.Size() && c.mod.Equal(info.ModTime()) {
							parts[i] = c.part
							continue
						}
					}
				}
				part := &Set{}
				src, err := readRegular(paths[i])
				switch {
				case err != nil:
					part.Problems = append(part.Problems, unreadableFile(paths[i], named[i], err))
				case IsConfig(paths[i], src):
					l.config(part, paths[i], src)
				default:
					l.load(ctx, part, paths[i], src)
				}
				parts[i] = part
				if info != nil {
					stamps[i] = cachedFile{size: info.Size(), mod: info.ModTime(), part: part}
				}
			}
		})
	}
	for i := range paths {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return set, fmt.Errorf("load tool files: %w", err)
	}
	if cache != nil {
		// A file whose modification time is this very moment may be
		// written again within the clock's granularity: cache it only
		// once it is older than that.
		recent := time.Now().Add(-2 * time.Second)
		found := make(map[string]bool, len(paths))
		for i, p := range paths {
			found[p] = true
			if st := stamps[i]; st.part != nil {
				if st.mod.Before(recent) {
					cache[p] = st
				} else {
					delete(cache, p)
				}
			}
		}
		for p := range cache {
			if !found[p] {
				delete(cache, p)
			}
		}
	}
	for _, part := range parts {
		set.Tools = append(set.Tools, part.Tools...)
		set.Defs = append(set.Defs, part.Defs...)
		set.Toolsets = append(set.Toolsets, part.Toolsets...)
		set.Agents = append(set.Agents, part.Agents...)
		set.Problems = append(set.Problems, part.Problems...)
	}
	l.check(set)
	return set, set.err()
}

func isToolFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// Load loads one file's contents; name is used in messages and Tool.Source.
func (l *Loader) Load(ctx context.Context, name string, src []byte) (*Set, error) {
	set := &Set{}
	l.load(ctx, set, name, src)
	l.check(set)
	return set, set.err()
}

func (s *Set) err() error {
	var errs Problems
	for _, p := range s.Problems {
		if !p.Warning {
			errs = append(errs, p)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func (l *Loader) load(ctx context.Context, set *Set, name string, src []byte) {
	d := &decoder{file: name, builtins: l.Builtins, kinds: l.Kinds, mcpURLs: l.MCPServerURLs}
	docs := d.parse(src)
	if len(docs) == 0 && len(d.problems) == 0 {
		d.problems = append(d.problems, Problem{File: name, Line: 1, Col: 1, Warning: true, Message: "empty file: no tool, toolset or agent in it"})
	}
	for _, doc := range docs {
		d.document(doc, set)
	}
	for _, def := range set.Defs[len(set.Tools):] {
		h, err := l.handler(ctx, def)
		if err != nil {
			d.problems = append(d.problems, Problem{File: def.File, Line: def.Entry.Line, Col: def.Entry.Col, Message: err.Error()})
		}
		t := def.Tool(h)
		if bt := builtinTool(h); bt != nil && def.Entry.Type == "builtin" {
			inherit(t, def, bt)
			if def.Name == def.Entry.Handler {
				for _, p := range redeclared(def, t.InputSchema, bt) {
					d.problems = append(d.problems, p)
					def.broken = def.broken || !p.Warning
				}
			}
		}
		if def.Name == "" {
			// Said once: "tool: missing name".
		} else if err := t.Check(); err != nil {
			d.problems = append(d.problems, Problem{File: def.File, Line: def.Line, Col: def.Col, Message: err.Error()})
		} else if _, err := schema.Compile(t.InputSchema); err != nil {
			d.problems = append(d.problems, Problem{File: def.File, Line: def.Line, Col: def.Col, Message: "input schema: " + err.Error()})
		}
		set.Tools = append(set.Tools, t)
	}
	// A tool with a problem in its own lines is left out; warnings keep it.
	keepDefs, keepTools := set.Defs[:0], set.Tools[:0]
	for i, def := range set.Defs {
		if !def.broken {
			keepDefs, keepTools = append(keepDefs, def), append(keepTools, set.Tools[i])
		}
	}
	set.Defs, set.Tools = keepDefs, keepTools
	set.Problems = append(set.Problems, d.problems...)
}

// document decodes one YAML document: read what kind it is, then decode it
// strictly as that kind.
func (d *decoder) document(n *yaml.Node, set *Set) {
	if list, ok := seq(n); ok {
		d.toolList(list, set)
		return
	}
	fs, ok := d.mapping(n, "document")
	if !ok {
		return
	}
	kind := ""
	has := map[string]field{}
	for _, f := range fs {
		has[f.name] = f
		if f.name == "kind" {
			kind = d.str(f)
		}
	}
	if kind == "" {
		_, params := has["parameters"]
		_, entry := has["entry"]
		_, sets := has["tool_sets"]
		_, strategy := has["output_strategy"]
		tools, listed := has["tools"]
		switch {
		case !slices.ContainsFunc(fs, func(f field) bool { return slices.Contains(documentKeys, f.name) }):
			// None of what makes a tool, a toolset or an agent: one
			// error saying what was expected, not each key unknown.
			d.errorf(start(n, fs), "not a tool, toolset or agent: expected name with entry (a tool), with tools (a toolset) or with tool_sets (an agent); found %s", keyNames(fs))
			return
		case params || entry:
			kind = "tool"
		case sets || strategy:
			kind = "agent"
		case listed && firstIsMapping(tools.val):
			kind = "tools"
		case listed:
			kind = "toolset"
		default:
			kind = "tool"
		}
	}
	switch kind {
	case "tool":
		mark := len(d.problems)
		def := d.tool(n, fs)
		def.broken = d.failed(mark)
		set.Defs = append(set.Defs, def)
	case "tools":
		for _, f := range fs {
			switch f.name {
			case "kind":
			case "tools":
				list, ok := seq(f.val)
				if !ok {
					d.errorf(f.val, "tools: expected a list, got %s", kindName(f.val))
					continue
				}
				d.toolList(list, set)
			default:
				d.unknown(f, "tool list")
			}
		}
	// A toolset or an agent without a name is that one error: it is
	// neither checked nor defined.
	case "toolset":
		if ts := d.toolset(n, fs); ts.Name != "" {
			set.Toolsets = append(set.Toolsets, ts)
		}
	case "agent":
		if a := d.agent(n, fs); a.Name != "" {
			set.Agents = append(set.Agents, a)
		}
	default:
		d.errorf(has["kind"].val, "kind %q is not tool, tools, toolset or agent", kind)
	}
}

// documentKeys are the keys that tell a tool, a toolset or an agent: a
// document with none of them is none of them.
var documentKeys = []string{"name", "description", "entry", "parameters", "input_schema", "tools", "tool_sets", "output_strategy", "api_url", "mcp_server_url"}

// keyNames lists a mapping's keys for a message, the first few.
func keyNames(fs []field) string {
	const most = 6
	if len(fs) == 0 {
		return "no key"
	}
	names := make([]string, 0, most)
	for _, f := range fs[:min(len(fs), most)] {
		names = append(names, f.name)
	}
	if len(fs) > most {
		names = append(names, fmt.Sprintf("and %d more", len(fs)-most))
	}
	return strings.Join(names, ", ")
}

func firstIsMapping(n *yaml.Node) bool {
	list, ok := seq(n)
	if !ok || len(list) == 0 {
		return false
	}
	return kindName(list[0]) == "mapping"
}

func (d *decoder) toolList(nodes []*yaml.Node, set *Set) {
	for _, v := range nodes {
		fs, ok := d.mapping(v, "tool")
		if !ok {
			continue
		}
		mark := len(d.problems)
		def := d.tool(v, fs)
		def.broken = d.failed(mark)
		set.Defs = append(set.Defs, def)
	}
}

func (d *decoder) refs(f field, toolset bool) ([]string, []ref) {
	names := d.strings(f)
	var refs []ref
	if list, ok := seq(f.val); ok {
		for _, v := range list {
			if isString(v) {
				line, col := pos(v)
				refs = append(refs, ref{name: unwrap(v).Value, toolset: toolset, line: line, col: col})
			}
		}
	}
	return names, refs
}

func (d *decoder) toolset(n *yaml.Node, fs []field) *Toolset {
	line, col := pos(fs[0].key)
	ts := &Toolset{File: d.file, Line: line, Col: col}
	for _, f := range fs {
		switch f.name {
		case "kind":
		case "name":
			ts.Name = d.str(f)
		case "description":
			ts.Description = d.str(f)
		case "tools":
			ts.Tools, ts.refs = d.refs(f, false)
		default:
			d.unknown(f, "toolset")
		}
	}
	if ts.Name == "" {
		d.errorf(start(n, fs), "toolset: missing name (expected name, description and tools, the names of its tools)")
	}
	return ts
}

func (d *decoder) agent(n *yaml.Node, fs []field) *Agent {
	line, col := pos(fs[0].key)
	a := &Agent{File: d.file, Line: line, Col: col}
	for _, f := range fs {
		switch f.name {
		case "kind":
		case "name":
			a.Name = d.str(f)
		case "description":
			a.Description = d.str(f)
		case "tools":
			var refs []ref
			a.Tools, refs = d.refs(f, false)
			a.refs = append(a.refs, refs...)
		case "tool_sets":
			var refs []ref
			a.ToolSets, refs = d.refs(f, true)
			a.refs = append(a.refs, refs...)
		case "output_strategy":
			sfs, _ := d.mapping(f.val, "output_strategy")
			def := llm.OutputStrategy{}.OrDefault() // what a key left out takes
			a.OutputStrategy = OutputStrategy{FunctionCalling: def.FunctionCalling, FallbackToStructuredOutput: def.FallbackToStructuredOutput, PromptFormat: string(def.PromptFormat)}
			for _, sf := range sfs {
				switch sf.name {
				case "function_calling":
					a.OutputStrategy.FunctionCalling = d.boolean(sf)
				case "fallback_to_structured_output":
					a.OutputStrategy.FallbackToStructuredOutput = d.boolean(sf)
				case "prompt_format":
					switch v := d.str(sf); v {
					case "xml", "json":
						a.OutputStrategy.PromptFormat = v
					default:
						d.errorf(sf.val, "output_strategy: prompt_format %q is not one of xml, json", v)
					}
				default:
					d.unknown(sf, "output_strategy")
				}
			}
		default:
			d.unknown(f, "agent")
		}
	}
	if a.Name == "" {
		d.errorf(start(n, fs), "agent: missing name (expected name, description, tools and tool_sets)")
	}
	return a
}

// check reports duplicate names (a warning at both places: the first in
// load order wins), tools that take a built-in's name (a warning that the
// built-in is shadowed, or a note in [Set.Notes] when the file re-declares
// the built-in: its entry runs the built-in's own handler), and references to tools and
// toolsets that neither the set, the built-ins nor [Loader.Known] define.
// References are warnings because the registry the set is applied to may
// hold the missing tools already; [Set.Apply] is the judge.
func (l *Loader) check(s *Set) {
	tools := map[string]*Def{}
	for _, def := range s.Defs {
		if first, ok := tools[def.Name]; ok {
			s.warn(first.File, first.Line, first.Col, "tool %q is defined again at %s", def.Name, def.Source())
			s.warn(def.File, def.Line, def.Col, "duplicate tool %q is shadowed by the one at %s", def.Name, first.Source())
			continue
		}
		tools[def.Name] = def
		if l.Builtins[def.Name] == nil {
			continue
		}
		if def.Entry.Type == "builtin" && def.Entry.Handler == def.Name {
			s.Notes = append(s.Notes, Problem{File: def.File, Line: def.Line, Col: def.Col, Warning: true,
				Message: fmt.Sprintf("tool %q re-declares the built-in tool: its description, parameters and rules replace the built-in's, which runs under them", def.Name)})
			continue
		}
		s.warn(def.File, def.Line, def.Col, "tool %q shadows the built-in tool of that name: this file's definition is used instead", def.Name)
	}
	if len(s.Agents) > 0 {
		s.agentTools = l.AgentTools
	}
	known := func(name string) bool {
		return tools[name] != nil || l.Builtins[name] != nil || s.agentTool(name) || l.Known != nil && l.known(name)
	}
	sets := map[string]*Toolset{}
	for _, ts := range s.Toolsets {
		if first, ok := sets[ts.Name]; ok {
			s.warn(ts.File, ts.Line, ts.Col, "duplicate toolset %q is shadowed by the one at %s:%d", ts.Name, first.File, first.Line)
			continue
		}
		sets[ts.Name] = ts
		for _, r := range ts.refs {
			if !known(r.name) {
				s.undefined(l, ts.File, r, "toolset %q: tool %q is not defined", ts.Name, r.name)
			}
		}
	}
	for _, a := range s.Agents {
		for _, r := range a.refs {
			switch {
			case r.toolset && sets[r.name] == nil && !l.knownToolset(r.name):
				s.undefined(l, a.File, r, "agent %q: toolset %q is not defined", a.Name, r.name)
			case !r.toolset && !known(r.name):
				s.undefined(l, a.File, r, "agent %q: tool %q is not defined", a.Name, r.name)
			}
		}
	}
	sortProblems(s.Problems)
}

// agentTool reports whether name is one of the set's agent tools (see
// [Loader.AgentTools]).
func (s *Set) agentTool(name string) bool {
	return slices.ContainsFunc(s.agentTools, func(t *wield.Tool) bool { return t.Name == name })
}

// undefined reports a reference to a tool or toolset no one defines: a
// warning, or with [Loader.Importable] an error when nothing can bring it
// either; a built-in tool that is off ([Loader.Off]) is an error naming the
// setting that turns it on.
func (s *Set) undefined(l *Loader, file string, r ref, format string, args ...any) {
	if l.Off != nil && !r.toolset {
		if setting := l.Off(r.name); setting != "" {
			s.Problems = append(s.Problems, Problem{File: file, Line: r.line, Col: r.col,
				Message: fmt.Sprintf(format, args...) + fmt.Sprintf(": the built-in tool %s is off (%s)", r.name, setting)})
			return
		}
	}
	if l.Importable == nil || l.Importable(r.name, r.toolset) {
		s.warn(file, r.line, r.col, format, args...)
		return
	}
	what := "no tool file, built-in tool or MCP server of the configuration defines it"
	if r.toolset {
		what = "no file defines it"
	}
	s.Problems = append(s.Problems, Problem{File: file, Line: r.line, Col: r.col,
		Message: fmt.Sprintf(format, args...) + ": " + what})
}

func (s *Set) warn(file string, line, col int, format string, args ...any) {
	s.Problems = append(s.Problems, Problem{File: file, Line: line, Col: col, Message: fmt.Sprintf(format, args...), Warning: true})
}

// knownToolset asks l.KnownToolset about name, as known asks l.Known.
func (l *Loader) knownToolset(name string) bool {
	if l.KnownToolset == nil {
		return false
	}
	ok := false
	wield.Protect(nil, wield.CallbackToolfileKnown, func() { ok = l.KnownToolset(name) })
	return ok
}

// known asks l.Known about name; a panic (contained, logged and counted:
// see [wield.Protect]) answers no, so the name is reported as unknown
// rather than a reload ending the process.
func (l *Loader) known(name string) bool {
	ok := false
	wield.Protect(nil, wield.CallbackToolfileKnown, func() { ok = l.Known(name) })
	return ok
}
