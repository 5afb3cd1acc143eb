package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/toolfile"
)

// Kind is the `mcp` entry type of tool files:
//
//	name: read_notes
//	description: Read a note from the notes folder
//	parameters: [{name: path, type: string, required: true}]
//	entry: {type: mcp, server: fs, tool: read_text_file}
//
// The file's tool runs the tool of a server added to the importer, under
// the file's own name, description and schema (to narrow or explain a
// remote tool). A server the importer does not know is reported when the
// file loads. A call runs only a remote tool the server lists now and that
// is pinned: one held for a changed definition (see Pinning) is held for
// the file's tool too, and one the server does not list (no longer, or
// never: its definition was never pinned) is refused; before the server's
// first listing the call fails as the server being unreachable does.
func (im *Importer) Kind() toolfile.Kind {
	return toolfile.KindFunc(func(_ context.Context, def *toolfile.Def) (wield.Handler, error) {
		server, _ := def.Entry.Values["server"].(string)
		remote, _ := def.Entry.Values["tool"].(string)
		for k := range def.Entry.Values {
			if k != "server" && k != "tool" {
				return nil, fmt.Errorf("mcp entry: unknown field %q (server and tool are known)", k)
			}
		}
		if server == "" {
			return nil, fmt.Errorf("mcp entry: missing server (one of mcp_servers)")
		}
		if remote == "" {
			remote = def.Name
		}
		im.mu.Lock()
		s := im.servers[server]
		im.mu.Unlock()
		if s == nil {
			return nil, fmt.Errorf("mcp entry: MCP server %q is not configured (mcp_servers)", server)
		}
		imported := im.opts.Naming(server, remote)
		h := &impHandler{s: s, remote: remote}
		return wield.HandlerFunc(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			s.mu.Lock()
			t, listed := s.tools[remote], s.listed
			s.mu.Unlock()
			switch {
			case !listed:
				return nil, s.unavailable(nil)
			case t == nil:
				return nil, wield.Errorf(wield.ErrToolNotFound,
					"MCP server %q does not list a tool %q, so it cannot be called: only a tool the server lists, and whose definition is pinned, is", server, remote)
			case t.held:
				return nil, wield.Errorf(wield.ErrPermissionDenied,
					"the MCP tool %s changed since it was pinned and is held until an operator accepts it", imported)
			}
			return h.Handle(ctx, args)
		}), nil
	})
}
