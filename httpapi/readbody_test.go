package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadBody reads bodies whose Content-Length says their size, says
// another, or says nothing, through readers that return a byte at a time
// or fail: readBody returns what io.ReadAll would.
func TestReadBody(t *testing.T) {
	text := strings.Repeat(`{"arguments":{"message":"hello"}}`, 3)
	for _, tc := range []struct {
		name string
		body string
		size int64
	}{
		{"announced", text, int64(len(text))},
		{"unknown", text, -1},
		{"shorter than announced", text[:10], int64(len(text))},
		{"longer than announced", text, 10},
		{"empty", "", 0},
		{"announced empty, not empty", text, 0},
		{"over the hint", strings.Repeat("x", maxBodyHint+5), maxBodyHint + 5},
	} {
		for _, rd := range []struct {
			name string
			r    func(string) io.Reader
		}{
			{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
			{"a byte at a time", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
			{"EOF with the data", func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) }},
		} {
			got, err := readBody(rd.r(tc.body), tc.size)
			if err != nil || string(got) != tc.body {
				t.Errorf("%s, %s: got %q, %v; want the body whole", tc.name, rd.name, got, err)
			}
		}
	}
	fail := errors.New("connection reset")
	got, err := readBody(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(fail)), 100)
	if !errors.Is(err, fail) || string(got) != "abc" {
		t.Errorf("failing reader: got %q, %v; want %q and the reader's error", got, err, "abc")
	}
}

// TestBodyOverLimit sends a call whose body is over the server's limit,
// with its length announced and without (chunked): both are a 413.
func TestBodyOverLimit(t *testing.T) {
	s, _ := newTestServer(t, nil)
	s.maxBody = 64
	body := `{"arguments":{"message":"` + strings.Repeat("a", 100) + `"}}`
	for _, chunked := range []bool{false, true} {
		var rd io.Reader = strings.NewReader(body)
		if chunked {
			rd = io.MultiReader(bytes.NewReader([]byte(body))) // no length known
		}
		r := httptest.NewRequest("POST", "/v1/tools/echo/call", rd)
		if chunked {
			r.ContentLength = -1
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		if w.Code != http.StatusRequestEntityTooLarge || errorCode(w.Body.Bytes()) != CodeTooLarge {
			t.Errorf("chunked %v: %d %s, want 413 %s", chunked, w.Code, w.Body.Bytes(), CodeTooLarge)
		}
	}
}

// BenchmarkReadBody reads a tool call's body as readBody does and as
// io.ReadAll does.
func BenchmarkReadBody(b *testing.B) {
	body := []byte(`{"arguments":{"message":"hello"},"caller":{"conversation_id":"bench"}}`)
	rd := bytes.NewReader(body)
	for _, f := range []struct {
		name string
		read func(io.Reader) ([]byte, error)
	}{
		{"readBody", func(r io.Reader) ([]byte, error) { return readBody(r, int64(len(body))) }},
		{"io.ReadAll", io.ReadAll},
	} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(body)
				if _, err := f.read(rd); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestBodyOverLimitCloses checks that the connection of a body over the
// limit is closed after the 413: the server reads no more of what the
// client sends.
func TestBodyOverLimitCloses(t *testing.T) {
	s, hs := newTestServer(t, nil)
	s.maxBody = 64
	body := `{"arguments":{"message":"` + strings.Repeat("a", 1000) + `"}}`
	resp, err := hs.Client().Post(hs.URL+"/v1/tools/echo/call", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Errorf("status %d, close %v: want 413 and the connection closed", resp.StatusCode, resp.Close)
	}
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// TestDecodeBody decodes bodies one after another: a body read to its end
// is closed (so that net/http, finishing the answer, does not read on to
// find its end), and what a decoded value holds is its own, not the
// pooled buffer the next body is read into.
func TestDecodeBody(t *testing.T) {
	bodies := []string{
		`{"tool":"echo","arguments":{"message":"first"},"caller":{"conversation_id":"c1"}}`,
		`{"tool":"other","arguments":{"message":"second, longer than the first"},"caller":{"conversation_id":"c2"}}`,
	}
	var got []CallRequest
	for _, b := range bodies {
		r := httptest.NewRequest(http.MethodPost, "/v1/tools/echo/call", nil)
		body := &closeCounter{Reader: strings.NewReader(b)}
		r.Body, r.ContentLength = body, int64(len(b))
		var req CallRequest
		if err := decode(r, &req); err != nil {
			t.Fatal(err)
		}
		if body.closed != 1 {
			t.Errorf("%s: the body was closed %d times, want once", b, body.closed)
		}
		got = append(got, req)
	}
	for i, want := range []struct{ tool, args, conv string }{
		{"echo", `{"message":"first"}`, "c1"},
		{"other", `{"message":"second, longer than the first"}`, "c2"},
	} {
		if got[i].Tool != want.tool || string(got[i].Arguments) != want.args || got[i].Caller.ConversationID != want.conv {
			t.Errorf("request %d: got %q %s %q, want %q %s %q", i, got[i].Tool, got[i].Arguments, got[i].Caller.ConversationID, want.tool, want.args, want.conv)
		}
	}
}
