// Package peers compares one tool call in wield with the same call in peer
// systems, each used the way its documentation shows, all in process:
//
//   - wield: tools from wield.Func, called with engine.Engine.Call
//     (lookup, strict decoding and coercion, JSON Schema validation, policy,
//     the concurrency controller, the handler on a worker under its timeout,
//     the output budget; no store and no event bus).
//   - sdk: the official MCP Go SDK, tools added with mcp.AddTool (typed, the
//     input validated against the schema by the SDK), called by an SDK client
//     over mcp.NewInMemoryTransports: JSON-RPC encoded and decoded on both
//     sides of a net.Pipe.
//   - mcp-go: github.com/mark3labs/mcp-go, tools built with mcp.NewTool and
//     typed handlers, input schema validation on, called by its in-process
//     client (request and response each go through JSON, no pipe).
//   - eino: github.com/cloudwego/eino, tools from utils.InferTool in a
//     compose.ToolsNode, invoked with an assistant message that carries one
//     tool call. Eino does not validate arguments against the schema, so the
//     calculator checks its ranges itself, as an eino user would.
//   - wield-inline: wield with Tool.Inline set on the three tools, so that
//     the handler runs on the caller's goroutine, as in eino, instead of on
//     one of the engine's workers (which keeps the timeout even for a
//     handler that ignores its context).
//   - wield-mcp: wield's MCP server (mcpbridge) called by the same SDK client
//     over the same kind of in-memory pipe as sdk, so that the MCP paths can
//     be compared transport for transport.
//
// The three tools are the same everywhere: echo (one string), calculator (a
// struct with an operation from an enum and two numbers limited to ±1e6)
// and fail (always returns an error). Every call starts from the arguments
// as JSON text, as a model produces them.
//
// This is a module of its own, so that the peers never become dependencies
// of wield. Run bench/peers.sh from the repository root.
package peers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	einoschema "github.com/cloudwego/eino/schema"
	"github.com/google/jsonschema-go/jsonschema"
	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
)

// Limit bounds the calculator's operands in every system.
const Limit = 1e6

// Ops are the calculator's operations.
var Ops = []string{"add", "sub", "mul", "div"}

// The shared logic of the three tools, over plain values. Each system wraps
// it in its own types.

func echo(message string) string { return message }

func calculate(op string, a, b float64) (float64, error) {
	switch op {
	case "add":
		return a + b, nil
	case "sub":
		return a - b, nil
	case "mul":
		return a * b, nil
	case "div":
		if b == 0 {
			return 0, errors.New("division by zero")
		}
		return a / b, nil
	}
	return 0, fmt.Errorf("unknown operation %q", op)
}

func fail(reason string) error { return fmt.Errorf("tool failed on purpose: %s", reason) }

// Caller calls one tool by name with JSON arguments and reports whether the
// call succeeded and the text the caller gets back (the output, or the
// error message of a failed call). err is a failure of the system itself.
type Caller interface {
	Call(ctx context.Context, tool string, args json.RawMessage) (ok bool, text string, err error)
	Close()
}

// Systems are the systems compared, wield first.
var Systems = []string{"wield", "wield-inline", "sdk", "mcp-go", "eino", "wield-mcp"}

// New starts the named system with the three tools.
func New(system string) (Caller, error) {
	switch system {
	case "wield":
		return newWield(false)
	case "wield-inline":
		return newWield(true)
	case "sdk":
		return newSDK()
	case "mcp-go":
		return newMCPGo()
	case "eino":
		return newEino()
	case "wield-mcp":
		return newWieldMCP()
	}
	return nil, fmt.Errorf("unknown system %q", system)
}

// ---- wield ----

type wieldEchoIn struct {
	Message string `json:"message" description:"The text to send back"`
}

type wieldEchoOut struct {
	Message string `json:"message"`
}

type wieldCalcIn struct {
	Op string  `json:"op" description:"The operation" enum:"add,sub,mul,div"`
	A  float64 `json:"a" description:"The first operand" minimum:"-1e6" maximum:"1e6"`
	B  float64 `json:"b" description:"The second operand" minimum:"-1e6" maximum:"1e6"`
}

type wieldCalcOut struct {
	Result float64 `json:"result"`
}

type wieldFailIn struct {
	Reason string `json:"reason" description:"Why it fails"`
}

func wieldTools() []*wield.Tool {
	return []*wield.Tool{
		wield.Func("echo", "Echo a message back", func(_ context.Context, in wieldEchoIn) (wieldEchoOut, error) {
			return wieldEchoOut{Message: echo(in.Message)}, nil
		}),
		wield.Func("calculator", "Apply an arithmetic operation to two numbers", func(_ context.Context, in wieldCalcIn) (wieldCalcOut, error) {
			r, err := calculate(in.Op, in.A, in.B)
			return wieldCalcOut{Result: r}, err
		}),
		wield.Func("fail", "Always fail", func(_ context.Context, in wieldFailIn) (struct{}, error) {
			return struct{}{}, fail(in.Reason)
		}),
	}
}

type wieldCaller struct{ eng *engine.Engine }

// newWield is the engine over the three tools; inline runs the handlers on
// the caller's goroutine (Tool.Inline, for pure functions such as these)
// instead of handing them to a worker.
func newWield(inline bool) (Caller, error) {
	reg := wield.NewRegistry(nil)
	tools := wieldTools()
	for _, t := range tools {
		t.Inline = inline
	}
	if err := reg.Register(tools...); err != nil {
		return nil, err
	}
	// The defaults: limiter of 10 at once, handler isolated on a worker,
	// 30 s timeout, 64 KiB output budget. No store and no bus, because no
	// peer keeps records or publishes events.
	return &wieldCaller{eng: engine.New(reg, nil)}, nil
}

func (c *wieldCaller) Call(ctx context.Context, tool string, args json.RawMessage) (bool, string, error) {
	res, err := c.eng.Call(ctx, wield.Call{Tool: tool, Arguments: args})
	if err != nil {
		return false, "", err
	}
	if !res.OK {
		return false, res.Error, nil
	}
	return true, string(res.Output), nil
}

func (c *wieldCaller) Close() { c.eng.Close(context.Background()) }

// ---- the official MCP Go SDK ----

type sdkEchoIn struct {
	Message string `json:"message" jsonschema:"The text to send back"`
}

type sdkEchoOut struct {
	Message string `json:"message"`
}

type sdkCalcIn struct {
	Op string  `json:"op" jsonschema:"The operation"`
	A  float64 `json:"a" jsonschema:"The first operand"`
	B  float64 `json:"b" jsonschema:"The second operand"`
}

type sdkCalcOut struct {
	Result float64 `json:"result"`
}

type sdkFailIn struct {
	Reason string `json:"reason" jsonschema:"Why it fails"`
}

// sdkCalcSchema is the inferred schema of sdkCalcIn with the enum and the
// ranges added: the SDK's struct tags carry descriptions only.
func sdkCalcSchema() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[sdkCalcIn](nil)
	if err != nil {
		return nil, err
	}
	ops := make([]any, len(Ops))
	for i, op := range Ops {
		ops[i] = op
	}
	s.Properties["op"].Enum = ops
	lo, hi := -Limit, Limit
	for _, p := range []string{"a", "b"} {
		s.Properties[p].Minimum = &lo
		s.Properties[p].Maximum = &hi
	}
	return s, nil
}

func sdkServer() (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo a message back"}, func(_ context.Context, _ *mcp.CallToolRequest, in sdkEchoIn) (*mcp.CallToolResult, sdkEchoOut, error) {
		return nil, sdkEchoOut{Message: echo(in.Message)}, nil
	})
	calc, err := sdkCalcSchema()
	if err != nil {
		return nil, err
	}
	mcp.AddTool(s, &mcp.Tool{Name: "calculator", Description: "Apply an arithmetic operation to two numbers", InputSchema: calc}, func(_ context.Context, _ *mcp.CallToolRequest, in sdkCalcIn) (*mcp.CallToolResult, sdkCalcOut, error) {
		r, err := calculate(in.Op, in.A, in.B)
		return nil, sdkCalcOut{Result: r}, err
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fail"}, func(_ context.Context, _ *mcp.CallToolRequest, in sdkFailIn) (*mcp.CallToolResult, any, error) {
		return nil, nil, fail(in.Reason)
	})
	return s, nil
}

// sdkCaller is an SDK client session; close ends the server side.
type sdkCaller struct {
	cs    *mcp.ClientSession
	close func()
}

// sdkConnect connects an SDK client to a server listening on the other end
// of an in-memory transport.
func sdkConnect(ct mcp.Transport, closeServer func()) (Caller, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		closeServer()
		return nil, err
	}
	return &sdkCaller{cs: cs, close: closeServer}, nil
}

func newSDK() (Caller, error) {
	s, err := sdkServer()
	if err != nil {
		return nil, err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		return nil, err
	}
	return sdkConnect(ct, func() { ss.Close() })
}

func (c *sdkCaller) Call(ctx context.Context, tool string, args json.RawMessage) (bool, string, error) {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return false, "", err
	}
	return !res.IsError, sdkText(res.Content), nil
}

func sdkText(content []mcp.Content) string {
	if len(content) == 1 {
		if t, ok := content[0].(*mcp.TextContent); ok {
			return t.Text
		}
	}
	var b strings.Builder
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func (c *sdkCaller) Close() {
	c.cs.Close()
	c.close()
}

// ---- mark3labs/mcp-go ----

type mcpgoEchoIn struct {
	Message string `json:"message"`
}

type mcpgoEchoOut struct {
	Message string `json:"message"`
}

type mcpgoCalcIn struct {
	Op string  `json:"op"`
	A  float64 `json:"a"`
	B  float64 `json:"b"`
}

type mcpgoCalcOut struct {
	Result float64 `json:"result"`
}

type mcpgoFailIn struct {
	Reason string `json:"reason"`
}

type mcpgoCaller struct{ c *mcpgoclient.Client }

func newMCPGo() (Caller, error) {
	s := mcpgoserver.NewMCPServer("mcp-go", "1", mcpgoserver.WithToolCapabilities(true), mcpgoserver.WithInputSchemaValidation())
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithDescription("Echo a message back"),
		mcpgo.WithString("message", mcpgo.Required(), mcpgo.Description("The text to send back")),
		mcpgo.WithOutputSchema[mcpgoEchoOut]()),
		mcpgo.NewStructuredToolHandler(func(_ context.Context, _ mcpgo.CallToolRequest, in mcpgoEchoIn) (mcpgoEchoOut, error) {
			return mcpgoEchoOut{Message: echo(in.Message)}, nil
		}))
	s.AddTool(mcpgo.NewTool("calculator", mcpgo.WithDescription("Apply an arithmetic operation to two numbers"),
		mcpgo.WithString("op", mcpgo.Required(), mcpgo.Description("The operation"), mcpgo.Enum(Ops...)),
		mcpgo.WithNumber("a", mcpgo.Required(), mcpgo.Description("The first operand"), mcpgo.Min(-Limit), mcpgo.Max(Limit)),
		mcpgo.WithNumber("b", mcpgo.Required(), mcpgo.Description("The second operand"), mcpgo.Min(-Limit), mcpgo.Max(Limit)),
		mcpgo.WithOutputSchema[mcpgoCalcOut]()),
		mcpgo.NewStructuredToolHandler(func(_ context.Context, _ mcpgo.CallToolRequest, in mcpgoCalcIn) (mcpgoCalcOut, error) {
			r, err := calculate(in.Op, in.A, in.B)
			return mcpgoCalcOut{Result: r}, err
		}))
	s.AddTool(mcpgo.NewTool("fail", mcpgo.WithDescription("Always fail"),
		mcpgo.WithString("reason", mcpgo.Required(), mcpgo.Description("Why it fails"))),
		mcpgo.NewTypedToolHandler(func(_ context.Context, _ mcpgo.CallToolRequest, in mcpgoFailIn) (*mcpgo.CallToolResult, error) {
			// A Go error here would be a JSON-RPC error; a tool's failure is
			// a result with isError, as mcp-go's examples do it.
			return mcpgo.NewToolResultError(fail(in.Reason).Error()), nil
		}))
	c, err := mcpgoclient.NewInProcessClient(s)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, err
	}
	return &mcpgoCaller{c: c}, nil
}

func (c *mcpgoCaller) Call(ctx context.Context, tool string, args json.RawMessage) (bool, string, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return false, "", err
	}
	var b strings.Builder
	for _, content := range res.Content {
		if t, ok := content.(mcpgo.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return !res.IsError, b.String(), nil
}

func (c *mcpgoCaller) Close() { c.c.Close() }

// ---- cloudwego/eino ----

type einoEchoIn struct {
	Message string `json:"message" jsonschema:"description=The text to send back"`
}

type einoEchoOut struct {
	Message string `json:"message"`
}

type einoCalcIn struct {
	Op string  `json:"op" jsonschema:"description=The operation,enum=add,enum=sub,enum=mul,enum=div"`
	A  float64 `json:"a" jsonschema:"description=The first operand,minimum=-1000000,maximum=1000000"`
	B  float64 `json:"b" jsonschema:"description=The second operand,minimum=-1000000,maximum=1000000"`
}

type einoCalcOut struct {
	Result float64 `json:"result"`
}

type einoFailIn struct {
	Reason string `json:"reason" jsonschema:"description=Why it fails"`
}

// einoCheck is the validation an eino tool does by hand: the schema's enum
// and ranges are shown to the model but not enforced by eino.
func einoCheck(in einoCalcIn) error {
	switch in.Op {
	case "add", "sub", "mul", "div":
	default:
		return fmt.Errorf("op must be one of add, sub, mul, div, not %q", in.Op)
	}
	if in.A < -Limit || in.A > Limit {
		return fmt.Errorf("a must be between -1e6 and 1e6, not %g", in.A)
	}
	if in.B < -Limit || in.B > Limit {
		return fmt.Errorf("b must be between -1e6 and 1e6, not %g", in.B)
	}
	return nil
}

type einoCaller struct{ node *compose.ToolsNode }

func newEino() (Caller, error) {
	echoTool, err := utils.InferTool("echo", "Echo a message back", func(_ context.Context, in einoEchoIn) (einoEchoOut, error) {
		return einoEchoOut{Message: echo(in.Message)}, nil
	})
	if err != nil {
		return nil, err
	}
	calcTool, err := utils.InferTool("calculator", "Apply an arithmetic operation to two numbers", func(_ context.Context, in einoCalcIn) (einoCalcOut, error) {
		if err := einoCheck(in); err != nil {
			return einoCalcOut{}, err
		}
		r, err := calculate(in.Op, in.A, in.B)
		return einoCalcOut{Result: r}, err
	})
	if err != nil {
		return nil, err
	}
	failTool, err := utils.InferTool("fail", "Always fail", func(_ context.Context, in einoFailIn) (struct{}, error) {
		return struct{}{}, fail(in.Reason)
	})
	if err != nil {
		return nil, err
	}
	node, err := compose.NewToolNode(context.Background(), &compose.ToolsNodeConfig{Tools: []tool.BaseTool{echoTool, calcTool, failTool}})
	if err != nil {
		return nil, err
	}
	return &einoCaller{node: node}, nil
}

func (c *einoCaller) Call(ctx context.Context, tool string, args json.RawMessage) (bool, string, error) {
	// What a chat model hands over: an assistant message with one tool call.
	msg := einoschema.AssistantMessage("", []einoschema.ToolCall{{
		ID:       "call_1",
		Type:     "function",
		Function: einoschema.FunctionCall{Name: tool, Arguments: string(args)},
	}})
	out, err := c.node.Invoke(ctx, msg)
	if err != nil {
		// A failing tool fails the node: that is eino's failed call.
		return false, err.Error(), nil
	}
	if len(out) != 1 {
		return false, "", fmt.Errorf("eino: %d messages for one tool call", len(out))
	}
	return true, out[0].Content, nil
}

func (c *einoCaller) Close() {}

// ---- wield's MCP server ----

func newWieldMCP() (Caller, error) {
	reg := wield.NewRegistry(nil)
	if err := reg.Register(wieldTools()...); err != nil {
		return nil, err
	}
	eng := engine.New(reg, nil)
	srv := mcpbridge.NewServer(eng, reg, nil)
	// The same pipe as mcp.NewInMemoryTransports, served as stdio would be.
	c1, c2 := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeStdio(ctx, c1, c1)
	}()
	return sdkConnect(&mcp.IOTransport{Reader: c2, Writer: c2}, func() {
		c1.Close()
		c2.Close()
		<-done
		cancel()
		srv.Close()
		eng.Close(context.Background())
	})
}
