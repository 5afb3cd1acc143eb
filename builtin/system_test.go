package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
)

func TestSleep(t *testing.T) {
	e := newEngine(t, builtin.Sleep())
	res := call(t, e, "sleep", `{"duration":0.01}`)
	var out builtin.SleepOutput
	if !res.OK || json.Unmarshal(res.Output, &out) != nil || out.Slept < 0.01 {
		t.Fatalf("got %s %s %s", res.Output, res.ErrorType, res.Error)
	}
	for _, args := range []string{`{"duration":-1}`, `{"duration":301}`, `{"duration":"soon"}`, `{}`} {
		if res := call(t, e, "sleep", args); res.OK || res.ErrorType != wield.ErrValidation {
			t.Errorf("%s: got %s %s", args, res.Output, res.ErrorType)
		}
	}
	// A call's timeout cuts the sleep short.
	res, err := e.Call(context.Background(), wield.Call{Tool: "sleep", Arguments: json.RawMessage(`{"duration":300}`), Timeout: 20 * time.Millisecond})
	if err != nil || res.ErrorType != wield.ErrTimeout {
		t.Fatalf("got %+v %v", res, err)
	}
	// And the handler itself returns as soon as its context ends, so it
	// does not linger after the timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := builtin.Sleep().Handler.Handle(ctx, json.RawMessage(`{"duration":300}`)); err != context.Canceled {
		t.Errorf("canceled sleep returned %v", err)
	}
}

func TestEnvTools(t *testing.T) {
	t.Setenv("WIELD_TEST_VISIBLE", "yes")
	t.Setenv("WIELD_TEST_SECRET", "hunter2")
	t.Setenv("APP_MODE", "dev")
	var asked atomic.Int32
	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.EnvTools(builtin.EnvOptions{Allow: []string{"WIELD_TEST_VISIBLE", "WIELD_TEST_NEW", "APP_*"}})...)
	e := engine.New(reg, &engine.Options{Approver: wield.ApproverFunc(func(_ context.Context, req *wield.ApprovalRequest) (wield.Decision, error) {
		asked.Add(1)
		return wield.Decision{Approved: req.Tool == "set_env"}, nil
	})})
	t.Cleanup(func() { _ = e.Close(context.Background()) })

	tests := []struct {
		tool, args string
		want       string
		errType    wield.ErrorType
		errText    string
	}{
		{"get_env", `{"key":"WIELD_TEST_VISIBLE"}`, `{"value":"yes"}`, "", ""},
		{"get_env", `{"key":"APP_MODE"}`, `{"value":"dev"}`, "", ""},
		{"get_env", `{"key":"WIELD_TEST_NEW"}`, `{"value":null}`, "", ""},
		{"get_env", `{"key":"WIELD_TEST_SECRET"}`, "", wield.ErrPermissionDenied, `Access denied: environment variable "WIELD_TEST_SECRET" is not on the allow list`},
		{"get_env", `{"key":"wield_test_visible"}`, "", wield.ErrPermissionDenied, "Access denied"},
		{"get_env", `{"key":"PATH"}`, "", wield.ErrPermissionDenied, "Access denied"},
		{"get_env", `{"key":"APP"}`, "", wield.ErrPermissionDenied, "Access denied"},
		{"get_env", `{"key":"A=B"}`, "", wield.ErrValidation, "not a valid"},
		{"get_env", `{"key":""}`, "", wield.ErrValidation, ""},
		{"set_env", `{"key":"WIELD_TEST_NEW","value":"v1"}`, `{"previous":null}`, "", ""},
		{"get_env", `{"key":"WIELD_TEST_NEW"}`, `{"value":"v1"}`, "", ""},
		{"set_env", `{"key":"WIELD_TEST_NEW","value":"v2"}`, `{"previous":"v1"}`, "", ""},
		{"set_env", `{"key":"WIELD_TEST_SECRET","value":"x"}`, "", wield.ErrPermissionDenied, "Access denied"},
		{"set_env", `{"key":"APP_MODE","value":"a\u0000b"}`, "", wield.ErrValidation, "NUL"},
	}
	for _, tt := range tests {
		res := call(t, e, tt.tool, tt.args)
		if tt.errType != "" {
			if res.OK || res.ErrorType != tt.errType || !strings.Contains(res.Error, tt.errText) {
				t.Errorf("%s %s: got ok=%v %s %q, want %s containing %q", tt.tool, tt.args, res.OK, res.ErrorType, res.Error, tt.errType, tt.errText)
			}
			continue
		}
		if diff := cmp.Diff(tt.want, string(res.Output)); diff != "" || !res.OK {
			t.Errorf("%s %s: %s (-want +got):\n%s", tt.tool, tt.args, res.Error, diff)
		}
	}
	if v := os.Getenv("WIELD_TEST_SECRET"); v != "hunter2" {
		t.Fatalf("a variable off the list was changed to %q", v)
	}
	if asked.Load() == 0 {
		t.Error("set_env ran without asking for confirmation")
	}
	// Without options nothing is visible.
	none := newEngine(t, builtin.EnvTools(builtin.EnvOptions{})...)
	if res := call(t, none, "get_env", `{"key":"WIELD_TEST_VISIBLE"}`); res.ErrorType != wield.ErrPermissionDenied {
		t.Errorf("zero options: got %s %s", res.Output, res.ErrorType)
	}
	if res := call(t, none, "set_env", `{"key":"WIELD_TEST_VISIBLE","value":"no"}`); res.ErrorType != wield.ErrApprovalDenied {
		t.Errorf("set_env without an approver: got %s %s", res.Output, res.ErrorType)
	}
}

// progressLog is a caller's progress reporter.
type progressLog struct {
	mu  sync.Mutex
	got [][2]float64
}

func (p *progressLog) ReportProgress(done, total float64, _ string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, [2]float64{done, total})
}

// TestSleepProgress: sleep reports the seconds slept, each second and at
// the end.
func TestSleepProgress(t *testing.T) {
	e := newEngine(t, builtin.Sleep())
	p := &progressLog{}
	ctx := context.WithValue(context.Background(), wield.ProgressKey, p)
	res, err := e.Call(ctx, wield.Call{Tool: "sleep", Arguments: json.RawMessage(`{"duration":1.5}`)})
	if err != nil || !res.OK {
		t.Fatalf("got %+v %v", res, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// The second's report, unless a loaded machine let the end come first.
	if n := len(p.got); n == 0 || n > 2 || p.got[n-1] != [2]float64{1.5, 1.5} || (n == 2 && p.got[0] != [2]float64{1, 1.5}) {
		t.Errorf("reports %v, want [1 1.5] then [1.5 1.5]", p.got)
	}
}
