package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/openai"
	"github.com/wieldhq/wield/toolsearch"
)

// TestLoopSearchesAreRecorded: the model's search_tools calls go through
// the engine like any call, so they are recorded under the agent and its
// conversation; the search is within the agent's toolkit (a registry tool
// outside it that matches better is not found), and a second agent's
// toolkit is searched on its own.
func TestLoopSearchesAreRecorded(t *testing.T) {
	ctx := context.Background()
	names := []string{"calculator", "echo"}
	var extra []*wield.Tool
	for i := range 60 {
		n := fmt.Sprintf("crm_record_%02d", i)
		extra = append(extra, wield.Func(n, fmt.Sprintf("Update customer record field number %d in the CRM.", i),
			func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }))
		names = append(names, n)
	}
	// Outside the toolkit, and a better match for the query.
	extra = append(extra, wield.Func("arithmetic_expression_evaluator", "Evaluate an arithmetic expression exactly.",
		func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }))
	reg, e, store := recordedWorld(t, extra...)

	f := &fakeModel{t: t, path: "/v1/chat/completions"}
	f.script = searchThenCalculate()
	m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", MaxRetries: -1})
	a := &agent.Agent{Name: "big", Model: m, Toolkit: toolkit(t, reg, "big", names...)}
	out, err := agent.NewLoop(e, nil).Run(ctx, a, "conv-search", []llm.Message{{Role: llm.RoleUser, Content: "2 to the 10th?"}})
	if err != nil || out.Answer != "1024" {
		t.Fatalf("got %+v, %v", out, err)
	}
	if out.Summary.TotalCalls != 2 || out.Summary.ToolUsage["search_tools"] != 1 {
		t.Errorf("summary %+v, want search_tools and calculator", out.Summary)
	}
	page, err := store.Calls(ctx, wield.CallQuery{ConversationID: "conv-search"})
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, r := range page.Records {
		tools = append(tools, r.Call.Tool)
		if r.Call.Caller.ID != "big" {
			t.Errorf("%s was recorded for caller %q, want the agent", r.Call.Tool, r.Call.Caller.ID)
		}
		if r.Call.Tool == "search_tools" {
			var found toolsearch.SearchOutput
			if err := json.Unmarshal(r.Result.Output, &found); err != nil || len(found.Tools) == 0 {
				t.Fatalf("search_tools recorded %s (%v)", r.Result.Output, err)
			}
			for _, ft := range found.Tools {
				if !slices.Contains(names, ft.Name) {
					t.Errorf("the search found %s, outside the agent's toolkit", ft.Name)
				}
			}
		}
	}
	slices.Sort(tools)
	if strings.Join(tools, ",") != "calculator,search_tools" {
		t.Errorf("recorded %v, want calculator and search_tools", tools)
	}
}

// TestLoopLeavesToolkit: offering search_tools to a model does not change
// the agent's registered toolkit (which REST's ?agent=, MCP and other runs
// list): each run confines its calls to the toolkit and search_tools on a
// toolkit of its own. Runs of two agents go on at once, each searching and
// calling; afterwards both toolkits list what they listed before, and
// search_tools is a registered tool.
func TestLoopLeavesToolkit(t *testing.T) {
	ctx := context.Background()
	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.Defaults()...)
	names := []string{"calculator", "echo"}
	for i := range 60 {
		n := fmt.Sprintf("crm_record_%02d", i)
		reg.MustRegister(wield.Func(n, fmt.Sprintf("Update customer record field number %d in the CRM.", i),
			func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }))
		names = append(names, n)
	}
	e := engine.New(reg, nil)
	t.Cleanup(func() { e.Close(context.Background()) })
	kits := map[string]*wield.Toolkit{"big_a": toolkit(t, reg, "big_a", names...), "big_b": toolkit(t, reg, "big_b", names...)}
	loop := agent.NewLoop(e, nil)

	const runsPerAgent = 3
	type run struct {
		agent string
		out   *agent.Outcome
		err   error
	}
	done := make(chan run, 2*runsPerAgent)
	for name, kit := range kits {
		for range runsPerAgent {
			f := &fakeModel{t: t, path: "/v1/chat/completions"}
			f.script = searchThenCalculate()
			m, _ := openai.NewClient(openai.ClientOptions{Model: "gpt-test", BaseURL: serve(t, f) + "/v1", MaxRetries: -1})
			a := &agent.Agent{Name: name, Model: m, Toolkit: kit}
			go func() {
				out, err := loop.Run(ctx, a, "conv-"+name, []llm.Message{{Role: llm.RoleUser, Content: "2 to the 10th?"}})
				done <- run{name, out, err}
			}()
		}
	}
	for range 2 * runsPerAgent {
		r := <-done
		if r.err != nil || r.out.Answer != "1024" {
			t.Fatalf("%s: %+v, %v", r.agent, r.out, r.err)
		}
		if r.out.Summary.SuccessfulCalls != 2 || r.out.Summary.ToolUsage["search_tools"] != 1 {
			t.Errorf("%s: summary %+v, want search_tools and calculator, both successful", r.agent, r.out.Summary)
		}
	}
	for name, kit := range kits {
		if diff := cmp.Diff(names, kit.Names()); diff != "" {
			t.Errorf("%s's toolkit after the runs (-want +got)\n%s", name, diff)
		}
		if k, _ := reg.Toolkit(name); k.Has("search_tools") {
			t.Errorf("the registry's toolkit of %s has search_tools", name)
		}
	}
	if _, ok := reg.Tool("search_tools"); !ok {
		t.Error("search_tools is not registered: the runs' searches did not go through the engine")
	}
}

// searchThenCalculate is a model's turns that search for a calculator,
// call it for 2**10 and answer 1024.
func searchThenCalculate() []func(map[string]any) string {
	return []func(map[string]any) string{
		func(map[string]any) string {
			return openAIReply("", [3]string{"s1", "search_tools", `{"query":"evaluate an arithmetic expression"}`})
		},
		func(map[string]any) string {
			return openAIReply("", [3]string{"c1", "calculator", `{"expression":"2**10"}`})
		},
		func(map[string]any) string { return openAIReply("1024") },
	}
}
