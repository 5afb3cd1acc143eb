//go:build unix

package journeys

// A hostile MCP server, run over stdio by the configuration: one that pages
// tools/list for ever, one with ten or a hundred thousand tools, one whose
// names collide, are empty or differ only in letter case. wield lists its
// tools in seconds, says what it left out, and calls reach the right server.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostileMCP is internal/hostilemcp's stdio server, built on first use.
func hostileMCP(t *testing.T) string {
	t.Helper()
	hostile.once.Do(func() {
		path := filepath.Join(binDir, "hostile-mcp")
		build := exec.Command("go", "build", "-o", path, "./internal/hostilemcp/cmd/hostile-mcp")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			hostile.err = fmt.Errorf("build hostile-mcp: %v\n%s", err, out)
			return
		}
		hostile.path = path
	})
	if hostile.err != nil {
		t.Fatal(hostile.err)
	}
	return hostile.path
}

// hostile is the hostile-mcp binary, built once for the journeys that run
// it (each link took about half a second).
var hostile struct {
	once sync.Once
	path string
	err  error
}

// pinnedTools lists the tools of a server in the user's pins file.
func pinnedTools(t *testing.T, u *user, server string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(u.path(".state/wield/mcp-pins.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for name := range all[server] {
		out[name] = true
	}
	return out
}

// listedMCP returns the names of the mcp tools wield list printed.
func listedMCP(r *run) []string {
	var out []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == "mcp" {
			out = append(out, f[0])
		}
	}
	return out
}

func TestJourneyHostileMCPEndlessCursor(t *testing.T) {
	h := hostileMCP(t)
	u := newUser(t)
	u.write("wield.yaml", "mcp_servers:\n  - {name: h, command: ["+h+", -endless-cursor]}\n")
	r := u.must("--config", "wield.yaml", "list")
	if r.took > 20*time.Second {
		t.Errorf("wield list took %v against a server that pages for ever", r.took)
	}
	if got := listedMCP(r); len(got) != 1 || got[0] != "h__echo" {
		t.Errorf("mcp tools listed %v, want [h__echo]:\n%s", got, r)
	}
	if !strings.Contains(r.stderr, `mcp server \"h\" gave the tools/list cursor \"again\" a second time`) {
		t.Errorf("no warning about the repeated cursor:\n%s", r)
	}
	t.Logf("wield list against an endless cursor: %v", r.took)
}

func TestJourneyHostileMCPNames(t *testing.T) {
	h := hostileMCP(t)
	u := newUser(t)
	// A server name with __ would make server x__y's echo and server x's
	// y__echo the same x__y__echo: refused where it is written.
	u.write("wield.yaml", `mcp_servers:
  - {name: x, command: [`+h+`, -names, collide, -id, server-x]}
  - {name: x__y, command: [`+h+`, -id, server-x__y]}
`)
	r := u.wield("--config", "wield.yaml", "list")
	if r.code == 0 || !strings.Contains(r.stderr, "wield.yaml:3:6: mcp server x__y: the name must not contain __") {
		t.Errorf("want the server name x__y refused at wield.yaml:3:6:\n%s", r)
	}

	u.write("wield.yaml", `mcp_servers:
  - {name: x, command: [`+h+`, -names, collide, -id, server-x]}
  - {name: c, command: [`+h+`, -names, case]}
  - {name: e, command: [`+h+`, -names, empty]}
  - {name: b, command: [`+h+`, -names, bad]}
`)
	r = u.must("--config", "wield.yaml", "list")
	// Servers are imported at once, so their tools come in the order the
	// servers answer; the set is what counts here.
	want := []string{"b__echo", "c__echo", "e__echo", "x__echo", "x__y__echo"}
	got := listedMCP(r)
	slices.Sort(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("mcp tools listed %v, want %v:\n%s", got, want, r)
	}
	for _, w := range []string{
		`server=c tool=Echo error="its name differs only in letter case from tool \"echo\"'s`,
		`server=c tool=ECHO error="its name differs only in letter case from tool \"echo\"'s`,
		`server=e tool="" error="the name is empty"`,
		`server=b tool="bad\x01name"`, `server=b tool="with space"`, `server=b tool=llllllll`,
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %s:\n%s", w, r)
		}
	}
	// What was refused is not pinned.
	for server, want := range map[string]string{"x": "echo y__echo", "c": "echo", "e": "echo", "b": "echo"} {
		pins := pinnedTools(t, u, server)
		var got []string
		for _, name := range strings.Fields(want) {
			if pins[name] {
				got = append(got, name)
			}
		}
		if len(pins) != len(got) || strings.Join(got, " ") != want {
			t.Errorf("server %s: %d tools pinned (%v), want %s", server, len(pins), pins, want)
		}
	}
	// x__y__echo is server x's own y__echo.
	r = u.must("--config", "wield.yaml", "call", "x__y__echo")
	if !strings.Contains(r.stdout, "server-x answered y__echo") {
		t.Errorf("call of x__y__echo did not reach server x's y__echo:\n%s", r)
	}
}

func TestJourneyHostileMCPManyTools(t *testing.T) {
	h := hostileMCP(t)
	u := newUser(t)
	u.write("wield.yaml", "mcp_servers:\n  - {name: big, command: ["+h+", -tools, \"9999\"]}\n")
	first := u.must("--config", "wield.yaml", "list")
	if n := len(listedMCP(first)); n != 10000 {
		t.Errorf("%d mcp tools listed, want 10000", n)
	}
	if n := len(pinnedTools(t, u, "big")); n != 10000 {
		t.Errorf("%d tools pinned, want 10000", n)
	}
	again := u.must("--config", "wield.yaml", "list") // the pins are there now
	if first.took > 15*time.Second || again.took > 15*time.Second {
		t.Errorf("wield list of 10,000 imported tools took %v, then %v with pins", first.took, again.took)
	}
	t.Logf("wield list with 10,000 imported tools: %v without pins, %v with", first.took, again.took)

	// A hundred thousand are capped at max_tools, with a warning.
	u.write("wield.yaml", "mcp_servers:\n  - {name: huge, command: ["+h+", -tools, \"99999\"], max_tools: 2000}\n")
	r := u.must("--config", "wield.yaml", "list")
	if n := len(listedMCP(r)); n != 2000 {
		t.Errorf("%d mcp tools listed, want the first 2000", n)
	}
	if !strings.Contains(r.stderr, `mcp server \"huge\" lists more than 2000 tools; the first 2000 are imported, the rest left out (max_tools)`) {
		t.Errorf("no warning about max_tools:\n%s", r)
	}
	t.Logf("wield list against 100,000 tools capped at 2000: %v", r.took)
}
