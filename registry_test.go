package wield_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

type echoIn struct {
	Message string `json:"message" description:"What to say back"`
}

func echo(_ context.Context, in echoIn) (string, error) { return in.Message, nil }

// tool returns a valid typed tool with the given name, category, tags and source.
func tool(name string, cat wield.Category, source string, tags ...string) *wield.Tool {
	t := wield.Func(name, "test tool "+name, echo)
	t.Category = cat
	t.Tags = tags
	t.Source = source
	return t
}

func names(tools []*wield.Tool) []string {
	out := []string{}
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// drain returns the events a subscription has ready, without waiting.
func drain(t *testing.T, s *wield.Subscription) []wield.Event {
	t.Helper()
	var out []wield.Event
	for {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // Next returns ready events first, then the context's error
		e, err := s.Next(ctx)
		if err != nil {
			return out
		}
		out = append(out, e)
	}
}

func TestRegisterDuplicate(t *testing.T) {
	var logs bytes.Buffer
	bus := wield.NewBus(16)
	sub := bus.Subscribe(nil)
	defer sub.Close()
	reg := wield.NewRegistry(&wield.RegistryOptions{
		Bus:    bus,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})

	first := tool("search", wield.CategoryNetwork, "tools/a.yaml")
	if err := reg.Register(first); err != nil {
		t.Fatalf("Register(first) = %v", err)
	}
	second := tool("search", wield.CategoryData, "tools/b.yaml")
	third := tool("other", wield.CategoryData, "go")
	err := reg.Register(second, third)
	if !errors.Is(err, wield.ErrDuplicate) {
		t.Fatalf("Register(second) = %v, want an error wrapping ErrDuplicate", err)
	}
	for _, want := range []string{`"search"`, "tools/a.yaml", "tools/b.yaml"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}

	// The first registration wins; the tool after the duplicate is added anyway.
	if got, _ := reg.Tool("search"); got != first {
		t.Errorf("Tool(search) is not the first registration")
	}
	if _, ok := reg.Tool("other"); !ok {
		t.Errorf("a tool registered beside a duplicate was not added")
	}
	if got, want := reg.Len(), 2; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
	if sh := reg.Shadowed(); len(sh) != 1 || len(sh["search"]) != 1 || sh["search"][0] != second {
		t.Errorf("Shadowed() = %v, want search: [the second registration]", sh)
	}

	// One warning naming both sources.
	log := logs.String()
	if strings.Count(log, "level=WARN") != 1 {
		t.Errorf("want one warning, log:\n%s", log)
	}
	for _, want := range []string{"tools/a.yaml", "tools/b.yaml", "tool=search"} {
		if !strings.Contains(log, want) {
			t.Errorf("warning does not mention %s:\n%s", want, log)
		}
	}

	var got []string
	for i, e := range drain(t, sub) {
		got = append(got, fmt.Sprintf("%d %s %s %s", i+1, e.Type, e.Tool, e.Source))
		if e.Type == wield.EventToolShadowed && !strings.Contains(e.Message, "tools/a.yaml") {
			t.Errorf("tool_shadowed message %q does not name the winner's source", e.Message)
		}
	}
	want := []string{
		"1 tool_added search tools/a.yaml",
		"2 tool_shadowed search tools/b.yaml",
		"3 tool_added other go",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

func TestRegisterDuplicateInOneCall(t *testing.T) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	a, b := tool("x", wield.CategoryCustom, "a"), tool("x", wield.CategoryCustom, "b")
	if err := reg.Register(a, b); !errors.Is(err, wield.ErrDuplicate) {
		t.Fatalf("Register(a, b) = %v, want ErrDuplicate", err)
	}
	if got, _ := reg.Tool("x"); got != a {
		t.Errorf("the first of one call did not win")
	}
}

func TestRegisterInvalid(t *testing.T) {
	badPattern := &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"q": {Type: "string", Pattern: "([a-z"}},
	}
	h := wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	tests := []struct {
		name  string
		tool  *wield.Tool
		wants []string // substrings of the error
	}{
		{"nil", nil, []string{"nil tool"}},
		{"empty name", tool("", "", ""), []string{`name ""`}},
		{"bad name", tool("bad name!", "", ""), []string{`name "bad name!"`, "letters, digits"}},
		{"long name", tool(strings.Repeat("a", 129), "", ""), []string{"1-128 characters"}},
		{"bad permission", func() *wield.Tool { t := tool("p", "", ""); t.Permission = "maybe"; return t }(),
			[]string{`tool "p"`, `permission "maybe" is not auto, confirm or deny`}},
		{"bad status", func() *wield.Tool { t := tool("s", "", ""); t.Status = "gone"; return t }(),
			[]string{`status "gone"`}},
		{"negative timeout", func() *wield.Tool { t := tool("n", "", ""); t.Timeout = -time.Second; return t }(),
			[]string{"timeout -1s is negative"}},
		// wield.Raw with a nil schema means no parameters (TestRawNilSchema);
		// a Tool written without one is still refused.
		{"no schema", &wield.Tool{Name: "raw", Description: "d", Handler: h}, []string{`tool "raw"`, "no input schema"}},
		{"bad pattern", wield.Raw("re", "d", badPattern, h), []string{`tool "re"`, "input schema", "([a-z"}},
		{"two problems", func() *wield.Tool { t := tool("two", "", ""); t.Permission = "x"; t.Status = "y"; return t }(),
			[]string{`permission "x"`, `status "y"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := wield.NewRegistry(nil)
			err := reg.Register(tt.tool)
			if err == nil {
				t.Fatal("Register succeeded, want an error")
			}
			if !strings.HasPrefix(err.Error(), "register: ") {
				t.Errorf("error %q does not start with the operation", err)
			}
			for _, want := range tt.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if reg.Len() != 0 {
				t.Errorf("an invalid tool was registered")
			}
		})
	}
}

func TestMustRegisterPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustRegister of an invalid tool did not panic")
		}
	}()
	wield.NewRegistry(nil).MustRegister(tool("bad name", "", ""))
}

func TestUpdate(t *testing.T) {
	bus := wield.NewBus(16)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
	reg.MustRegister(tool("a", wield.CategoryFile, "v1"), tool("b", wield.CategoryFile, "v1"))
	reg.Entry("a").Observe(true, 2*time.Millisecond)
	reg.Entry("a").Observe(false, 4*time.Millisecond)

	sub := bus.Subscribe(nil)
	defer sub.Close()
	v2 := tool("a", wield.CategoryData, "v2")
	if err := reg.Update(v2); err != nil {
		t.Fatalf("Update = %v", err)
	}
	if got, _ := reg.Tool("a"); got != v2 {
		t.Errorf("Tool(a) is not the update")
	}
	// The update keeps its place in the order and its counters.
	if diff := cmp.Diff([]string{"a", "b"}, names(reg.List(wield.Query{}))); diff != "" {
		t.Errorf("List order mismatch (-want +got):\n%s", diff)
	}
	want := wield.ToolStats{Count: 2, Failures: 1, AvgDuration: 3 * time.Millisecond}
	if diff := cmp.Diff(want, reg.Stats().Calls["a"]); diff != "" {
		t.Errorf("stats after Update mismatch (-want +got):\n%s", diff)
	}
	if evs := drain(t, sub); len(evs) != 1 || evs[0].Type != wield.EventToolUpdated || evs[0].Source != "v2" {
		t.Errorf("events = %+v, want one tool_updated from v2", evs)
	}

	if err := reg.Update(tool("ghost", "", "")); !errors.Is(err, wield.ErrNotFound) {
		t.Errorf("Update(ghost) = %v, want ErrNotFound", err)
	}
	bad := tool("a", "", "")
	bad.Permission = "sometimes"
	if err := reg.Update(bad); err == nil || !strings.Contains(err.Error(), "permission") {
		t.Errorf("Update(invalid) = %v, want a permission error", err)
	}
	if got, _ := reg.Tool("a"); got != v2 {
		t.Errorf("a failed Update replaced the tool")
	}
}

func TestRemove(t *testing.T) {
	bus := wield.NewBus(16)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: slog.New(slog.DiscardHandler)})
	reg.MustRegister(tool("a", "", "one"), tool("b", "", "one"))
	_ = reg.Register(tool("a", "", "two")) // shadowed

	sub := bus.Subscribe(nil)
	defer sub.Close()
	if !reg.Remove("a") {
		t.Fatal("Remove(a) = false")
	}
	if reg.Remove("a") {
		t.Error("second Remove(a) = true")
	}
	if reg.Entry("a") != nil {
		t.Error("Entry(a) after Remove is not nil")
	}
	if _, ok := reg.Tool("a"); ok {
		t.Error("Tool(a) found after Remove")
	}
	if diff := cmp.Diff([]string{"b"}, names(reg.List(wield.Query{}))); diff != "" {
		t.Errorf("List mismatch (-want +got):\n%s", diff)
	}
	if len(reg.Shadowed()) != 0 {
		t.Errorf("Shadowed() = %v, want the shadowed tool gone with the name", reg.Shadowed())
	}
	if evs := drain(t, sub); len(evs) != 1 || evs[0].Type != wield.EventToolRemoved || evs[0].Tool != "a" {
		t.Errorf("events = %+v, want one tool_removed", evs)
	}
	// The name is free again.
	if err := reg.Register(tool("a", "", "three")); err != nil {
		t.Errorf("Register after Remove = %v", err)
	}
}

func TestList(t *testing.T) {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(
		tool("read", wield.CategoryFile, "", "fs", "safe"),
		tool("write", wield.CategoryFile, "", "fs"),
		tool("fetch", wield.CategoryHTTP, "", "web", "safe"),
		tool("calc", wield.CategoryCode, ""),
	)
	if err := reg.DefineToolset(wield.Toolset{Name: "io", Tools: []string{"fetch", "write"}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		q    wield.Query
		want []string
	}{
		{"all", wield.Query{}, []string{"read", "write", "fetch", "calc"}},
		{"category", wield.Query{Category: wield.CategoryFile}, []string{"read", "write"}},
		{"no such category", wield.Query{Category: wield.CategoryAI}, []string{}},
		{"one tag", wield.Query{Tags: []string{"safe"}}, []string{"read", "fetch"}},
		{"tags are a union", wield.Query{Tags: []string{"web", "fs"}}, []string{"read", "write", "fetch"}},
		{"unknown tag", wield.Query{Tags: []string{"nope"}}, []string{}},
		{"toolset in registration order", wield.Query{Toolset: "io"}, []string{"write", "fetch"}},
		{"unknown toolset", wield.Query{Toolset: "nope"}, []string{}},
		{"category and tags", wield.Query{Category: wield.CategoryFile, Tags: []string{"safe"}}, []string{"read"}},
		{"toolset and tags", wield.Query{Toolset: "io", Tags: []string{"safe"}}, []string{"fetch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, names(reg.List(tt.q))); diff != "" {
				t.Errorf("List(%+v) mismatch (-want +got):\n%s", tt.q, diff)
			}
		})
	}
}

func TestStats(t *testing.T) {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(
		tool("a", wield.CategoryFile, ""),
		tool("b", wield.CategoryFile, ""),
		tool("c", wield.CategoryHTTP, ""),
	)
	a, c := reg.Entry("a"), reg.Entry("c")
	a.Observe(true, 10*time.Millisecond)
	a.Observe(false, 20*time.Millisecond)
	a.Observe(true, 30*time.Millisecond)
	c.Observe(false, time.Second)

	want := wield.Stats{
		Total:      3,
		ByCategory: map[wield.Category]int{wield.CategoryFile: 2, wield.CategoryHTTP: 1},
		Calls: map[string]wield.ToolStats{
			"a": {Count: 3, Failures: 1, AvgDuration: 20 * time.Millisecond},
			"b": {},
			"c": {Count: 1, Failures: 1, AvgDuration: time.Second},
		},
	}
	if diff := cmp.Diff(want, reg.Stats()); diff != "" {
		t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	const writers, perWriter = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				_ = reg.Register(tool(fmt.Sprintf("t%d_%d", w, i), wield.CategoryData, "", "x"))
				_ = reg.Register(tool("shared", wield.CategoryData, fmt.Sprint(w)))
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for i := range writers * perWriter {
				for _, tl := range reg.List(wield.Query{Tags: []string{"x"}}) {
					if e := reg.Entry(tl.Name); e == nil || e.Tool != tl {
						t.Errorf("Entry(%s) does not match List", tl.Name)
						return
					}
				}
				if e := reg.Entry(fmt.Sprintf("t0_%d", i%perWriter)); e != nil {
					e.Observe(true, time.Millisecond)
				}
				_ = reg.Stats()
				_ = reg.Shadowed()
			}
		})
	}
	wg.Wait()
	if got, want := reg.Len(), writers*perWriter+1; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
	shadowed := 0
	for _, ts := range reg.Shadowed() {
		shadowed += len(ts)
	}
	if got, want := shadowed, writers*perWriter-1; got != want {
		t.Errorf("%d shadowed, want %d", got, want)
	}
}

func TestEffectivePermission(t *testing.T) {
	tests := []struct {
		permission  wield.Permission
		destructive bool
		want        wield.Permission
	}{
		{"", false, wield.PermissionAuto},
		{"", true, wield.PermissionConfirm},
		{wield.PermissionAuto, true, wield.PermissionAuto},
		{wield.PermissionConfirm, false, wield.PermissionConfirm},
		{wield.PermissionDeny, false, wield.PermissionDeny},
		{wield.PermissionDeny, true, wield.PermissionDeny},
	}
	for _, tt := range tests {
		tl := &wield.Tool{Permission: tt.permission, Annotations: wield.Annotations{Destructive: tt.destructive}}
		if got := tl.EffectivePermission(); got != tt.want {
			t.Errorf("EffectivePermission(%q, destructive=%v) = %q, want %q", tt.permission, tt.destructive, got, tt.want)
		}
	}
}

type weatherIn struct {
	City  string   `json:"city" description:"City name" minLength:"1"`
	Units string   `json:"units,omitempty" enum:"c,f"`
	Days  int      `json:"days" default:"3"`
	Tags  []string `json:"tags"`
	Note  *string  `json:"note,omitzero"`
}

type weatherOut struct {
	Summary string  `json:"summary"`
	TempC   float64 `json:"temp_c"`
}

func weather(_ context.Context, in weatherIn) (weatherOut, error) {
	if in.City == "Atlantis" {
		return weatherOut{}, wield.Errorf(wield.ErrExecution, "no weather under water")
	}
	return weatherOut{Summary: fmt.Sprintf("sunny in %s for %d days", in.City, in.Days), TempC: 21.5}, nil
}

func TestFuncSchema(t *testing.T) {
	tl := wield.Func("weather", "Current weather", weather)
	in := tl.InputSchema
	if in.Type != "object" {
		t.Errorf("input type %q, want object", in.Type)
	}
	if diff := cmp.Diff([]string{"city", "tags"}, in.Required); diff != "" {
		t.Errorf("required mismatch (-want +got):\n%s", diff)
	}
	if got := in.Properties["city"]; got == nil || got.Description != "City name" || got.MinLength == nil || *got.MinLength != 1 {
		t.Errorf("city property = %+v", got)
	}
	if diff := cmp.Diff([]any{"c", "f"}, in.Properties["units"].Enum); diff != "" {
		t.Errorf("units enum mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"summary", "temp_c"}, tl.OutputSchema.Required); diff != "" {
		t.Errorf("output required mismatch (-want +got):\n%s", diff)
	}
	if tl.Name != "weather" || tl.Description != "Current weather" || tl.Category != wield.CategoryCustom || tl.Source != "go" {
		t.Errorf("Func tool = %+v", tl)
	}
	if err := wield.NewRegistry(nil).Register(tl); err != nil {
		t.Errorf("Register(Func tool) = %v", err)
	}
}

func TestFuncPanicsOnNonObject(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Func with a string input did not panic")
		}
	}()
	wield.Func("bad", "d", func(context.Context, string) (string, error) { return "", nil })
}

func TestFuncHandler(t *testing.T) {
	h := wield.Func("weather", "Current weather", weather).Handler
	tests := []struct {
		name     string
		args     string
		want     string
		wantType wield.ErrorType
	}{
		{"ok", `{"city":"Paris","days":2,"tags":[]}`, `{"summary":"sunny in Paris for 2 days","temp_c":21.5}`, ""},
		{"empty arguments", ``, `{"summary":"sunny in  for 0 days","temp_c":21.5}`, ""},
		{"wrong type", `{"city":5}`, "", wield.ErrValidation},
		{"not an object", `[1,2]`, "", wield.ErrValidation},
		{"handler error keeps its type", `{"city":"Atlantis"}`, "", wield.ErrExecution},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := h.Handle(context.Background(), json.RawMessage(tt.args))
			if tt.wantType == "" {
				if err != nil {
					t.Fatalf("Handle = %v", err)
				}
				if diff := cmp.Diff(tt.want, string(out)); diff != "" {
					t.Errorf("output mismatch (-want +got):\n%s", diff)
				}
				return
			}
			var we *wield.Error
			if !errors.As(err, &we) || we.Type != tt.wantType {
				t.Fatalf("Handle = %v (%T), want a *wield.Error of type %s", err, err, tt.wantType)
			}
			if tt.wantType == wield.ErrValidation && (we.Err == nil || !strings.HasPrefix(we.Message, "arguments do not fit")) {
				t.Errorf("validation error %+v lacks its cause or message", we)
			}
		})
	}
}

// TestRegisterDefaults: a default gives its place to a later registration of
// its name (the user's configuration over the program's built-ins), comes
// back when that tool is removed, and is listed as shadowed meanwhile.
func TestRegisterDefaults(t *testing.T) {
	var logs bytes.Buffer
	bus := wield.NewBus(16)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	builtinEcho, calc := tool("echo", "", "builtin"), tool("calc", "", "builtin")
	if err := reg.RegisterDefaults(builtinEcho, calc); err != nil {
		t.Fatal(err)
	}
	if !reg.IsDefault("echo") || reg.IsDefault("missing") {
		t.Errorf("IsDefault(echo) = %v, IsDefault(missing) = %v", reg.IsDefault("echo"), reg.IsDefault("missing"))
	}
	sub := bus.Subscribe(nil)
	defer sub.Close()

	file := tool("echo", "", "tools/echo.yaml:1")
	if err := reg.Register(file); err != nil {
		t.Fatalf("Register over a default = %v, want nil", err)
	}
	if got, _ := reg.Tool("echo"); got != file {
		t.Errorf("Tool(echo) is not the registration that replaced the default")
	}
	if reg.IsDefault("echo") {
		t.Error("IsDefault(echo) after the replacement = true")
	}
	if diff := cmp.Diff([]string{"echo", "calc"}, names(reg.List(wield.Query{}))); diff != "" {
		t.Errorf("the replacement moved in the list (-want +got):\n%s", diff)
	}
	if sh := reg.Shadowed(); len(sh["echo"]) != 1 || sh["echo"][0] != builtinEcho {
		t.Errorf("Shadowed() = %v, want echo: [the default]", sh)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("replacing a default logged a warning:\n%s", logs.String())
	}
	// A second registration of the name is a duplicate of the replacement.
	if err := reg.Register(tool("echo", "", "tools/again.yaml:1")); !errors.Is(err, wield.ErrDuplicate) {
		t.Errorf("Register of a taken name = %v, want ErrDuplicate", err)
	}
	// Update keeps the default beneath.
	file2 := tool("echo", "", "tools/echo.yaml:2")
	if err := reg.Update(file2); err != nil {
		t.Fatal(err)
	}
	if !reg.Remove("echo") {
		t.Fatal("Remove(echo) = false")
	}
	if got, _ := reg.Tool("echo"); got != builtinEcho {
		t.Errorf("after Remove, Tool(echo) = %v, want the default back", got)
	}
	if !reg.IsDefault("echo") {
		t.Error("IsDefault(echo) after the default came back = false")
	}
	if !reg.Remove("echo") {
		t.Fatal("Remove(echo) of the default = false")
	}
	if _, ok := reg.Tool("echo"); ok {
		t.Error("the default is still there after its own Remove")
	}

	var got []string
	for _, e := range drain(t, sub) {
		got = append(got, fmt.Sprintf("%s %s %s", e.Type, e.Tool, e.Source))
	}
	want := []string{
		"tool_shadowed echo builtin",
		"tool_updated echo tools/echo.yaml:1",
		"tool_shadowed echo tools/again.yaml:1",
		"tool_updated echo tools/echo.yaml:2",
		"tool_updated echo builtin",
		"tool_removed echo builtin",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestRegisterDefaultsDuplicate: a default never replaces anything; a
// default whose name is taken is shadowed like any duplicate.
func TestRegisterDefaultsDuplicate(t *testing.T) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	first := tool("x", "", "go")
	reg.MustRegister(first)
	if err := reg.RegisterDefaults(tool("x", "", "builtin")); !errors.Is(err, wield.ErrDuplicate) {
		t.Fatalf("RegisterDefaults of a taken name = %v, want ErrDuplicate", err)
	}
	if got, _ := reg.Tool("x"); got != first || reg.IsDefault("x") {
		t.Errorf("the default took a registered tool's place")
	}
	if err := reg.RegisterDefaults(tool("y", "", "builtin")); err != nil {
		t.Fatal(err)
	}
	if err := reg.RegisterDefaults(tool("y", "", "builtin 2")); !errors.Is(err, wield.ErrDuplicate) {
		t.Errorf("a second default of a name = %v, want ErrDuplicate", err)
	}
}

// TestShadow: the loader records the duplicates it reported itself, once
// per source, without a warning in the log.
func TestShadow(t *testing.T) {
	var logs bytes.Buffer
	bus := wield.NewBus(16)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	reg.MustRegister(tool("x", "", "a.yaml:2"))
	sub := bus.Subscribe(nil)
	defer sub.Close()
	b1, b2 := tool("x", "", "b.yaml:2"), tool("x", "", "b.yaml:2")
	reg.Shadow(b1)
	reg.Shadow(b1) // the same tool again: nothing new
	reg.Shadow(b2) // the same file loaded again: takes b1's place
	if sh := reg.Shadowed(); len(sh["x"]) != 1 || sh["x"][0] != b2 {
		t.Errorf("Shadowed() = %v, want x: [the latest b.yaml:2]", sh)
	}
	if logs.Len() != 0 {
		t.Errorf("Shadow logged:\n%s", logs.String())
	}
	evs := drain(t, sub)
	if len(evs) != 2 || evs[0].Type != wield.EventToolShadowed || !strings.Contains(evs[0].Message, "a.yaml:2") {
		t.Errorf("events = %+v, want two tool_shadowed naming the winner", evs)
	}
}
