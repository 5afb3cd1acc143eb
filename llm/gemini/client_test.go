package gemini_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/llm"
	"github.com/wieldhq/wield/llm/gemini"
)

// TestClientRoundTrip drives the client against a local server that
// answers as the Gemini API documents generateContent.
func TestClientRoundTrip(t *testing.T) {
	var got []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/models/gemini-test:generateContent") || r.Header.Get("x-goog-api-key") != "k" {
			http.Error(w, `{"error":{"code":404,"message":"no","status":"NOT_FOUND"}}`, 404)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		json.Unmarshal(body, &req)
		got = append(got, req)
		w.Header().Set("Content-Type", "application/json")
		if len(got) == 1 {
			io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"calculator","args":{"expression":"6*7"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5}}`)
			return
		}
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"It is 42."}]},"finishReason":"STOP"}]}`)
	}))
	defer srv.Close()
	c, err := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "gemini-test", BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "Be brief."}, {Role: llm.RoleUser, Content: "6*7?"}}
	resp, err := c.Generate(context.Background(), &llm.ModelRequest{Messages: msgs, Tools: []*wield.Tool{builtin.Calculator()}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "calculator" || string(resp.Message.ToolCalls[0].Arguments) != `{"expression":"6*7"}` {
		t.Fatalf("calls %+v", resp.Message.ToolCalls)
	}
	first := got[0]
	if sys := first["systemInstruction"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"]; sys != "Be brief." {
		t.Errorf("system instruction %v", sys)
	}
	decl := first["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any)[0].(map[string]any)
	if decl["name"] != "calculator" || decl["parameters"] == nil {
		t.Errorf("declaration %v", decl)
	}
	msgs = append(msgs, resp.Message, llm.Message{Role: llm.RoleTool, ToolCallID: resp.Message.ToolCalls[0].ID, ToolName: "calculator",
		Result: &wield.Result{Tool: "calculator", OK: true, Output: json.RawMessage(`{"expression":"6*7","result":42}`)}})
	resp, err = c.Generate(context.Background(), &llm.ModelRequest{Messages: msgs})
	if err != nil || resp.Message.Content != "It is 42." {
		t.Fatalf("%+v %v", resp, err)
	}
	contents := got[1]["contents"].([]any)
	last := contents[len(contents)-1].(map[string]any)
	fr := last["parts"].([]any)[0].(map[string]any)["functionResponse"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"expression": "6*7", "result": 42.0}, fr["response"]); diff != "" || fr["name"] != "calculator" || last["role"] != "user" {
		t.Errorf("function response %v (-want +got):\n%s", last, diff)
	}
	// An API error keeps its status.
	bad, _ := gemini.NewClient(context.Background(), gemini.ClientOptions{Model: "other", BaseURL: srv.URL, APIKey: "k"})
	if _, err := bad.Generate(context.Background(), &llm.ModelRequest{Messages: msgs[:2]}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("error %v", err)
	}
}
