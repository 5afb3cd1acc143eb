package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield/internal/schemadec"
)

// ElicitFunc answers a server's request for input from the user
// (elicitation/create), made while one of its tools runs. server is the
// name the server was added under; req.Mode is "form" (req.RequestedSchema
// is the flat object schema of the form) or "url" (req.URL is a page for
// the person to visit). The result's Action is "accept" (with Content for a
// form), "decline" or "cancel". An error fails the server's request, not
// the call: the server decides what its tool does then.
//
// The SDK checks an accepted form's content against the schema and fills
// the fields left out with the schema's defaults before answering.
type ElicitFunc func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error)

// ElicitDefaults is an [ElicitFunc] for an importer with no person to ask:
// it accepts a form with the defaults its schema gives, and declines a form
// that requires a field without a default, a URL request (a page no one
// would visit) and a schema it cannot read.
func ElicitDefaults(_ context.Context, _ string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if req.Mode != "" && req.Mode != "form" {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	content, ok := impFormDefaults(req.RequestedSchema)
	if !ok {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// impFormDefaults returns the defaults of a form schema, and false when a
// required field has none or the schema does not read as one.
func impFormDefaults(schema any) (map[string]any, bool) {
	content := map[string]any{}
	if schema == nil {
		return content, true
	}
	s, err := schemadec.FromValue(schema) // a server's: nested as deep as it likes
	if err != nil || s == nil {
		return nil, false
	}
	for name, p := range s.Properties {
		if p == nil || len(p.Default) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(p.Default, &v); err != nil {
			return nil, false
		}
		content[name] = v
	}
	for _, name := range s.Required {
		if _, ok := content[name]; !ok {
			return nil, false
		}
	}
	return content, true
}

// impElicitHandler adapts the importer's [ElicitFunc] to one server's
// client; nil when the importer has none, so that the client does not
// advertise elicitation.
func (s *impServer) impElicitHandler() func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	f := s.im.opts.Elicit
	if f == nil {
		return nil
	}
	server := s.cfg.Name
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		res, err := f(ctx, server, req.Params)
		if err == nil && res == nil {
			err = errors.New("no answer")
		}
		if err != nil {
			// The server is told no more than that: the error is ours.
			s.im.log.Warn("mcp elicitation failed", "server", server, "error", err)
			return nil, errors.New("elicitation failed")
		}
		return res, nil
	}
}
