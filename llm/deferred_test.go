package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// TestExportDeferredNamespaces: toolsets become the Responses API's
// namespaces of deferred tools; a tool loaded or in no namespace stays at
// the top; Anthropic, which has none, is refused rather than flattened.
func TestExportDeferredNamespaces(t *testing.T) {
	say := func(name string) *wield.Tool {
		return wield.Func(name, "Say "+name+".", func(context.Context, deferIn) (string, error) { return name, nil })
	}
	tools := []*wield.Tool{say("hello"), say("bye"), say("wave"), say("shout")}
	spaces := llm.NamespacesOf([]wield.Toolset{
		{Name: "greet", Description: "Greetings", Tools: []string{"hello", "bye"}},
		{Name: "gesture", Tools: []string{"wave", "bye"}},
		{Name: "empty", Tools: []string{"hello"}},
	})
	vs, _, err := llm.ExportDeferredIn(openai.Responses, tools, func(t *wield.Tool) bool { return t.Name == "hello" }, spaces)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := llm.JSON(vs, "")
	var got []map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	var shape []string
	for _, v := range got {
		s := fmt.Sprint(v["type"], " ", v["name"], " ", v["defer_loading"])
		if tools, ok := v["tools"].([]any); ok {
			s += " " + fmt.Sprint(v["description"])
			for _, x := range tools {
				s += " [" + fmt.Sprint(x.(map[string]any)["name"], " ", x.(map[string]any)["defer_loading"]) + "]"
			}
		}
		shape = append(shape, s)
	}
	want := []string{
		"tool_search <nil> <nil>",
		"function hello <nil>",
		"function shout true",
		"namespace greet <nil> Greetings [bye true]",
		"namespace gesture <nil> Tools: wave [wave true]",
	}
	if diff := cmp.Diff(want, shape); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, _, err := llm.ExportDeferredIn(anthropic.Dialect, tools, nil, spaces); !errors.Is(err, llm.ErrNoNamespaces) {
		t.Errorf("anthropic with namespaces: %v", err)
	}
	if _, _, err := llm.ExportDeferredIn(openai.Responses, tools, nil, []llm.Namespace{{Name: "a b", Description: "x"}}); err == nil || !strings.Contains(err.Error(), `namespace "a b"`) {
		t.Errorf("bad namespace name: %v", err)
	}
}
