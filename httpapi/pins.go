package httpapi

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsondec"
	"github.com/wieldhq/wield/mcpbridge"
)

// Imports is what GET /v1/imports, GET /v1/pins and POST
// /v1/pins/{name}/accept show and do; *mcpbridge.Importer is one.
type Imports interface {
	// Servers returns the configured MCP servers and their state.
	Servers() []mcpbridge.ServerStatus
	// Held returns the held tools with what changed.
	Held() ([]mcpbridge.HeldTool, error)
	// AcceptName accepts a held tool by its registry name, bound to the
	// hash shown when hash is not empty.
	AcceptName(name, hash string) (mcpbridge.HeldTool, error)
}

// ImportedServer is one MCP server as GET /v1/imports shows it.
type ImportedServer struct {
	mcpbridge.ServerStatus
	// HeldCount counts the server's held tools.
	HeldCount int `json:"held_count"`
}

// ImportList is the answer of GET /v1/imports.
type ImportList struct {
	Servers []ImportedServer `json:"servers"`
}

// PinList is the answer of GET /v1/pins.
type PinList struct {
	Held []mcpbridge.HeldTool `json:"held"`
	// CanAccept says whether the request's key may accept them (it has
	// [RightPins], or the server has no keys), so that a console can
	// disable its Accept buttons and say why.
	CanAccept bool `json:"can_accept"`
}

// AcceptRequest is the optional body of POST /v1/pins/{name}/accept.
type AcceptRequest struct {
	// Hash, when set, is the [mcpbridge.HeldTool].Hash shown: the accept is
	// refused (409) if the server changed the tool again since.
	Hash string `json:"hash,omitempty"`
}

// listImports answers GET /v1/imports. A key scoped to toolsets sees the
// servers that provide one of its tools, counting those only.
func (s *Server) listImports(w http.ResponseWriter, r *http.Request) error {
	out := ImportList{Servers: []ImportedServer{}}
	if s.imports == nil {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	scope := s.scope(r)
	for _, st := range s.imports.Servers() {
		if scope != nil {
			st.Tools, st.Held = s.scopedCounts(scope, st.Name)
			if st.Tools == 0 {
				continue
			}
		}
		out.Servers = append(out.Servers, ImportedServer{ServerStatus: st, HeldCount: len(st.Held)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// scopedCounts counts the tools in scope that a server provides, and names
// the held ones.
func (s *Server) scopedCounts(scope map[string]bool, server string) (tools int, held []string) {
	for name := range scope {
		e := s.reg.Entry(name)
		if e == nil || e.Tool.Source != "mcp:"+server {
			continue
		}
		tools++
		if e.Tool.Status == wield.StatusHeld {
			held = append(held, name)
		}
	}
	slices.Sort(held) // the scope is a map: in a stable order
	return tools, held
}

// listPins answers GET /v1/pins: the held tools in the key's scope.
func (s *Server) listPins(w http.ResponseWriter, r *http.Request) error {
	out := PinList{Held: []mcpbridge.HeldTool{}}
	if k := KeyFrom(r.Context()); k == nil || k.Has(RightPins) {
		out.CanAccept = true
	}
	if s.imports != nil {
		held, err := s.imports.Held()
		if err != nil {
			return err
		}
		scope := s.scope(r)
		for _, h := range held {
			if inScope(scope, h.Name) {
				out.Held = append(out.Held, h)
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// acceptPin answers POST /v1/pins/{name}/accept with the tool as it was
// held; the tool is callable when it answers.
func (s *Server) acceptPin(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if !inScope(s.scope(r), name) {
		return outOfScope(name)
	}
	var req AcceptRequest
	body, err := readBody(r.Body, r.ContentLength)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return tooLarge(mbe)
	case err != nil:
		return apiError(http.StatusBadRequest, CodeBadRequest, "the request body could not be read")
	case len(bytes.TrimSpace(body)) > 0: // the body is optional
		if err := jsondec.DecodeStrict(body, &req); err != nil {
			return apiError(http.StatusBadRequest, CodeBadRequest, "the request body is not valid: "+err.Error())
		}
	}
	if s.imports == nil {
		return apiError(http.StatusNotFound, CodeNotFound, "no held tool '"+name+"': this server imports no MCP servers")
	}
	h, err := s.imports.AcceptName(name, req.Hash)
	switch {
	case errors.Is(err, wield.ErrNotFound):
		return apiError(http.StatusNotFound, CodeNotFound, "no held tool '"+name+"': no MCP server imported a tool of that name")
	case errors.Is(err, mcpbridge.ErrNotHeld):
		return apiError(http.StatusNotFound, CodeNotFound, "no held tool '"+name+"': the tool is not held, there is nothing to accept")
	case errors.Is(err, mcpbridge.ErrPinMoved):
		return apiError(http.StatusConflict, CodeConflict, "tool '"+name+"' changed again since the definition of that hash: list the held tools again and accept what they show")
	case err != nil:
		return err
	}
	by := "a client of a server without keys"
	if k := KeyFrom(r.Context()); k != nil {
		by = requester(k)
	}
	s.log.Info("mcp tool accepted", "tool", name, "server", h.Server, "remote", h.Tool, "by", by)
	writeJSON(w, http.StatusOK, h)
	return nil
}

// Imports lists the server's MCP servers (GET /v1/imports).
func (c *Client) Imports(ctx context.Context) (*ImportList, error) {
	var out ImportList
	if err := c.Do(ctx, "GET", "/v1/imports", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Pins lists the server's held MCP tools (GET /v1/pins).
func (c *Client) Pins(ctx context.Context) (*PinList, error) {
	var out PinList
	if err := c.Do(ctx, "GET", "/v1/pins", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AcceptPin accepts a held MCP tool by name (POST /v1/pins/{name}/accept),
// bound to hash when it is not empty. A name not held is an [*Error] of
// status 404.
func (c *Client) AcceptPin(ctx context.Context, name, hash string) (*mcpbridge.HeldTool, error) {
	var out mcpbridge.HeldTool
	path := "/v1/pins/" + url.PathEscape(name) + "/accept"
	if err := c.Do(ctx, "POST", path, AcceptRequest{Hash: hash}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
