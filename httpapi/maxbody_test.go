package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// TestMaxBodyOption: Options.MaxBody is the limit a body is held to, and a
// body over it is a 413 whose message names the limit (a client told only
// "over the limit" cannot tell how much to send), with or without a
// Content-Length; a body at the limit is served.
func TestMaxBodyOption(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	reg := wield.NewRegistry(nil)
	reg.MustRegister(builtin.Echo())
	eng := engine.New(reg, &engine.Options{Store: store})
	t.Cleanup(func() { eng.Close(context.Background()) })
	const limit = 200
	s, err := New(Options{Engine: eng, Store: store, MaxBody: limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	body := func(n int) string {
		head, tail := `{"arguments":{"message":"`, `"}}`
		return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
	}
	for _, chunked := range []bool{false, true} {
		for _, n := range []int{limit + 1, limit} {
			var rd io.Reader = strings.NewReader(body(n))
			if chunked {
				rd = io.MultiReader(bytes.NewReader([]byte(body(n))))
			}
			r := httptest.NewRequest("POST", "/v1/tools/echo/call", rd)
			if chunked {
				r.ContentLength = -1
			}
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, r)
			if n > limit {
				if w.Code != http.StatusRequestEntityTooLarge || errorCode(w.Body.Bytes()) != CodeTooLarge || !strings.Contains(w.Body.String(), "the request body is over the limit of 200 bytes") {
					t.Errorf("%d bytes, chunked %v: %d %s; want 413 %s naming 200 bytes", n, chunked, w.Code, w.Body, CodeTooLarge)
				}
			} else if w.Code != http.StatusOK {
				t.Errorf("%d bytes, chunked %v: %d %s; want the call made", n, chunked, w.Code, w.Body)
			}
		}
	}
}
