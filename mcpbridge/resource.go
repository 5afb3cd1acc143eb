package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
)

// The resources of a [Server] with [ServerOptions].Calls, as URI templates.
const (
	// CallResource is a call's record as JSON (a [wield.Record]).
	CallResource = "wield://calls/{id}"
	// CallOutputResource is a call's whole output, even when the model got
	// it cut to the output budget: where a truncated result's remainder
	// is read.
	CallOutputResource = "wield://calls/{id}/output"
)

const resCallsPrefix = "wield://calls/"

// ResourceURI returns the URI of a call's record, or of its whole output
// when output is true.
func ResourceURI(callID string, output bool) string {
	if output {
		return resCallsPrefix + callID + "/output"
	}
	return resCallsPrefix + callID
}

// resAdd makes an endpoint serve the call resources. A toolset's endpoint
// serves only the calls of its tools.
func (s *Server) resAdd(ep *srvEndpoint) {
	h := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return s.resRead(ctx, ep, req.Params.URI)
	}
	ep.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "call",
		Title:       "Call record",
		URITemplate: CallResource,
		Description: "The record of a tool call: arguments, result, timing and caller, as JSON.",
		MIMEType:    "application/json",
	}, h)
	ep.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "call-output",
		Title:       "Call output",
		URITemplate: CallOutputResource,
		Description: "The whole output of a tool call, including what was cut from the result to fit the output budget.",
	}, h)
}

// resRead answers resources/read for the call resources.
func (s *Server) resRead(ctx context.Context, ep *srvEndpoint, uri string) (*mcp.ReadResourceResult, error) {
	id, output, ok := resParse(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	rec, err := s.opts.Calls.Call(ctx, id)
	switch {
	case errors.Is(err, wield.ErrNotFound):
		return nil, mcp.ResourceNotFoundError(uri)
	case err != nil:
		s.log.Error("mcp server: read call record", "call_id", id, "err", err)
		return nil, srvInternal
	case rec.Call == nil || rec.Result == nil:
		s.log.Error("mcp server: read call record", "call_id", id, "err", "the record has no call or no result")
		return nil, srvInternal
	case ep.toolset != "" && !s.srvInToolset(ep.toolset, rec.Call.Tool):
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if output {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{resOutput(uri, rec.Output())}}, nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		s.log.Error("mcp server: encode call record", "call_id", id, "err", err)
		return nil, srvInternal
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// resOutput is an output as a resource: a JSON string as its text, any
// other value as JSON.
func resOutput(uri string, out json.RawMessage) *mcp.ResourceContents {
	var s string
	if json.Unmarshal(out, &s) == nil {
		return &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: s}
	}
	return &mcp.ResourceContents{URI: uri, MIMEType: "application/json", Text: string(out)}
}

// resParse splits wield://calls/{id}[/output].
func resParse(uri string) (id string, output, ok bool) {
	rest, found := strings.CutPrefix(uri, resCallsPrefix)
	if !found {
		return "", false, false
	}
	id, output = strings.CutSuffix(rest, "/output")
	if id == "" || strings.ContainsAny(id, "/?#") {
		return "", false, false
	}
	return id, output, true
}
