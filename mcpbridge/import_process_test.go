//go:build unix

package mcpbridge_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/hostilemcp"
	"github.com/wieldhq/wield/internal/procgroup"
	"github.com/wieldhq/wield/mcpbridge"
)

// processEnv makes the test binary a stdio MCP server that starts a
// process of its own first (its PID written to the file the variable
// names), as a wrapper (`sh -c`, npx) starts the real server; the child
// keeps the server's stderr open and lives on when the server exits.
const processEnv = "WIELD_TEST_PROCESS_CHILD"

// TestImportProcessHelper is not a test: run with processEnv set, the test
// binary is the server TestImportStopsProcessGroup imports.
func TestImportProcessHelper(t *testing.T) {
	pidFile, ok := os.LookupEnv(processEnv)
	if !ok {
		t.Skip("the helper process of TestImportStopsProcessGroup")
	}
	child := exec.Command("sleep", "300")
	child.Stderr = os.Stderr // holds the pipe wield reads the server's stderr from
	if err := child.Start(); err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(1)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(child.Process.Pid)), 0o600); err != nil {
		os.Exit(1)
	}
	srv, err := hostilemcp.New(hostilemcp.Options{ID: "wrapped"})
	if err == nil {
		err = srv.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: os.Stdout})
	}
	os.Exit(0) // at the end of stdin: the child is left running, as a wrapper leaves its server
}

// TestImportStopsProcessGroup: closing the importer stops what a stdio
// server started, not only the server: the child it left running (holding
// the server's stderr open) is gone once Close returns, and Close does not
// wait the grace periods for that pipe. Before, the child outlived wield
// and Close took both grace periods (10 s by default).
func TestImportStopsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	im := impImporter(t, reg, &mcpbridge.ImportOptions{KillGrace: 6 * time.Second})
	if err := im.Add(t.Context(), mcpbridge.ServerConfig{Name: "w", Enabled: true,
		Command: []string{os.Args[0], "-test.run=^TestImportProcessHelper$"}, Env: map[string]string{processEnv: pidFile}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("child PID %q", b)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if syscall.Kill(pid, 0) != nil {
		t.Fatalf("the server's child %d is not running", pid)
	}
	began := time.Now()
	if err := im.Close(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	if took > 4*time.Second {
		t.Errorf("Close took %s: it waited the grace period for a pipe the server's child held", took)
	}
	// The child is ours to reap only if it were our child: it is the
	// server's, reparented once the server exited; it is gone when a
	// signal can no longer reach it (or it is a zombie of init's).
	deadline := time.Now().Add(5 * time.Second)
	for procgroup.Running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's child %d still runs after Close: it outlived its server", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
