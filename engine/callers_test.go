package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
)

// TestAllowedCallers: a tool refuses the callers its AllowedCallers leave
// out, with permission_denied saying why, before anything runs; the
// defaults admit programs to auto tools only.
func TestAllowedCallers(t *testing.T) {
	ran := 0
	h := wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		ran++
		return json.RawMessage(`1`), nil
	})
	mk := func(name string, p wield.Permission, callers ...string) *wield.Tool {
		tool := wield.Raw(name, "t", nil, h)
		tool.Permission, tool.AllowedCallers = p, callers
		return tool
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(mk("auto", ""), mk("confirm", wield.PermissionConfirm), mk("confirm_ok", wield.PermissionConfirm, "direct", "program"), mk("only_program", "", "program"))
	approve := wield.ApproverFunc(func(context.Context, *wield.ApprovalRequest) (wield.Decision, error) {
		return wield.Decision{Approved: true}, nil
	})
	e := engine.New(reg, &engine.Options{Approver: approve})
	tests := []struct {
		tool   string
		caller wield.CallerType
		errHas string
	}{
		{"auto", wield.CallerProgram, ""},
		{"auto", wield.CallerDirect, ""},
		{"confirm", wield.CallerProgram, "may not be called from a program"},
		{"confirm", wield.CallerConversationAgent, ""},
		{"confirm_ok", wield.CallerProgram, ""},
		{"only_program", wield.CallerProgram, ""},
		{"only_program", wield.CallerDirect, "may only be called from a program"},
		{"only_program", wield.CallerWorkflowNode, "may only be called from a program"},
	}
	for _, tc := range tests {
		before := ran
		res, err := e.Call(context.Background(), wield.Call{Tool: tc.tool, Caller: wield.Caller{Type: tc.caller}})
		if err != nil {
			t.Fatal(err)
		}
		if tc.errHas == "" {
			if !res.OK || ran != before+1 {
				t.Errorf("%s by %s: ok=%v %s, want it run", tc.tool, tc.caller, res.OK, res.Error)
			}
			continue
		}
		if res.OK || res.ErrorType != wield.ErrPermissionDenied || !strings.Contains(res.Error, tc.errHas) || ran != before {
			t.Errorf("%s by %s: ok=%v %s %q, want permission_denied containing %q and nothing run", tc.tool, tc.caller, res.OK, res.ErrorType, res.Error, tc.errHas)
		}
	}
	if err := mk("bad", "", "model").Check(); err == nil || !strings.Contains(err.Error(), `allowed_callers value "model"`) {
		t.Errorf("Check of allowed_callers [model] = %v", err)
	}
}
