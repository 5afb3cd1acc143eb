// Package policy decides tool calls with Cedar policies (cedar-go, the
// Cedar project's own Go implementation): a [Set] is a [wield.Policy] that
// the engine asks on every call and that lists and exports ask what a
// caller may see.
//
// # The model
//
// A request is (principal, action, resource, context):
//
//   - principal: Key::"ID" for a call authenticated with an API key, else
//     User::"ID" for a caller with a user ID, else Agent::"ID" for a caller
//     with an ID, else Anonymous::"local". A program's inner call is
//     decided as a call of the program's caller (its agent ID is in the
//     variable [wield.ProgramCallerVariable]; context.caller_type is
//     "program").
//   - action: Action::"call". A list shows a tool when the same request
//     without arguments would be allowed.
//   - resource: Tool::"NAME", whose parents are its toolsets
//     (Toolset::"NAME", so `resource in Toolset::"files"` works), with the
//     attributes name, category, tags (a set), read_only, destructive,
//     idempotent, open_world, permission (auto, confirm or deny) and source.
//   - context: args (the coerced arguments as a record; absent when a list
//     asks), conversation, agent, user and caller_type (strings, "" when
//     unknown), and dropped (the paths of argument values Cedar cannot
//     hold: fractional numbers, nulls, values deeper than [MaxDepth] or
//     past [MaxValues]).
//
// With policies loaded, a call needs a permit and no forbid (Cedar's
// default deny, as AWS AgentCore Policy does: forbid wins). A policy that
// cannot be evaluated for a request (an argument it reads is absent) is
// skipped and named in the decision's Errors. Without any policy file the
// Set allows everything, so the tools' own permissions decide as before.
//
// A policy's ID is its @id("...") annotation, else FILE:LINE, FILE being
// the file's path below the folder it was found in.
package policy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cedar-policy/cedar-go"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/walkroot"
)

// Mode says what a denial does.
type Mode string

// The modes.
const (
	// Enforce refuses the calls the policies deny (permission_denied) and
	// hides the tools from the lists of callers who may not call them.
	Enforce Mode = "enforce"
	// Monitor lets every call run and every tool be listed, and records
	// and logs "would deny" for each call the policies deny.
	Monitor Mode = "monitor"
)

// ParseMode reads a mode as the configuration writes it ("" is enforce).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", Enforce:
		return Enforce, nil
	case Monitor:
		return Monitor, nil
	}
	return "", fmt.Errorf("policy mode %q: use enforce or monitor", s)
}

// Ext is the extension of policy files.
const Ext = ".cedar"

// Set is a set of Cedar policies read from files, and a [wield.Policy]. Its
// policies are replaced whole by [Set.Reload]; a Decide sees one set or
// the other, never a mix. It is safe for concurrent use.
type Set struct {
	mode  Mode
	paths []string
	cur   atomic.Pointer[loaded]
	// gen counts the sets put in force after the first (see Generation).
	gen atomic.Uint64

	// entities are the entities of the tools decided on, by tool and
	// toolsets: a registered tool is not modified, and Cedar's values are
	// immutable, so they are shared by every decision on the tool. Cleared
	// past maxEntities (tools replaced by reloads leave theirs behind).
	entities sync.Map // entityKey → cedar.EntityMap
	nEnt     atomic.Int64
}

// entityKey identifies the entities of a request.
type entityKey struct {
	tool     *wield.Tool
	toolsets string
}

// maxEntities bounds Set.entities.
const maxEntities = 4096

// entitiesOf returns the entities of req, made once per tool and toolsets.
func (s *Set) entitiesOf(req wield.PolicyRequest) cedar.EntityMap {
	k := entityKey{req.Tool, strings.Join(req.Toolsets, "\x00")}
	if v, ok := s.entities.Load(k); ok {
		return v.(cedar.EntityMap)
	}
	m := Entities(req)
	if s.nEnt.Add(1) > maxEntities {
		s.entities.Clear()
		s.nEnt.Store(1)
	}
	s.entities.Store(k, m)
	return m
}

// loaded is one set of policies as read.
type loaded struct {
	ps     *cedar.PolicySet
	files  []string
	digest [sha256.Size]byte // of the files' names and contents
}

// Load reads the policy files (*.cedar) under paths (folders, searched
// recursively, or files). A file that does not parse is an error naming
// it with line and column; no files at all is no error (the Set then
// allows everything).
func Load(mode Mode, paths ...string) (*Set, error) {
	s := &Set{mode: mode, paths: slices.Clone(paths)}
	src, err := readFiles(paths)
	if err != nil {
		return nil, err
	}
	l, err := src.parse()
	if err != nil {
		return nil, err
	}
	s.cur.Store(l)
	return s, nil
}

// Reload reads the files again. When one does not parse, the policies in
// force stay and the error says which file and where.
func (s *Set) Reload() error {
	_, err := s.reload()
	return err
}

// reload is Reload, which also says whether the files changed. Files
// unchanged since the policies in force were parsed are not parsed again
// (a watcher with an interval reads them every interval).
func (s *Set) reload() (changed bool, err error) {
	src, err := readFiles(s.paths)
	if err != nil {
		return false, err
	}
	if s.cur.Load().digest == src.digest {
		return false, nil
	}
	l, err := src.parse()
	if err != nil {
		return false, err
	}
	s.cur.Store(l)
	s.gen.Add(1)
	return true, nil
}

// Generation changes whenever a reload puts new policies in force (it
// counts them): a cache of decisions made at one generation holds until
// it changes. Read it before deciding, so that a decision cached under it
// is never newer than the policies it names.
func (s *Set) Generation() uint64 { return s.gen.Load() }

// Files returns the policy files in force.
func (s *Set) Files() []string { return slices.Clone(s.cur.Load().files) }

// Len returns the number of policies in force.
func (s *Set) Len() int {
	n := 0
	for range s.cur.Load().ps.All() {
		n++
	}
	return n
}

// Mode returns the set's mode.
func (s *Set) Mode() Mode { return s.mode }

// FileError is a policy file that cannot be used, and where.
type FileError struct {
	File      string
	Line, Col int // 0 when the whole file is concerned
	Message   string
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Message
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Message)
}

// Check reads the policy files under paths as Load does and returns the
// number of files and the problem of each that cannot be used, for
// `wield validate`; err is a folder that cannot be read.
func Check(paths ...string) (files int, problems []*FileError, err error) {
	names, short, err := find(paths)
	if err != nil {
		return 0, nil, err
	}
	ids := map[string]string{}
	for _, f := range names {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, nil, fmt.Errorf("read policy file %s: %w", f, err)
		}
		if _, err := parseFile(f, short[f], b, ids, cedar.NewPolicySet()); err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				return 0, nil, err
			}
			problems = append(problems, fe)
		}
	}
	return len(names), problems, nil
}

// find lists the policy files under paths (regular files: a named pipe
// named like one is left out), sorted within each folder, and
// the name of each in the IDs of its unnamed policies (see parseFile).
func find(paths []string) ([]string, map[string]string, error) {
	var out []string
	names := map[string]string{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a tool folder that is not there has no policies either
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read policies %s: %w", p, err)
		}
		if !st.IsDir() {
			if filepath.Ext(p) == Ext && st.Mode().IsRegular() {
				out = append(out, p)
				names[p] = filepath.Base(p)
			}
			continue
		}
		err = filepath.WalkDir(walkroot.Of(p), func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() && filepath.Ext(path) == Ext && regular(path, e) {
				out = append(out, path)
				rel, rerr := filepath.Rel(p, path)
				if rerr != nil {
					rel = filepath.Base(path)
				}
				names[path] = filepath.ToSlash(rel)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("read policies %s: %w", p, err)
		}
	}
	return out, names, nil
}

// regular reports whether the entry at path is a regular file (a link, one
// to a regular file): a named pipe would hold the read until a writer came.
func regular(path string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.Type().IsRegular()
	}
	st, err := os.Stat(path)
	return err != nil || st.Mode().IsRegular() // a broken link: reading it says why
}

// source is the policy files under some paths as read, not yet parsed.
type source struct {
	files  []string
	short  map[string]string // see find
	data   [][]byte          // by file
	digest [sha256.Size]byte // of the files' names and contents
}

// readFiles reads the policy files under paths and their digest.
func readFiles(paths []string) (*source, error) {
	names, short, err := find(paths)
	if err != nil {
		return nil, err
	}
	src := &source{files: names, short: short, data: make([][]byte, len(names))}
	h := sha256.New()
	for i, f := range names {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read policy file %s: %w", f, err)
		}
		fmt.Fprintf(h, "%d:%s%d:", len(f), f, len(b))
		h.Write(b)
		src.data[i] = b
	}
	h.Sum(src.digest[:0])
	return src, nil
}

// parse parses the files read.
func (src *source) parse() (*loaded, error) {
	l := &loaded{ps: cedar.NewPolicySet(), files: src.files, digest: src.digest}
	ids := map[string]string{}
	for i, f := range src.files {
		if _, err := parseFile(f, src.short[f], src.data[i], ids, l.ps); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// parseErr is cedar-go's parse error: "parse error at <input>:L:C "tok": msg".
var parseErr = regexp.MustCompile(`parse error at [^:]*:(\d+):(\d+) (.*)$`)

// parseFile adds the policies of file, b, to ps, under their IDs; ids maps the
// IDs taken so far to where they were defined. An unnamed policy's ID is
// name:LINE, name being the file's path below the folder it was found in
// (its base name when given itself), so that a denial tells a model no
// path of the server's.
func parseFile(file, name string, b []byte, ids map[string]string, ps *cedar.PolicySet) (int, error) {
	if fe := checkNesting(file, b); fe != nil {
		return 0, fe
	}
	list, err := cedar.NewPolicyListFromBytes(file, b)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "parser error: ")
		if m := parseErr.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			return 0, &FileError{File: file, Line: line, Col: col, Message: m[3]}
		}
		return 0, &FileError{File: file, Message: msg}
	}
	for _, p := range list {
		pos := p.Position()
		at := file + ":" + strconv.Itoa(pos.Line)
		id := name + ":" + strconv.Itoa(pos.Line)
		if v, ok := p.Annotations()["id"]; ok {
			id = string(v)
			if id == "" || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return 0, &FileError{File: file, Line: pos.Line, Col: pos.Column, Message: "@id must be a non-empty line of text"}
			}
		}
		if prev, ok := ids[id]; ok {
			return 0, &FileError{File: file, Line: pos.Line, Col: pos.Column, Message: fmt.Sprintf("policy ID %q is also the ID of the policy at %s", id, prev)}
		}
		if problem := checkSchema(p); problem != "" {
			return 0, schemaError(file, p, problem)
		}
		ids[id] = at
		ps.Add(cedar.PolicyID(id), p)
	}
	return len(list), nil
}

// Decide answers for req: see the package documentation.
func (s *Set) Decide(ctx context.Context, req wield.PolicyRequest) wield.PolicyDecision {
	l := s.cur.Load()
	if len(l.files) == 0 {
		return wield.PolicyDecision{Allow: true}
	}
	ok, diag := cedar.Authorize(l.ps, s.entitiesOf(req), Request(req))
	d := wield.PolicyDecision{Allow: ok == cedar.Allow}
	for _, r := range diag.Reasons {
		d.Policies = append(d.Policies, string(r.PolicyID))
	}
	for _, e := range diag.Errors {
		d.Errors = append(d.Errors, string(e.PolicyID)+": "+e.Message)
	}
	sort.Strings(d.Policies)
	sort.Strings(d.Errors)
	if !d.Allow && s.mode == Monitor {
		d.Allow, d.Monitor = true, true
	}
	return d
}

// Entities are the entities Cedar knows of for req: the tool, with its
// attributes and its toolsets as parents, and the toolsets. The principal
// is not among them: it has neither attributes nor parents.
func Entities(req wield.PolicyRequest) cedar.EntityMap {
	t := req.Tool
	resource := cedar.NewEntityUID("Tool", cedar.String(t.Name))
	var parents []cedar.EntityUID
	entities := cedar.EntityMap{}
	for _, ts := range req.Toolsets {
		uid := cedar.NewEntityUID("Toolset", cedar.String(ts))
		parents = append(parents, uid)
		entities[uid] = cedar.Entity{UID: uid}
	}
	tags := make([]cedar.Value, len(t.Tags))
	for i, tag := range t.Tags {
		tags[i] = cedar.String(tag)
	}
	entities[resource] = cedar.Entity{UID: resource, Parents: cedar.NewEntityUIDSet(parents...), Attributes: cedar.NewRecord(cedar.RecordMap{
		"name":        cedar.String(t.Name),
		"category":    cedar.String(t.Category),
		"tags":        cedar.NewSet(tags...),
		"read_only":   cedar.Boolean(t.Annotations.ReadOnly),
		"destructive": cedar.Boolean(t.Annotations.Destructive),
		"idempotent":  cedar.Boolean(t.Annotations.Idempotent),
		"open_world":  cedar.Boolean(t.Annotations.OpenWorld),
		"permission":  cedar.String(t.EffectivePermission()),
		"source":      cedar.String(t.Source),
	})}
	return entities
}

// Request is the Cedar request of req, as Decide makes it.
func Request(req wield.PolicyRequest) cedar.Request {
	ctx := cedar.RecordMap{
		"conversation": cedar.String(req.Caller.ConversationID),
		"agent":        cedar.String(agentOf(req.Caller)),
		"user":         cedar.String(req.Caller.UserID),
		"caller_type":  cedar.String(req.Caller.Type),
	}
	if req.Arguments != nil {
		args, dropped := Arguments(req.Arguments)
		ctx["args"] = args
		d := make([]cedar.Value, len(dropped))
		for i, p := range dropped {
			d[i] = cedar.String(p)
		}
		ctx["dropped"] = cedar.NewSet(d...)
	}
	return cedar.Request{Principal: principalOf(req), Action: callAction, Resource: cedar.NewEntityUID("Tool", cedar.String(req.Tool.Name)), Context: cedar.NewRecord(ctx)}
}

// callAction is the action of every request.
var callAction = cedar.NewEntityUID("Action", "call")

// principalOf is the principal of req: see the package documentation.
func principalOf(req wield.PolicyRequest) cedar.EntityUID {
	switch {
	case strings.HasPrefix(req.Requester, "key:"):
		return cedar.NewEntityUID("Key", cedar.String(strings.TrimPrefix(req.Requester, "key:")))
	case req.Caller.UserID != "":
		return cedar.NewEntityUID("User", cedar.String(req.Caller.UserID))
	case agentOf(req.Caller) != "":
		return cedar.NewEntityUID("Agent", cedar.String(agentOf(req.Caller)))
	}
	return cedar.NewEntityUID("Anonymous", "local")
}

// agentOf is the agent a caller acts for: its ID, or for a program's
// inner call (whose ID is the program's call) the ID of the program's
// caller, so that a program's calls are decided as its caller's.
func agentOf(c wield.Caller) string {
	if c.Type == wield.CallerProgram {
		id, _ := c.Variables[wield.ProgramCallerVariable].(string)
		return id
	}
	return c.ID
}

// Bounds of the arguments given to policies as context.args.
const (
	MaxDepth  = 8    // nesting of objects and arrays
	MaxValues = 1000 // values in all
)

// Arguments converts a call's JSON arguments to a Cedar record: strings,
// booleans, integers (as Long), objects (records) and arrays (sets). The
// values Cedar cannot hold are left out and their paths returned: numbers
// with a fraction or out of Long's range, nulls, and whatever lies deeper
// than MaxDepth or past MaxValues. Arguments that are not a JSON object
// give an empty record (the engine has validated them before).
func Arguments(raw json.RawMessage) (cedar.Record, []string) {
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return cedar.NewRecord(nil), []string{"$"}
	}
	c := &converter{}
	rec := c.record(v, "$", 1)
	return rec, c.dropped
}

type converter struct {
	n       int
	dropped []string
}

func (c *converter) record(m map[string]any, path string, depth int) cedar.Record {
	out := cedar.RecordMap{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := c.value(m[k], path+"."+k, depth); ok {
			out[cedar.String(k)] = v
		}
	}
	return cedar.NewRecord(out)
}

func (c *converter) value(v any, path string, depth int) (cedar.Value, bool) {
	c.n++
	if c.n > MaxValues || depth > MaxDepth {
		c.dropped = append(c.dropped, path)
		return nil, false
	}
	switch x := v.(type) {
	case string:
		return cedar.String(x), true
	case bool:
		return cedar.Boolean(x), true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return cedar.Long(i), true
		}
	case map[string]any:
		return c.record(x, path, depth+1), true
	case []any:
		vals := make([]cedar.Value, 0, len(x))
		for i, e := range x {
			if cv, ok := c.value(e, path+"["+strconv.Itoa(i)+"]", depth+1); ok {
				vals = append(vals, cv)
			}
		}
		return cedar.NewSet(vals...), true
	}
	c.dropped = append(c.dropped, path)
	return nil, false
}
