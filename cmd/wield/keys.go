package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/toolfile"
)

// defaultKeysFile is where API keys are kept without --keys: $WIELD_KEYS,
// else $XDG_STATE_HOME/wield/keys.json, else ~/.local/state/wield/keys.json.
// The file holds only the SHA-256 of each key.
func defaultKeysFile() string {
	if f := os.Getenv("WIELD_KEYS"); f != "" {
		return f
	}
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "wield-keys.json"
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "wield", "keys.json")
}

func (a *app) keysCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage the API keys of 'wield serve'",
		Long: `Manage the API keys of 'wield serve'. The keys file keeps only the SHA-256 of
each key: a key is shown once, when it is made. A running server reads the
file again when it changes; one started without keys goes on answering
without them until it is restarted.`,
	}
	cmd.PersistentFlags().StringVar(&file, "keys", defaultKeysFile(), "the keys file (env WIELD_KEYS)")

	var name, rights string
	var toolsets []string
	create := &cobra.Command{
		Use:   "create",
		Short: "Make a key; print it once on stdout",
		Long: `Make a key; print it once on stdout. Every key reads (lists and describes
tools, reads calls, statistics, approvals, artifacts and events); --rights
grants more, each on its own, none implying another:

  call      call tools (REST and MCP) and write artifacts
  approve   approve or deny the calls of confirm tools; the key that asked
            for a call cannot decide it unless the server has
            server.self_approval: true
  metrics   read /metrics, whose series cover every tool (not with --toolset)
  workflow  claim caller.type workflow_node, which bypasses the concurrency
            limits: for trusted workflow engines only
  keys      manage the keys over the API and the console's Keys page (list,
            create, revoke): an administrator's right; such a key grants
            only rights it has itself (not with --toolset)
  pins      accept the changed definition of a held MCP tool, which makes
            it callable ('wield pins accept', the console's MCP imports)

Give the key an agent uses call, and the person who approves another key
with approve: a model must not approve its own calls.

--toolset takes the toolsets that the tool files of --config and --tools
define (give the server's), and programs when --programs or wield.yaml
offers run_program: a name none defines is refused.`,
		Example: `  wield keys create --rights call --name agent
  wield keys create --rights approve --name reviewer
  wield keys create --rights metrics --name prometheus
  wield keys create --toolset math --toolset text --rights read --name dashboard --config wield.yaml
  wield keys create --rights call,approve,metrics,keys --name admin`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := httpapi.ParseRights(rights)
			if err != nil {
				return usagef("--rights: %v", err)
			}
			if slices.Contains(list, httpapi.RightMetrics) && len(toolsets) > 0 {
				return usagef("--rights metrics with --toolset: /metrics shows the figures of every tool, so a key scoped to toolsets cannot read it")
			}
			if slices.Contains(list, httpapi.RightKeys) && len(toolsets) > 0 {
				return usagef("--rights keys with --toolset: the keys right manages keys that reach every tool, so a key scoped to toolsets cannot have it")
			}
			if err := a.checkToolsets(cmd.Context(), toolsets); err != nil {
				return err
			}
			first := a.keylessFile(file)
			secret, k, err := httpapi.CreateKey(file, name, list[0], toolsets, list[1:]...)
			if errors.Is(err, httpapi.ErrKeyNameTaken) {
				return usagef("--name: %s", strings.TrimSuffix(strings.TrimPrefix(err.Error(), "create key: "), ": "+httpapi.ErrKeyNameTaken.Error()))
			}
			if err != nil {
				return err
			}
			scope := "every tool"
			if len(k.Toolsets) > 0 {
				scope = "toolsets " + strings.Join(k.Toolsets, ", ")
			}
			fmt.Fprintf(a.stderr, "created key %s (%s on %s) in %s; it is shown once:\n", k.ID, rightList(&k), scope, file)
			fmt.Fprintln(a.stdout, secret)
			if first {
				// A server started without keys listens open to local
				// clients and does not take keys up while it runs.
				fmt.Fprintln(a.stderr, "the first key: a wield serve started without keys goes on answering without them; restart it to require keys")
			}
			return nil
		},
	}
	create.Flags().StringVar(&name, "name", "", "a name to recognise the key by, unique among the keys not revoked")
	create.Flags().StringVar(&rights, "rights", string(httpapi.RightCall), "the rights, separated by commas: read, call, approve, metrics, workflow, keys, pins (see above)")
	create.Flags().StringSliceVar(&toolsets, "toolset", nil, "limit the key to the tools of this toolset, one the tool files of --config or --tools define (repeatable; default every tool)")

	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the keys (never the secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys, err := httpapi.ReadKeys(file)
			if err != nil {
				return err
			}
			if asJSON {
				if keys == nil {
					keys = []httpapi.Key{}
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(keys)
			}
			tw := newTable(a.stdout)
			fmt.Fprintln(tw, "ID\tNAME\tRIGHTS\tTOOLSETS\tCREATED\tSTATE")
			for _, k := range keys {
				sets, state := "*", "active"
				if len(k.Toolsets) > 0 {
					sets = strings.Join(k.Toolsets, ",")
				}
				if k.Revoked {
					state = "revoked"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, rightList(&k), sets, k.CreatedAt.Format("2006-01-02 15:04"), state)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	revoke := &cobra.Command{
		Use:   "revoke ID|NAME",
		Short: "Revoke a key, by its ID or the name of one key not revoked",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := keyByRef(file, args[0])
			if err != nil {
				return err
			}
			err = httpapi.RevokeKey(file, id)
			if errors.Is(err, fs.ErrNotExist) {
				return usagef("no key has the ID or the name %q in %s", args[0], file)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "revoked key %s\n", id)
			return nil
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// checkToolsets refuses, as a usage error, a --toolset that the tool files
// of --config and --tools do not define (the server's, given the same
// flags) and that is not the programs toolset of a server offering
// run_program, or one named twice: a key scoped to a toolset the server does not
// have would reach no tool, and silently. The message lists the toolsets
// there are, as 'wield list --toolset' and POST /v1/keys do.
func (a *app) checkToolsets(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	var known []string
	if len(a.tools) > 0 {
		l := &toolfile.Loader{Kinds: a.fileKinds(), MCPServerURLs: a.mcpServerURLs()}
		set, err := l.LoadDirs(ctx, a.tools...)
		if err != nil {
			return loadError{"--toolset: load tool files to find the toolsets", err}
		}
		for _, ts := range set.Toolsets {
			known = append(known, ts.Name)
		}
	}
	// The server's own: run_program's, when it offers programs.
	if mode, err := a.programsMode(); err != nil {
		return err
	} else if mode != "" && !slices.Contains(known, programsToolset) {
		known = append(known, programsToolset)
	}
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return usagef("--toolset: %q is named twice", n)
		}
		if !slices.Contains(known, n) {
			err := usagef("--toolset: %v", &httpapi.ChoiceError{Kind: "toolset", Name: n, Choices: known})
			if len(known) == 0 {
				err = usagef("--toolset: %v (toolsets are defined by the tool files of --config or --tools, which name none here)", &httpapi.ChoiceError{Kind: "toolset", Name: n})
			}
			return err
		}
	}
	return nil
}

// keyByRef returns the ID of the key ref names in the keys file: a key's
// ID, or the name of exactly one key not revoked (as DELETE /v1/keys/{id}
// takes it). A ref that names no key is returned as it is, for RevokeKey to
// say so.
func keyByRef(file, ref string) (string, error) {
	keys, err := httpapi.ReadKeys(file)
	if err != nil {
		return "", err
	}
	var named []string
	for _, k := range keys {
		if k.ID == ref {
			return ref, nil
		}
		if k.Name == ref && !k.Revoked {
			named = append(named, k.ID)
		}
	}
	switch len(named) {
	case 0:
		return ref, nil
	case 1:
		return named[0], nil
	}
	return "", usagef("keys %s are all named %q: revoke one by its ID", strings.Join(named, ", "), ref)
}

// rightList shows a key's rights as --rights takes them: "read,call,approve".
func rightList(k *httpapi.Key) string {
	var names []string
	for _, r := range k.Granted() {
		names = append(names, string(r))
	}
	return strings.Join(names, ",")
}

// keylessFile reports whether a server reading the keys file (and the
// configuration's server.keys) would have no key: the state of a server
// started before the key about to be made. A file that cannot be read
// counts as having keys (nothing is claimed about it).
func (a *app) keylessFile(file string) bool {
	if a.cfg != nil && len(a.cfg.Server.Keys) > 0 {
		return false
	}
	keys, err := httpapi.ReadKeys(file)
	if err != nil {
		return false
	}
	for _, k := range keys {
		if !k.Revoked {
			return false
		}
	}
	return true
}
