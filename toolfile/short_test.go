package toolfile_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/toolfile"
)

// TestShortAPIEntry: a native tool written with the tool-system format's
// own keys (api_url, auth_method) loads as written and runs as an http
// entry: a POST of its arguments, the key read from NAME_API_KEY.
func TestShortAPIEntry(t *testing.T) {
	var got struct {
		Method, Key string
		Body        map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Method, got.Key = r.Method, r.Header.Get("X-API-Key")
		json.Unmarshal(b, &got.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"results":["wield"]}`))
	}))
	defer srv.Close()
	t.Setenv("SEARCH_TOOL_API_KEY", "k-123")
	src := "name: search_tool\ndescription: Search the web\nparameters:\n  - {name: query, type: string, required: true}\n" +
		"api_url: " + srv.URL + "/search\nauth_method: API Key\n"
	guard := &httptool.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"http": toolfile.HTTPKind(guard)}}
	set, err := l.Load(context.Background(), "search_tool.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())
	res, err := eng.Call(context.Background(), wield.Call{Tool: "search_tool", Arguments: json.RawMessage(`{"query":"go tools"}`)})
	if err != nil || !res.OK {
		t.Fatalf("call: %+v %v", res, err)
	}
	if got.Method != "POST" || got.Key != "k-123" || got.Body["query"] != "go tools" {
		t.Errorf("request = %+v", got)
	}
}

// TestShortEntryProblems: the short keys' mistakes are reported where they
// are written.
func TestShortEntryProblems(t *testing.T) {
	l := toolfile.Loader{
		Kinds:         map[string]toolfile.Kind{"http": toolfile.HTTPKind(nil), "mcp": toolfile.KindFunc(func(context.Context, *toolfile.Def) (wield.Handler, error) { return nil, nil })},
		MCPServerURLs: map[string]string{"http://127.0.0.1:3001/mcp": "fs"},
	}
	tests := []struct{ name, src, want string }{
		{"unknown auth", "name: t\ndescription: d\napi_url: https://api.example.com/x\nauth_method: digest\n",
			`t.yaml:4:14: auth_method: "digest" is not api_key, bearer, basic or none`},
		{"both", "name: t\ndescription: d\napi_url: https://a.example/x\nmcp_server_url: http://127.0.0.1:3001/mcp\n",
			`t.yaml:4:1: api_url and mcp_server_url both say how the tool runs: keep one`},
		{"with entry", "name: t\ndescription: d\napi_url: https://a.example/x\nentry: {type: builtin, handler: h}\n",
			`t.yaml:3:1: api_url and entry both say how the tool runs: keep one`},
		{"unknown server", "name: t\ndescription: d\nmcp_server_url: http://127.0.0.1:9/mcp\n",
			`t.yaml:3:17: mcp_server_url: no MCP server with the URL "http://127.0.0.1:9/mcp" is configured: add it to mcp_servers (or tools.mcpServers) in the configuration, with its headers`},
		{"auth alone", "name: t\ndescription: d\nauth_method: bearer\n",
			`t.yaml:3:1: auth_method without api_url or mcp_server_url: the tool has no entry`},
	}
	for _, tt := range tests {
		_, err := l.Load(context.Background(), "t.yaml", []byte(tt.src))
		var ps toolfile.Problems
		if !errors.As(err, &ps) {
			t.Errorf("%s: Load = %v, want problems", tt.name, err)
			continue
		}
		var msgs []string
		for _, p := range ps {
			msgs = append(msgs, p.String())
		}
		if !strings.Contains(strings.Join(msgs, "\n"), tt.want) {
			t.Errorf("%s: problems\n%s\nwant %s", tt.name, strings.Join(msgs, "\n"), tt.want)
		}
	}
	// mcp_server_url on a configured server is an mcp entry on it, for the
	// tool of the file's name.
	set, err := l.Load(context.Background(), "fs.yaml", []byte("name: read_text_file\ndescription: Read a file\nmcp_server_url: http://127.0.0.1:3001/mcp/\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := toolfile.Entry{Type: "mcp", Values: map[string]any{"server": "fs", "tool": "read_text_file"}, Line: 3, Col: 1}
	if diff := cmp.Diff(want, set.Defs[0].Entry, cmp.AllowUnexported(toolfile.Entry{})); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
}

// TestParamFormat: a string parameter's validation takes a format, which
// calls are checked against; a format that is not checked loads with a
// warning saying so.
func TestParamFormat(t *testing.T) {
	src := "name: invite\ndescription: Invite someone\nparameters:\n" +
		"  - {name: email, type: string, validation: {format: email}}\n" +
		"  - {name: color, type: string, required: false, validation: {format: x-color}}\n" +
		"entry: {type: builtin, handler: hello}\n"
	l := toolfile.Loader{Builtins: hello()}
	set, err := l.Load(context.Background(), "invite.yaml", []byte(src))
	var ps toolfile.Problems
	if err != nil && !errors.As(err, &ps) {
		t.Fatal(err)
	}
	want := `invite.yaml:5:71: parameter "color": format "x-color" is not checked, only shown to the model (checked: date, date-time, email, hostname, idn-email, ipv4, ipv6, regex, time, uri, uri-reference, uuid)`
	if len(set.Problems) != 1 || set.Problems[0].String() != want || !set.Problems[0].Warning {
		t.Errorf("problems = %v, want the warning %s", set.Problems, want)
	}
	reg := wield.NewRegistry(nil)
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())
	res, err := eng.Call(context.Background(), wield.Call{Tool: "invite", Arguments: json.RawMessage(`{"email":"not-an-address"}`)})
	if err != nil || res.OK || !strings.Contains(res.Error, "email: must be an email address") {
		t.Errorf("result = %+v, %v", res, err)
	}
}
