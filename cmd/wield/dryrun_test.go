package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
)

// TestDryRunCommand: `wield call --dry-run` reports and exits as the call
// would end, records nothing, keeps <, > and & as they are, and lets no
// control character of a tool's name or the arguments reach the terminal.
func TestDryRunCommand(t *testing.T) {
	t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(t.TempDir(), "w.db"))
	tests := []struct {
		args   []string
		status int
		want   []string
	}{
		{[]string{"call", "echo", "message=a<b && c>d", "--dry-run"}, 0,
			[]string{"dry run of echo: would run", `arguments   {"message":"a<b && c>d"}`, "limiter     bucket custom: would run now; 0 of 10 units in flight, 0 of 100 queued, fifo"}},
		{[]string{"call", "echo", "message:=5", "--dry-run"}, 0,
			[]string{"would run", `arguments   {"message":"5"} (coerced, defaults filled)`}},
		{[]string{"call", "echo", "message:=[1]", "--dry-run"}, 1,
			[]string{"would not run (stopped at validation)", "error       validation_error: message: expected string"}},
		{[]string{"call", "no\x1b[2Jpe\x07", "--dry-run"}, 1,
			[]string{"dry run of no", "tool_not_found"}},
		{[]string{"call", "echo", "message=hi", "--dry-run", "--json"}, 0,
			[]string{`"would_run": true`, `"timeout_from": "default"`}},
	}
	for _, tt := range tests {
		status, out, errs := run(t, tt.args...)
		if status != tt.status {
			t.Errorf("%q: exit %d, want %d\n%s%s", tt.args, status, tt.status, out, errs)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: stdout lacks %q:\n%s", tt.args, w, out)
			}
		}
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%q: a control character reached stdout: %q", tt.args, out)
		}
	}
	if status, out, _ := run(t, "calls"); status != 0 || !strings.Contains(out, "no calls match") {
		t.Errorf("records after dry runs:\n%s", out)
	}
}

// TestDryRunLinesEndAtAWord: no line of a dry run's report ends in
// spaces, even where a value is empty.
func TestDryRunLinesEndAtAWord(t *testing.T) {
	var b bytes.Buffer
	writeDryRun(&b, &wield.DryRun{Tool: "t", Stage: wield.StagePermission, ErrorType: wield.ErrPermissionDenied,
		Approval: &wield.DryRunApproval{Required: true, Deciders: "ops", RequestedBy: ""}})
	writeDryRun(&b, &wield.DryRun{Tool: "t", Stage: wield.StageValidation, ErrorType: wield.ErrValidation,
		ValidationErrors: []wield.ValidationError{{}, {}}})
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasSuffix(l, " ") || strings.HasSuffix(l, ":") {
			t.Errorf("line %q ends in a space or a colon:\n%s", l, b.String())
		}
	}
	if !strings.Contains(b.String(), "  error       permission_denied\n") {
		t.Errorf("an error without a message is not its type alone:\n%s", b.String())
	}
}
