package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/wieldhq/wield/httpapi"
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
file again when it changes.`,
	}
	cmd.PersistentFlags().StringVar(&file, "keys", defaultKeysFile(), "the keys file (env WIELD_KEYS)")

	var name, rights string
	var toolsets []string
	create := &cobra.Command{
		Use:   "create",
		Short: "Make a key; print it once on stdout",
		Example: `  wield keys create --rights call
  wield keys create --toolset math --toolset text --rights read --name dashboard`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rights != string(httpapi.RightRead) && rights != string(httpapi.RightCall) {
				return usagef("--rights %q: use read or call", rights)
			}
			secret, k, err := httpapi.CreateKey(file, name, httpapi.Right(rights), toolsets)
			if err != nil {
				return err
			}
			scope := "every tool"
			if len(k.Toolsets) > 0 {
				scope = "toolsets " + strings.Join(k.Toolsets, ", ")
			}
			fmt.Fprintf(a.stderr, "created key %s (%s on %s) in %s; it is shown once:\n", k.ID, k.Right, scope, file)
			fmt.Fprintln(a.stdout, secret)
			return nil
		},
	}
	create.Flags().StringVar(&name, "name", "", "a name to recognise the key by")
	create.Flags().StringVar(&rights, "rights", string(httpapi.RightCall), "read (list, describe, query, events) or call (also call tools, decide approvals, write artifacts)")
	create.Flags().StringSliceVar(&toolsets, "toolset", nil, "limit the key to the tools of this toolset (repeatable; default every tool)")

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
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tRIGHTS\tTOOLSETS\tCREATED\tSTATE")
			for _, k := range keys {
				sets, state := "*", "active"
				if len(k.Toolsets) > 0 {
					sets = strings.Join(k.Toolsets, ",")
				}
				if k.Revoked {
					state = "revoked"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Right, sets, k.CreatedAt.Format("2006-01-02 15:04"), state)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := httpapi.RevokeKey(file, args[0])
			if errors.Is(err, fs.ErrNotExist) {
				return usagef("no key %s in %s", args[0], file)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "revoked key %s\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}
