package program_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
	"github.com/wieldhq/wield/program"
)

// denyFor is a policy that denies the key "key:"+who the named tools.
type denyFor struct {
	who   string
	tools []string
}

func (d denyFor) Decide(_ context.Context, req wield.PolicyRequest) wield.PolicyDecision {
	if req.Requester == "key:"+d.who && slices.Contains(d.tools, req.Tool.Name) {
		return wield.PolicyDecision{Policies: []string{"deny-" + req.Tool.Name}}
	}
	return wield.PolicyDecision{Allow: true}
}

func policySetup(t *testing.T) (*wield.Registry, *engine.Engine, *memstore.Store) {
	t.Helper()
	reg := wield.NewRegistry(nil)
	add := func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil }
	reg.MustRegister(wield.Func("add", "Add two integers", add))
	reg.MustRegister(wield.Func("secret_sum", "Add, secretly", add))
	store := memstore.New(1000)
	eng := engine.New(reg, &engine.Options{Store: store, Policy: denyFor{"bob", []string{"secret_sum"}}})
	reg.MustRegister(program.Tool(program.Options{Invoker: eng, Registry: reg}))
	return reg, eng, store
}

func describedAs(t *testing.T, eng *engine.Engine, reg *wield.Registry, ctx context.Context, kit *wield.Toolkit) *wield.Tool {
	t.Helper()
	rp, _ := reg.Tool(program.Name)
	l := wield.ListFor(ctx, eng.Policy(), reg, wield.Caller{ID: "agent-1"}, kit, []*wield.Tool{rp})
	if len(l) != 1 {
		t.Fatalf("run_program not listed: %v", l)
	}
	return l[0]
}

// TestDescriptionPerCaller: the description a caller is shown lists the
// functions its programs have: the policy's denials and the toolkit (a
// key's scope) narrow both alike.
func TestDescriptionPerCaller(t *testing.T) {
	reg, eng, store := policySetup(t)
	bob := wield.WithRequester(context.Background(), "key:bob")
	alice := wield.WithRequester(context.Background(), "key:alice")

	a := describedAs(t, eng, reg, alice, nil)
	b := describedAs(t, eng, reg, bob, nil)
	if !strings.Contains(a.Description, "secret_sum(") || !strings.Contains(a.Description, "add(") {
		t.Errorf("alice's description lacks secret_sum or add:\n%s", a.Description)
	}
	if strings.Contains(b.Description, "secret_sum") || !strings.Contains(b.Description, "add(") {
		t.Errorf("bob's description names secret_sum or lacks add:\n%s", b.Description)
	}
	if again := describedAs(t, eng, reg, bob, nil); again != b {
		t.Error("bob's description was made again for the same tools (not kept)")
	}
	if rp, _ := reg.Tool(program.Name); rp.Description == b.Description || !strings.Contains(rp.Description, "secret_sum(") {
		t.Error("the registered tool was changed, or does not list every tool")
	}
	kit := reg.NarrowToolkit("key scoped", []string{program.Name, "secret_sum"}, nil)
	if k := describedAs(t, eng, reg, alice, kit); strings.Contains(k.Description, "add(") || !strings.Contains(k.Description, "secret_sum(") {
		t.Errorf("within the toolkit [run_program secret_sum], alice's description:\n%s", k.Description)
	}
	if k := describedAs(t, eng, reg, bob, kit); strings.Contains(k.Description, "secret_sum") || !strings.Contains(k.Description, "(none)") {
		t.Errorf("within the toolkit, bob's description should list no function:\n%s", k.Description)
	}

	// What the description shows is what the program has.
	run := func(ctx context.Context, code string) *wield.Result {
		args, _ := json.Marshal(program.Input{Code: code})
		res, err := eng.Call(ctx, wield.Call{Tool: program.Name, Arguments: args, Caller: wield.Caller{ID: "agent-1"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run(alice, "result = secret_sum(a=1, b=2)"); !res.OK {
		t.Errorf("alice's program: %s %s", res.ErrorType, res.Error)
	}
	if res := run(bob, "result = secret_sum(a=1, b=2)"); res.OK || res.ErrorType != wield.ErrValidation || !strings.Contains(res.Error, "secret_sum") {
		t.Errorf("bob's program naming secret_sum: %v %s %s; want validation_error (not a function)", res.OK, res.ErrorType, res.Error)
	}
	// Hidden from bob, secret_sum is to him a tool that does not exist:
	// neither its arguments' errors nor the policy are told.
	res := run(bob, "result = call('secret_sum', {'a': 1})")
	if res.OK || res.ErrorType != wield.ErrToolNotFound || !strings.Contains(res.Error, "Can not find tool named 'secret_sum'") || strings.Contains(res.Error, "deny-secret_sum") {
		t.Errorf("bob's call('secret_sum'): %v %s %s; want tool_not_found, no policy named", res.OK, res.ErrorType, res.Error)
	}
	var inner []*wield.Record
	for _, r := range store.Records(memstore.Filter{}) {
		if r.Call.Caller.ID == res.CallID {
			inner = append(inner, r)
		}
	}
	if len(inner) != 1 || inner[0].Result.ErrorType != wield.ErrToolNotFound || inner[0].Call.Caller.Variables[wield.ProgramCallerVariable] != "agent-1" {
		t.Fatalf("records under bob's program: %d, want 1 tool_not_found naming agent-1 as the program's caller", len(inner))
	}
}

// TestRegisteredDescription: the description run_program is registered
// with (no caller in particular) lists the tools [program.Callable] gives,
// and only those: not a disabled tool, not one that refuses programs,
// not run_program itself.
func TestRegisteredDescription(t *testing.T) {
	reg := wield.NewRegistry(nil)
	add := func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil }
	reg.MustRegister(wield.Func("add", "Add two integers", add))
	off := wield.Func("off_sum", "Add, when enabled", add)
	off.Status = wield.StatusDisabled
	reg.MustRegister(off)
	direct := wield.Func("direct_sum", "Add, for direct callers", add)
	direct.AllowedCallers = []string{wield.AllowDirect}
	reg.MustRegister(direct)
	eng := engine.New(reg, &engine.Options{Store: memstore.New(10)})
	reg.MustRegister(program.Tool(program.Options{Invoker: eng, Registry: reg}))
	rp := program.Tool(program.Options{Invoker: eng, Registry: reg})
	var names []string
	for _, ct := range program.Callable(context.Background(), reg, nil, wield.Caller{}, nil) {
		names = append(names, ct.Name)
	}
	if !slices.Equal(names, []string{"add"}) {
		t.Fatalf("callable %v, want [add]", names)
	}
	_, fns, _ := strings.Cut(rp.Description, "Functions:\n")
	if !strings.HasPrefix(fns, "add(") {
		t.Errorf("functions described:\n%s\nwant add alone", fns)
	}
	for _, name := range []string{"off_sum", "direct_sum", program.Name + "("} {
		if strings.Contains(fns, name) {
			t.Errorf("the description lists %s:\n%s", name, fns)
		}
	}
}
