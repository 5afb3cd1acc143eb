package toolsearch_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/program"
	"github.com/wieldhq/wield/toolsearch"
)

// TestSearchDescribesForCaller: search_tools gives a tool described for
// its caller as the lists do (wield.ListFor): run_program found by a
// caller lists the functions that caller's programs have, never a tool
// the policy denies it (bob, delete_file) nor one outside its toolkit
// (a key's scope: the toolset ops). It gave the whole registry's.
func TestSearchDescribesForCaller(t *testing.T) {
	reg := wield.NewRegistry(nil)
	for _, tl := range catalogTools() {
		reg.MustRegister(tl)
	}
	reg.MustRegister(toolsearch.Tool(toolsearch.Cache(func() []*wield.Tool { return reg.List(wield.Query{}) }), &toolsearch.ToolOptions{Registry: reg}))
	eng := engine.New(reg, &engine.Options{Logger: quiet, Policy: hideFrom{"bob", "delete_file"}})
	reg.MustRegister(program.Tool(program.Options{Invoker: eng, Registry: reg}))
	if err := reg.DefineToolset(wield.Toolset{Name: "ops", Tools: []string{"search_tools", program.Name, "read_file"}}); err != nil {
		t.Fatal(err)
	}
	search := func(who string, kit *wield.Toolkit) string {
		t.Helper()
		ctx := wield.WithRequester(context.Background(), "key:"+who)
		res, err := eng.Call(ctx, wield.Call{Tool: "search_tools", Toolkit: kit,
			Arguments: json.RawMessage(`{"query":"run a short Starlark program that calls tools as functions","limit":1}`)})
		if err != nil || !res.OK {
			t.Fatalf("search as %s: %v %+v", who, err, res)
		}
		var out toolsearch.SearchOutput
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Tools) != 1 || out.Tools[0].Name != program.Name {
			t.Fatalf("search as %s found %+v, want run_program", who, out.Tools)
		}
		return out.Tools[0].Description
	}
	if d := search("alice", nil); !strings.Contains(d, "delete_file(") {
		t.Errorf("alice's run_program lacks delete_file:\n%s", d)
	}
	if d := search("bob", nil); strings.Contains(d, "delete_file") || !strings.Contains(d, "read_file(") {
		t.Errorf("bob's run_program names delete_file, which the policy denies him, or lacks read_file:\n%s", d)
	}
	kit := reg.ScopeToolkit("key k", []string{"ops"}, nil)
	if d := search("alice", kit); strings.Contains(d, "delete_file") || !strings.Contains(d, "read_file(") {
		t.Errorf("run_program found within toolset ops names a tool outside it, or lacks read_file:\n%s", d)
	}
}
