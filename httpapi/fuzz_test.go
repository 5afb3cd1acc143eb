package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequestBodies posts arbitrary bodies to the endpoints that read one:
// the server answers every body with a documented answer (a result, or an
// error in the API's shape), and never with a failure of its own.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		`{"arguments":{"message":"hi"}}`,
		`{"arguments":{"expression":"1+2"},"caller":{"conversation_id":"c","type":"direct"}}`,
		`{"calls":[{"tool":"echo","arguments":{"message":"a"}}],"mode":"sequential"}`,
		`{"text":"<tool_call>{\"name\":\"echo\",\"arguments\":{}}</tool_call>"}`,
		`{"content":"x","title":"t"}`,
		`{"digest":"d"}`,
		`{"arguments":"{\"message\":\"stringified\"}"}`,
		`[]`, `null`, `{"arguments":{"message":"\ud800"}}`, "\x00", `{"timeout_ms":-1}`,
	} {
		for _, path := range []string{"/v1/tools/echo/call", "/v1/tools/calculator/call", "/v1/batch", "/v1/parse", "/v1/artifacts", "/v1/approvals/x/approve"} {
			f.Add(path, seed)
		}
	}
	s, _ := newTestServer(f, nil)
	h := s.Handler()
	f.Fuzz(func(t *testing.T, path, body string) {
		switch path {
		case "/v1/tools/echo/call", "/v1/tools/calculator/call", "/v1/batch", "/v1/parse", "/v1/artifacts", "/v1/approvals/x/approve":
		default:
			return
		}
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
		}
		if err := CheckAnswer("POST", path, rec.Code, rec.Body.Bytes()); err != nil {
			t.Fatalf("POST %s %q: %v\n%s", path, body, err, rec.Body)
		}
		if rec.Code != http.StatusOK && rec.Code != http.StatusCreated && errorCode(rec.Body.Bytes()) == "" {
			t.Fatalf("POST %s %q: %d without an error code", path, body, rec.Code)
		}
	})
}
