package mcpbridge_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
)

type greetIn struct {
	Name string `json:"name" description:"Who to greet"`
}

// An MCP server over streamable HTTP, and a client of it.
func ExampleServer_Handler() {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("greet", "Greet someone", func(_ context.Context, in greetIn) (string, error) {
		return "Hello, " + in.Name, nil
	}))
	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())
	srv := mcpbridge.NewServer(eng, reg, nil)
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler()) // on 127.0.0.1
	defer ts.Close()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	for _, args := range []map[string]any{{"name": "Ada"}, {}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: args})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// false Hello, Ada
	// true Error: invalid arguments for tool 'greet': name: missing required property (expected string)
}

// Serving over stdio, as desktop clients start local servers: here on
// pipes, with a client at their other ends.
func ExampleServer_ServeStdio() {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(wield.Func("greet", "Greet someone", func(_ context.Context, in greetIn) (string, error) {
		return "Hello, " + in.Name, nil
	}))
	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())
	srv := mcpbridge.NewServer(eng, reg, nil)
	defer srv.Close()

	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), serverIn, serverOut) }()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		log.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tools.Tools[0].Name, "-", tools.Tools[0].Description)
	cs.Close()
	clientOut.Close()
	fmt.Println(<-done)
	// Output:
	// greet - Greet someone
	// <nil>
}

// A confirm tool called over MCP asks the client's user; without a client
// able to answer, the call waits for the fallback approver.
func ExampleNewApprover() {
	reg := wield.NewRegistry(nil)
	drop := wield.Func("drop_table", "Drop a table", func(_ context.Context, in greetIn) (string, error) {
		return "dropped " + in.Name, nil
	})
	drop.Permission = wield.PermissionConfirm
	reg.MustRegister(drop)
	eng := engine.New(reg, &engine.Options{Approver: mcpbridge.NewApprover(nil)})
	defer eng.Close(context.Background())
	srv := mcpbridge.NewServer(eng, reg, nil)
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Println(req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "drop_table", Arguments: map[string]any{"name": "users"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// Allow the tool 'drop_table' to run with these arguments?
	//
	// {
	//   "name": "users"
	// }
	// dropped users
}
