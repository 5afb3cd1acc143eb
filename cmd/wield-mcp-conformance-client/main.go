// Command wield-mcp-conformance-client is the client under test when the
// MCP conformance suite (@modelcontextprotocol/conformance, installed by
// scripts/npm-up) checks wield's importer: it imports the tools of the
// suite's server with mcpbridge.Importer and calls them through the engine,
// as an agent would.
//
//	node .cache/npm/node_modules/@modelcontextprotocol/conformance/dist/index.js \
//		client --command wield-mcp-conformance-client --scenario tools_call
//
// The suite runs it with the server's URL as the only argument and the
// scenario in MCP_CONFORMANCE_SCENARIO. It supports the scenarios of the
// importer's features: initialize, tools_call and sse-retry; the others
// (elicitation, OAuth) are features the importer does not have, and it
// refuses them. Exit code 0 when the scenario ran, 1 when it failed, 2 for
// usage errors.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=<scenario> %s <server-url>\nscenarios: %s\n",
			os.Args[0], strings.Join(Scenarios(), ", "))
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := Run(ctx, os.Args[1], os.Getenv("MCP_CONFORMANCE_SCENARIO")); err != nil {
		fmt.Fprintln(os.Stderr, "wield-mcp-conformance-client:", err)
		os.Exit(1)
	}
}

// server is the name the suite's server is imported under.
const server = "conformance"

// scenario runs against an importer that has added the suite's server and
// an engine over its registry.
type scenario func(ctx context.Context, im *mcpbridge.Importer, e *engine.Engine) error

var scenarios = map[string]scenario{
	"initialize": func(_ context.Context, im *mcpbridge.Importer, _ *engine.Engine) error {
		if st := im.Servers()[0]; !st.Connected {
			return fmt.Errorf("initialize: not connected: %s", st.LastError)
		}
		return nil
	},
	"tools_call": func(ctx context.Context, _ *mcpbridge.Importer, e *engine.Engine) error {
		return call(ctx, e, "add_numbers", `{"a": 5, "b": 3}`, `"The sum of 5 and 3 is 8"`)
	},
	"sse-retry": func(ctx context.Context, _ *mcpbridge.Importer, e *engine.Engine) error {
		return call(ctx, e, "test_reconnection", `{}`, `"Reconnection test completed successfully"`)
	},
}

// Scenarios lists the supported scenarios, sorted.
func Scenarios() []string {
	var out []string
	for k := range scenarios {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Run imports the tools of the server at url and plays the scenario. It
// returns an error for an unknown scenario, a server that cannot be reached
// and a call whose result is not the one the scenario expects.
func Run(ctx context.Context, url, name string) error {
	sc, ok := scenarios[name]
	if !ok {
		return fmt.Errorf("scenario %q is not supported (supported: %s)", name, strings.Join(Scenarios(), ", "))
	}
	reg := wield.NewRegistry(nil)
	im := mcpbridge.NewImporter(reg, &mcpbridge.ImportOptions{
		// The suite's tools are fixtures without annotations, which MCP's
		// defaults make destructive; no person is here to confirm them.
		Permission: wield.PermissionAuto,
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	defer im.Close()
	if err := im.Add(ctx, mcpbridge.ServerConfig{Name: server, URL: url, Enabled: true}); err != nil {
		return fmt.Errorf("scenario %s: %w", name, err)
	}
	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	if err := sc(ctx, im, e); err != nil {
		return fmt.Errorf("scenario %s: %w", name, err)
	}
	return nil
}

// call runs one imported tool through the engine and compares its output.
func call(ctx context.Context, e *engine.Engine, tool, args, want string) error {
	name := server + "__" + tool
	res, err := e.Call(ctx, wield.Call{Tool: name, Arguments: json.RawMessage(args)})
	switch {
	case err != nil:
		return fmt.Errorf("call %s: %w", name, err)
	case !res.OK:
		return fmt.Errorf("call %s: %s: %s", name, res.ErrorType, res.Error)
	case string(res.Output) != want:
		return fmt.Errorf("call %s: output %s, want %s", name, res.Output, want)
	}
	return nil
}
