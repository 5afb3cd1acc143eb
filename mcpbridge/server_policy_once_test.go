package mcpbridge_test

import (
	"context"
	"maps"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/program"
)

// countingPolicy allows everything and counts its decisions by tool and
// the caller's type.
type countingPolicy struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countingPolicy) Decide(_ context.Context, req wield.PolicyRequest) wield.PolicyDecision {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[req.Tool.Name+" for "+string(req.Caller.Type)]++
	return wield.PolicyDecision{Allow: true}
}

// TestServerListDecidesOnce: a tools/list under a policy decides each tool
// once for the client (is it listed) and once for its programs (is it a
// function of run_program), not again to describe run_program for no
// caller in particular, which no client under a policy is shown.
func TestServerListDecidesOnce(t *testing.T) {
	pol := &countingPolicy{n: map[string]int{}}
	add := func(context.Context, srvNoArgs) (string, error) { return "ok", nil }
	f := srvNew(t, nil, &engine.Options{Policy: pol}, wield.Func("alpha", "A.", add), wield.Func("beta", "B.", add))
	f.reg.MustRegister(program.Tool(program.Options{Invoker: f.eng, Registry: f.reg}))
	cs := srvConnect(t, f, srvStateful, "/mcp", nil)
	for range 2 { // the first list and a later one
		pol.mu.Lock()
		clear(pol.n)
		pol.mu.Unlock()
		l, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Tools) < 3 {
			t.Fatalf("listed %d tools, want alpha, beta, run_program and the others", len(l.Tools))
		}
		pol.mu.Lock()
		got := maps.Clone(pol.n)
		pol.mu.Unlock()
		// The client's calls are of type direct, a program's inner
		// calls of type program.
		want := map[string]int{}
		for k := range got {
			want[k] = 1
		}
		if diff := cmp.Diff(want, got); diff != "" || got["alpha for program"] != 1 || got["alpha for direct"] != 1 {
			t.Errorf("decisions of one tools/list (-once +made):\n%s\n%v", diff, got)
		}
	}
}
