package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestClientAnswerBounded: the client (wield's CLI with --server) reads a
// server's answer up to a bound, and an error answer's first 64 KiB: it
// read every answer whole, so a hostile server or proxy with an endless
// body grew the command without limit.
func TestClientAnswerBounded(t *testing.T) {
	defer func(a, e int64) { maxClientAnswer, maxClientError = a, e }(maxClientAnswer, maxClientError)
	maxClientAnswer, maxClientError = 1<<20, 1<<10
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		chunk := strings.Repeat("x", 64<<10)
		for range 64 { // 4 MiB
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c := NewClient(srv.URL, "")
	var out map[string]any
	err := c.Do(context.Background(), "GET", "/v1/tools", nil, &out)
	if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Fatalf("Do = %v, want the answer refused as larger than 1 MiB", err)
	}
	status = http.StatusBadGateway
	err = c.Do(context.Background(), "GET", "/v1/tools", nil, &out)
	if err == nil {
		t.Fatal("Do of a 502 = nil")
	}
	if n := len(err.Error()); n > 2<<10 {
		t.Fatalf("the error of a 4 MiB 502 answer is %d bytes, want its first KiB", n)
	}
}
