package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/mcpbridge"
)

// pinsFile is where the pins of imported MCP tools are kept, beside the
// default database: `wield serve`, `wield list` and `wield pins` of one
// user share it.
func pinsFile() string { return filepath.Join(stateDir(), "mcp-pins.json") }

func (a *app) pinsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pins",
		Short: "Show the imported MCP tools held because their definition changed, with a diff",
		Long: `Show the MCP servers (state, tools, held tools) and the imported tools held
because their server changed their definition (description, input or output
schema, annotations) since it was pinned, each with a unified diff of the
pinned definition against the current one. A held tool is in no listing and
cannot be called until it is accepted with 'wield pins accept NAME'.

With --server (or WIELD_SERVER) this asks that running server (GET /v1/pins
and /v1/imports);
without, wield connects to the MCP servers of --config itself and compares
them with the pins file (` + "`$XDG_STATE_HOME/wield/mcp-pins.json`" + `). See docs/mcp.md#pins.`,
		Example: `  wield pins --config wield.yaml
  wield pins --server http://127.0.0.1:7420 --json
  wield pins accept fs__read_file --config wield.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, servers, err := a.heldTools(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(list)
			}
			writeServers(a.stdout, servers)
			writeHeld(a.stdout, list.Held)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"held":[...]} as GET /v1/pins answers`)
	cmd.AddCommand(a.pinsAcceptCommand())
	return cmd
}

func (a *app) pinsAcceptCommand() *cobra.Command {
	var hash string
	cmd := &cobra.Command{
		Use:   "accept NAME...",
		Short: "Accept the current definition of held tools: pin it, and make them callable",
		Long: `Accept the current definition of each held tool NAME (its wield name, as
'wield pins' shows it): the definition is pinned and the tool becomes
callable and listed.

With --server (or WIELD_SERVER) the running server accepts it at once (POST
/v1/pins/NAME/accept, with a key that has the pins right). Without, wield
connects to the MCP servers of --config, accepts what they offer now and
writes the pins file; a 'wield serve' of the same user (same pins file)
looks at that file every second and releases the tool, without a
restart, provided it sees the same definition.`,
		Example: `  wield pins accept fs__read_file --config wield.yaml
  wield pins accept fs__read_file fs__write_file --server http://127.0.0.1:7420`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			if hash != "" && len(names) > 1 {
				return usagef("--hash binds the accept of one tool: name one")
			}
			accept, where, err := a.pinAccepter(cmd.Context())
			if err != nil {
				return err
			}
			var failed []string
			for _, name := range names {
				h, err := accept(name, hash)
				if err != nil {
					fmt.Fprintf(a.stderr, "wield: accept %s: %s\n", safetext.Line(name), safetext.Line(pinsReason(err)))
					failed = append(failed, name)
					continue
				}
				fmt.Fprintf(a.stdout, "accepted %s (mcp server %s, tool %q): its %s is pinned; %s\n",
					safetext.Line(h.Name), safetext.Line(h.Server), safetext.Line(h.Tool), changeWords(h.Changed), where)
			}
			if len(failed) > 0 {
				return exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&hash, "hash", "", "accept only if the current definition still has this hash (the hash 'wield pins --json' shows)")
	return cmd
}

// heldTools are the held tools of --server, else of the configured MCP
// servers as this process imports them, with the servers' states.
func (a *app) heldTools(ctx context.Context) (*httpapi.PinList, []mcpbridge.ServerStatus, error) {
	if c := a.client(); c != nil {
		list, err := c.Pins(ctx)
		if err != nil {
			return nil, nil, err
		}
		imp, err := c.Imports(ctx)
		if err != nil {
			return nil, nil, err
		}
		servers := make([]mcpbridge.ServerStatus, len(imp.Servers))
		for i, s := range imp.Servers {
			servers[i] = s.ServerStatus
		}
		return list, servers, nil
	}
	im, err := a.localImporter()
	if err != nil {
		return nil, nil, err
	}
	out := &httpapi.PinList{Held: []mcpbridge.HeldTool{}, CanAccept: true}
	if im == nil {
		fmt.Fprintln(a.stderr, "wield: no MCP servers are configured (mcp_servers in --config), so no tool is held")
		return out, nil, nil
	}
	held, err := im.Held()
	if err != nil {
		return nil, nil, err
	}
	out.Held = append(out.Held, held...)
	return out, im.Servers(), nil
}

// writeServers prints one line per MCP server: its state, tools and held
// tools, and why it failed.
func writeServers(w io.Writer, servers []mcpbridge.ServerStatus) {
	for _, s := range servers {
		line := fmt.Sprintf("mcp server %s (%s): %s; tools %d, held %d", safetext.Line(s.Name), safetext.Line(s.Transport), safetext.Line(s.State), s.Tools, len(s.Held))
		if s.State == mcpbridge.StateFailed && s.LastError != "" {
			line += ": " + safetext.Line(s.LastError)
		}
		fmt.Fprintln(w, line)
	}
	if len(servers) > 0 {
		fmt.Fprintln(w)
	}
}

// pinAccepter returns what accepts a held tool (through --server, else in
// the pins file) and what to say of it once accepted.
func (a *app) pinAccepter(ctx context.Context) (func(name, hash string) (*mcpbridge.HeldTool, error), string, error) {
	if c := a.client(); c != nil {
		return func(name, hash string) (*mcpbridge.HeldTool, error) {
			return c.AcceptPin(ctx, name, hash)
		}, "the server calls it now", nil
	}
	im, err := a.localImporter()
	if err != nil {
		return nil, "", err
	}
	if im == nil {
		return nil, "", errors.New("no MCP servers are configured, so no tool is held: give --config with mcp_servers, or --server to ask a running server")
	}
	return func(name, hash string) (*mcpbridge.HeldTool, error) {
		h, err := im.AcceptName(name, hash)
		if err != nil {
			return nil, err
		}
		return &h, nil
	}, "written to " + safetext.Line(pinsFile()) + ", which a running wield serve picks up", nil
}

// localImporter imports the configured MCP servers, waiting for their
// listings as `wield list` does; nil when none is configured.
func (a *app) localImporter() (*mcpbridge.Importer, error) {
	if _, _, err := a.setup(nil); err != nil {
		return nil, err
	}
	return a.importer, nil
}

// pinsReason is the part of an accept's error a person acts on.
func pinsReason(err error) string {
	var ae *httpapi.Error
	switch {
	case errors.As(err, &ae):
		return ae.Message
	case errors.Is(err, wield.ErrNotFound):
		return "no MCP server imported a tool of that name (wield pins lists the held ones)"
	case errors.Is(err, mcpbridge.ErrNotHeld):
		return "the tool is not held: there is nothing to accept"
	case errors.Is(err, mcpbridge.ErrPinMoved):
		return "the tool changed again since the definition of --hash: run wield pins again"
	}
	return err.Error()
}

// writeHeld prints the held tools for a person: each with its diff, every
// text from a server made safe for the terminal.
func writeHeld(w io.Writer, held []mcpbridge.HeldTool) {
	if len(held) == 0 {
		fmt.Fprintln(w, "No tool is held: every imported tool is as pinned.")
		return
	}
	for i, h := range held {
		if i > 0 {
			fmt.Fprintln(w)
		}
		since := ""
		if !h.HeldSince.IsZero() {
			since = ", held since " + h.HeldSince.Local().Format(time.DateTime)
		}
		pinned := ""
		if !h.PinnedAt.IsZero() {
			pinned = ", pinned " + h.PinnedAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(w, "%s  (mcp server %s, tool %q)\n", safetext.Line(h.Name), safetext.Line(h.Server), safetext.Line(h.Tool))
		fmt.Fprintf(w, "  changed: %s%s%s\n", changeWords(h.Changed), pinned, since)
		fmt.Fprintf(w, "  accept:  wield pins accept %s\n", safetext.Line(h.Name))
		// The diff's lines are safe already (mcpbridge); Text keeps its
		// newlines and escapes anything else, whoever made the list.
		fmt.Fprint(w, safetext.Text(h.Diff))
	}
	fmt.Fprintf(w, "\n%d held; accept each with 'wield pins accept NAME' once its change is trusted.\n", len(held))
}

// changeWords writes changed parts for a person: "description and input
// schema".
func changeWords(parts []string) string {
	words := make([]string, len(parts))
	for i, p := range parts {
		words[i] = strings.ReplaceAll(safetext.Line(p), "_", " ")
	}
	switch len(words) {
	case 0:
		return "definition"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// imports is what the REST API shows of the MCP imports: the importer,
// or nil (not a nil pointer in an interface) when none is configured.
func (a *app) imports() httpapi.Imports {
	if a.importer == nil {
		return nil
	}
	return a.importer
}

// watchPins has a serving process pick up pins another process wrote
// (`wield pins accept` without --server): it looks at the pins file once a
// second and, when the file changed (another modification time or size),
// reloads the pins, which releases the held tools whose current definition
// was accepted. A look costs one stat: watching the folder instead
// (fsnotify) would wake this process on every write of the database
// beside the pins, which is every call. Stopped among the closers.
func (a *app) watchPins(im *mcpbridge.Importer, path string) {
	stat := func() (time.Time, int64) {
		fi, err := os.Stat(path)
		if err != nil {
			return time.Time{}, -1
		}
		return fi.ModTime(), fi.Size()
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		mod, size := stat()
		t := time.NewTicker(pinsPoll)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			m, n := stat()
			if m.Equal(mod) && n == size {
				continue
			}
			mod, size = m, n
			released, err := im.ReloadPins()
			if err != nil {
				a.warnf("warning: %v", err)
			}
			for _, name := range released {
				a.warnf("pins: %s was accepted in %s by another process: it is callable now", safetext.Line(name), safetext.Line(path))
			}
		}
	}()
	a.closers = append(a.closers, func() error { close(stop); <-done; return nil })
}

// pinsPoll is how often a serving process looks at the pins file.
const pinsPoll = time.Second
