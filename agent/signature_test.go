package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/gemini"
)

// geminiCalls is a generateContent body whose model turn holds calls,
// each {id, name, args, thoughtSignature} ("" leaves the field out), or
// the text answer when there are none.
func geminiCalls(text string, calls ...[4]string) string {
	var parts []any
	if text != "" {
		parts = append(parts, map[string]any{"text": text})
	}
	for _, c := range calls {
		fc := map[string]any{"name": c[1], "args": json.RawMessage(c[2])}
		if c[0] != "" {
			fc["id"] = c[0]
		}
		p := map[string]any{"functionCall": fc}
		if c[3] != "" {
			p["thoughtSignature"] = c[3]
		}
		parts = append(parts, p)
	}
	b, _ := json.Marshal(map[string]any{"candidates": []any{map[string]any{
		"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP"}}})
	return string(b)
}

// sentCalls are the calls of the model's turns in a generateContent
// request, as "id args signature".
func sentCalls(req map[string]any) []string {
	var out []string
	contents, _ := req["contents"].([]any)
	for _, c := range contents {
		cm := c.(map[string]any)
		if cm["role"] != "model" {
			continue
		}
		parts, _ := cm["parts"].([]any)
		for _, p := range parts {
			pm := p.(map[string]any)
			fc, ok := pm["functionCall"].(map[string]any)
			if !ok {
				continue
			}
			args, _ := json.Marshal(fc["args"])
			sig, _ := pm["thoughtSignature"].(string)
			out = append(out, fmt.Sprintf("%v %s %s", fc["id"], args, sig))
		}
	}
	return out
}

// TestGeminiSignaturesRenamed: calls that Gemini sent under one ID, in
// one reply or in two, are renamed by the loop so that each result
// answers one call, and each goes back with its own thought signature
// (Gemini 3 refuses a call of the model returned without the signature it
// came with), not its namesake's or none.
func TestGeminiSignaturesRenamed(t *testing.T) {
	reg, e := newWorld(t)
	f := &fakeModel{t: t, path: "/v1beta/models/gemini-test:generateContent"}
	f.script = []func(map[string]any) string{
		func(map[string]any) string {
			return geminiCalls("", [4]string{"dup", "echo", `{"message":"a"}`, "c2lnLUE="}, [4]string{"dup", "echo", `{"message":"b"}`, "c2lnLUI="})
		},
		func(map[string]any) string {
			return geminiCalls("", [4]string{"dup", "echo", `{"message":"c"}`, "c2lnLUM="})
		},
		func(map[string]any) string { return geminiCalls("done") },
	}
	m, err := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "gemini-test", BaseURL: serve(t, f), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	a := &agent.Agent{Name: "signed", Model: m, Toolkit: toolkit(t, reg, "signed", "echo")}
	out, err := agent.NewLoop(e, nil).Run(context.Background(), a, "conv-signed", []llm.Message{{Role: llm.RoleUser, Content: "go"}})
	if err != nil || out.Answer != "done" {
		t.Fatalf("got %+v, %v", out, err)
	}
	want := []string{
		`dup {"message":"a"} c2lnLUE=`,
		`dup_2 {"message":"b"} c2lnLUI=`,
		`dup_1 {"message":"c"} c2lnLUM=`,
	}
	if diff := cmp.Diff(want, sentCalls(f.request(2))); diff != "" {
		t.Errorf("the calls went back as (-want +got):\n%s", diff)
	}
}
