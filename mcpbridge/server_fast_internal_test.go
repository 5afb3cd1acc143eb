package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/jsonenc"
)

func TestServerDecode(t *testing.T) {
	tests := []struct {
		body string
		want srvFastRequest
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, srvFastRequest{ID: json.RawMessage(`1`), Method: "tools/list"}, true},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"m":1}}}`,
			srvFastRequest{ID: json.RawMessage(`"a"`), Method: "tools/call", Params: srvFastParams{Name: "echo", Arguments: json.RawMessage(`{"m":1}`)}}, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`, srvFastRequest{ID: json.RawMessage(`1`), Method: "tools/list"}, true},
		{`{"jsonrpc":"2.0","id":1,"Method":"tools/list"}`, srvFastRequest{}, false},
		{`{"JSONRPC":"2.0","id":1,"method":"tools/list"}`, srvFastRequest{}, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"echo"}}`, srvFastRequest{}, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{}}}`, srvFastRequest{}, false},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, srvFastRequest{}, false},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, srvFastRequest{}, false},
		{`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, srvFastRequest{}, false},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, srvFastRequest{}, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","extra":1}`, srvFastRequest{}, false},
	}
	for _, tt := range tests {
		got, ok := srvDecode([]byte(tt.body))
		if ok != tt.ok {
			t.Errorf("%s: ok = %v, want %v", tt.body, ok, tt.ok)
			continue
		}
		if ok {
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s: (-want +got):\n%s", tt.body, diff)
			}
		}
	}
}

// FuzzServerDecode checks that whatever the fast path accepts, the SDK
// reads as the same request: the fast path never answers what the SDK
// would refuse or read otherwise.
func FuzzServerDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"echo"}}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"method":"tools/list","params":{"cursor":""}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, ok := srvDecode(body)
		if !ok {
			return
		}
		msg, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			t.Fatalf("fast path accepts %q, the SDK refuses it: %v", body, err)
		}
		r, isReq := msg.(*jsonrpc.Request)
		if !isReq || !r.IsCall() || r.Method != req.Method {
			t.Fatalf("fast path reads %q as a call of %q, the SDK as %#v", body, req.Method, msg)
		}
		var params struct {
			Name string `json:"name"`
		}
		if len(r.Params) > 0 && string(r.Params) != "null" {
			if err := json.Unmarshal(r.Params, &params); err != nil {
				t.Fatalf("params of %q: %v", body, err)
			}
		}
		if params.Name != req.Params.Name {
			t.Fatalf("fast path reads the name %q, the SDK %q, in %q", req.Params.Name, params.Name, body)
		}
	})
}

// srvResultCases are results as tools return them: objects, strings,
// HTML-like text, escapes, spaces, invalid JSON, failures.
var srvResultCases = []*wield.Result{
	{CallID: "c1", Tool: "echo", OK: true, Output: json.RawMessage(`{"message":"hello"}`)},
	{CallID: "c2", Tool: "echo", OK: true, Output: json.RawMessage(`"plain text"`)},
	{CallID: "c3", Tool: "echo", OK: true, Output: json.RawMessage(`{"html":"<b>&amp;</b>","esc":"\u003cx\u003e \\u003c"}`)},
	{CallID: "c4", Tool: "echo", OK: true, Output: json.RawMessage(" {\n \"spaced\" : [1, 2.50, true, null] }\n")},
	{CallID: "c5", Tool: "echo", OK: true, Output: json.RawMessage(`[1,2,3]`)},
	{CallID: "c6", Tool: "echo", OK: true, Output: json.RawMessage(`42`)},
	{CallID: "c7", Tool: "echo", OK: true, Output: json.RawMessage(`null`)},
	{CallID: "c8", Tool: "echo", OK: true, Output: json.RawMessage(`{"broken":`)},
	{CallID: "c9", Tool: "echo", OK: true},
	{CallID: "c10", Tool: "echo", OK: true, Output: json.RawMessage("\"\u2028 line\\u2028 \xff\"")},
	{CallID: "c11", Tool: "echo", OK: true, Output: json.RawMessage("{\"k\":\"\xff\u2028\"}")},
	{CallID: "c12", Tool: "echo", ErrorType: wield.ErrValidation, Error: "arguments do not match the schema",
		ValidationErrors: []wield.ValidationError{{Path: "message", Message: "is required"}}},
	{CallID: "c13", Tool: "nope", ErrorType: wield.ErrToolNotFound, Error: `tool "nope" not found`},
	{CallID: "c14", Tool: "echo", ErrorType: wield.ErrExecution, Error: "<failed> & gone", Output: json.RawMessage(`{"partial":1}`)},
	{CallID: "c15", Tool: "echo", OK: true, Output: json.RawMessage(`{"a":1}`), Metadata: map[string]any{"truncated": true}},
	{CallID: "c\"16<", Tool: "echo", OK: true, Output: json.RawMessage(`"x"`)},
}

// TestServerAppendResult holds the fast path's writer of tools/call
// results to the encoding it stands for: jsonenc.Marshal of srvResult,
// byte for byte, or a refusal where it leaves the work to it.
func TestServerAppendResult(t *testing.T) {
	for _, calls := range []bool{false, true} {
		s := &Server{}
		if calls {
			s.opts.Calls = srvNoCalls{}
			s.opts.Name, s.opts.Version = "<wield> & \"co\"\u2028", "1.0\x01"
		}
		for _, r := range srvResultCases {
			srvSameResult(t, s, r)
		}
		rich := &wield.Result{CallID: "r", Tool: "t", OK: true, Output: json.RawMessage(`{"` + ContentKey + `":[{"type":"text","text":"hi"}]}`)}
		if _, ok := s.srvAppendResult(nil, rich, false); ok {
			t.Errorf("rich content: written by the fast writer, want it left to the SDK's types")
		}
	}
}

// srvNoCalls is a record reader that has none: what srvResult asks of
// one is only that it is there.
type srvNoCalls struct{}

func (srvNoCalls) Calls(context.Context, wield.CallQuery) (wield.CallPage, error) {
	return wield.CallPage{}, nil
}

func (srvNoCalls) Call(context.Context, string) (*wield.Record, error) { return nil, wield.ErrNotFound }

func srvSameResult(t *testing.T, s *Server, r *wield.Result) {
	t.Helper()
	want, err := jsonenc.Marshal(s.srvResult(r))
	if err != nil {
		t.Fatalf("%s: %v", r.CallID, err)
	}
	got, ok := s.srvAppendResult([]byte("prefix:"), r, false)
	if !ok {
		cut := s.opts.Calls != nil && r.Metadata["truncated"] == true
		lineSep := r.OK && (strings.Contains(string(r.Output), "\u2028") || strings.Contains(string(r.Output), "\u2029"))
		if !cut && !lineSep {
			t.Errorf("%s: refused %s", r.CallID, r.Output)
		}
		return
	}
	if string(got) != "prefix:"+string(want) {
		t.Errorf("%s: output %q\n got %s\nwant %s", r.CallID, r.Output, got[len("prefix:"):], want)
	}
	// The stateless era's result, as srvEraFast wrote it with the SDK's
	// types: the server in _meta, and the resultType.
	res := s.srvResult(r)
	res.Meta[mcp.MetaKeyServerInfo] = &mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}
	if want, err = jsonenc.Marshal(res); err != nil {
		t.Fatalf("%s: %v", r.CallID, err)
	}
	want = append(append(want[:len(want)-1], `,"resultType":"complete"`...), '}')
	if got, ok = s.srvAppendResult([]byte("prefix:"), r, true); !ok {
		t.Errorf("%s: refused in the stateless era, not in the handshake era", r.CallID)
	} else if string(got) != "prefix:"+string(want) {
		t.Errorf("%s, stateless era: output %q\n got %s\nwant %s", r.CallID, r.Output, got[len("prefix:"):], want)
	}
}

// FuzzServerAppendResult checks the fast writer of results against the
// SDK's types on any output, successful or not.
func FuzzServerAppendResult(f *testing.F) {
	for _, r := range srvResultCases {
		f.Add([]byte(r.Output), r.OK, r.Error)
	}
	s := &Server{}
	s.opts.Name, s.opts.Version = "wield", "1.2.3"
	f.Fuzz(func(t *testing.T, out []byte, ok bool, msg string) {
		r := &wield.Result{CallID: "id", Tool: "t", OK: ok, Output: out}
		if !ok {
			r.ErrorType, r.Error = wield.ErrExecution, msg
		}
		srvSameResult(t, s, r)
	})
}

// BenchmarkServerResult compares the fast writer of an echo result with
// the SDK's types encoded by jsonenc.
func BenchmarkServerResult(b *testing.B) {
	s := &Server{}
	r := srvResultCases[0]
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.srvAppendResult(make([]byte, 0, 256), r, false)
		}
	})
	b.Run("sdk-types", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			jsonenc.Marshal(s.srvResult(r))
		}
	})
}

// BenchmarkServerDecode measures the strict read of a tools/call, which
// the fast path takes as it is.
func BenchmarkServerDecode(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		var id json.RawMessage
		if _, ok, err := srvStrictEnvelope(body, &id); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// TestServerReadAll holds srvReadAll to io.ReadAll's answer of a
// io.LimitReader, whatever the request says of its size and whatever the
// limit: the body, and the error, byte for byte.
func TestServerReadAll(t *testing.T) {
	errBroken := errors.New("broken")
	bodies := []string{"", "{}", strings.Repeat("x", 511), strings.Repeat("y", 512), strings.Repeat("z", 5000)}
	for _, body := range bodies {
		for _, size := range []int64{-1, 0, 1, int64(len(body)) - 1, int64(len(body)), int64(len(body)) + 1, 4 * int64(len(body)), srvFastMax, srvFastMax + 1} {
			readers := map[string]func() io.Reader{
				"whole":    func() io.Reader { return strings.NewReader(body) },
				"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) },
				"data+EOF": func() io.Reader { return iotest.DataErrReader(strings.NewReader(body)) },
				"broken":   func() io.Reader { return io.MultiReader(strings.NewReader(body), iotest.ErrReader(errBroken)) },
			}
			for name, r := range readers {
				for _, limit := range []int64{0, 1, int64(len(body)) - 1, int64(len(body)), int64(len(body)) + 1, 513, srvFastMax + 1} {
					want, wantErr := io.ReadAll(io.LimitReader(r(), limit))
					got, err := srvReadAll(r(), limit, size)
					if string(got) != string(want) || err != wantErr {
						t.Errorf("%d bytes, size %d, limit %d, %s: got %d bytes, %v; want %d bytes, %v", len(body), size, limit, name, len(got), err, len(want), wantErr)
					}
				}
			}
		}
	}
	sr := strings.NewReader("")
	if n := testing.AllocsPerRun(100, func() { sr.Reset("{}"); srvReadAll(sr, srvFastMax, 2) }); n > 1 {
		t.Errorf("srvReadAll of a body of the size said: %v allocations, want 1", n)
	}
}
