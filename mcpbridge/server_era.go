package mcpbridge

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP has two eras, and a [Server] serves both on every endpoint, choosing
// per request:
//
//   - the handshake era (2025-11-25 and older): initialize opens a session
//     (Mcp-Session-Id), whose requests the fast path answers or the go-sdk's
//     stateful handler routes, and in which wield can ask the client
//     things in the middle of a call (elicitation, sampling);
//   - the stateless era (2026-07-28): no initialize and no session; every
//     request names its protocol version in the Mcp-Protocol-Version header
//     and in _meta, with the client's name and capabilities beside it, and
//     server/discover says what the server offers.
//
// A request of the stateless era goes to a stateless go-sdk handler over the
// same mcp.Server, so the same tools (registered with the SDK, run by the
// engine), resources and prompts answer it. The go-sdk tells the eras apart
// by the header too, and its stateful handler refuses the new one, which is
// why the route is chosen before it.

// srvStatelessEra is the first protocol revision without sessions.
const srvStatelessEra = srvNoAskVersion

// srvIsStatelessEra reports whether a request speaks 2026-07-28 or later: its
// Mcp-Protocol-Version header says so. A revision the server does not
// offer is routed there too, where the go-sdk answers it with the error
// the revision defines (-32022, naming the versions offered).
func srvIsStatelessEra(r *http.Request) bool {
	return r.Header.Get("Mcp-Protocol-Version") >= srvStatelessEra
}

// srvOffersStatelessEra reports whether the server offers a revision of the
// stateless era at all: when ProtocolVersions leave them all out, such a
// request goes where it went before, to the handshake era's handler, which
// refuses it.
func (s *Server) srvOffersStatelessEra() bool {
	return slices.ContainsFunc(s.opts.ProtocolVersions, func(v string) bool { return v >= srvStatelessEra })
}

// srvStatelessHandler is the go-sdk's stateless streamable handler of an
// endpoint's mcp.Server: each request stands alone, on a session the SDK
// makes for it and closes when it is answered.
func (s *Server) srvStatelessHandler(ep *srvEndpoint) *mcp.StreamableHTTPHandler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ep.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               s.opts.JSONResponse,
		Logger:                     srvQuiet(s.log),
		// A request of this era is the whole call: a client cancels it
		// by ending the request (there is no session for a
		// notifications/cancelled to reach it through), which cancels
		// the call on purpose, as that notification does in a session
		// (a confirm tool's approval is then withdrawn; see
		// srvCancelOnPurpose).
		PropagateRequestCancellation: true,
		DisableLocalhostProtection:   true, // Handler's guard checks Host
	})
}

// srvServeStatelessEra serves a request of the stateless era. A
// subscriptions/listen stream stays open as long as the client wants it,
// so it takes a place among the sessions of its client (see
// [ServerOptions].MaxSessions): a client cannot hold more streams than it
// could sessions.
func (s *Server) srvServeStatelessEra(w http.ResponseWriter, r *http.Request, ep *srvEndpoint) {
	if r.Method == http.MethodPost && srvIsListen(r) {
		ss := s.sessions
		client := ss.client(r)
		if ok, bound := ss.reserve(client); !ok {
			s.srvRefuseSession(w, r, bound)
			return
		}
		defer ss.release(client)
	}
	ep.stateless.ServeHTTP(w, r)
}

// srvIsListen reports whether a request is a subscriptions/listen, by the
// Mcp-Method header the revision requires (the go-sdk checks it matches
// the body).
func srvIsListen(r *http.Request) bool {
	return r.Header.Get("Mcp-Method") == "subscriptions/listen"
}

// srvSteerToHandshake answers the server/discover of a client that declared
// elicitation or sampling with the error of a revision not offered
// (-32022), naming the handshake-era revisions only, when the server
// offers any: such a client then initialises a session, in which a
// confirm tool asks its user and a tool may ask its model. In the
// stateless era a server may ask nothing in the middle of a call (that
// comes back as input_required results, not yet served), so the client
// would lose both. A client that declared neither is served the stateless
// era. It reports whether it answered.
func (s *Server) srvSteerToHandshake(req mcp.Request) (*jsonrpc.Error, bool) {
	dr, ok := req.(*mcp.ServerRequest[*mcp.DiscoverParams])
	if !ok {
		return nil, false
	}
	caps := dr.ClientCapabilities()
	if caps == nil || (caps.Elicitation == nil && caps.Sampling == nil) {
		return nil, false
	}
	legacy := slices.DeleteFunc(slices.Clone(s.opts.ProtocolVersions), func(v string) bool { return v >= srvStatelessEra })
	if len(legacy) == 0 {
		return nil, false // nowhere to steer to: the stateless era it is
	}
	data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: legacy, Requested: dr.ProtocolVersion()})
	return &jsonrpc.Error{
		Code:    mcp.CodeUnsupportedProtocolVersion,
		Message: "this server asks clients that can elicit or sample through the initialize handshake: initialize with one of the supported versions",
		Data:    data,
	}, true
}

// srvEraMiddleware is the receiving middleware of the stateless era's
// requests: server/discover steers some clients to the handshake (see
// srvSteerToHandshake).
func (s *Server) srvEraMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "server/discover" {
			if err, ok := s.srvSteerToHandshake(req); ok {
				return nil, err
			}
		}
		return next(ctx, method, req)
	}
}
