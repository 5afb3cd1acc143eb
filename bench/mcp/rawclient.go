package mcpbench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RawConn is the load generator's client: one keep-alive HTTP/1.1
// connection, written to and read from by hand, as wrk would. Every
// request is built once, so a call costs the client a write of prebuilt
// bytes (with the JSON-RPC id patched in place), a read of the status
// line, the headers and the body (Content-Length or chunked, SSE or
// JSON), and a check that the answer is a success. The cheaper the
// client, the more of a 2-core machine is left to the server measured.
//
// A RawConn is not safe for concurrent use: each client goroutine has its
// own.
type RawConn struct {
	conn    net.Conn
	br      *bufio.Reader
	host    string
	path    string
	session string // Mcp-Session-Id, when the server gave one
	version string // the protocol revision, sent as MCP-Protocol-Version
	body    []byte // the last response's body; reused
	call    []byte // the prebuilt request of Call
	idAt    int    // where the id's digits are in call
	id      int
	want    [][]byte // what every answer to Call must contain
	refuse  []byte   // what no answer to Call may contain
}

// idWidth is the room the id has in a prebuilt request: spaces, then the
// digits, which keeps Content-Length fixed and the JSON valid.
const idWidth = 10

// DialRaw opens a connection to addr (host:port) for requests to path.
func DialRaw(addr, path string) (*RawConn, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &RawConn{conn: conn, br: bufio.NewReaderSize(conn, 64<<10), host: addr, path: path}, nil
}

// Close ends the session (DELETE, when the server gave one) and closes
// the connection.
func (c *RawConn) Close() error {
	if c.session != "" {
		if _, err := c.conn.Write(c.request("DELETE", nil)); err == nil {
			c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			c.read()
		}
	}
	return c.conn.Close()
}

// request is an HTTP/1.1 request of method with body (none when nil) to
// the connection's path, with the session's headers.
func (c *RawConn) request(method string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: mcpbench\r\n", method, c.path, c.host)
	if body != nil {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", len(body))
	}
	if c.session != "" {
		fmt.Fprintf(&b, "Mcp-Session-Id: %s\r\n", c.session)
	}
	if c.version != "" {
		fmt.Fprintf(&b, "Mcp-Protocol-Version: %s\r\n", c.version)
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// Initialize performs MCP's handshake at protocol revision version:
// initialize (keeping the session id the server answers with, if any),
// then notifications/initialized.
func (c *RawConn) Initialize(version string) error {
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcpbench","version":"1"}}}`, version)
	status, err := c.Do("POST", []byte(init))
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if status != 200 || !bytes.Contains(c.body, []byte(`"result"`)) {
		return fmt.Errorf("initialize: status %d: %.200s", status, c.body)
	}
	c.version = version
	status, err = c.Do("POST", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	if status/100 != 2 {
		return fmt.Errorf("notifications/initialized: status %d: %.200s", status, c.body)
	}
	return nil
}

// Do sends one request and reads its answer: the status, with the body in
// Body.
func (c *RawConn) Do(method string, body []byte) (int, error) {
	if _, err := c.conn.Write(c.request(method, body)); err != nil {
		return 0, err
	}
	return c.read()
}

// Body is the body of the last answer, valid until the next request.
func (c *RawConn) Body() []byte { return c.body }

// Prepare builds the request Call sends: a POST of body, whose JSON-RPC
// id, if it has one, must be written `"id":0` (Call numbers the requests
// 1, 2, …); an answer is a success when its status is 200, it contains
// every one of want and does not contain refuse (when not nil).
func (c *RawConn) Prepare(body string, want []string, refuse string) {
	padded := `"id":` + strings.Repeat(" ", idWidth-1) + "0"
	c.call = c.request("POST", []byte(strings.Replace(body, `"id":0`, padded, 1)))
	c.idAt = bytes.Index(c.call, []byte(padded))
	if c.idAt >= 0 {
		c.idAt += len(`"id":`)
	}
	c.want = c.want[:0]
	for _, w := range want {
		c.want = append(c.want, []byte(w))
	}
	c.refuse = nil
	if refuse != "" {
		c.refuse = []byte(refuse)
	}
}

// Call sends the prepared request and checks its answer.
func (c *RawConn) Call() error {
	if c.idAt >= 0 {
		c.id++
		var digits [20]byte
		d := strconv.AppendInt(digits[:0], int64(c.id), 10)
		field := c.call[c.idAt : c.idAt+idWidth]
		for i := range field {
			field[i] = ' '
		}
		copy(field[idWidth-len(d):], d)
	}
	if _, err := c.conn.Write(c.call); err != nil {
		return err
	}
	status, err := c.read()
	if err != nil {
		return err
	}
	if status != 200 {
		return fmt.Errorf("status %d: %.200s", status, c.body)
	}
	for _, w := range c.want {
		if !bytes.Contains(c.body, w) {
			return fmt.Errorf("answer without %s: %.300s", w, c.body)
		}
	}
	if c.refuse != nil && bytes.Contains(c.body, c.refuse) {
		return fmt.Errorf("answer with %s: %.300s", c.refuse, c.body)
	}
	return nil
}

var (
	hdrContentLength    = []byte("content-length")
	hdrTransferEncoding = []byte("transfer-encoding")
	hdrSession          = []byte("mcp-session-id")
	hdrConnection       = []byte("connection")
)

// errClosed is a server's "Connection: close": the load generator keeps
// its connections, so a server that drops them fails the run rather than
// having its reconnections hidden.
var errClosed = errors.New("the server closed the connection (Connection: close)")

// read reads one response: its status and, into c.body, its body.
func (c *RawConn) read() (int, error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	length, chunked, closing := -1, false, false
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			return 0, fmt.Errorf("bad header %q", line)
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, hdrContentLength):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, hdrTransferEncoding):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, hdrSession):
			c.session = string(value)
		case bytes.EqualFold(name, hdrConnection):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		if err := c.readChunked(); err != nil {
			return 0, err
		}
	case length >= 0:
		if cap(c.body) < length {
			c.body = make([]byte, length)
		}
		c.body = c.body[:length]
		if _, err := io.ReadFull(c.br, c.body); err != nil {
			return 0, err
		}
	case status == 204 || status == 304 || status/100 == 1:
	default:
		return 0, fmt.Errorf("status %d: a body of unknown length", status)
	}
	if closing {
		return status, errClosed
	}
	return status, nil
}

// readChunked reads a chunked body into c.body.
func (c *RawConn) readChunked() error {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseUint(string(line), 16, 32)
		if err != nil {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if size == 0 {
			for { // trailers, then the empty line
				line, err := c.br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					return nil
				}
			}
		}
		n := len(c.body)
		c.body = slices.Grow(c.body, int(size))[:n+int(size)]
		if _, err := io.ReadFull(c.br, c.body[n:]); err != nil {
			return err
		}
		if _, err := c.br.Discard(2); err != nil {
			return err
		}
	}
}
