package mcpbridge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/program"
)

// TestServerListsRunProgramAsItIs: without a policy or a scope, tools/list
// describes run_program with the functions its programs have now, as
// wield.ListFor does for REST: a tool registered after run_program (an
// import, a reloaded tool file) is among them (a confirm tool that does
// not admit programs is not, as before). The list gave the description
// made when run_program was registered, on every path and era, to a Go
// program that serves program.Tool through this package (wield serve
// registers run_program again on each change of the registry, so its
// lists were right: TestJourneyMCPRunProgramDescribed holds them).
func TestServerListsRunProgramAsItIs(t *testing.T) {
	for _, tr := range []srvTransport{srvStateful, srvStateless, srvEra2026, srvStdio} {
		t.Run(string(tr), func(t *testing.T) {
			confirm := wield.Func("erase_all", "Wipe everything.", func(context.Context, srvNoArgs) (string, error) { return "wiped", nil })
			confirm.Permission = wield.PermissionConfirm
			f := srvNew(t, nil, &engine.Options{}, confirm)
			f.reg.MustRegister(program.Tool(program.Options{Invoker: f.eng, Registry: f.reg}))
			f.reg.MustRegister(wield.Func("late_import", "Registered after run_program.", func(context.Context, srvNoArgs) (string, error) { return "late", nil }))
			cs := srvConnect(t, f, tr, "/mcp", nil)
			for range 2 { // the first list and a later one (cached)
				l, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, tl := range l.Tools {
					if tl.Name != program.Name {
						continue
					}
					found = true
					if !strings.Contains(tl.Description, "late_import(") || strings.Contains(tl.Description, "erase_all(") {
						t.Errorf("run_program's description lacks late_import or names erase_all, which programs cannot call:\n%s", tl.Description)
					}
				}
				if !found {
					t.Fatalf("no run_program listed")
				}
			}
		})
	}
}
