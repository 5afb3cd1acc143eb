package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
)

// confirmSetup is a folder whose wield.yaml lets set_env (a confirm tool)
// touch one variable, and a database of the test's own.
func confirmSetup(t *testing.T) (config string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(dir, "wield.db"))
	config = filepath.Join(dir, "wield.yaml")
	if err := os.WriteFile(config, []byte("env_allow: [WIELD_CONFIRM_TEST]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// pendingApproval waits (at most 20 s) for the one pending approval of the
// test's database.
func pendingApproval(t *testing.T, config string) *wield.Approval {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		code, out, errs := run(t, "--config", config, "approvals", "list", "--json")
		if code != 0 {
			t.Fatalf("approvals list: exit %d\n%s%s", code, out, errs)
		}
		var list []*wield.Approval
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("approvals list --json: %v\n%s", err, out)
		}
		if len(list) == 1 {
			return list[0]
		}
	}
	t.Fatal("no pending approval within 20 s")
	return nil
}

// allApprovals is every approval of the test's database.
func allApprovals(t *testing.T, config string) []*wield.Approval {
	t.Helper()
	code, out, errs := run(t, "--config", config, "approvals", "list", "--status", "all", "--json")
	var list []*wield.Approval
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil {
		t.Fatalf("approvals list --status all: exit %d, %v\n%s%s", code, err, out, errs)
	}
	return list
}

// TestCallConfirmClaimsDecision: `wield call` of a confirm tool approved
// from another terminal claims the decision before it runs the call, as
// every durable caller does. It used to run the call without claiming it,
// so a `wield serve` sharing the store took the same decision up and ran
// the call a second time.
func TestCallConfirmClaimsDecision(t *testing.T) {
	config := confirmSetup(t)
	type ended struct {
		code      int
		out, errs string
	}
	done := make(chan ended, 1)
	go func() {
		var out, errs bytes.Buffer
		code := Run(context.Background(), []string{"--config", config, "call", "set_env", "key=WIELD_CONFIRM_TEST", "value=1", "--timeout", "30s"},
			strings.NewReader(""), &out, &errs)
		done <- ended{code, out.String(), errs.String()}
	}()
	p := pendingApproval(t, config)
	if code, out, errs := run(t, "--config", config, "approvals", "approve", p.ID); code != 0 {
		t.Fatalf("approvals approve: exit %d\n%s%s", code, out, errs)
	}
	var e ended
	select {
	case e = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the approved call did not end within 30 s")
	}
	if e.code != 0 || !strings.Contains(e.out, `"ok": true`) {
		t.Fatalf("the approved call: exit %d\n%s%s", e.code, e.out, e.errs)
	}
	list := allApprovals(t, config)
	if len(list) != 1 || list[0].Status != wield.ApprovalApproved || list[0].ClaimedAt.IsZero() {
		t.Fatalf("the approval the call ran on is not claimed (a server sharing the store would run the call again): %+v", list[0])
	}
}

// TestCallConfirmLeftStaysPending: `wield call` ended (Ctrl-C) while its
// call waits for approval says the approval stays pending and the call
// runs once it is approved, which a server sharing the store does. It
// used to say the caller canceled the call, as if the approval were ended
// with it, and record the call as finished.
func TestCallConfirmLeftStaysPending(t *testing.T) {
	config := confirmSetup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errs bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"--config", config, "call", "set_env", "key=WIELD_CONFIRM_TEST", "value=1", "--timeout", "30s"},
			strings.NewReader(""), &out, &errs)
	}()
	p := pendingApproval(t, config)
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end within 10 s of its caller leaving")
	}
	if code != 1 || !strings.Contains(out.String(), "stays pending") || !strings.Contains(out.String(), p.ID) {
		t.Errorf("the call left while waiting: exit %d, want 1 and the approval said to stay pending\n%s%s", code, &out, &errs)
	}
	if list := allApprovals(t, config); len(list) != 1 || list[0].Status != wield.ApprovalPending {
		t.Errorf("the approval after its caller left: %+v", list)
	}
}
