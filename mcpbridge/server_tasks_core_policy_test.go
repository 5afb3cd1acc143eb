package mcpbridge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/policy"
	"github.com/wieldhq/wield/sqlite"
)

// TestServerCoreListPolicy: a 2025-11-25 tools/list under a Cedar policy
// gives each tool the caller may see the same execution object as the
// list without a policy (a client learns a task tool is one under either),
// and leaves out the tools the policy hides from it, execution and all.
func TestServerCoreListPolicy(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cedar := `permit(principal == Key::"ops", action, resource);
permit(principal == Key::"dev", action, resource == Tool::"opt");
permit(principal == Key::"dev", action, resource == Tool::"echo");`
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(cedar), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		t.Fatal(err)
	}
	fine := func(context.Context, srvNoArgs) (string, error) { return "fine", nil }
	mk := func(p wield.Policy) http.Handler {
		store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close(ctx) })
		must := wield.Func("must", "Always a task.", fine)
		must.Task = wield.TaskRequired
		opt := wield.Func("opt", "A task if asked.", fine)
		opt.Task = wield.TaskOptional
		reg := wield.NewRegistry(nil)
		reg.MustRegister(wield.Func("echo", "Echo", fine), must, opt)
		eopts := &engine.Options{Store: store}
		if p != nil {
			eopts.Policy = p
		}
		eng := engine.New(reg, eopts)
		t.Cleanup(func() { eng.Close(ctx) })
		srv := mcpbridge.NewServer(eng, reg, &mcpbridge.ServerOptions{Calls: store})
		t.Cleanup(srv.Close)
		return srv.Handler()
	}
	// listed is each tool of a tools/list of h as the key who, with its
	// execution object ("" for none).
	listed := func(h http.Handler, who string) map[string]string {
		t.Helper()
		c := hiddenSession(t, hiddenAs(h, "key:"+who))
		res, e := c.rpc("tools/list", map[string]any{})
		if e != nil {
			t.Fatalf("tools/list as %s: %+v", who, e)
		}
		var list struct {
			Tools []struct {
				Name      string          `json:"name"`
				Execution json.RawMessage `json:"execution"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(res, &list); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, tl := range list.Tools {
			out[tl.Name] = string(tl.Execution)
		}
		return out
	}
	open := listed(mk(nil), "ops")
	if open["must"] != `{"taskSupport":"required"}` || open["opt"] != `{"taskSupport":"optional"}` || open["echo"] != "" {
		t.Fatalf("the list without a policy: %v", open)
	}
	withPolicy := mk(set)
	if diff := cmp.Diff(open, listed(withPolicy, "ops")); diff != "" {
		t.Errorf("the list under a policy, to a key allowed every tool (-without +with):\n%s", diff)
	}
	want := map[string]string{"echo": "", "opt": open["opt"]}
	if diff := cmp.Diff(want, listed(withPolicy, "dev")); diff != "" {
		t.Errorf("the list under a policy, to a key allowed echo and opt (-want +got):\n%s", diff)
	}
	if got := listed(withPolicy, "guest"); len(got) != 0 {
		t.Errorf("the list under a policy, to a key allowed nothing: %v, want none", got)
	}
}
