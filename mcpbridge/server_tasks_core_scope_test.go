package mcpbridge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/program"
	"github.com/wieldhq/wield/sqlite"
)

// TestServerCoreListScoped: the tools/list of a 2025-11-25 session, which
// the in-core tasks answer themselves when a tool runs as a task, shows a
// key scoped to toolset ops run_program described with the functions of
// its scope only, as every other list does: it listed every tool of the
// registry, naming tools out of the key's scope (secret_payroll).
func TestServerCoreListScoped(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	slow := wield.Func("slow", "Runs as a task.", func(context.Context, srvNoArgs) (string, error) { return "done", nil })
	slow.Task = wield.TaskOptional
	payroll := wield.Func("secret_payroll", "Pays people.", func(context.Context, srvNoArgs) (string, error) { return "paid", nil })
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store}, &engine.Options{Store: store}, slow, payroll)
	f.reg.MustRegister(program.Tool(program.Options{Invoker: f.eng, Registry: f.reg}))
	if err := f.reg.DefineToolset(wield.Toolset{Name: "ops", Tools: []string{program.Name, "slow"}}); err != nil {
		t.Fatal(err)
	}
	inner := f.srv.Handler()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = "/mcp/ops"
		inner.ServeHTTP(w, r.WithContext(wield.WithScope(r.Context(), []string{"ops"})))
	})
	for _, tasks := range []bool{true, false} {
		c := &coreSession{t: t, h: h}
		caps := map[string]any{}
		if tasks {
			caps["tasks"] = map[string]any{}
		}
		if res, e := c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps,
			"clientInfo": map[string]any{"name": "core", "version": "1"}}); e != nil || c.id == "" {
			t.Fatalf("initialize: %s %+v", res, e)
		}
		c.rpc("notifications/initialized", map[string]any{})
		res, e := c.rpc("tools/list", map[string]any{})
		var list struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Execution   json.RawMessage `json:"execution"`
			} `json:"tools"`
		}
		if e != nil || json.Unmarshal(res, &list) != nil {
			t.Fatalf("tools/list: %s %+v", res, e)
		}
		seen := 0
		for _, tl := range list.Tools {
			switch tl.Name {
			case program.Name:
				seen++
				if strings.Contains(tl.Description, "secret_payroll") || !strings.Contains(tl.Description, "slow") {
					t.Errorf("tasks %v: run_program's description for a key scoped to ops:\n%s", tasks, tl.Description)
				}
			case "slow":
				seen++
				if len(tl.Execution) == 0 {
					t.Errorf("tasks %v: slow is listed without its execution.taskSupport", tasks)
				}
			}
		}
		if seen != 2 {
			t.Errorf("tasks %v: tools/list = %s, want run_program and slow", tasks, res)
		}
	}
}
