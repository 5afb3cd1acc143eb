package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/anthropic"
	"github.com/wieldhq/wield/llm/gemini"
	"github.com/wieldhq/wield/llm/openai"
)

type deferIn struct {
	Text string `json:"text" description:"What to say"`
}

// TestExportDeferred: the provider's search tool first, the tools to load
// as Export makes them, the others with defer_loading; a dialect without a
// search of its own is refused.
func TestExportDeferred(t *testing.T) {
	say := func(name string) *wield.Tool {
		return wield.Func(name, "Say "+name+".", func(context.Context, deferIn) (string, error) { return name, nil })
	}
	tools := []*wield.Tool{say("hello"), say("bye"), say("hello")}
	load := func(t *wield.Tool) bool { return t.Name == "hello" }
	for _, tt := range []struct {
		d      llm.Dialect
		search string
	}{
		{anthropic.Dialect, `{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`},
		{openai.Responses, `{"type":"tool_search"}`},
		{openai.ResponsesStrict, `{"type":"tool_search"}`},
	} {
		vs, problems, err := llm.ExportDeferred(tt.d, tools, load)
		if err != nil || len(problems) != 1 || len(vs) != 3 {
			t.Fatalf("%s: %v, %d values, problems %v (want the search, two tools and the duplicate refused)", tt.d.Name(), err, len(vs), problems)
		}
		plain, _ := llm.Export(tt.d, tools)
		decode := func(v any) map[string]any {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		if b, _ := json.Marshal(vs[0]); string(b) != tt.search {
			t.Errorf("%s: first %s, want the provider's search %s", tt.d.Name(), b, tt.search)
		}
		hello, bye := decode(vs[1]), decode(vs[2])
		if _, deferred := hello["defer_loading"]; deferred {
			t.Errorf("%s: hello is deferred, want it loaded", tt.d.Name())
		}
		if bye["defer_loading"] != true {
			t.Errorf("%s: bye is not deferred: %v", tt.d.Name(), bye)
		}
		delete(bye, "defer_loading")
		if diff := cmp.Diff([]map[string]any{decode(plain[0]), decode(plain[1])}, []map[string]any{hello, bye}); diff != "" {
			t.Errorf("%s: the definitions differ from Export's (-want +got):\n%s", tt.d.Name(), diff)
		}
	}
	all, _, err := llm.ExportDeferred(anthropic.Dialect, tools, nil)
	if err != nil || len(all) != 3 {
		t.Fatalf("load nil: %d values, %v", len(all), err)
	}
	for _, v := range all[1:] {
		if b, _ := json.Marshal(v); !json.Valid(b) || !strings.HasSuffix(string(b), `,"defer_loading":true}`) {
			t.Errorf("load nil: %s is not deferred", b)
		}
	}
	for _, d := range []llm.Dialect{openai.Chat, gemini.Dialect, llm.MCP} {
		if _, _, err := llm.ExportDeferred(d, tools, nil); !errors.Is(err, llm.ErrNoDeferredLoading) {
			t.Errorf("%s: %v, want ErrNoDeferredLoading", d.Name(), err)
		}
	}
}
