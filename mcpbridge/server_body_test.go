package mcpbridge_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// srvCountingBody is a request body of n bytes that counts what was read of
// it.
type srvCountingBody struct {
	r    io.Reader
	read int64
}

func (b *srvCountingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

func (b *srvCountingBody) Close() error { return nil }

// TestServerBodyBounded checks that a request body larger than the go-sdk
// takes (mcp.DefaultMaxRequestBodyBytes) is refused (413) without being
// read whole into memory: `wield mcp --http` has no other bound in front
// of the handler, and a client could make the server hold gigabytes.
func TestServerBodyBounded(t *testing.T) {
	f := srvNew(t, nil, nil)
	h := f.srv.Handler()
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		const size = 64 << 20
		head := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`
		body := &srvCountingBody{r: io.MultiReader(strings.NewReader(head), io.LimitReader(zeros{}, size))}
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
		r.Body, r.ContentLength = body, -1
		r.Host = "127.0.0.1"
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": era, "Mcp-Method": "tools/call", "Mcp-Name": "echo"} {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: a body of %d MiB answered %d %.200s, want 413", era, size>>20, w.Code, w.Body)
		}
		if limit := int64(mcp.DefaultMaxRequestBodyBytes) + 64<<10; body.read > limit {
			t.Errorf("%s: %d bytes of the body read, want at most %d", era, body.read, limit)
		}
	}
}

// zeros reads as endless '0' digits.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}
