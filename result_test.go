package wield_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

func TestResultJSON(t *testing.T) {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &wield.Result{
		CallID:           "01jabc",
		Tool:             "echo",
		OK:               false,
		Output:           json.RawMessage(`{"partial":true}`),
		Error:            "invalid arguments",
		ErrorType:        wield.ErrValidation,
		ValidationErrors: []wield.ValidationError{{Path: "city", Message: "required"}},
		Attempts:         2,
		StartedAt:        start,
		FinishedAt:       start.Add(1500 * time.Microsecond),
		Duration:         1500 * time.Microsecond,
		QueueWait:        250 * time.Microsecond,
		Metadata:         map[string]any{"truncated": true},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}

	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	wantFields := map[string]any{
		"call_id": "01jabc", "tool": "echo", "ok": false,
		"output": map[string]any{"partial": true},
		"error":  "invalid arguments", "error_type": "validation_error",
		"validation_errors": []any{map[string]any{"path": "city", "message": "required"}},
		"attempts":          2.0,
		"started_at":        "2025-01-02T03:04:05Z", "finished_at": "2025-01-02T03:04:05.0015Z",
		"duration_ms": 1.5, "queue_wait_ms": 0.25,
		"metadata": map[string]any{"truncated": true},
	}
	if diff := cmp.Diff(wantFields, fields); diff != "" {
		t.Errorf("result JSON mismatch (-want +got):\n%s", diff)
	}

	var back wield.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, &back); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

func TestResultJSONMinimal(t *testing.T) {
	b, err := json.Marshal(&wield.Result{CallID: "c", Tool: "t", OK: true, Output: json.RawMessage(`"hi"`), Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"call_id":"c","tool":"t","ok":true,"output":"hi","attempts":1,` +
		`"started_at":"0001-01-01T00:00:00Z","finished_at":"0001-01-01T00:00:00Z","duration_ms":0}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("minimal result JSON mismatch (-want +got):\n%s", diff)
	}
}

func TestResultText(t *testing.T) {
	tests := []struct {
		name string
		r    wield.Result
		want string
	}{
		{"string output unwrapped", wield.Result{OK: true, Output: json.RawMessage(`"line 1\nline \"2\""`)}, "line 1\nline \"2\""},
		{"object output as JSON", wield.Result{OK: true, Output: json.RawMessage(`{"a":1}`)}, `{"a":1}`},
		{"number output", wield.Result{OK: true, Output: json.RawMessage(`42`)}, "42"},
		{"failure", wield.Result{ErrorType: wield.ErrExecution, Error: "disk full"}, "Error: disk full"},
		{"validation errors listed", wield.Result{
			ErrorType: wield.ErrValidation,
			Error:     "invalid arguments for tool 'weather'",
			ValidationErrors: []wield.ValidationError{
				{Path: "city", Message: "is required"},
				{Message: "unexpected member"},
			},
		}, "Error: invalid arguments for tool 'weather'\n- city: is required\n- unexpected member"},
		{"validation errors the message names are not repeated", wield.Result{
			ErrorType: wield.ErrValidation,
			Error:     "invalid arguments for tool 'weather': city: is required; unexpected member",
			ValidationErrors: []wield.ValidationError{
				{Path: "city", Message: "is required"},
				{Message: "unexpected member"},
			},
		}, "Error: invalid arguments for tool 'weather': city: is required; unexpected member"},
		{"tool not found is raw", wield.Result{ErrorType: wield.ErrToolNotFound, Error: "Can not find tool named 'x'"}, "Can not find tool named 'x'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.r.Text()); diff != "" {
				t.Errorf("Text() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTransient(t *testing.T) {
	base := io.ErrUnexpectedEOF
	tr := wield.Transient(base)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", base, false},
		{"transient", tr, true},
		{"wrapped transient", fmt.Errorf("fetch: %w", tr), true},
		{"typed error wrapping transient", &wield.Error{Type: wield.ErrExecution, Err: tr}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wield.IsTransient(tt.err); got != tt.want {
				t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
	if wield.Transient(nil) != nil {
		t.Error("Transient(nil) != nil")
	}
	if !errors.Is(tr, base) || tr.Error() != base.Error() {
		t.Errorf("Transient(%v) = %v does not wrap it", base, tr)
	}
}

func TestError(t *testing.T) {
	e := wield.Errorf(wield.ErrPermissionDenied, "path %q is outside the sandbox", "/etc")
	if diff := cmp.Diff(&wield.Error{Type: wield.ErrPermissionDenied, Message: `path "/etc" is outside the sandbox`}, e); diff != "" {
		t.Errorf("Errorf mismatch (-want +got):\n%s", diff)
	}
	cause := context.DeadlineExceeded
	withCause := &wield.Error{Type: wield.ErrTimeout, Err: cause}
	if got := withCause.Error(); got != cause.Error() {
		t.Errorf("Error() without a message = %q, want the cause's", got)
	}
	if !errors.Is(withCause, cause) {
		t.Error("*Error does not unwrap to its cause")
	}
	var target *wield.Error
	if !errors.As(fmt.Errorf("run: %w", e), &target) || target.Type != wield.ErrPermissionDenied {
		t.Errorf("errors.As did not find the *Error")
	}
}

// TestResultKeepsText checks that what a model or a person reads of a
// result keeps <, > and & as they are: the JSON of the result, and its text,
// also when the tool wrote its output with encoding/json's HTML escapes.
func TestResultKeepsText(t *testing.T) {
	const code = "if a < b && c > d"
	escaped, _ := json.Marshal(map[string]string{"code": code}) // {"code":"if a \u003c b ..."}
	tests := []struct {
		name     string
		r        wield.Result
		json     string // a part of the JSON
		text     string
		textPart bool
	}{
		{"string output", wield.Result{OK: true, Output: json.RawMessage(`"` + code + `"`)}, `"output":"` + code + `"`, code, false},
		{"escaped string output", wield.Result{OK: true, Output: json.RawMessage(`"if a \u003c b \u0026\u0026 c \u003e d"`)}, `"output":"` + code + `"`, code, false},
		{"escaped object output", wield.Result{OK: true, Output: escaped}, `"output":{"code":"` + code + `"}`, `{"code":"` + code + `"}`, false},
		{"spaced object output", wield.Result{OK: true, Output: json.RawMessage("{\n  \"code\": \"a \\u003c b\"\n}")}, `"output":{"code":"a < b"}`, "{\n  \"code\": \"a < b\"\n}", false},
		{"error", wield.Result{ErrorType: wield.ErrExecution, Error: "want <int> & more"}, `"error":"want <int> & more"`, "Error: want <int> & more", false},
		{"validation", wield.Result{ErrorType: wield.ErrValidation, Error: "bad", ValidationErrors: []wield.ValidationError{{Path: "a<b", Message: "x & y"}}},
			`"validation_errors":[{"path":"a<b","message":"x & y"}]`, "- a<b: x & y", true},
		{"metadata", wield.Result{OK: true, Output: json.RawMessage(`1`), Metadata: map[string]any{"note": "<&>"}}, `"metadata":{"note":"<&>"}`, "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.r.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tt.json) {
				t.Errorf("MarshalJSON() = %s, want it to hold %s", b, tt.json)
			}
			got := tt.r.Text()
			if tt.textPart && !strings.Contains(got, tt.text) || !tt.textPart && got != tt.text {
				t.Errorf("Text() = %q, want %q", got, tt.text)
			}
		})
	}
}
