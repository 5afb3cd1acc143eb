package httpapi

import (
	"context"
	"net/http"
	"slices"
)

// WhoAmI is the answer of GET /v1/whoami: what the request's key may do,
// so that a client (the console) offers only what it will be allowed, and
// says why the rest is off.
type WhoAmI struct {
	// Required says whether the server asks for keys. Without keys, Key is
	// absent and Rights are what the server grants every local client.
	Required bool `json:"required"`
	// Key is the key the request came with (never its secret).
	Key *KeyInfo `json:"key,omitempty"`
	// Rights are the rights the request has, read first.
	Rights []Right `json:"rights"`
	// Toolsets scope the request's key; empty means every tool.
	Toolsets []string `json:"toolsets,omitempty"`
	// SelfApproval says whether a key may decide the approval of a call
	// it asked for itself (Options.SelfApproval); without, another key
	// decides it.
	SelfApproval bool `json:"self_approval"`
}

// whoami answers GET /v1/whoami. A server without keys grants every local
// client what its routes allow without a key: every right but workflow
// (unless Options.AllowWorkflowBypass) and keys (such a server manages no
// keys; see [Server.keysManaged]).
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) error {
	out := WhoAmI{Required: s.keys != nil, SelfApproval: s.selfOK}
	if k := KeyFrom(r.Context()); k != nil {
		source := sourceFile
		if s.keyring != nil && slices.ContainsFunc(s.keyring.static, func(c Key) bool { return c.ID == k.ID }) {
			source = sourceConfig
		}
		info := keyInfo(k, source)
		out.Key, out.Rights, out.Toolsets = &info, info.Rights, info.Toolsets
	} else {
		for _, rt := range Rights {
			if (rt == RightWorkflow && !s.bypass) || rt == RightKeys {
				continue
			}
			out.Rights = append(out.Rights, rt)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// WhoAmI says what the client's key may do (GET /v1/whoami).
func (c *Client) WhoAmI(ctx context.Context) (*WhoAmI, error) {
	var out WhoAmI
	if err := c.Do(ctx, "GET", "/v1/whoami", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
