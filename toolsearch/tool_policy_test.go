package toolsearch_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/toolsearch"
)

// hideFrom is a policy that denies key:who the named tool.
type hideFrom struct{ who, tool string }

func (h hideFrom) Decide(_ context.Context, req wield.PolicyRequest) wield.PolicyDecision {
	if req.Requester == "key:"+h.who && req.Tool.Name == h.tool {
		return wield.PolicyDecision{Policies: []string{"hide"}}
	}
	return wield.PolicyDecision{Allow: true}
}

// TestSearchLeavesOutWhatPolicyDenies: search_tools, run by the engine,
// finds for each caller only the tools the engine's policy lets it call,
// as lists show them; the total counts those only.
func TestSearchLeavesOutWhatPolicyDenies(t *testing.T) {
	reg := wield.NewRegistry(nil)
	for _, tl := range catalogTools() {
		reg.MustRegister(tl)
	}
	reg.MustRegister(toolsearch.Tool(toolsearch.Cache(func() []*wield.Tool { return reg.List(wield.Query{}) }), &toolsearch.ToolOptions{Registry: reg}))
	eng := engine.New(reg, &engine.Options{Logger: quiet, Policy: hideFrom{"bob", "delete_file"}})
	search := func(who string) toolsearch.SearchOutput {
		t.Helper()
		ctx := wield.WithRequester(context.Background(), "key:"+who)
		res, err := eng.Call(ctx, wield.Call{Tool: "search_tools", Arguments: json.RawMessage(`{"query":"delete a file","limit":1}`)})
		if err != nil || !res.OK {
			t.Fatalf("search as %s: %v %+v", who, err, res)
		}
		var out toolsearch.SearchOutput
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := search("alice"), search("bob")
	if len(a.Tools) != 1 || a.Tools[0].Name != "delete_file" {
		t.Errorf("alice's best match = %+v, want delete_file", a.Tools)
	}
	for _, f := range b.Tools {
		if f.Name == "delete_file" {
			t.Errorf("bob found delete_file, which the policy denies him: %+v", b)
		}
	}
	if len(b.Tools) != 1 || b.Total != a.Total-1 {
		t.Errorf("bob's search = %d tools of %d, want 1 of %d (alice's total less delete_file)", len(b.Tools), b.Total, a.Total-1)
	}
}
