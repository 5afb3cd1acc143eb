// Package mcpbench compares MCP servers over streamable HTTP: the official
// Go SDK's own, with a typed echo tool, mark3labs/mcp-go's, a plain
// net/http + encoding/json handler written by hand (the floor), and
// wield's. Each server runs in a process of its own, so that the CPU
// measured is the server's alone, not the clients'. The clients speak
// protocol 2025-11-25, as desktop clients do.
//
// # wield serve as users run it
//
// bench/serve-peers.sh builds the wield binary from the tree and
// cmd/serve-peers, which [Run]s the comparison issue 15 asks for: the
// real `wield serve`, started as the README's first command starts it (its
// embedded defaults: SQLite records in sync mode, an INFO log line per
// call to a log file, metrics, events; only the address is a free
// loopback port), and the same with --records async, against the peers,
// in interleaved rounds:
//
//   - MCP tools/call of echo at 1, 8 and 64 concurrent clients, with a raw
//     JSON-RPC client ([RawConn]: keep-alive HTTP/1.1, prebuilt requests,
//     every answer read whole and checked) and with the go-sdk's client;
//   - REST POST /v1/tools/echo/call on wield and the plain handler;
//   - tools/list of 1,000 tools: wield with tool files, the peers with the
//     very tools wield lists;
//   - RSS idle, after the load, and of a fresh wield after 100,000 calls;
//     the binary's size; and issue 15's targets, met or not.
//
// Server CPU per call is utime+stime of /proc/PID/stat ([ProcCPU]) and
// RSS is VmRSS of /proc/PID/status ([ProcRSS]), read from outside, the
// same for every server. The tables show medians over the rounds, and
// ratios taken within a round: on a shared machine only those mean
// anything. SMOKE=1 bench/serve-peers.sh runs every case briefly, as a
// check that the whole comparison still works.
//
// # In-process benchmarks
//
//	go test -run '^$' -bench . -benchtime 2000x    (in bench/mcp)
//
// compares wield's [mcpbridge.Server] (calls through the engine,
// validation and records in memory) with the peers; each result reports
// calls/s (wall clock, clients included) and server-cpu-µs/op (the
// server's user+system CPU per operation, from syscall.Getrusage read
// over /rusage).
//
// This is a module of its own (it depends on mark3labs/mcp-go, which
// wield does not); when the root module's requirements change, the first
// run needs GOFLAGS=-mod=mod to bring go.mod and go.sum up to date.
package mcpbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
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
	KindPlain    = "plain" // net/http and encoding/json by hand: see [plain]
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
		exported, problems := llm.MCPTools(tools(n))
		if len(problems) > 0 {
			return nil, nil, fmt.Errorf("export tools: %v", problems)
		}
		listing, err := json.Marshal(exported)
		if err != nil {
			return nil, nil, err
		}
		return HandlerFor(KindPlain, listing)
	}
	return nil, nil, fmt.Errorf("unknown server kind %q", kind)
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

// listedTool is a tool as tools/list lists it, with its schemas kept as
// they were written.
type listedTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// HandlerFor returns the HTTP handler of a server of kind (plain, sdk or
// mcp-go, stateful where the library has sessions) serving the tools of
// listing, the "tools" array of another server's tools/list: the same
// tools, schemas and annotations, so that listing them costs each server
// the same bytes. A call of any of them echoes its message.
func HandlerFor(kind string, listing []byte) (http.Handler, func(), error) {
	var listed []listedTool
	if err := json.Unmarshal(listing, &listed); err != nil {
		return nil, nil, fmt.Errorf("read the listing: %w", err)
	}
	echoText := func(args []byte) (string, error) {
		var in EchoIn
		if err := json.Unmarshal(args, &in); err != nil {
			return "", err
		}
		out, err := json.Marshal(EchoOut{Echo: in.Message})
		return string(out), err
	}
	switch kind {
	case KindPlain:
		return plain(listed), func() {}, nil
	case KindSDK:
		s := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
		for _, t := range listed {
			tool := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}
			if t.OutputSchema != nil {
				tool.OutputSchema = t.OutputSchema
			}
			if t.Annotations != nil {
				tool.Annotations = new(mcp.ToolAnnotations)
				if err := json.Unmarshal(t.Annotations, tool.Annotations); err != nil {
					return nil, nil, fmt.Errorf("tool %s: annotations: %w", t.Name, err)
				}
			}
			s.AddTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				text, err := echoText(req.Params.Arguments)
				if err != nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			})
		}
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil), func() {}, nil
	case KindMCPGo:
		s := mcpgoserver.NewMCPServer("mcp-go", "1", mcpgoserver.WithToolCapabilities(true), mcpgoserver.WithInputSchemaValidation())
		for _, t := range listed {
			tool := mcpgo.NewToolWithRawSchema(t.Name, t.Description, t.InputSchema)
			tool.RawOutputSchema = t.OutputSchema
			if t.Annotations != nil {
				if err := json.Unmarshal(t.Annotations, &tool.Annotations); err != nil {
					return nil, nil, fmt.Errorf("tool %s: annotations: %w", t.Name, err)
				}
			}
			tool.Annotations.Title = t.Title
			s.AddTool(tool, func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				args, _ := json.Marshal(req.Params.Arguments)
				text, err := echoText(args)
				if err != nil {
					return mcpgo.NewToolResultError(err.Error()), nil
				}
				return mcpgo.NewToolResultText(text), nil
			})
		}
		return mcpgoserver.NewStreamableHTTPServer(s), func() {}, nil
	}
	return nil, nil, fmt.Errorf("no server of kind %q serves a listing", kind)
}

// Serve is a server process: spec is kind,tools,stateless (see
// [Handler]), or with MCPBENCH_TOOLS=file the tools of that listing (see
// [HandlerFor]). It serves /mcp (every path, for [KindPlain], whose REST
// endpoint is beside it) and /rusage on a free port of 127.0.0.1, prints
// the address on stdout, and serves until its stdin closes. With
// MCPBENCH_PROFILE=file it writes its CPU profile there.
func Serve(spec string) error {
	parts := strings.Split(spec, ",")
	if len(parts) != 3 {
		return fmt.Errorf("MCPBENCH_SERVE=%q: want kind,tools,stateless", spec)
	}
	var (
		h       http.Handler
		closeFn func()
		err     error
	)
	if file := os.Getenv("MCPBENCH_TOOLS"); file != "" {
		listing, rerr := os.ReadFile(file)
		if rerr != nil {
			return rerr
		}
		h, closeFn, err = HandlerFor(parts[0], listing)
	} else {
		n, aerr := strconv.Atoi(parts[1])
		if aerr != nil {
			return fmt.Errorf("MCPBENCH_SERVE=%q: tools: %w", spec, aerr)
		}
		h, closeFn, err = Handler(parts[0], n, parts[2] == "true")
	}
	if err != nil {
		return err
	}
	defer closeFn()
	mux := http.NewServeMux()
	if parts[0] == KindPlain {
		mux.Handle("/", h)
	} else {
		mux.Handle("/mcp", h)
	}
	mux.HandleFunc("/rusage", Rusage)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if path := os.Getenv("MCPBENCH_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Println(ln.Addr())
	go http.Serve(ln, mux)
	io.Copy(io.Discard, os.Stdin) // until the parent goes
	return nil
}
