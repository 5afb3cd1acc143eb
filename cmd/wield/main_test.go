package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// run runs the program with empty stdin.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runIn(t, "", args...)
}

// runIn runs the program with stdin; records go to a database of the
// test's own (one the test already set in WIELD_DB is kept).
func runIn(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if os.Getenv("WIELD_DB") == "" || !strings.Contains(os.Getenv("WIELD_DB"), os.TempDir()) {
		t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(t.TempDir(), "wield.db"))
	}
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestList(t *testing.T) {
	code, out, _ := run(t, "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"NAME", "echo", "calculator", "current_time", "timezone?"} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q:\n%s", want, out)
		}
	}
}

func TestListJSONFilters(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"list", "--json"}, []string{"echo", "calculator", "current_time", "sleep", "get_env", "set_env",
			"json_parse", "json_stringify", "base64_encode", "base64_decode", "http_get", "http_post", "http_request", "web_fetch",
			"create_artifact", "read_artifact", "update_artifact", "rewrite_artifact"}},
		{[]string{"list", "--json", "--category", "system"}, []string{"current_time", "sleep", "get_env", "set_env"}},
		{[]string{"list", "--json", "--tag", "math", "--tag", "time"}, []string{"calculator", "current_time", "sleep"}},
		{[]string{"list", "--json", "--tag", "nope"}, nil},
	}
	for _, tt := range tests {
		code, out, errs := run(t, tt.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errs)
		}
		var tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
			Permission  string          `json:"permission"`
		}
		if err := json.Unmarshal([]byte(out), &tools); err != nil {
			t.Fatalf("%v: %v\n%s", tt.args, err, out)
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
			if len(tl.InputSchema) == 0 || tl.Permission == "" {
				t.Errorf("%s: schema or permission missing", tl.Name)
			}
		}
		if diff := cmp.Diff(tt.want, names); diff != "" {
			t.Errorf("%v (-want +got)\n%s", tt.args, diff)
		}
	}
}

func TestCall(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		ok       bool
		errType  string
		output   string
		inStderr string
	}{
		{"key=value", []string{"call", "echo", "message=hello"}, 0, true, "", `{"message":"hello"}`, ""},
		{"--args", []string{"call", "calculator", "--args", `{"expression":"2 * (3 + 4)"}`}, 0, true, "", `{"expression":"2 * (3 + 4)","result":14}`, ""},
		{"key:=JSON coerced", []string{"call", "echo", "message:=42"}, 0, true, "", `{"message":"42"}`, ""},
		{"unknown tool", []string{"call", "nope"}, 1, false, "tool_not_found", "", ""},
		{"missing required", []string{"call", "echo"}, 1, false, "validation_error", "", ""},
		{"unknown key", []string{"call", "echo", "message=x", "Message=y"}, 1, false, "validation_error", "", ""},
		{"tool failure", []string{"call", "calculator", "expression=1/0"}, 1, false, "execution_error", "", ""},
		{"bad zone", []string{"call", "current_time", "timezone=Mars/Base"}, 1, false, "validation_error", "", ""},
		{"both forms", []string{"call", "echo", "--args", `{}`, "message=x"}, 2, false, "", "", "not both"},
		{"args not object", []string{"call", "echo", "--args", `[1]`}, 2, false, "", "", `--args must be a JSON object, like '{"message":"hi"}': got an array`},
		{"args not JSON", []string{"call", "echo", "--args", `{message: 1}`}, 2, false, "", "", "--args must be a JSON object, like '{\"message\":\"hi\"}': it is not JSON (invalid character"},
		{"bad pair", []string{"call", "echo", "message"}, 2, false, "", "", "is not key=value"},
		{"bad JSON pair", []string{"call", "echo", "message:={"}, 2, false, "", "", "takes JSON"},
		{"twice", []string{"call", "echo", "message=a", "message=b"}, 2, false, "", "", "given twice"},
		{"no tool", []string{"call"}, 2, false, "", "", "requires at least 1 arg"},
		{"unknown flag", []string{"call", "echo", "--nope"}, 2, false, "", "", "unknown flag"},
		{"bad timeout", []string{"call", "echo", "--timeout", "soon"}, 2, false, "", "", "invalid argument"},
		{"unknown command", []string{"frobnicate"}, 2, false, "", "", "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := run(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errs)
			}
			if tt.inStderr != "" && !strings.Contains(errs, tt.inStderr) {
				t.Errorf("stderr %q lacks %q", errs, tt.inStderr)
			}
			if tt.code == 2 {
				return
			}
			var res struct {
				CallID     string          `json:"call_id"`
				Tool       string          `json:"tool"`
				OK         bool            `json:"ok"`
				Output     json.RawMessage `json:"output"`
				Error      string          `json:"error"`
				ErrorType  string          `json:"error_type"`
				Attempts   int             `json:"attempts"`
				DurationMS *float64        `json:"duration_ms"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
			}
			if res.OK != tt.ok || res.ErrorType != tt.errType || res.CallID == "" || res.DurationMS == nil {
				t.Errorf("result %+v", res)
			}
			if !tt.ok && res.Error == "" {
				t.Error("failed result without an error message")
			}
			if tt.output != "" {
				var compact bytes.Buffer
				json.Compact(&compact, res.Output)
				if diff := cmp.Diff(tt.output, compact.String()); diff != "" {
					t.Errorf("output (-want +got)\n%s", diff)
				}
			}
		})
	}
}

func TestCallTimeoutFlag(t *testing.T) {
	if code, out, _ := run(t, "call", "echo", "message=x", "--timeout", "2s"); code != 0 {
		t.Errorf("exit %d\n%s", code, out)
	}
	if code, _, errs := run(t, "call", "echo", "message=x", "--timeout", "-1s"); code != 2 || !strings.Contains(errs, "negative") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestCallConversation(t *testing.T) {
	code, out, _ := run(t, "call", "current_time", "--conversation", "c1")
	if code != 0 || !strings.Contains(out, `"timezone": "UTC"`) {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// TestCallsAndStats records calls with `wield call` and reads them back with
// `wield calls` and `wield stats`, in the same database.
func TestCallsAndStats(t *testing.T) {
	t.Setenv("WIELD_DB", "sqlite:"+filepath.Join(t.TempDir(), "w.db"))
	for _, args := range [][]string{
		{"call", "echo", "message=one", "--conversation", "c1"},
		{"call", "calculator", "expression=1/0", "--conversation", "c1"},
		{"call", "echo", "message=two", "--conversation", "c2"},
	} {
		run(t, args...)
	}
	code, out, errs := run(t, "calls", "--conversation", "c1", "--json")
	if code != 0 {
		t.Fatalf("calls: exit %d: %s", code, errs)
	}
	var page struct {
		Records []struct {
			Call struct {
				Tool string `json:"tool"`
			} `json:"call"`
			Result struct {
				OK        bool   `json:"ok"`
				ErrorType string `json:"error_type"`
			} `json:"result"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(page.Records) != 2 || page.Records[0].Call.Tool != "calculator" || page.Records[0].Result.ErrorType != "execution_error" || !page.Records[1].Result.OK {
		t.Errorf("calls of c1, newest first:\n%s", out)
	}
	if code, out, _ := run(t, "calls", "--status", "error"); code != 0 || !strings.Contains(out, "calculator") || strings.Contains(out, "echo") {
		t.Errorf("calls --status error: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, "calls", "--since", "1h", "--tool", "echo"); code != 0 || strings.Count(out, "echo") != 2 {
		t.Errorf("calls --tool echo: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "stats", "--conversation", "c1", "--json")
	var sum map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum["total_calls"] != float64(2) || sum["has_errors"] != true {
		t.Errorf("stats --conversation: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, "stats"); code != 0 || !strings.Contains(out, "calculator") || !strings.Contains(out, "(all)") {
		t.Errorf("stats: exit %d\n%s", code, out)
	}
	// An ID with no calls (a typo, most often) is said to have none, not
	// "0 calls (0.0% success)".
	for _, args := range [][]string{{"stats", "--conversation", "c9"}, {"stats", "--caller", "nobody"}, {"stats", "--caller", "nobody", "--brief"}} {
		if code, out, _ := run(t, args...); code != 0 || !strings.Contains(out, ": no calls recorded") || strings.Contains(out, "success") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	for _, bad := range [][]string{{"calls", "--status", "meh"}, {"calls", "--since", "yesterday"}, {"calls", "--limit", "5000"}, {"calls", "--db", "mysql://x"}} {
		if code, _, _ := run(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// TestToolFiles loads the example tool files: listed beside the built-ins,
// callable, and clean under validate; a folder of mistakes fails validate
// with file:line:col lines.
func TestToolFiles(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "tools")
	code, out, errs := run(t, "list", "--tools", dir)
	if code != 0 || !strings.Contains(out, "word_count") || !strings.Contains(out, "say") || !strings.Contains(out, "echo") {
		t.Fatalf("list --tools: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = run(t, "call", "say", "message=hi", "--tools", dir)
	if code != 0 || !strings.Contains(out, `"message": "hi"`) {
		t.Errorf("call say: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "call", "word_count", `paths:=["main.go"]`, "--tools", dir)
	if code != 0 || !strings.Contains(out, `"exit_code": 0`) || !strings.Contains(out, "main.go") {
		t.Errorf("call word_count: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, "validate", dir); code != 0 || strings.TrimSpace(out) != "ok" {
		t.Errorf("validate examples: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "validate", filepath.Join("..", "..", "toolfile", "testdata", "lint"))
	if code != 1 || !strings.Contains(out, "b_mistakes.yaml:3:1: tool: unknown field \"colour\"") {
		t.Errorf("validate mistakes: exit %d\n%s", code, out)
	}
	if code, _, _ := run(t, "validate"); code != 2 {
		t.Errorf("validate with nothing to check: exit %d, want 2", code)
	}
}

// TestConfig: --config names the tool folders and settings; a broken one is
// refused with file:line:col.
func TestConfig(t *testing.T) {
	dir := t.TempDir()
	tools, _ := filepath.Abs(filepath.Join("..", "..", "examples", "tools"))
	good := filepath.Join(dir, "wield.yaml")
	if err := os.WriteFile(good, []byte("tool_dirs: ["+tools+"]\ntimeout: 10s\nconcurrency:\n  max: 4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, "list", "--config", good); code != 0 || !strings.Contains(out, "word_count") {
		t.Errorf("list --config: exit %d\n%s\n%s", code, out, errs)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("timeout: soon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "list", "--config", bad); code != 1 || !strings.Contains(errs, "bad.yaml:1:10:") {
		t.Errorf("list with a broken config: exit %d\n%s", code, errs)
	}
	named := filepath.Join(dir, "wield.yml")
	if err := os.WriteFile(named, []byte("timeout: soon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run(t, "validate", named); code != 1 || !strings.Contains(out, "wield.yml:1:10:") {
		t.Errorf("validate of a config file: exit %d\n%s", code, out)
	}
}
