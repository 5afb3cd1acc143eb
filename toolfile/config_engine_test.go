package toolfile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield/program"
)

// TestLoadConfigMaxOutputApprovalTimeout checks max_output (bytes, the
// engine's output budget) and approval_timeout (how long an approval
// lives): read as written, ${VAR} included, absent meaning the engine's
// default, and refused at their line when zero, negative or not what they
// should be.
func TestLoadConfigMaxOutputApprovalTimeout(t *testing.T) {
	t.Setenv("WIELD_TEST_BUDGET", "4096")
	for _, c := range []struct {
		src     string
		output  int
		timeout time.Duration
	}{
		{"max_output: 262144\napproval_timeout: 24h\n", 262144, 24 * time.Hour},
		{"max_output: ${WIELD_TEST_BUDGET}\napproval_timeout: 90\n", 4096, 90 * time.Second},
		{"strict_validation: true\n", 0, 0},
	} {
		cfg, err := LoadConfig(writeConfig(t, c.src))
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		if cfg.MaxOutput != c.output || cfg.ApprovalTimeout != c.timeout {
			t.Errorf("%q: max_output %d, approval_timeout %v; want %d, %v", c.src, cfg.MaxOutput, cfg.ApprovalTimeout, c.output, c.timeout)
		}
	}
	for src, want := range map[string]string{
		"max_output: 0\n":           `:1:13: max_output: must be at least 1 (bytes; leave it out for the default, 65536)`,
		"max_output: -1\n":          `:1:13: max_output: must not be negative`,
		"max_output: 64KiB\n":       `:1:13: max_output: expected a non-negative integer, got string`,
		"approval_timeout: 0s\n":    `:1:19: approval_timeout: must be more than 0 (leave it out for the default, 15m)`,
		"approval_timeout: -5m\n":   `:1:19: approval_timeout: must not be negative`,
		"approval_timeout: never\n": `:1:19: approval_timeout: "never" is not a duration like "30s"`,
	} {
		p := writeConfig(t, src)
		if got := configProblems(t, p); len(got) != 1 || got[0] != p+want {
			t.Errorf("%q: problems %q, want %q", src, got, p+want)
		}
	}
}

// TestLoadConfigProgramBounds: programs: {max_steps, max_value, max_print,
// max_memory} are run_program's sandbox bounds, which only Go code could
// set; 0 or a wrong value is refused at its line.
func TestLoadConfigProgramBounds(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, "programs: {enabled: true, max_steps: 500000, max_value: 1048576, max_print: 2048, max_memory: 67108864}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Programs; p.MaxSteps != 500000 || p.MaxValue != 1<<20 || p.MaxPrint != 2048 || p.MaxMemory != 64<<20 {
		t.Errorf("programs = %+v", p)
	}
	for src, want := range map[string]string{
		"programs: {max_steps: 0}\n":     `:1:23: programs.max_steps: must be at least 1 (leave it out for the default, 10000000)`,
		"programs: {max_memory: -1}\n":   `:1:24: max_memory: must not be negative`,
		"programs: {max_print: 64KiB}\n": `:1:23: max_print: expected a non-negative integer, got string`,
		"programs: {max_value: 0}\n":     `:1:23: programs.max_value: must be at least 1 (leave it out for the default, 16777216)`,
	} {
		p := writeConfig(t, src)
		if got := configProblems(t, p); len(got) != 1 || got[0] != p+want {
			t.Errorf("%q: problems %q, want %q", src, got, p+want)
		}
	}
}

// TestProgramBoundDefaults: the defaults programs.max_* messages name are
// program's own (toolfile writes them out rather than link the interpreter).
func TestProgramBoundDefaults(t *testing.T) {
	for key, def := range map[string]int{"max_steps": program.DefaultMaxSteps, "max_value": program.DefaultMaxValue,
		"max_print": program.DefaultMaxPrint, "max_memory": program.DefaultMaxMemory} {
		p := writeConfig(t, "programs: {"+key+": 0}\n")
		want := fmt.Sprintf("programs.%s: must be at least 1 (leave it out for the default, %d)", key, def)
		if got := configProblems(t, p); len(got) != 1 || !strings.HasSuffix(got[0], want) {
			t.Errorf("%s: 0: problems %q, want one ending %q", key, got, want)
		}
	}
}
