package program_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
	"github.com/wieldhq/wield/program"
)

type addIn struct {
	A int `json:"a" description:"first addend"`
	B int `json:"b,omitempty" description:"second addend"`
}

type setup struct {
	reg   *wield.Registry
	eng   *engine.Engine
	store *memstore.Store
	asked chan *wield.ApprovalRequest
}

// newSetup registers add, ten numbered tools t0..t9 (t9 confirm, admitted
// for programs), secret (confirm, default callers) and run_program.
func newSetup(t testing.TB, opts program.Options) *setup {
	t.Helper()
	s := &setup{reg: wield.NewRegistry(nil), store: memstore.New(100000), asked: make(chan *wield.ApprovalRequest, 10)}
	add := func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil }
	s.reg.MustRegister(wield.Func("add", "Add two integers", add))
	for i := range 10 {
		tool := wield.Func(fmt.Sprintf("t%d", i), "Add", add)
		if i == 9 {
			tool.Permission = wield.PermissionConfirm
			tool.AllowedCallers = []string{wield.AllowDirect, wield.AllowProgram}
		}
		s.reg.MustRegister(tool)
	}
	secret := wield.Func("secret", "Needs approval", add)
	secret.Permission = wield.PermissionConfirm
	s.reg.MustRegister(secret)
	approver := wield.ApproverFunc(func(ctx context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
		s.asked <- req
		return wield.Decision{Approved: true, By: "test"}, nil
	})
	s.eng = engine.New(s.reg, &engine.Options{Store: s.store, Approver: approver})
	opts.Invoker, opts.Registry = s.eng, s.reg
	s.reg.MustRegister(program.Tool(opts))
	return s
}

func (s *setup) run(t testing.TB, code string) *wield.Result {
	t.Helper()
	args, _ := json.Marshal(program.Input{Code: code})
	res, err := s.eng.Call(context.Background(), wield.Call{Tool: program.Name, Arguments: args, Caller: wield.Caller{ID: "agent-1", Type: wield.CallerConversationAgent, ConversationID: "conv-1"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestTenInnerCallsUnderOneParent(t *testing.T) {
	s := newSetup(t, program.Options{})
	res := s.run(t, "total = 0\nfor i in range(10):\n    total += call('t%d' % i, {'a': i, 'b': 1})\nresult = total\n")
	if !res.OK {
		t.Fatalf("program failed: %s: %s", res.ErrorType, res.Error)
	}
	var out program.Output
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	if out.Calls != 10 || fmt.Sprint(out.Result) != "55" {
		t.Errorf("output = %+v, want 10 calls and result 55", out)
	}
	select {
	case req := <-s.asked:
		if req.Tool != "t9" || req.Caller.Type != wield.CallerProgram || req.Caller.ID != res.CallID {
			t.Errorf("approval asked for %s by %+v, want t9 by the program %s", req.Tool, req.Caller, res.CallID)
		}
	default:
		t.Error("the confirm tool t9 ran without asking for approval")
	}
	var children []*wield.Record
	for _, r := range s.store.Records(memstore.Filter{ConversationID: "conv-1"}) {
		if r.Call.Caller.ID == res.CallID {
			children = append(children, r)
		}
	}
	if len(children) != 10 {
		t.Fatalf("%d records under the program's call, want 10", len(children))
	}
	for _, r := range children {
		c := r.Call.Caller
		if c.Variables[wield.ProgramParentVariable] != res.CallID || c.ConversationID != "conv-1" || c.Type != wield.CallerProgram || !r.Result.OK {
			t.Errorf("record %s: caller %+v ok=%v, want the program's child in conv-1", r.Call.Tool, c, r.Result.OK)
		}
	}
}

func TestSandboxLimits(t *testing.T) {
	// deep is a list 200,000 deep: Starlark writes such a value out by
	// recursion, each level scanning the levels above for a cycle (hours),
	// and reads JSON text so deep by recursion (a stack overflow, fatal).
	const deep = "x = []\nfor i in range(200000):\n    x = [x]\n"
	tests := []struct {
		name, code string
		opts       program.Options
		errType    wield.ErrorType
		errHas     string
	}{
		{"busy loop hits the deadline", "while True:\n    pass\n", program.Options{Timeout: 200 * time.Millisecond, MaxSteps: 1 << 62}, wield.ErrTimeout, "timed out"},
		{"busy loop hits the step limit", "while True:\n    pass\n", program.Options{MaxSteps: 100000}, wield.ErrExecution, "more than 100000 steps"},
		{"string repetition bomb", "s = 'x' * 1000000000\n", program.Options{}, wield.ErrExecution, "over the program's limit"},
		{"doubling bomb", "s = 'xxxxxxxx'\nfor i in range(100):\n    s = s + s\n", program.Options{}, wield.ErrExecution, "over the program's limit"},
		{"augmented doubling bomb", "s = ['x']\nfor i in range(100):\n    s += s\n", program.Options{}, wield.ErrExecution, "over the program's limit"},
		{"join bomb", "s = 'x' * 1000000\nr = s.join([s] * 1000)\n", program.Options{}, wield.ErrExecution, "over the program's limit"},
		{"range bomb", "l = list(range(1000000000))\n", program.Options{}, wield.ErrExecution, "over the program's limit"},
		{"int squaring bomb", "n = 3\nfor i in range(100):\n    n = n * n\n", program.Options{}, wield.ErrExecution, "bits per integer"},
		{"list repetition bomb", "l = [1, 2] * 100000000\n", program.Options{}, wield.ErrExecution, "over the program's limit"},
		{"format bomb", "s = 'x' * 8000000\nt = '%s%s' % (s, s)\nu = '%s%s' % (t, t)\n", program.Options{}, wield.ErrExecution, "over the program's limit"},
		{"many values each under the limit", "l = ['x' * 1000000 + str(i) for i in range(100000)]\n", program.Options{MaxMemory: 128 << 20}, wield.ErrExecution, "memory grew by"},
		{"copies each under the limit", "l = list(range(500000))\nm = [list(l) for i in range(10000)]\n", program.Options{MaxMemory: 128 << 20}, wield.ErrExecution, "memory grew by"},
		{"str of shared elements", "s = 'x' * 1000000\nl = [s] * 1000\nt = str(l)\n", program.Options{}, wield.ErrExecution, "over the program's limit"},
		{"print of shared elements", "s = 'x' * 1000000\nprint([s] * 1000)\n", program.Options{}, wield.ErrExecution, "printed more than"},
		{"json of shared elements", "s = 'x' * 1000000\nj = json.encode([s] * 1000)\n", program.Options{}, wield.ErrExecution, "over the program's limit"},
		{"arguments of shared elements", "s = 'x' * 1000000\nadd(a=[s] * 1000)\n", program.Options{}, wield.ErrExecution, "arguments of add"},
		{"result of shared elements", "s = 'x' * 1000000\nresult = [s] * 1000\n", program.Options{}, wield.ErrExecution, "program's result would be"},
		{"deep JSON text", "n = 2000000\nv = json.decode('[' * n + ']' * n)\n", program.Options{}, wield.ErrExecution, "the JSON text: nested deeper than 1000 levels"},
		{"str of a deep list", deep + "s = str(x)\n", program.Options{}, wield.ErrExecution, "the argument of str: nested deeper than 1000 levels"},
		{"repr of a deep dict", "x = {}\nfor i in range(200000):\n    x = {'a': x}\ns = repr(x)\n", program.Options{}, wield.ErrExecution, "nested deeper than 1000 levels"},
		{"json of a deep list", deep + "s = json.encode(x)\n", program.Options{}, wield.ErrExecution, "nested deeper than 1000 levels"},
		{"print of a deep list", deep + "print(x)\n", program.Options{}, wield.ErrExecution, "what the program prints: nested deeper than 1000 levels"},
		{"format of a deep list", deep + "s = '%s' % (x,)\n", program.Options{}, wield.ErrExecution, "nested deeper than 1000 levels"},
		{"arguments of a deep list", deep + "add(a=x)\n", program.Options{}, wield.ErrExecution, "the arguments of add: nested deeper"},
		{"result of a deep list", deep + "result = x\n", program.Options{}, wield.ErrExecution, "the program's result is nested deeper than 1000 levels"},
		{"split bomb", "s = ',' * 10000000\nl = s.split(',')\n", program.Options{}, wield.ErrExecution, "over the program's limit"},
		{"recursion", "def f(n):\n    return f(n + 1)\nf(0)\n", program.Options{}, wield.ErrExecution, "called recursively"},
		{"10,000 inner calls capped", "for i in range(10000):\n    add(a=i)\n", program.Options{MaxCalls: 100}, wield.ErrExecution, "more than 100 tool calls"},
		{"confirm tool not admitted", "call('secret', {'a': 1})\n", program.Options{}, wield.ErrPermissionDenied, "may not be called from a program"},
		{"fail instead of waiting", "t9(a=1)\n", program.Options{FailOnApproval: true}, wield.ErrPermissionDenied, "do not wait"},
		{"no nesting", "call('run_program', {'code': '1'})\n", program.Options{}, wield.ErrPermissionDenied, "may not be called from a program"},
		{"print flood", "for i in range(100000):\n    print('0123456789')\n", program.Options{MaxPrint: 1000}, wield.ErrExecution, "printed more than 1000 bytes"},
		{"inner validation failure", "add(a='x')\n", program.Options{}, wield.ErrValidation, "add failed (validation_error)"},
		{"no modules", "load('time', 'now')\n", program.Options{}, wield.ErrExecution, "a program loads no modules"},
		{"no files", "open('/etc/passwd')\n", program.Options{}, wield.ErrValidation, "undefined: open"},
		{"a tool not admitted is no function", "secret(a=1)\n", program.Options{}, wield.ErrValidation, "undefined: secret"},
		{"positional arguments", "add(1)\n", program.Options{}, wield.ErrExecution, "keyword arguments only"},
		{"syntax error", "def (\n", program.Options{}, wield.ErrValidation, "does not parse"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, tc.opts)
			before := heap()
			start := time.Now()
			res := s.run(t, tc.code)
			if res.OK || res.ErrorType != tc.errType || !strings.Contains(res.Error, tc.errHas) {
				t.Fatalf("result ok=%v %s: %q, want %s containing %q", res.OK, res.ErrorType, res.Error, tc.errType, tc.errHas)
			}
			// A bound against hours in one step, not a figure of speed:
			// under the race detector on a loaded 2-core machine the copies
			// case took 12.8 s (3.1 s alone).
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %s", d)
			}
			if grew := heap() - before; grew > 256<<20 {
				t.Errorf("heap grew by %d MiB", grew>>20)
			}
			// The interpreter stopped: no handler outlives its call.
			for i := 0; s.eng.Stray() != 0 && i < 100; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			if n := s.eng.Stray(); n != 0 {
				t.Errorf("%d handlers still running after the program ended", n)
			}
		})
	}
}

func heap() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func TestDescriptionListsTools(t *testing.T) {
	s := newSetup(t, program.Options{})
	tool, _ := s.reg.Tool(program.Name)
	for _, want := range []string{"add(a: int, b: int = None)\n    Add two integers\n    a: first addend", "t9(a: int"} {
		if !strings.Contains(tool.Description, want) {
			t.Errorf("description lacks %q:\n%s", want, tool.Description)
		}
	}
	if strings.Contains(tool.Description, "secret(") || strings.Contains(tool.Description, "run_program(") {
		t.Errorf("description lists a tool programs may not call:\n%s", tool.Description)
	}
}

func TestResultAndPrint(t *testing.T) {
	s := newSetup(t, program.Options{})
	res := s.run(t, "r = add(a=2, b=3)\nprint('<sum> &', r)\nresult = {'sum': r, 'list': [1, '<x>']}\n")
	if !res.OK {
		t.Fatalf("%s: %s", res.ErrorType, res.Error)
	}
	// Text for a model is not HTML-escaped.
	want := `{"result":{"list":[1,"<x>"],"sum":5},"printed":"<sum> & 5\n","calls":1}`
	if string(res.Output) != want {
		t.Errorf("output = %s, want %s", res.Output, want)
	}
}

// TestInnerApprovalEndsWithProgram: when the program's caller goes away
// while an inner call waits for approval, the inner call is ended on
// purpose, so its approval is withdrawn instead of being left to run
// after the program is gone.
func TestInnerApprovalEndsWithProgram(t *testing.T) {
	reg := wield.NewRegistry(nil)
	tool := wield.Func("pay", "Pay", func(_ context.Context, in addIn) (int, error) { return in.A, nil })
	tool.Permission = wield.PermissionConfirm
	tool.AllowedCallers = []string{wield.AllowDirect, wield.AllowProgram}
	reg.MustRegister(tool)
	onPurpose := make(chan bool, 1)
	asked := make(chan struct{})
	approver := wield.ApproverFunc(func(ctx context.Context, _ *wield.ApprovalRequest) (wield.Decision, error) {
		close(asked)
		<-ctx.Done()
		onPurpose <- wield.CanceledOnPurpose(ctx)
		return wield.Decision{}, ctx.Err()
	})
	eng := engine.New(reg, &engine.Options{Approver: approver})
	reg.MustRegister(program.Tool(program.Options{Invoker: eng, Registry: reg}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *wield.Result)
	go func() {
		args, _ := json.Marshal(program.Input{Code: "pay(a=1)"})
		res, _ := eng.Call(ctx, wield.Call{Tool: program.Name, Arguments: args})
		done <- res
	}()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the inner call never asked for approval")
	}
	cancel() // the program's caller goes away, without meaning to end it
	select {
	case p := <-onPurpose:
		if !p {
			t.Error("the inner call's approval was left pending after its program ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the inner call still waits for approval after its program's caller left")
	}
	select {
	case res := <-done:
		if res == nil || res.OK {
			t.Errorf("program result %+v, want a failure", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the program did not end")
	}
}

// TestSignatureClipsOnCharacter cuts a tool's description longer than 200
// bytes at the last whole character, with "…": the cut used to fall inside
// an "é", and the program tool's description the model read held "\xc3".
func TestSignatureClipsOnCharacter(t *testing.T) {
	// "x", then "é"s of 2 bytes: the 100th is bytes 199 and 200.
	tool := wield.Func("accents", "x"+strings.Repeat("é", 150), func(_ context.Context, in addIn) (int, error) { return in.A, nil })
	got := program.Signature(tool)
	want := "\n    x" + strings.Repeat("é", 99) + "…\n"
	if !utf8.ValidString(got) || !strings.Contains(got, want) {
		t.Errorf("Signature:\n%s\nwant valid UTF-8 with the line %q", got, want)
	}
}

// TestLoadSaysWhy: a program's load() is refused saying that programs load
// no modules and what they have instead; Starlark's own words were "load
// not implemented by this application", which told a model nothing.
func TestLoadSaysWhy(t *testing.T) {
	s := newSetup(t, program.Options{})
	res := s.run(t, "load(\"math.star\", \"sqrt\")\nresult = 1\n")
	if res.OK || res.ErrorType != wield.ErrExecution || !strings.Contains(res.Error, `load("math.star"): a program loads no modules`) || strings.Contains(res.Error, "not implemented") {
		t.Errorf("load: %s %s, want an execution_error saying a program loads no modules", res.ErrorType, res.Error)
	}
}
