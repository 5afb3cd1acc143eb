package httpapi

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/policy"
	"github.com/wieldhq/wield/sqlite"
)

// TestPolicyLists: the list, its exports, one tool, an agent's tools and a
// dry run follow the engine's policies for the agent asked about.
func TestPolicyLists(t *testing.T) {
	set := policySet(t, `@id("everyone") permit(principal, action, resource);
@id("helper-no-calc") forbid(principal == Agent::"helper", action, resource == Tool::"calculator");`)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(builtin.Echo(), builtin.Calculator())
	for _, a := range []string{"helper", "solver"} {
		if _, err := reg.CreateToolkit(a, "echo", "calculator"); err != nil {
			t.Fatal(err)
		}
	}
	eng := engine.New(reg, &engine.Options{Policy: set})
	t.Cleanup(func() { eng.Close(context.Background()) })
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	s, err := New(Options{Engine: eng, Store: store, Agents: []string{"helper", "solver"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)

	for _, tt := range []struct{ path, want, not string }{
		{"/v1/tools?agent=helper", `"echo"`, `"calculator"`},
		{"/v1/tools?agent=solver", `"calculator"`, ""},
		{"/v1/tools?agent=helper&format=anthropic", `"echo"`, `"calculator"`},
		{"/v1/agents/helper", `"echo"`, `"calculator"`},
		{"/v1/agents/solver", `"calculator"`, ""},
	} {
		code, b := do(t, hs, "GET", tt.path, "", "")
		if code != 200 || !strings.Contains(string(b), tt.want) || (tt.not != "" && strings.Contains(string(b), tt.not)) {
			t.Errorf("GET %s: %d %s; want %s without %s", tt.path, code, b, tt.want, tt.not)
		}
	}
	// Hidden from helper, calculator is to it a tool that does not exist,
	// in a dry run too: the policy is not named.
	code, b := do(t, hs, "POST", "/v1/tools/calculator/call?dry_run=true", "", `{"arguments":{"expression":"1+1"},"caller":{"id":"helper"}}`)
	if code != 200 || !strings.Contains(string(b), `"error_type":"tool_not_found"`) || strings.Contains(string(b), "helper-no-calc") || !strings.Contains(string(b), `"would_run":false`) {
		t.Errorf("dry run as helper: %d %s", code, b)
	}
}

// policySet loads the Cedar policies of src, enforced, from a folder of
// the test's own.
func policySet(t *testing.T, src string) *policy.Set {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		t.Fatal(err)
	}
	return set
}
