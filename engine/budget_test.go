package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
)

// constTool returns out, already JSON, on every call.
func constTool(name, out string) *wield.Tool {
	return rawTool(name, func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(out), nil
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestBudget(t *testing.T) {
	big := strings.Repeat("H", 100_000) + strings.Repeat("T", 100_000)
	store := memstore.New(0)
	e := newEngine(t, &engine.Options{MaxOutput: 1000, Store: store}, constTool("big", jsonString(big)))
	res := mustCall(t, e, wield.Call{Tool: "big"})
	if !res.OK {
		t.Fatalf("%+v", failureOf(res))
	}
	if len(res.Output) > 1000 {
		t.Errorf("Output is %d bytes, over the budget of 1000", len(res.Output))
	}
	var s string
	if err := json.Unmarshal(res.Output, &s); err != nil {
		t.Fatalf("Output %.80s... is not a JSON string: %v", res.Output, err)
	}
	if !strings.HasPrefix(s, "HHHHHHHHHH") || !strings.HasSuffix(s, "TTTTTTTTTT") || !strings.Contains(s, "bytes cut here") {
		t.Errorf("Output = %q, want head, notice and tail", s)
	}
	if len(s) < 500 {
		t.Errorf("Output keeps only %d bytes of a 1000-byte budget", len(s))
	}
	wantMeta := map[string]any{"truncated": true, "original_bytes": len(big) + 2}
	if diff := cmp.Diff(wantMeta, res.Metadata); diff != "" {
		t.Errorf("Metadata (-want +got):\n%s", diff)
	}
	if string(res.FullOutput) != jsonString(big) {
		t.Errorf("FullOutput is %d bytes, want the whole output of %d", len(res.FullOutput), len(big)+2)
	}
	recs := store.Records(memstore.Filter{})
	if len(recs) != 1 || string(recs[0].Output()) != jsonString(big) {
		t.Errorf("the record does not keep the whole output")
	}
	// The model-facing JSON carries neither the full output nor its size twice.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 2000 {
		t.Errorf("the result's JSON is %d bytes: the full output leaked into it", len(b))
	}
}

func TestBudgetLimits(t *testing.T) {
	small := `"` + strings.Repeat("x", 500) + `"`
	large := `"` + strings.Repeat("x", 5000) + `"`
	tests := []struct {
		name      string
		opts      int // Options.MaxOutput
		tool      int // Tool.MaxOutput
		out       string
		truncated bool
		max       int
	}{
		{name: "under the default", out: large},
		{name: "under the budget", opts: 1000, out: small},
		{name: "exactly the budget", opts: len(small), out: small},
		{name: "one over", opts: len(small) - 1, out: small, truncated: true, max: len(small) - 1},
		{name: "over the option", opts: 1000, out: large, truncated: true, max: 1000},
		{name: "tool overrides option", opts: 1000, tool: 3000, out: large, truncated: true, max: 3000},
		{name: "tool allows more", opts: 1000, tool: 10_000, out: large},
		{name: "tool unlimited", opts: 1000, tool: -1, out: large},
		{name: "option unlimited", opts: -1, out: large},
		{name: "tool limits an unlimited option", opts: -1, tool: 1000, out: large, truncated: true, max: 1000},
		{name: "not a string", opts: 1000, out: "[" + strings.Repeat("1,", 2000) + "1]", truncated: true, max: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := constTool("out", tt.out)
			tool.MaxOutput = tt.tool
			e := newEngine(t, &engine.Options{MaxOutput: tt.opts}, tool)
			res := mustCall(t, e, wield.Call{Tool: "out"})
			if !res.OK {
				t.Fatalf("%+v", failureOf(res))
			}
			if !tt.truncated {
				if string(res.Output) != tt.out || res.Metadata != nil || res.FullOutput != nil {
					t.Errorf("output cut: %d bytes, metadata %v", len(res.Output), res.Metadata)
				}
				return
			}
			if len(res.Output) > tt.max || !json.Valid(res.Output) {
				t.Errorf("Output is %d bytes (valid JSON %v), want at most %d", len(res.Output), json.Valid(res.Output), tt.max)
			}
			if res.Metadata["truncated"] != true || res.Metadata["original_bytes"] != len(tt.out) || string(res.FullOutput) != tt.out {
				t.Errorf("Metadata %v, FullOutput %d bytes", res.Metadata, len(res.FullOutput))
			}
		})
	}
}

// TestBudgetEscapes checks outputs whose JSON form is longer than their text:
// the budget is on what the model gets, and cutting must not break.
func TestBudgetEscapes(t *testing.T) {
	tests := []struct {
		name string
		text string
	}{
		{"newlines", strings.Repeat("\n", 600)},
		{"quotes", strings.Repeat(`"\`, 400)},
		{"html", strings.Repeat("<a>&", 300)},
		{"control", strings.Repeat("\x01", 300)},
		{"mixed", strings.Repeat("line \"one\"\n\ttab <b>\u2028", 100)},
		{"utf-8", strings.Repeat("héllo wörld 日本語 🎉 ", 200)},
	}
	for _, tt := range tests {
		for _, max := range []int{300, 1000, 4000} {
			out := jsonString(tt.text)
			if len(out) <= max {
				continue
			}
			tool := constTool("out", out)
			e := newEngine(t, &engine.Options{MaxOutput: max}, tool)
			res := mustCall(t, e, wield.Call{Tool: "out"})
			if !res.OK {
				t.Fatalf("%s/%d: %+v", tt.name, max, failureOf(res))
			}
			var s string
			if err := json.Unmarshal(res.Output, &s); err != nil {
				t.Errorf("%s/%d: Output is not a JSON string: %v", tt.name, max, err)
				continue
			}
			if len(res.Output) > max {
				t.Errorf("%s/%d: Output is %d bytes, over the budget", tt.name, max, len(res.Output))
			}
			if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
				t.Errorf("%s/%d: a character was cut in two: %q", tt.name, max, s)
			}
			if !strings.Contains(s, "bytes cut here") {
				t.Errorf("%s/%d: no notice in %q", tt.name, max, s)
			}
		}
	}
}

func TestTruncate(t *testing.T) {
	text := []byte(strings.Repeat("é", 1000) + strings.Repeat("z", 1000)) // 3000 bytes
	for _, max := range []int{0, 10, 150, 151, 152, 153, 500, 999, 1000, 2999} {
		out := engine.Truncate(text, max)
		var s string
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("Truncate(_, %d) = %s: not a JSON string: %v", max, out, err)
		}
		if !utf8.ValidString(s) {
			t.Errorf("Truncate(_, %d) cut a character: %q", max, s)
		}
		if !strings.Contains(s, "the output was 3000 bytes, over the "+strconv.Itoa(max)+"-byte budget") {
			t.Errorf("Truncate(_, %d) notice: %q", max, s)
		}
		if max >= 200 && len(out) > max {
			t.Errorf("Truncate(_, %d) is %d bytes", max, len(out))
		}
		// The notice counts what was left out, exactly.
		head, tail, ok := strings.Cut(s, "\n\n[... ")
		if !ok {
			t.Fatalf("Truncate(_, %d): no notice in %q", max, s)
		}
		notice, rest, _ := strings.Cut(tail, " ...]\n\n")
		var cut int
		if _, err := fmt.Sscanf(notice, "%d bytes cut here", &cut); err != nil {
			t.Fatalf("Truncate(_, %d): notice %q: %v", max, notice, err)
		}
		if len(head)+cut+len(rest) != len(text) {
			t.Errorf("Truncate(_, %d): head %d + cut %d + tail %d != %d", max, len(head), cut, len(rest), len(text))
		}
		if !strings.HasPrefix(string(text), head) || !strings.HasSuffix(string(text), rest) {
			t.Errorf("Truncate(_, %d): head or tail is not from the text", max)
		}
	}
}

func TestInvalidOutput(t *testing.T) {
	e := newEngine(t, nil, constTool("bad", `{"a":`), constTool("empty", ``), constTool("num", ` 42 `))
	res := mustCall(t, e, wield.Call{Tool: "bad"})
	want := failure{ErrorType: wield.ErrExecution, Error: "Tool 'bad' returned output that is not valid JSON", Attempts: 1}
	if diff := cmp.Diff(want, failureOf(res)); diff != "" {
		t.Errorf("invalid JSON output (-want +got):\n%s", diff)
	}
	if res.Output != nil {
		t.Errorf("Output = %s, want none", res.Output)
	}
	if res := mustCall(t, e, wield.Call{Tool: "empty"}); !res.OK || string(res.Output) != "null" {
		t.Errorf("empty output = %s %+v, want null", res.Output, failureOf(res))
	}
	if res := mustCall(t, e, wield.Call{Tool: "num"}); !res.OK || !json.Valid(res.Output) {
		t.Errorf("number output = %q %+v", res.Output, failureOf(res))
	}
}
