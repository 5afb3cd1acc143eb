package mcpbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The clients a case can load a server with.
const (
	ClientRaw = "raw"    // RawConn: tools/call echo, prebuilt bytes
	ClientSDK = "go-sdk" // the go-sdk's client over StreamableClientTransport
)

// protocolVersion is what the clients speak: the initialize handshake's
// latest, as desktop clients do.
const protocolVersion = "2025-11-25"

// caller is one client of a case, used by one goroutine.
type caller interface {
	call() error
	close()
}

// A dialer opens the c callers of a case against a server at addr; shared
// is what the callers of one case have in common (the SDK's HTTP
// transport), closed after them. No call may outlive ctx's deadline: a
// server that stops answering fails the run rather than hanging it.
type dialer func(ctx context.Context, addr string, c int) (callers []caller, shared func(), err error)

// echoCall is the tools/call request of the raw client, id patched per
// call.
const echoCall = `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`

// rawCaller is a RawConn sending its prepared request.
type rawCaller struct{ *RawConn }

func (r rawCaller) call() error { return r.Call() }
func (r rawCaller) close()      { r.Close() }

// dialRaw opens c connections and performs MCP's handshake on each.
func dialRaw(ctx context.Context, addr string, c int) ([]caller, func(), error) {
	out := make([]caller, 0, c)
	for range c {
		conn, err := dialRawCtx(ctx, addr, "/mcp")
		if err == nil {
			if err = conn.Initialize(protocolVersion); err != nil {
				conn.Close()
			}
		}
		if err != nil {
			closeAll(out)
			return nil, nil, err
		}
		conn.Prepare(echoCall, []string{`"result"`, `hello`}, `"isError":true`)
		out = append(out, rawCaller{conn})
	}
	return out, func() {}, nil
}

// dialREST opens c connections to POST /v1/tools/echo/call.
func dialREST(ctx context.Context, addr string, c int) ([]caller, func(), error) {
	out := make([]caller, 0, c)
	for range c {
		conn, err := dialRawCtx(ctx, addr, "/v1/tools/echo/call")
		if err != nil {
			closeAll(out)
			return nil, nil, err
		}
		conn.Prepare(`{"arguments":{"message":"hello"}}`, []string{`"ok":true`, `hello`}, "")
		out = append(out, rawCaller{conn})
	}
	return out, func() {}, nil
}

// dialRawCtx is DialRaw with ctx's deadline on the connection.
func dialRawCtx(ctx context.Context, addr, path string) (*RawConn, error) {
	conn, err := DialRaw(addr, path)
	if err != nil {
		return nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		conn.conn.SetDeadline(deadline)
	}
	return conn, nil
}

// sdkCaller is a session of the go-sdk's client.
type sdkCaller struct {
	ctx context.Context
	cs  *mcp.ClientSession
}

func (s sdkCaller) call() error {
	res, err := s.cs.CallTool(s.ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("echo failed: %v", res.Content)
	}
	return nil
}

func (s sdkCaller) close() { s.cs.Close() }

// dialSDK connects c sessions of the go-sdk's client, as an application
// built on the SDK would, sharing one HTTP transport with room for all
// their connections.
func dialSDK(ctx context.Context, addr string, c int) ([]caller, func(), error) {
	transport := &http.Transport{MaxIdleConns: 4*c + 16, MaxIdleConnsPerHost: 4*c + 16}
	client := &http.Client{Transport: transport}
	out := make([]caller, 0, c)
	for range c {
		connectCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		cl := mcp.NewClient(&mcp.Implementation{Name: "mcpbench", Version: "1"}, nil)
		cs, err := cl.Connect(connectCtx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1, HTTPClient: client}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
		cancel()
		if err != nil {
			closeAll(out)
			transport.CloseIdleConnections()
			return nil, nil, err
		}
		out = append(out, sdkCaller{ctx, cs})
	}
	return out, transport.CloseIdleConnections, nil
}

func closeAll(callers []caller) {
	for _, c := range callers {
		c.close()
	}
}

// lister lists every tool of a server, page after page, over one raw
// connection: one call is one whole listing.
type lister struct {
	conn *RawConn
	size int // the bytes of the listing decoded untimed by dialList
}

// listRequest is tools/list, of the page after cursor if not empty.
func listRequest(id int, cursor string) []byte {
	if cursor == "" {
		return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list"}`)
	}
	c, _ := json.Marshal(cursor)
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list","params":{"cursor":` + string(c) + `}}`)
}

// maxPages bounds a listing: a server that pages forever fails the run.
const maxPages = 100

// call lists every page, checking each is a success and following
// nextCursor, without decoding the pages: on a client sharing two cores
// with the server, decoding 450 KB in the timed loop would be the
// client's time, not the server's.
func (l *lister) call() error {
	cursor, size := "", 0
	for page := range maxPages {
		status, err := l.conn.Do("POST", listRequest(page+1, cursor))
		if err != nil {
			return err
		}
		body := l.conn.Body()
		if status != 200 || !bytes.Contains(body, []byte(`"tools"`)) {
			return fmt.Errorf("tools/list: status %d: %.200s", status, body)
		}
		size += len(body)
		if cursor = nextCursor(body); cursor == "" {
			// The same listing, give or take ids and cursors.
			if size < l.size*99/100 || size > l.size*101/100 {
				return fmt.Errorf("tools/list: %d bytes, where the first listing had %d", size, l.size)
			}
			return nil
		}
	}
	return fmt.Errorf("tools/list: more than %d pages", maxPages)
}

func (l *lister) close() { l.conn.Close() }

// nextCursor finds the nextCursor of a tools/list answer, "" if none.
func nextCursor(body []byte) string {
	const key = `"nextCursor":"`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return ""
	}
	rest := body[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// jsonOf is the JSON-RPC message of an answer, plain JSON or an SSE
// stream's data lines.
func jsonOf(body []byte) []byte {
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
		return t
	}
	var out []byte
	for line := range bytes.Lines(body) {
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			out = append(out, bytes.TrimSpace(data)...)
		}
	}
	return out
}

// listAll lists a server's tools over conn, decoding every page: the
// tools (each as listed) and the bytes and pages it took.
func listAll(conn *RawConn) (tools []json.RawMessage, size, pages int, err error) {
	cursor := ""
	for pages < maxPages {
		pages++
		status, err := conn.Do("POST", listRequest(pages, cursor))
		if err != nil {
			return nil, 0, 0, err
		}
		size += len(conn.Body())
		var msg struct {
			Result *struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(jsonOf(conn.Body()), &msg); err != nil || status != 200 || msg.Result == nil {
			return nil, 0, 0, fmt.Errorf("tools/list: status %d (%v): %.200s", status, err, conn.Body())
		}
		tools = append(tools, msg.Result.Tools...)
		if cursor = msg.Result.NextCursor; cursor == "" {
			return tools, size, pages, nil
		}
	}
	return nil, 0, 0, errors.New("tools/list: too many pages")
}

// dialList opens one listing connection (lists are measured one at a
// time) and checks, untimed, that a listing has want tools.
func dialList(want int) dialer {
	return func(ctx context.Context, addr string, c int) ([]caller, func(), error) {
		if c != 1 {
			return nil, nil, fmt.Errorf("tools/list is measured with one client, not %d", c)
		}
		conn, err := dialRawCtx(ctx, addr, "/mcp")
		if err != nil {
			return nil, nil, err
		}
		if err := conn.Initialize(protocolVersion); err != nil {
			conn.Close()
			return nil, nil, err
		}
		tools, size, _, err := listAll(conn)
		if err == nil && len(tools) != want {
			err = fmt.Errorf("tools/list: %d tools, want %d", len(tools), want)
		}
		if err != nil {
			conn.Close()
			return nil, nil, err
		}
		return []caller{&lister{conn, size}}, func() {}, nil
	}
}
