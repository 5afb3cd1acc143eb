package toolfile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/toolfile"
)

// builtins returns a registry holding the given built-ins as defaults and a
// loader that offers them, as wield's binary sets them up.
func builtins(t *testing.T, tools ...*wield.Tool) (*wield.Registry, *toolfile.Loader) {
	t.Helper()
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0), Logger: quiet()})
	if err := reg.RegisterDefaults(tools...); err != nil {
		t.Fatal(err)
	}
	return reg, &toolfile.Loader{Builtins: toolfile.HandlersOf(tools...)}
}

func messages(ps []toolfile.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// TestRedeclaredHTTPRequest: the tool format's own http_request.yaml example
// re-declares the built-in: it loads without a problem (a note says what it
// does), its description and rules replace the built-in's, and the built-in
// handler runs with what the file's schema admits.
func TestRedeclaredHTTPRequest(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"pong":true}`)
	}))
	defer srv.Close()
	net := builtin.NetTools(builtin.NetOptions{Guard: &httptool.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	reg, l := builtins(t, append(net, builtin.Echo())...)
	set, err := l.LoadDirs(t.Context(), "testdata/http_request.yaml")
	if err != nil || len(set.Problems) != 0 {
		t.Fatalf("LoadDirs = %v, problems %q", err, messages(set.Problems))
	}
	if len(set.Notes) != 1 || !strings.Contains(set.Notes[0].Message, "re-declares the built-in") {
		t.Errorf("notes = %q, want one saying the file re-declares the built-in", messages(set.Notes))
	}
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	tool, _ := reg.Tool("http_request")
	if tool.Description != "发送 HTTP 请求并返回响应" {
		t.Errorf("description = %q, want the file's", tool.Description)
	}
	// What the file does not say is the built-in's: it may wait 300 s, and
	// it reaches the open world.
	if tool.Timeout < 300*time.Second || !tool.Annotations.OpenWorld {
		t.Errorf("timeout %v, annotations %+v: want the built-in's", tool.Timeout, tool.Annotations)
	}

	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())
	call := func(args string) *wield.Result {
		t.Helper()
		r, err := eng.Call(t.Context(), wield.Call{Tool: "http_request", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct{ args, field string }{
		{`{"url":"ftp://x"}`, "url"},
		{`{"url":"http://x.test","method":"FETCH"}`, "method"},
		{`{"url":"http://x.test","timeout":301}`, "timeout"},
	} {
		r := call(c.args)
		if r.OK || r.ErrorType != wield.ErrValidation || !strings.Contains(r.Error, c.field) {
			t.Errorf("%s: ok %v, %s %q; want validation_error naming %s", c.args, r.OK, r.ErrorType, r.Error, c.field)
		}
	}
	// headers: object admits a number, which the built-in sends as text.
	r := call(`{"url":"` + srv.URL + `/ping","headers":{"X-Count":5},"body":{"a":1},"method":"POST","timeout":5}`)
	if !r.OK {
		t.Fatalf("real request: %s %s", r.ErrorType, r.Error)
	}
	var out struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(r.Output, &out); err != nil || out.StatusCode != 200 || !bytes.Contains(out.Body, []byte(`"pong"`)) {
		t.Errorf("output %s (%v)", r.Output, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen.Get("X-Count") != "5" {
		t.Errorf("header X-Count = %q, want 5", seen.Get("X-Count"))
	}
	// A value the built-in cannot take is refused, naming the field.
	r = call(`{"url":"` + srv.URL + `","headers":{"X-On":true}}`)
	if r.OK || r.ErrorType != wield.ErrValidation || !strings.Contains(r.Error, "headers") {
		t.Errorf("a boolean header: ok %v, %s %q; want validation_error naming headers", r.OK, r.ErrorType, r.Error)
	}
}

// TestRedeclaredParameters: a re-declaration is checked against the
// built-in's parameters.
func TestRedeclaredParameters(t *testing.T) {
	_, l := builtins(t, builtin.Echo())
	tests := []struct {
		name, src string
		wantErr   bool
		want      string
	}{
		{"extra", "name: echo\nparameters:\n  - {name: message, type: string}\n  - {name: loud, type: boolean, required: false}\nentry: {type: builtin, handler: echo}\n",
			false, `f.yaml:5:9: parameter "loud": the built-in echo takes no such parameter (it takes message) and never sees it`},
		{"missing", "name: echo\nparameters:\n  - {name: text, type: string}\nentry: {type: builtin, handler: echo}\n",
			true, `f.yaml:4:9: the built-in echo needs the parameter "message", which the file does not declare`},
		// Another name is an alias, not a re-declaration: not checked.
		{"alias", "name: shout\nparameters:\n  - {name: text, type: string}\nentry: {type: builtin, handler: echo}\n", false, ""},
	}
	for _, tc := range tests {
		set, err := l.Load(t.Context(), "f.yaml", []byte(tc.src))
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want an error: %v", tc.name, err, tc.wantErr)
		}
		got := strings.Join(messages(set.Problems), "\n")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems\n%s\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestFileShadowsBuiltin: a file that takes a built-in's name with another
// entry replaces it with a warning; deleting the file brings the built-in
// back; the same at start and on reload.
func TestFileShadowsBuiltin(t *testing.T) {
	echo := builtin.Echo()
	reg, l := builtins(t, echo)
	dir := t.TempDir()
	file := filepath.Join(dir, "echo.yaml")
	write(t, file, "name: echo\ndescription: mine\nparameters:\n  - {name: message, type: string}\nentry: {type: command, command: [echo, \"{message}\"]}\n")
	set, err := l.LoadDirs(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := messages(set.Problems); len(got) != 1 || !strings.Contains(got[0], `echo.yaml:1:1: tool "echo" shadows the built-in tool of that name`) {
		t.Errorf("problems = %q, want a warning that the built-in is shadowed", got)
	}

	var logs bytes.Buffer
	w, err := l.Watch(t.Context(), reg, []string{dir}, &toolfile.WatchOptions{Debounce: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got, _ := reg.Tool("echo"); got.Description != "mine" {
		t.Fatalf("echo = %q, want the file's", got.Description)
	}
	if !strings.Contains(logs.String(), "shadows the built-in") {
		t.Errorf("the watcher did not log the warning:\n%s", logs.String())
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := w.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, _ := reg.Tool("echo"); got != echo {
		t.Errorf("after the file went, echo = %+v, want the built-in back", got)
	}
	write(t, file, "name: echo\ndescription: again\nparameters:\n  - {name: message, type: string}\nentry: {type: builtin, handler: echo}\n")
	if err := w.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, _ := reg.Tool("echo"); got.Description != "again" {
		t.Errorf("a file dropped in on reload: echo = %q, want the file's", got.Description)
	}
}

// TestDuplicateOnReload: a reload that introduces a second definition of a
// name warns once, naming both files and lines, and keeps the first.
func TestDuplicateOnReload(t *testing.T) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0), Logger: quiet()})
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), "\n"+greet("from a"))
	var logs bytes.Buffer
	l := &toolfile.Loader{Builtins: hello()}
	w, err := l.Watch(t.Context(), reg, []string{dir}, &toolfile.WatchOptions{Debounce: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write(t, filepath.Join(dir, "b.yaml"), "\n"+greet("from b"))
	for range 2 {
		if err := w.Reload(t.Context()); err != nil {
			t.Fatalf("Reload = %v, want nil: a duplicate is a warning", err)
		}
	}
	if got, _ := reg.Tool("greet"); got.Description != "from a" {
		t.Errorf("greet = %q, want the first file's", got.Description)
	}
	log := logs.String()
	if n := strings.Count(log, "duplicate tool"); n != 1 {
		t.Errorf("%d duplicate warnings over two reloads, want 1:\n%s", n, log)
	}
	for _, want := range []string{"a.yaml:2", "b.yaml:2"} {
		if !strings.Contains(log, want) {
			t.Errorf("the warnings do not name %s:\n%s", want, log)
		}
	}
	if sh := reg.Shadowed()["greet"]; len(sh) != 1 || sh[0].Description != "from b" {
		t.Errorf("Shadowed()[greet] = %v, want the second file's", sh)
	}
	// The same files at a new start: the same winner, no error.
	set, err := l.LoadDirs(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	fresh := wield.NewRegistry(&wield.RegistryOptions{Logger: quiet()})
	if err := set.Apply(fresh); err != nil {
		t.Fatalf("Apply = %v", err)
	}
	if got, _ := fresh.Tool("greet"); got.Description != "from a" {
		t.Errorf("at start, greet = %q, want the first file's", got.Description)
	}
}

// TestToolsetNamesBuiltins: toolsets and agents may name built-ins and the
// tools Known reports.
func TestToolsetNamesBuiltins(t *testing.T) {
	reg, l := builtins(t, builtin.Echo())
	reg.MustRegister(wield.Raw("fs__read", "imported", &jsonschema.Schema{Type: "object"}, nil))
	l.Known = func(n string) bool { _, ok := reg.Tool(n); return ok }
	src := "name: basic_set\ndescription: basics\ntools: [echo, fs__read]\n---\nkind: agent\nname: helper\ntools: [echo, fs__read]\n---\nname: bad_set\ntools: [nowhere]\n"
	set, _ := l.Load(t.Context(), "sets.yaml", []byte(src))
	got := messages(set.Problems)
	if len(got) != 1 || !strings.Contains(got[0], `sets.yaml:10:9: toolset "bad_set": tool "nowhere" is not defined`) {
		t.Errorf("problems = %q, want only the unknown tool", got)
	}
}

// TestKnownPanics: a Known that panics answers no (the tool is reported
// as not defined), and is counted, instead of ending the load.
func TestKnownPanics(t *testing.T) {
	before := wield.CallbackPanics()[wield.CallbackToolfileKnown]
	_, l := builtins(t, builtin.Echo())
	l.Known = func(string) bool { panic("Known bug") }
	set, _ := l.Load(t.Context(), "sets.yaml", []byte("name: s\ndescription: x\ntools: [echo, fs__read]\n"))
	got := messages(set.Problems)
	if len(got) != 1 || !strings.Contains(got[0], `tool "fs__read" is not defined`) {
		t.Errorf("problems = %q, want fs__read not defined", got)
	}
	if n := wield.CallbackPanics()[wield.CallbackToolfileKnown] - before; n != 1 {
		t.Errorf("toolfile_known panics counted: %d, want 1", n)
	}
}
