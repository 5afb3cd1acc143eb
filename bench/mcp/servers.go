// Package mcpbench compares MCP servers over streamable HTTP: the official
// Go SDK's own, with a typed echo tool, mark3labs/mcp-go's, and wield's
// [mcpbridge.Server],
// whose calls go through the engine (validation and records on). Each
// server runs in a process of its own, so that the CPU it reports
// (syscall.Getrusage, read over /rusage) is the server's alone, not the
// clients'.
//
//	go test -run '^$' -bench . -benchtime 2000x    (in bench/mcp)
//
// Each result reports calls/s (wall clock, clients included) and
// server-cpu-µs/op (the server process's user+system CPU per operation).
// The clients speak protocol 2025-11-25, as desktop clients do. This is a
// module of its own (it depends on mark3labs/mcp-go, which wield does not);
// when the root module's requirements change, the first run needs
// GOFLAGS=-mod=mod to bring go.mod and go.sum up to date.
package mcpbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"syscall"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/memstore"
)

// The kinds of server a benchmark can start.
const (
	KindSDK   = "sdk"    // the go-sdk's server, tools added with mcp.AddTool
	KindWield = "wield"  // mcpbridge.Server over an engine with a store
	KindMCPGo = "mcp-go" // github.com/mark3labs/mcp-go, input validation on
	// KindWieldSDK is KindWield with every request through the go-sdk.
	KindWieldSDK = "wield-sdk"
	KindPlain    = "plain" // tools/list only: net/http and encoding/json
)

// EchoIn and EchoOut are the echo tool's input and output, the same for
// every server.
type EchoIn struct {
	Message string `json:"message" jsonschema:"the message to echo"`
}

// EchoOut is what echo returns.
type EchoOut struct {
	Echo string `json:"echo"`
}

func echo(_ context.Context, in EchoIn) (EchoOut, error) { return EchoOut{Echo: in.Message}, nil }

// tools returns echo and, for the tools/list benchmark, n-1 more tools of
// the same shape.
func tools(n int) []*wield.Tool {
	out := make([]*wield.Tool, 0, n)
	for i := range n {
		name := "echo"
		if i > 0 {
			name = "echo_" + strconv.Itoa(i)
		}
		out = append(out, wield.Func(name, "Echo a message back", echo))
	}
	return out
}

// Handler returns the HTTP handler of a server of kind with n tools, and
// what to close after.
func Handler(kind string, n int, stateless bool) (http.Handler, func(), error) {
	switch kind {
	case KindSDK:
		s := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
		for i := range n {
			name := "echo"
			if i > 0 {
				name = "echo_" + strconv.Itoa(i)
			}
			mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Echo a message back"}, func(ctx context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, EchoOut, error) {
				out, err := echo(ctx, in)
				return nil, out, err
			})
		}
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
		return h, func() {}, nil
	case KindMCPGo:
		s := mcpgoserver.NewMCPServer("mcp-go", "1", mcpgoserver.WithToolCapabilities(true), mcpgoserver.WithInputSchemaValidation())
		for i := range n {
			name := "echo"
			if i > 0 {
				name = "echo_" + strconv.Itoa(i)
			}
			tool := mcpgo.NewTool(name, mcpgo.WithDescription("Echo a message back"),
				mcpgo.WithString("message", mcpgo.Required(), mcpgo.Description("the message to echo")),
				mcpgo.WithOutputSchema[EchoOut]())
			s.AddTool(tool, mcpgo.NewStructuredToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, in EchoIn) (EchoOut, error) {
				return echo(ctx, in)
			}))
		}
		return mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(stateless)), func() {}, nil
	case KindWield, KindWieldSDK:
		reg := wield.NewRegistry(nil)
		if err := reg.Register(tools(n)...); err != nil {
			return nil, nil, err
		}
		eng := engine.New(reg, &engine.Options{Store: memstore.New(10000)})
		srv := mcpbridge.NewServer(eng, reg, &mcpbridge.ServerOptions{Stateless: stateless, DisableFastPath: kind == KindWieldSDK})
		return srv.Handler(), func() { srv.Close(); eng.Close(context.Background()) }, nil
	case KindPlain:
		listed, problems := llm.MCPTools(tools(n))
		if len(problems) > 0 {
			return nil, nil, fmt.Errorf("export tools: %v", problems)
		}
		return plainList(listed), func() {}, nil
	}
	return nil, nil, fmt.Errorf("unknown server kind %q", kind)
}

// plainList answers every JSON-RPC request with the tools/list result, as
// a hand-written handler would: the floor of what serving a list costs.
func plainList(listed []llm.MCPTool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "tools/list" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  any             `json:"result"`
		}{"2.0", req.ID, struct {
			Tools []llm.MCPTool `json:"tools"`
		}{listed}})
	})
}

// Rusage answers with the process's CPU time so far, in microseconds.
func Rusage(w http.ResponseWriter, _ *http.Request) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Fprintf(w, "%d\n", cpu.Microseconds())
}
