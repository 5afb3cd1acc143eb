package mcpbridge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/policy"
	"github.com/wieldhq/wield/sqlite"
	"github.com/wieldhq/wield/toolfile"
)

// hiddenServers are two servers of one policy (Key::"ops" may call
// everything, any other key nothing): full registers the tools whose
// answers depend on what the server knows of them before the engine runs
// the call (a tool file needing the client's elicitation, a task tool
// asking before its task is made, tools that run only or optionally as a
// task, a plain tool that may become a task past TaskAfter), empty none
// of them. To a key the policy hides them from, a tool of full must be
// answered exactly as the same name is by empty, where it does not exist.
func hiddenServers(t *testing.T, fast, stateless bool) (full, empty http.Handler) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(`permit(principal == Key::"ops", action, resource);`), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		t.Fatal(err)
	}
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"mcp_client": mcpbridge.ClientKind()}}
	files, err := l.Load(ctx, filepath.Join(dir, "tools.yaml"), []byte(`
- name: needs
  description: Elicits, so needs the client's elicitation
  entry:
    type: mcp_client
    steps:
      - elicit: {message: "who?", schema: {type: object, properties: {name: {type: string}}, required: [name]}, as: who}
    text: "{{.who.name}}"
- name: asks
  description: Asks a name before its task is made
  task: required
  entry:
    type: mcp_client
    steps:
      - elicit: {message: "who?", schema: {type: object, properties: {name: {type: string}}, required: [name]}, as: who}
        before_task: true
    text: "{{.who.name}}"
`))
	if err != nil {
		t.Fatal(err)
	}
	must := wield.Func("must", "Always a task.", func(context.Context, srvNoArgs) (string, error) { return "fine", nil })
	must.Task = wield.TaskRequired
	opt := wield.Func("opt", "A task if asked.", func(context.Context, srvNoArgs) (string, error) { return "fine", nil })
	opt.Task = wield.TaskOptional
	plain := wield.Func("plain", "No task, but past TaskAfter.", func(context.Context, srvNoArgs) (string, error) { return "fine", nil })
	mk := func(tools ...*wield.Tool) http.Handler {
		store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close(ctx) })
		reg := wield.NewRegistry(nil)
		reg.MustRegister(wield.Func("echo", "Echo", func(_ context.Context, in struct {
			M string `json:"m"`
		}) (string, error) {
			return in.M, nil
		}))
		reg.MustRegister(tools...)
		eng := engine.New(reg, &engine.Options{Store: store, Policy: set})
		t.Cleanup(func() { eng.Close(ctx) })
		srv := mcpbridge.NewServer(eng, reg, &mcpbridge.ServerOptions{Calls: store, TaskAfter: time.Minute, DisableFastPath: !fast, Stateless: stateless})
		t.Cleanup(srv.Close)
		return srv.Handler()
	}
	return mk(append(files.Tools, must, opt, plain)...), mk()
}

// hiddenAs is h serving requests authenticated as the key who.
func hiddenAs(h http.Handler, who string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(wield.WithRequester(r.Context(), who)))
	})
}

// hiddenAnswer is what a client reads of an answer: its status, content
// type and body.
func hiddenAnswer(w *httptest.ResponseRecorder) string {
	return w.Result().Status + "\n" + w.Header().Get("Content-Type") + "\n" + w.Body.String()
}

// hiddenSession opens a raw 2025-11-25 session on h declaring tasks.
func hiddenSession(t *testing.T, h http.Handler) *coreSession {
	t.Helper()
	c := &coreSession{t: t, h: h}
	if res, e := c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tasks": map[string]any{}},
		"clientInfo": map[string]any{"name": "core", "version": "1"}}); e != nil || c.id == "" {
		t.Fatalf("initialize: %s %+v", res, e)
	}
	c.rpc("notifications/initialized", map[string]any{})
	return c
}

// hiddenCall posts a tools/call of 2025-11-25 to h, of the session id
// ("" for none: a stateless server's) and returns the answer as
// hiddenAnswer reads it.
func hiddenCall(h http.Handler, id string, params map[string]any) string {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
	headers := []string{"Mcp-Protocol-Version", "2025-11-25"}
	if id != "" {
		headers = append(headers, "Mcp-Session-Id", id)
	}
	return hiddenAnswer(srvPost(h, string(body), headers...))
}

// TestServerHiddenToolAnswersAsUnknown: a tool the policies hide from a
// key is, to that key, a tool that does not exist on every path of both
// eras, with the fast path and without: the status, content type and
// body of every answer (a tools/call of the stateless era declaring or
// not the Tasks extension and elicitation, with and without answers; a
// session's, or a stateless server's, tools/call of 2025-11-25 with and
// without params.task) are those of a call
// of a tool the server does not have, byte for byte. Nothing the server
// knows of the tool before the engine runs its call is told: the client
// capabilities a tool file needs (-32021), that it runs only as a task,
// its questions before its task is made (input_required), a task. The
// permitted key gets those answers, so each path is one that tells.
func TestServerHiddenToolAnswersAsUnknown(t *testing.T) {
	tasks := map[string]any{mcpbridge.TasksExtension: map[string]any{}}
	eraCaps := []struct {
		name string
		caps map[string]any
	}{
		{"nothing declared", map[string]any{}},
		{"tasks", map[string]any{"extensions": tasks}},
		{"tasks and elicitation", map[string]any{"extensions": tasks, "elicitation": map[string]any{}}},
		{"elicitation", map[string]any{"elicitation": map[string]any{}}},
	}
	tools := []string{"needs", "asks", "must", "opt", "plain"}
	for _, c := range []struct{ fast, stateless bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		fast := c.fast
		full, empty := hiddenServers(t, fast, c.stateless)
		dev, devEmpty, ops := hiddenAs(full, "key:dev"), hiddenAs(empty, "key:dev"), hiddenAs(full, "key:ops")
		var told []string // what the permitted key was told that no unknown tool gets
		for _, tool := range tools {
			for _, ec := range eraCaps {
				for _, args := range []map[string]any{{}, {"m": "x"}} {
					params := func() map[string]any {
						p := map[string]any{"name": tool, "arguments": args}
						if ec.caps["elicitation"] != nil {
							p["inputResponses"] = map[string]any{"who": map[string]any{"action": "accept", "content": map[string]any{"name": "Ann"}}}
						}
						return p
					}
					what := func() string { return "2026-07-28 " + tool + ", " + ec.name }
					hidden := hiddenAnswer(srvEraSend(dev, 7, "tools/call", tool, params(), ec.caps, "c"))
					unknown := hiddenAnswer(srvEraSend(devEmpty, 7, "tools/call", tool, params(), ec.caps, "c"))
					if hidden != unknown {
						t.Errorf("fast %v stateless %v, %s: the hidden tool's answer\n%q\nwant the unknown tool's\n%q", fast, c.stateless, what(), hidden, unknown)
					}
					if allowed := hiddenAnswer(srvEraSend(ops, 7, "tools/call", tool, params(), ec.caps, "c")); allowed != unknown {
						told = append(told, tool)
					}
				}
			}
			// A session of 2025-11-25 that declared tasks.
			for _, task := range []bool{false, true} {
				params := func() map[string]any {
					p := map[string]any{"name": tool, "arguments": map[string]any{}}
					if task {
						p["task"] = map[string]any{}
					}
					return p
				}
				var hidden, unknown string
				if c.stateless {
					hidden, unknown = hiddenCall(dev, "", params()), hiddenCall(devEmpty, "", params())
				} else {
					hidden, unknown = hiddenCall(dev, hiddenSession(t, dev).id, params()), hiddenCall(devEmpty, hiddenSession(t, devEmpty).id, params())
				}
				if hidden != unknown {
					t.Errorf("fast %v stateless %v, 2025-11-25 %s, params.task %v: the hidden tool's answer\n%q\nwant the unknown tool's\n%q", fast, c.stateless, tool, task, hidden, unknown)
				}
				if !strings.Contains(unknown, `unknown tool \"`+tool+`\"`) {
					t.Errorf("fast %v, 2025-11-25 %s: the unknown tool's answer %s", fast, tool, unknown)
				}
			}
		}
		for _, tool := range tools {
			if !strings.Contains(strings.Join(told, " "), tool) {
				t.Errorf("fast %v: the permitted key was answered of %s as of an unknown tool on every path: the test reaches no path that tells", fast, tool)
			}
		}
	}
}
