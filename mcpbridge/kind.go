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
// file loads; a remote tool held for a changed definition (see Pinning) is
// held for the file's tool too.
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
			if t, ok := im.reg.Tool(imported); ok && !t.Callable() {
				return nil, wield.Errorf(wield.ErrPermissionDenied,
					"the MCP tool %s changed since it was pinned and is held until an operator accepts it", imported)
			}
			return h.Handle(ctx, args)
		}), nil
	})
}
