package main

import (
	"net/http"
	"time"

	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/toolfile"
)

// defaultBodyTimeout is how long a client of `wield serve` or `wield mcp
// --http` may take to send a request (its headers and body) without
// server.body_timeout. A client trickling a body slower is cut off rather
// than holding a connection and its goroutine for as long as it likes.
const defaultBodyTimeout = 30 * time.Second

// serverLimits are the bounds on what one client can make the HTTP server
// hold: how long it may take to send a request, and how many connections
// it may have open (see httpapi.LimitListener).
func serverLimits(cfg *toolfile.Config) (bodyTimeout time.Duration, maxConns int) {
	bodyTimeout = defaultBodyTimeout
	if cfg != nil {
		if cfg.Server.BodyTimeout > 0 {
			bodyTimeout = cfg.Server.BodyTimeout
		}
		maxConns = cfg.Server.MaxConnsPerClient // zero: the listener's default
	}
	return bodyTimeout, maxConns
}

// maxBody is server.max_body: the bound on a request's body, REST and MCP
// alike; zero (not set) leaves each its own default.
func maxBody(cfg *toolfile.Config) int64 {
	if cfg == nil {
		return 0
	}
	return cfg.Server.MaxBody
}

// mcpClientKey names the client of an MCP request for its session bound:
// the API key it was let in with, else (on a server without keys) nothing,
// which counts it by its IP address.
func mcpClientKey(r *http.Request) string {
	if k := httpapi.KeyFrom(r.Context()); k != nil {
		return "key:" + k.ID
	}
	return ""
}
