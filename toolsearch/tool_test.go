package toolsearch_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/toolsearch"
)

var quiet = slog.New(slog.DiscardHandler)

type noInput struct{}

type pathInput struct {
	Path string `json:"path" description:"Path of the file"`
}

func fixed(name, desc string) *wield.Tool {
	return wield.Func(name, desc, func(context.Context, noInput) (string, error) { return name, nil })
}

// catalogTools is a small catalog with one typed tool whose schema the
// search result must carry.
func catalogTools() []*wield.Tool {
	return []*wield.Tool{
		wield.Func("read_file", "Read a text file from the workspace.", func(context.Context, pathInput) (string, error) { return "", nil }),
		fixed("delete_file", "Delete a file from the workspace."),
		fixed("send_email", "Send an email to people."),
		fixed("create_issue", "Open a new issue in the tracker."),
		fixed("list_issues", "List the issues of the tracker."),
	}
}

// newEngine registers tools and search_tools over the registry's own
// tools, and returns the engine and the registry.
func newEngine(t *testing.T, opts *toolsearch.ToolOptions, tools ...*wield.Tool) (*engine.Engine, *wield.Registry) {
	t.Helper()
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: quiet})
	reg.MustRegister(tools...)
	search := toolsearch.Tool(toolsearch.Cache(func() []*wield.Tool { return reg.List(wield.Query{}) }), opts)
	reg.MustRegister(search)
	e := engine.New(reg, &engine.Options{Logger: quiet})
	t.Cleanup(func() {
		if err := e.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e, reg
}

func call(t *testing.T, e *engine.Engine, tool, args string) *wield.Result {
	t.Helper()
	res, err := e.Call(context.Background(), wield.Call{Tool: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Call(%s, %s): system error %v", tool, args, err)
	}
	return res
}

func decode(t *testing.T, res *wield.Result) toolsearch.SearchOutput {
	t.Helper()
	if !res.OK {
		t.Fatalf("call failed: %s: %s", res.ErrorType, res.Error)
	}
	var out toolsearch.SearchOutput
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	return out
}

func foundNames(out toolsearch.SearchOutput) []string {
	var names []string
	for _, f := range out.Tools {
		names = append(names, f.Name)
	}
	return names
}

func TestToolThroughEngine(t *testing.T) {
	e, _ := newEngine(t, nil, catalogTools()...)
	tests := []struct {
		name      string
		args      string
		want      []string
		wantTotal int
	}{
		{"best first with limit", `{"query":"open a bug","limit":1}`, []string{"create_issue"}, 2},
		{"default limit", `{"query":"file"}`, []string{"read_file", "delete_file"}, 2},
		{"coerced limit", `{"query":"remove a file","limit":"1"}`, []string{"delete_file"}, 2},
		{"never lists itself", `{"query":"search tools"}`, nil, 0},
		{"nothing found", `{"query":"kubernetes pods"}`, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := decode(t, call(t, e, "search_tools", tt.args))
			if diff := cmp.Diff(tt.want, foundNames(out)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if out.Total != tt.wantTotal {
				t.Errorf("total = %d, want %d", out.Total, tt.wantTotal)
			}
			if (out.Total == 0) != (out.Hint != "") {
				t.Errorf("hint %q with total %d: want a hint exactly when nothing matched", out.Hint, out.Total)
			}
			if out.Tools == nil {
				t.Error(`"tools" is null, want an array`)
			}
		})
	}
}

func TestToolResultCarriesDefinition(t *testing.T) {
	e, reg := newEngine(t, nil, catalogTools()...)
	res := call(t, e, "search_tools", `{"query":"read a file","limit":1}`)
	out := decode(t, res)
	if len(out.Tools) != 1 {
		t.Fatalf("got %v, want read_file alone", foundNames(out))
	}
	got := out.Tools[0]
	want, _ := reg.Tool("read_file")
	if got.Name != want.Name || got.Description != want.Description {
		t.Errorf("got %s %q, want %s %q", got.Name, got.Description, want.Name, want.Description)
	}
	wantSchema, _ := json.Marshal(want.InputSchema)
	gotSchema, _ := json.Marshal(got.InputSchema)
	if diff := cmp.Diff(string(wantSchema), string(gotSchema)); diff != "" {
		t.Errorf("input_schema (-want +got):\n%s", diff)
	}
	if got.Score <= 0 {
		t.Errorf("score = %v, want > 0", got.Score)
	}
	// The definition works: the agent loop can call the tool it found.
	if r := call(t, e, got.Name, `{"path":"a.txt"}`); !r.OK {
		t.Errorf("calling the found tool failed: %s", r.Error)
	}
	// The raw JSON has the documented keys.
	var raw struct {
		Tools []map[string]json.RawMessage `json:"tools"`
		Total *int                         `json:"total"`
	}
	if err := json.Unmarshal(res.Output, &raw); err != nil || raw.Total == nil || len(raw.Tools) != 1 {
		t.Fatalf("output %s does not have tools and total: %v", res.Output, err)
	}
	for _, k := range []string{"name", "description", "input_schema", "score"} {
		if _, ok := raw.Tools[0][k]; !ok {
			t.Errorf("tool entry %s lacks %q", res.Output, k)
		}
	}
}

func TestToolFailures(t *testing.T) {
	e, _ := newEngine(t, &toolsearch.ToolOptions{MaxLimit: 3}, catalogTools()...)
	tests := []struct {
		name string
		args string
		want wield.ErrorType
		text string // part of the message
	}{
		{"missing query", `{}`, wield.ErrValidation, "query"},
		{"empty query", `{"query":""}`, wield.ErrValidation, "query"},
		{"only stop words", `{"query":"the of and"}`, wield.ErrValidation, "no searchable word"},
		{"limit above the maximum", `{"query":"file","limit":4}`, wield.ErrValidation, "limit"},
		{"limit below one", `{"query":"file","limit":0}`, wield.ErrValidation, "limit"},
		{"unknown argument", `{"query":"file","top":2}`, wield.ErrValidation, "top"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, e, "search_tools", tt.args)
			if res.OK || res.ErrorType != tt.want {
				t.Fatalf("got ok=%v %s %q, want %s", res.OK, res.ErrorType, res.Error, tt.want)
			}
			msg := res.Error
			for _, v := range res.ValidationErrors {
				msg += "\n" + v.String()
			}
			if !strings.Contains(msg, tt.text) {
				t.Errorf("error %q does not mention %q", msg, tt.text)
			}
		})
	}
}

func TestToolNilIndex(t *testing.T) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: quiet})
	reg.MustRegister(toolsearch.Tool(func() *toolsearch.Index { return nil }, nil))
	e := engine.New(reg, &engine.Options{Logger: quiet})
	defer e.Close(context.Background())
	res := call(t, e, "search_tools", `{"query":"send email"}`)
	if res.OK || res.ErrorType != wield.ErrExecution {
		t.Errorf("got ok=%v %s %q, want execution_error", res.OK, res.ErrorType, res.Error)
	}
}

func TestToolDefinition(t *testing.T) {
	tool := toolsearch.Tool(func() *toolsearch.Index { return nil }, &toolsearch.ToolOptions{Name: "find_tools", DefaultLimit: 50, MaxLimit: 10})
	if err := tool.Check(); err != nil {
		t.Fatal(err)
	}
	type def struct {
		Name     string
		Category wield.Category
		Ann      wield.Annotations
		Inline   bool
		Required []string
		Max      float64
		Default  string
	}
	limit := tool.InputSchema.Properties["limit"]
	got := def{tool.Name, tool.Category, tool.Annotations, tool.Inline, tool.InputSchema.Required, *limit.Maximum, string(limit.Default)}
	want := def{"find_tools", wield.CategorySystem, wield.Annotations{ReadOnly: true, Idempotent: true}, true, []string{"query"}, 10, "10"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("definition (-want +got):\n%s", diff)
	}
	// Options of one tool do not leak into another's schema.
	other := toolsearch.Tool(func() *toolsearch.Index { return nil }, nil)
	if got := *other.InputSchema.Properties["limit"].Maximum; got != 20 {
		t.Errorf("default tool's maximum = %v, want 20", got)
	}
}

// TestCacheSeesReload checks that search_tools searches the registry as it
// is at the time of the call, and that an unchanged registry is not
// indexed again.
func TestCacheSeesReload(t *testing.T) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: quiet})
	reg.MustRegister(catalogTools()...)
	var lists atomic.Int32
	var builds int
	var last *toolsearch.Index
	cached := toolsearch.Cache(func() []*wield.Tool { lists.Add(1); return reg.List(wield.Query{}) })
	ix := func() *toolsearch.Index {
		x := cached()
		if x != last {
			builds++
			last = x
		}
		return x
	}
	reg.MustRegister(toolsearch.Tool(ix, nil))
	e := engine.New(reg, &engine.Options{Logger: quiet})
	defer e.Close(context.Background())

	steps := []struct {
		change     func()
		want       []string
		wantBuilds int
	}{
		{nil, nil, 1},
		{nil, nil, 1},
		{func() { reg.MustRegister(fixed("kube_get_pods", "List Kubernetes pods.")) }, []string{"kube_get_pods"}, 2},
		{func() {
			t2 := fixed("kube_get_pods", "List Kubernetes pods.")
			t2.Status = wield.StatusDisabled
			if err := reg.Update(t2); err != nil {
				t.Fatal(err)
			}
		}, nil, 3},
	}
	for i, s := range steps {
		if s.change != nil {
			s.change()
		}
		out := decode(t, call(t, e, "search_tools", `{"query":"kubernetes pods"}`))
		if diff := cmp.Diff(s.want, foundNames(out)); diff != "" {
			t.Errorf("step %d (-want +got):\n%s", i, diff)
		}
		if builds != s.wantBuilds {
			t.Errorf("step %d: %d indexes built, want %d", i, builds, s.wantBuilds)
		}
	}
	if lists.Load() != int32(len(steps)) {
		t.Errorf("list called %d times, want once per call (%d)", lists.Load(), len(steps))
	}
}

func TestCatalog(t *testing.T) {
	search := fixed("search_tools", "search")
	tools := catalogTools()
	tests := []struct {
		name      string
		tools     []*wield.Tool
		threshold int
		want      []string
	}{
		{"under the threshold", tools, 5, []string{"read_file", "delete_file", "send_email", "create_issue", "list_issues"}},
		{"over the threshold", tools, 4, []string{"search_tools"}},
		{"default threshold", tools, 0, []string{"read_file", "delete_file", "send_email", "create_issue", "list_issues"}},
		{"nothing", nil, 0, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, x := range toolsearch.Catalog(tt.tools, tt.threshold, search) {
			got = append(got, x.Name)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	many := make([]*wield.Tool, toolsearch.DefaultThreshold+1)
	if got := toolsearch.Catalog(many, 0, search); len(got) != 1 || got[0] != search {
		t.Errorf("Catalog of %d tools = %d tools, want search_tools alone", len(many), len(got))
	}
}
