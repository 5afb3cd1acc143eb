//go:build unix

package mcpbridge_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// TestImportTaskEverything calls server-everything's task-required tool
// (simulate-research-query, MCP 2025-11-25 tasks) over stdio and
// streamable HTTP as a normal call, and times one out.
func TestImportTaskEverything(t *testing.T) {
	t.Parallel() // seconds of waiting on a peer's task, little CPU: overlaps the others
	entry := impNPMServer(t, "server-everything")
	for _, mode := range []string{"stdio", "streamableHttp"} {
		t.Run(mode, func(t *testing.T) {
			cfg := mcpbridge.ServerConfig{Name: "ev", Enabled: true}
			if mode == "stdio" {
				cfg.Command = []string{"node", entry, "stdio"}
			} else {
				cfg.URL = impStartNodeHTTP(t, entry, mode, 0).url("/mcp")
			}
			reg := wield.NewRegistry(nil)
			im := impImporter(t, reg, &mcpbridge.ImportOptions{ConnectTimeout: 60 * time.Second})
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			if err := im.Add(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			e := impApprovingEngine(t, reg)
			got := impOutcomeOf(impCall(t, e, "ev__simulate-research-query", `{"topic":"tasks"}`))
			if !got.OK || !strings.Contains(got.Output, "# Research Report: tasks") || !strings.Contains(got.Output, "Stage 4: Generating report") {
				t.Errorf("task-required tool = %+v, want its research report", got)
			}
			start := time.Now()
			res, err := e.Call(ctx, wield.Call{Tool: "ev__simulate-research-query", Arguments: json.RawMessage(`{"topic":"late"}`), Timeout: 1500 * time.Millisecond})
			if err != nil || res.ErrorType != wield.ErrTimeout || time.Since(start) > 5*time.Second {
				t.Errorf("call past its timeout = %+v, %v after %s, want a timeout", res, err, time.Since(start))
			}
			if got := impOutcomeOf(impCall(t, e, "ev__echo", `{"message":"still here"}`)); !got.OK {
				t.Errorf("a plain call after the canceled task = %+v", got)
			}
		})
	}
}

// TestImportTaskEverythingElicit: server-everything's research task asks
// for a clarification in the middle (status input_required, the request
// on the tasks/result stream); the importer's Elicit answers it, over
// stdio (the go-sdk's handler) and HTTP (wield's own), and the report
// says the answer.
func TestImportTaskEverythingElicit(t *testing.T) {
	t.Parallel() // seconds of waiting on a peer's task, little CPU: overlaps the others
	entry := impNPMServer(t, "server-everything")
	for _, mode := range []string{"stdio", "streamableHttp"} {
		t.Run(mode, func(t *testing.T) {
			cfg := mcpbridge.ServerConfig{Name: "ev", Enabled: true}
			if mode == "stdio" {
				cfg.Command = []string{"node", entry, "stdio"}
			} else {
				cfg.URL = impStartNodeHTTP(t, entry, mode, 0).url("/mcp")
			}
			var asked atomic.Int64
			elicit := func(_ context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				asked.Add(1)
				if server != "ev" || !strings.Contains(req.Message, "python") {
					return &mcp.ElicitResult{Action: "decline"}, nil
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "snake"}}, nil
			}
			reg := wield.NewRegistry(nil)
			im := impImporter(t, reg, &mcpbridge.ImportOptions{ConnectTimeout: 60 * time.Second, Elicit: elicit})
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			if err := im.Add(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			e := impApprovingEngine(t, reg)
			got := impOutcomeOf(impCall(t, e, "ev__simulate-research-query", `{"topic":"python","ambiguous":true}`))
			if !got.OK || !strings.Contains(got.Output, "# Research Report: python (snake)") {
				t.Errorf("research with a clarification = %+v, want the report on snakes", got)
			}
			if n := asked.Load(); n != 1 {
				t.Errorf("Elicit asked %d times, want 1", n)
			}
		})
	}
}
