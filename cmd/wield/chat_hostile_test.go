package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestChatHostileShown: what a hostile model sends reaches the terminal
// escaped and bounded: a tool name of control characters, a bidi override
// and 10 KB, arguments of 2 MB, an answer of escape sequences (a clear
// screen, a clipboard write, a title). The call shows once, each part
// clipped; the answer is printed with its escapes visible.
func TestChatHostileShown(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	name := "\x1b]0;pwned\x07" + strings.Repeat("n", 10<<10) + "\u202etxt.exe"
	args := `{"message":"` + strings.Repeat("a", 2<<20) + `"}`
	answer := "\x1b[2J\x1b]52;c;SGVsbG8=\x07done\u202e\r\n\tsecond line\rover"
	url, _ := fakeOpenAI(t, chatAnswer("", name, args), chatAnswer(answer))
	code, out, errs := runIn(t, "hi\n", "chat", "--model", url+"/v1/m")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%.2000s", code, errs)
	}
	for what, s := range map[string]string{"stdout": out, "stderr": errs} {
		if strings.ContainsAny(s, "\x1b\x07\u202e") {
			t.Errorf("%s holds a control character or bidi override: %.300q", what, s)
		}
	}
	if len(errs) > 8<<10 || strings.Count(errs, "→ ") != 1 || strings.Count(errs, "← ") != 1 {
		t.Errorf("stderr is %d bytes (want at most 8 KiB, the call shown once):\n%.2000s", len(errs), errs)
	}
	if want := `\x1b[2J\x1b]52;c;SGVsbG8=\x07done\u202e` + "\n\tsecond line" + `\rover` + "\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
}

// TestChatHostileError: a model's error of a megabyte (a Responses answer
// whose status is failed, its message 1 MB of escape sequences) is shown
// escaped and clipped, not a terminal's worth of text.
func TestChatHostileError(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "k")
	body, _ := json.Marshal(map[string]any{"id": "resp_1", "object": "response", "status": "failed", "output": []any{},
		"error": map[string]any{"code": "server_error", "message": strings.Repeat("\x1b[2J", 256<<10)}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	code, _, errs := runIn(t, "hi\n", "chat", "--api", "responses", "--model", srv.URL+"/v1/m")
	if code != 1 || len(errs) > 8<<10 || strings.Contains(errs, "\x1b") || !strings.Contains(errs, `the response failed: server_error: \x1b[2J`) {
		t.Errorf("exit %d, stderr of %d bytes:\n%.2000s", code, len(errs), errs)
	}
}
