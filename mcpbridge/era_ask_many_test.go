package mcpbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
	"github.com/wieldhq/wield/toolfile"
)

// eraManyNew serves tools with asking on (InputRequired) and a store.
func eraManyNew(t *testing.T, noFast bool, prompts []mcpbridge.Prompt, tools ...*wield.Tool) (*srvFixture, *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(ctx) })
	o := &mcpbridge.InputRequiredOptions{Key: []byte(strings.Repeat("k", mcpbridge.MinStateKey)), Approvals: store}
	return srvNew(t, &mcpbridge.ServerOptions{DisableFastPath: noFast, InputRequired: o, Prompts: prompts}, &engine.Options{Store: store}, tools...), store
}

func eraToolBody(id int, tool, caps, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},%s%s}}`, id, tool, eraMeta(caps), extra)
}

// eraInputs returns the questions (key: method) and state of an
// input_required reply, failing when it is not one.
func eraInputs(t *testing.T, r srvReply) (map[string]string, string) {
	t.Helper()
	res, _ := eraMap(r)["result"].(map[string]any)
	if res == nil || res["resultType"] != "input_required" {
		t.Fatalf("reply %d %v, want an input_required result", r.status, r.body)
	}
	irs, _ := res["inputRequests"].(map[string]any)
	out := map[string]string{}
	for k, v := range irs {
		m, _ := v.(map[string]any)
		out[k] = fmt.Sprint(m["method"])
	}
	state, _ := res["requestState"].(string)
	return out, state
}

func eraCode(r srvReply) (float64, map[string]any) {
	e, _ := eraMap(r)["error"].(map[string]any)
	code, _ := e["code"].(float64)
	data, _ := e["data"].(map[string]any)
	req, _ := data["requiredCapabilities"].(map[string]any)
	return code, req
}

const eraAllCaps = `{"elicitation":{"form":{}},"sampling":{},"roots":{}}`

// TestServerEraAskSeveral checks Ask: three questions (elicitation,
// sampling, roots) in one input_required round, named by Key or by the
// server; a retry that answers some is asked the rest under the same
// state; a bad roots answer is refused; the full answer ends the call.
func TestServerEraAskSeveral(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}, Required: []string{"name"}}
	tool := wield.Func("trio", "Ask three things at once", func(ctx context.Context, _ struct{}) (string, error) {
		ans, err := mcpbridge.Ask(ctx,
			mcpbridge.Question{Key: "who", Elicit: &mcpbridge.ElicitQuestion{Message: "Your name?", Schema: schema}},
			mcpbridge.Question{Sample: &mcpbridge.SampleQuestion{Messages: []mcpbridge.SampleMessage{{Role: "user", Text: "A greeting"}}, MaxTokens: 20}},
			mcpbridge.Question{Key: "where", Roots: true})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %v %s %d", ans[0].Action, ans[0].Content["name"], ans[1].Sampled.Text, len(ans[2].Roots)), nil
	})
	for _, noFast := range []bool{false, true} {
		t.Run(fmt.Sprintf("sdk=%v", noFast), func(t *testing.T) {
			f, _ := eraManyNew(t, noFast, nil, tool)
			h := f.srv.Handler()
			qs, state := eraInputs(t, srvEraPost(t, h, eraToolBody(1, "trio", eraAllCaps, "")))
			want := map[string]string{"who": "elicitation/create", "wield_sample_1_2": "sampling/createMessage", "where": "roots/list"}
			if fmt.Sprint(qs) != fmt.Sprint(want) || state == "" {
				t.Fatalf("questions %v (state %q), want %v and a state", qs, state, want)
			}
			st, _ := json.Marshal(state)
			who := `"who":{"action":"accept","content":{"name":"Bo"}}`
			qs2, state2 := eraInputs(t, srvEraPost(t, h, eraToolBody(2, "trio", eraAllCaps, `"inputResponses":{`+who+`},"requestState":`+string(st))))
			if len(qs2) != 2 || qs2["who"] != "" || state2 != state {
				t.Errorf("after one answer: %v (same state %v), want the two others asked again under the same state", qs2, state2 == state)
			}
			bad := srvEraPost(t, h, eraToolBody(3, "trio", eraAllCaps, `"inputResponses":{"where":{"roots":[{"name":"x"}]}},"requestState":`+string(st)))
			if got := eraErr(bad); !strings.Contains(got, "inputResponses.where: roots[0]: uri is missing") || bad.status != http.StatusBadRequest {
				t.Errorf("a root without uri: %d %q, want HTTP 400 saying so", bad.status, got)
			}
			rest := `"wield_sample_1_2":{"role":"assistant","content":{"type":"text","text":"Hi"},"model":"m"},"where":{"roots":[{"uri":"file:///a","name":"A"},{"uri":"file:///b"}]}`
			text, isErr := eraText(srvEraPost(t, h, eraToolBody(4, "trio", eraAllCaps, `"inputResponses":{`+rest+`},"requestState":`+string(st))))
			if text != "accept Bo Hi 2" || isErr {
				t.Errorf("result %q (error %v), want %q", text, isErr, "accept Bo Hi 2")
			}
		})
	}
}

// TestServerEraAskMissingCapability checks the rule for a capability the
// client did not declare: Ask fails whole with ErrUnsupported naming it,
// asking nothing; a tool that goes on without the answer returns its
// result; one that fails is answered -32021 naming the capability.
func TestServerEraAskMissingCapability(t *testing.T) {
	var seen []error
	fallback := wield.Func("fallback", "Roots if it can", func(ctx context.Context, _ struct{}) (string, error) {
		_, err := mcpbridge.Roots(ctx)
		seen = append(seen, err)
		return "no roots: fine", nil
	})
	strict := wield.Func("strict", "Roots or nothing", func(ctx context.Context, _ struct{}) (string, error) {
		_, err := mcpbridge.Ask(ctx, mcpbridge.Question{Elicit: &mcpbridge.ElicitQuestion{Message: "ok?"}}, mcpbridge.Question{Roots: true})
		seen = append(seen, err)
		return "", err
	})
	f, _ := eraManyNew(t, false, nil, fallback, strict)
	h := f.srv.Handler()
	caps := `{"elicitation":{"form":{}}}`
	if text, isErr := eraText(srvEraPost(t, h, eraToolBody(1, "fallback", caps, ""))); text != "no roots: fine" || isErr {
		t.Errorf("fallback: %q (error %v), want its result", text, isErr)
	}
	r := srvEraPost(t, h, eraToolBody(2, "strict", caps, ""))
	code, req := eraCode(r)
	if r.status != http.StatusBadRequest || code != mcpbridge.CodeMissingCapability || req["roots"] == nil || len(req) != 1 {
		t.Errorf("strict: %d %v, want HTTP 400, -32021 requiring roots", r.status, r.body)
	}
	if len(seen) != 2 || !errors.Is(seen[0], mcpbridge.ErrUnsupported) || !errors.Is(seen[1], mcpbridge.ErrUnsupported) ||
		!strings.Contains(seen[0].Error(), "roots:") || !strings.Contains(seen[1].Error(), "(roots)") {
		t.Errorf("the tools saw %v, want ErrUnsupported naming roots", seen)
	}
}

const eraKindFile = `
- name: group
  description: Asks three things in one round
  entry:
    type: mcp_client
    steps:
      - ask:
          - elicit: {message: "Name?", schema: {type: object, properties: {name: {type: string}}, required: [name]}, as: user_name}
          - sample: {prompt: Greet, max_tokens: 10, as: greeting}
          - roots: {as: dirs}
    text: "{{.greeting.text}} {{.user_name.content.name}} {{range .dirs.roots}}{{.uri}} {{end}}"
- name: needs_sampling
  description: Samples
  entry:
    type: mcp_client
    steps:
      - log: {message: hi}
      - sample: {prompt: Hi, as: reply}
    text: "{{.reply.text}}"
`

// TestServerEraKindAsk checks the tool-file steps: an ask step's questions
// go in one round under their as: names, its answers fill the text; a
// tool whose steps sample, called by a client that did not declare
// sampling, is refused -32021 before it runs (no record).
func TestServerEraKindAsk(t *testing.T) {
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"mcp_client": mcpbridge.ClientKind()}}
	set, err := l.Load(context.Background(), filepath.Join(t.TempDir(), "tools.yaml"), []byte(eraKindFile))
	if err != nil {
		t.Fatal(err)
	}
	f, store := eraManyNew(t, false, nil, set.Tools...)
	h := f.srv.Handler()
	qs, state := eraInputs(t, srvEraPost(t, h, eraToolBody(1, "group", eraAllCaps, "")))
	if fmt.Sprint(qs) != fmt.Sprint(map[string]string{"user_name": "elicitation/create", "greeting": "sampling/createMessage", "dirs": "roots/list"}) {
		t.Fatalf("questions %v, want the three steps' under their as: names", qs)
	}
	st, _ := json.Marshal(state)
	all := `"user_name":{"action":"accept","content":{"name":"Bo"}},"greeting":{"role":"assistant","content":{"type":"text","text":"Hello"}},"dirs":{"roots":[{"uri":"file:///w"}]},"extra":{"x":1}`
	if text, isErr := eraText(srvEraPost(t, h, eraToolBody(2, "group", eraAllCaps, `"inputResponses":{`+all+`},"requestState":`+string(st)))); text != "Hello Bo file:///w " || isErr {
		t.Errorf("result %q (error %v), want %q", text, isErr, "Hello Bo file:///w ")
	}

	r := srvEraPost(t, h, eraToolBody(3, "needs_sampling", `{"elicitation":{}}`, ""))
	code, req := eraCode(r)
	if r.status != http.StatusBadRequest || code != mcpbridge.CodeMissingCapability || req["sampling"] == nil || !strings.Contains(eraErr(r), `tool "needs_sampling" needs the client's sampling`) {
		t.Errorf("needs_sampling without sampling: %d %v, want HTTP 400, -32021 requiring sampling", r.status, r.body)
	}
	recs, err := store.Calls(context.Background(), wield.CallQuery{Tool: "needs_sampling"})
	if err != nil || len(recs.Records) != 0 {
		t.Errorf("records of the refused call: %v %v, want none (refused before it ran)", recs, err)
	}
}

// TestServerEraPromptAsks checks a prompt with questions: a client of
// 2026-07-28 gets input_required (no state), its retry with the answer
// the filled messages, a bad answer an error, and a client that cannot
// elicit -32021.
func TestServerEraPromptAsks(t *testing.T) {
	p := mcpbridge.Prompt{Name: "ctx", Messages: []mcpbridge.PromptMessage{{Role: "user", Content: mcpbridge.Content{Type: "text", Text: "Within {{.user_context.content.context}}"}}},
		Elicit: []mcpbridge.PromptQuestion{{Key: "user_context", Message: "Which context?", Schema: &jsonschema.Schema{Type: "object",
			Properties: map[string]*jsonschema.Schema{"context": {Type: "string"}}, Required: []string{"context"}}}}}
	f, _ := eraManyNew(t, false, []mcpbridge.Prompt{p})
	h := f.srv.Handler()
	body := func(id int, caps, extra string) string {
		if extra != "" {
			extra = "," + extra
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"ctx",%s%s}}`, id, eraMeta(caps), extra)
	}
	r := srvEraPost(t, h, body(1, "", ""))
	res, _ := eraMap(r)["result"].(map[string]any)
	irs, _ := res["inputRequests"].(map[string]any)
	if res["resultType"] != "input_required" || irs["user_context"] == nil || len(irs) != 1 {
		t.Fatalf("first prompts/get: %v, want input_required asking user_context", r.body)
	}
	r = srvEraPost(t, h, body(2, "", `"inputResponses":{"user_context":{"action":"accept","content":{"context":"tests"}}}`))
	res, _ = eraMap(r)["result"].(map[string]any)
	b, _ := json.Marshal(res["messages"])
	if res["resultType"] != "complete" || !strings.Contains(string(b), "Within tests") {
		t.Errorf("retry: %v, want the messages filled with the answer", r.body)
	}
	r = srvEraPost(t, h, body(3, "", `"inputResponses":{"user_context":{"action":"accept","content":{"context":5}}}`))
	if got := eraErr(r); !strings.Contains(got, "does not match the schema") {
		t.Errorf("bad answer: %v, want an error saying it does not match the schema", r.body)
	}
	r = srvEraPost(t, h, body(4, `{}`, ""))
	if code, req := eraCode(r); code != mcpbridge.CodeMissingCapability || req["elicitation"] == nil || r.status != http.StatusBadRequest {
		t.Errorf("client without elicitation: %d %v, want HTTP 400, -32021", r.status, r.body)
	}
}

// TestKindAskMistakes checks the errors of a bad ask step: what and where.
func TestKindAskMistakes(t *testing.T) {
	for _, tt := range []struct{ steps, want string }{
		{`[{ask: []}]`, "step 1: ask: needs questions (elicit, sample or roots steps)"},
		{`[{ask: [{log: {message: x}}]}]`, "step 1 ask 1: an ask step asks only elicit, sample and roots steps"},
		{`[{ask: [{roots: {as: a}}, {sample: {prompt: x, as: a}}]}]`, `step 1 ask 2: key "a": another question of the step has it`},
		{`[{roots: {as: r, key: "bad key"}}]`, `step 1: key: input key "bad key"`},
	} {
		src := "- name: t\n  description: d\n  entry:\n    type: mcp_client\n    steps: " + tt.steps + "\n    text: x\n"
		l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"mcp_client": mcpbridge.ClientKind()}}
		_, err := l.Load(context.Background(), filepath.Join(t.TempDir(), "tools.yaml"), []byte(src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("steps %s: error %v, want one saying %q", tt.steps, err, tt.want)
		}
	}
}
