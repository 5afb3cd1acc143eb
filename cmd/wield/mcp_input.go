package main

import (
	"path/filepath"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/mcpbridge"
)

// mcpStateKeyFile is where the key that signs the requestState of MCP
// input_required answers is kept: in the state folder, so that a state
// issued before a restart is still accepted after it. Servers behind one
// load balancer accept each other's states when given the same file.
func mcpStateKeyFile() string { return filepath.Join(stateDir(), "mcp-request-state.key") }

// mcpInputRequired turns on approvals in the protocol for clients of MCP
// 2026-07-28 that can elicit (see docs/mcp.md): the retry's answer decides
// the approval in store, the inbox's.
func (a *app) mcpInputRequired(mopts *mcpbridge.ServerOptions, store wield.ApprovalStore) error {
	key, err := mcpbridge.LoadStateKey(mcpStateKeyFile())
	if err != nil {
		return err
	}
	o := &mcpbridge.InputRequiredOptions{Key: key, Approvals: store}
	if a.cfg != nil {
		o.SelfApproval, o.TTL = a.cfg.Server.SelfApproval, a.cfg.MCP.RequestStateTTL
	}
	mopts.InputRequired = o
	return nil
}
