package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// The suite starts the client as a command; this test binary is that
// command when WIELD_CONFORMANCE_CLIENT is set, with the server's URL as its
// last argument.
func TestMain(m *testing.M) {
	if os.Getenv("WIELD_CONFORMANCE_CLIENT") == "1" {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := Run(ctx, os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO"))
		cancel()
		if err != nil {
			os.Stderr.WriteString("wield-mcp-conformance-client: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var passed = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed`)

func TestConformance(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed: the conformance suite needs Node 20 or later")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".cache", "npm"))
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("WIELD_NPM_DIR"); d != "" {
		root = d
	}
	suite := filepath.Join(root, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("the conformance suite is not installed at %s: run scripts/npm-up", suite)
	}
	preload, err := filepath.Abs(filepath.Join("..", "..", "mcpbridge", "testdata", "loopback.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Scenarios() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", "--require", preload, suite, "client",
				"--command", self, "--scenario", name, "--output-dir", t.TempDir())
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "WIELD_CONFORMANCE_CLIENT=1")
			out, err := cmd.CombinedOutput()
			m := passed.FindSubmatch(out)
			if err != nil || m == nil {
				t.Fatalf("conformance %s: %v\n%s", name, err, out)
			}
			ok, _ := strconv.Atoi(string(m[1]))
			total, _ := strconv.Atoi(string(m[2]))
			failed, _ := strconv.Atoi(string(m[3]))
			t.Logf("%d of %d checks passed", ok, total)
			if total == 0 || failed != 0 || ok != total {
				t.Errorf("conformance %s: %d of %d checks passed, %d failed\n%s", name, ok, total, failed, out)
			}
		})
	}
	if err := Run(t.Context(), "http://127.0.0.1:1/mcp", "elicitation-sep1034-client-defaults"); err == nil {
		t.Error("an unsupported scenario ran")
	}
}
