//go:build unix

package journeys

import (
	"bytes"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneyMCPExportMeaning: one wield serves a confirm tool with tags;
// another imports it over MCP and has it as confirm (it was auto: the tool
// was exported with destructiveHint false) with the tags; its call waits
// in the importer's inbox, which `wield approvals list --server` shows and
// `wield approvals deny --server` ends.
func TestJourneyMCPExportMeaning(t *testing.T) {
	a := newUser(t)
	a.write("tools/launch.yaml", `name: launch
description: Launch the rocket, once a person agrees
permission: confirm
tags: [ops, rocket]
parameters:
  - name: message
    type: string
entry:
  type: command
  command: ["echo", "{message}"]
`)
	sa := a.serve("--tools", "tools")

	b := newUser(t)
	b.write("wield.yaml", "mcp_servers:\n  - {name: a, url: "+sa.url+"/mcp}\n")
	r := b.must("list", "--json", "--config", "wield.yaml")
	var tools []struct {
		Name       string   `json:"name"`
		Permission string   `json:"permission"`
		Tags       []string `json:"tags"`
	}
	r.json(t, &tools)
	found := false
	for _, tl := range tools {
		if tl.Name != "a__launch" {
			continue
		}
		found = true
		if tl.Permission != "confirm" || strings.Join(tl.Tags, ",") != "ops,rocket" {
			t.Errorf("imported a__launch: permission %s, tags %q; want confirm, ops and rocket", tl.Permission, tl.Tags)
		}
	}
	if !found {
		t.Fatalf("a__launch is not imported:\n%s", r)
	}

	sb := b.serve("--config", "wield.yaml")
	if !eventually(30*time.Second, func() bool {
		_, body := sb.do("GET", "/v1/tools", "")
		return bytes.Contains(body, []byte(`"a__launch"`))
	}) {
		t.Fatalf("a__launch never appeared in the importer's /v1/tools:\n%s", sb.stderr)
	}
	type answer struct {
		code int
		body []byte
	}
	done := make(chan answer, 1)
	go func() {
		code, body := sb.do("POST", "/v1/tools/a__launch/call", `{"arguments":{"message":"go"}}`)
		done <- answer{code, body}
	}()
	ids := pendingIDs(t, b, 1, "--server", sb.url)
	b.must("approvals", "deny", ids[0], "--server", sb.url, "--reason", "not today")
	var res struct {
		OK        bool   `json:"ok"`
		ErrorType string `json:"error_type"`
	}
	select {
	case ans := <-done:
		if err := json.Unmarshal(ans.body, &res); ans.code != 200 || err != nil || res.OK || res.ErrorType != "approval_denied" {
			t.Errorf("the denied call answered %d %s", ans.code, ans.body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end within 30 s of the denial")
	}
	for _, s := range []*server{sb, sa} {
		if code, took := s.stop(syscall.SIGTERM, 15*time.Second); code != 0 {
			t.Errorf("exit %d after %v of SIGTERM, want 0:\n%s", code, took, s.stderr)
		}
	}
}
