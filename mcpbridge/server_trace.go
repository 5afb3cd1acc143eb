package mcpbridge

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
)

// TraceRequest is what [ServerOptions].Trace is told of a request the
// server answers: the attributes OpenTelemetry's MCP conventions record on
// its span, and the request's params._meta, whose traceparent and
// tracestate name the caller's span (the span's parent).
type TraceRequest struct {
	Method          string // mcp.method.name: "tools/call"
	Tool            string // gen_ai.tool.name
	SessionID       string // mcp.session.id; empty without a session
	RequestID       string // jsonrpc.request.id, as written; empty when not known
	ProtocolVersion string // mcp.protocol.version; empty when not known
	Meta            map[string]any
}

// srvRPCIDKey holds the JSON-RPC ID of the tools/call a call answers, for
// its span.
type srvRPCIDKey struct{}

// srvRPCIDHeader carries the JSON-RPC ID of a tools/call that the go-sdk
// answers from srvCheckEnvelope to srvHandler, for the call's span: the
// SDK tells a handler the request's headers, not its ID. A client's own
// header of that name is dropped before.
const srvRPCIDHeader = "Wield-Internal-Jsonrpc-Id"

// srvNoteRPCID notes the ID of a POST holding a single tools/call in
// srvRPCIDHeader (a batch, or any other message, gets none).
func srvNoteRPCID(r *http.Request, body []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" && srvPlainID(m.ID) {
		r.Header.Set(srvRPCIDHeader, srvIDText(m.ID))
	}
}

// srvIDText is a JSON-RPC ID as the conventions write it: a string's
// text, a number's digits; at most srvMaxIDText bytes of it, since a
// client chooses it.
func srvIDText(id json.RawMessage) string {
	s := string(id)
	var text string
	if json.Unmarshal(id, &text) == nil {
		s = text
	}
	if len(s) > srvMaxIDText {
		s = strings.ToValidUTF8(s[:srvMaxIDText], "")
	}
	return s
}

// srvMaxIDText bounds the JSON-RPC ID a span records.
const srvMaxIDText = 128

// srvTrace starts the span of a tools/call when the server traces, and
// returns the context the call runs under and the function that ends the
// span with the call's outcome.
func (s *Server) srvTrace(ctx context.Context, ss *mcp.ServerSession, p *mcp.CallToolParamsRaw) (context.Context, func(*wield.Result, error)) {
	if s.opts.Trace == nil {
		return ctx, func(*wield.Result, error) {}
	}
	r := TraceRequest{Method: "tools/call", Tool: p.Name, Meta: p.Meta}
	r.RequestID, _ = ctx.Value(srvRPCIDKey{}).(string)
	if ss != nil {
		r.SessionID = ss.ID()
		if ip := ss.InitializeParams(); ip != nil {
			r.ProtocolVersion = ip.ProtocolVersion
		}
	}
	ctx, end := s.opts.Trace(ctx, r)
	return ctx, func(res *wield.Result, err error) {
		switch {
		case err != nil:
			// The JSON-RPC error's code, as the conventions ask.
			code := int64(jsonrpc.CodeInternalError)
			if je, ok := err.(*jsonrpc.Error); ok {
				code = je.Code
			}
			end(strconv.FormatInt(code, 10))
		case res != nil && !res.OK:
			end("tool_error") // a result with isError
		default:
			end("")
		}
	}
}
